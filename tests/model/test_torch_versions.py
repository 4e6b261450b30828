"""The verified torch versions: a trace from any other says so, in the Notices pane
and in `fusionviz summary`; every committed trace is from a verified version."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fusionviz.model.report.summary import header_lines
from fusionviz.model.report.torch_versions import VERIFIED, minor, unverified_note
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"


def test_versions_are_compared_by_major_and_minor():
    assert minor("2.11.0+cu130") == "2.11" and minor("2.15.0") == "2.15" and minor("x") == ""
    assert unverified_note("2.13.0+cpu") == "" and unverified_note("") == ""
    note = unverified_note("2.16.0.dev20261120")
    assert note.startswith("captured with torch 2.16.0.dev20261120, which fusionviz was "
                           "not verified on (verified: 2.11, 2.13, 2.14, 2.15)")


def test_every_committed_trace_is_from_a_verified_version():
    versions = {load_trace(p).env.get("torch") for p in DATA.glob("*.json.gz")}
    assert versions and all(minor(str(v)) in VERIFIED for v in versions), versions


def test_summary_warns_about_an_unverified_version():
    trace = load_trace(DATA / "cpu_mlp_block.json.gz")
    newer = dataclasses.replace(trace, env={**trace.env, "torch": "2.16.0"})
    assert any(line.startswith("notice   Captured with torch 2.16.0") for line in
               header_lines(newer))
    assert not any("not verified" in line for line in header_lines(trace))
