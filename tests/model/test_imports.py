"""Every module of the model imports here: in the Qt-free run of these tests (see
``./dev test``) that proves the model needs neither Qt nor, outside capture/, torch."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import fusionviz.model

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(fusionviz.model.__path__, "fusionviz.model.")
    if not info.name.startswith("fusionviz.model.capture")  # runs in the user's process, with torch
)


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)


def test_every_subpackage_is_walked():
    packages = {n.rsplit(".", 1)[0] for n in MODULES}
    assert {"fusionviz.model.tracefile", "fusionviz.model.run", "fusionviz.model.report",
            "fusionviz.model.experiment", "fusionviz.model.layout"} <= packages
