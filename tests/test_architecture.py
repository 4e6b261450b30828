"""Runtime twin of the import contracts, the package as a plain install ships it, and\nthe size of its folders."""

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

_IMPORT_ALL = textwrap.dedent("""
    import importlib, pkgutil, sys
    for name in {blocked!r}:
        sys.modules[name] = None  # any later `import name` raises ImportError
    pkg = importlib.import_module({package!r})
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if not any(info.name.startswith(s) for s in {skip!r}):
            importlib.import_module(info.name)
""")
_CAPTURE = ["fusionviz.model.capture"]


@pytest.mark.parametrize(
    ("package", "blocked", "skip"),
    [
        ("fusionviz.model", ["PySide6", "shiboken6", "pyqtgraph"], []),
        ("fusionviz.model", ["torch", "triton", "PySide6", "pyqtgraph"], _CAPTURE),
        ("fusionviz.ui", ["torch", "triton", "fusionviz.model.capture"], []),
    ],
)
def test_package_imports_without(package, blocked, skip):
    code = _IMPORT_ALL.format(package=package, blocked=blocked, skip=skip)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_wheel_ships_examples_and_finds_them(tmp_path):
    """A plain (non-editable) install carries the bundled examples and finds them."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("fusionviz-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "fusionviz/assets/examples/mlp_block.py" in names
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "fusionviz").rglob("*.py")}
    assert modules and modules <= set(names), sorted(modules - set(names))
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import fusionviz.model.run.runner as r, pathlib, sys; "
        "p = pathlib.Path(r.default_example()); "
        f"assert str(p).startswith({str(site)!r}), p; assert p.read_text().startswith('\"\"\"'); "
        "print(sorted(r.examples()))"
    )
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); " + code],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "graph_break" in out.stdout and "hub_branches" in out.stdout



@pytest.mark.parametrize("package", ["fusionviz/model", "fusionviz/ui"])
def test_a_package_folder_holds_at_most_15_modules(package):
    """Past that a folder is a subpackage in all but name: group by concern instead."""
    modules = sorted(p.name for p in (ROOT / package).glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= 15, modules


def test_the_readmes_code_layout_names_every_module_and_package():
    """A newcomer finds every module in README's "Layout of the code" (by its name)."""
    import re

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Layout of the code"):]
    section = section[:section.index("\n## ", 5)]
    words = set(re.findall(r"[A-Za-z_]\w*", section))
    modules = [p for p in (ROOT / "fusionviz").rglob("*.py")
               if p.stem not in ("__init__", "__main__")]
    packages = [p for p in (ROOT / "fusionviz").rglob("*") if (p / "__init__.py").is_file()]
    missing = sorted(str(p.relative_to(ROOT)) for p in modules + packages
                     if p.stem not in words)
    assert not missing, f"not in README's Layout of the code: {missing}"
