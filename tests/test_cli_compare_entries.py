"""``fusionviz summary DIR`` on an experiment whose traces timed the callables they
compiled: the report's comparison gains them where its report.md was written without
(a real GPU trace, HF Llama training, against a copy with a slower compiled backward)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from fusionviz.cli.main import main
from fusionviz.model.experiment import compare
from fusionviz.model.tracefile.io import load_trace, save_trace

LLAMA = Path(__file__).parent / "data" / "gpu_llama_hf_train.json.gz"


def experiment(folder: Path, report: str) -> Path:
    a = load_trace(LLAMA)
    e = a.entries[0]
    slow = dataclasses.replace(e.compiled_backward, device=tuple(
        1.15 * d for d in e.compiled_backward.device))
    b = dataclasses.replace(a, entries=(dataclasses.replace(e, compiled_backward=slow),))
    folder.mkdir()
    save_trace(a, folder / "a.json.gz")
    save_trace(b, folder / "b.json.gz")
    (folder / "experiment.json").write_text(json.dumps({
        "kind": "ab", "script": "llama.py", "report": "report.md", "variants": [
            {"label": label, "trace": f"{name}.json.gz", "status": "ok"}
            for label, name in (("default", "a"), ("slower", "b"))]}))
    (folder / "report.md").write_text(report)
    return folder


def test_an_older_report_gets_the_compiled_callables(tmp_path, capsys):
    folder = experiment(tmp_path / "old", "## default vs slower\n")
    assert main(["summary", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count(compare.ENTRIES_TITLE) == 1
    line = next(x for x in out.splitlines()
                if x.startswith("| LossOf (module) | backward | device |"))
    assert "+15.0%" in line and "x faster" in line


def test_a_report_that_has_them_is_printed_as_it_is(tmp_path, capsys):
    a, b = load_trace(LLAMA), load_trace(LLAMA)
    report = compare.report_markdown(compare.compare(a, b, "default", "slower"))
    folder = experiment(tmp_path / "new", report)
    assert main(["summary", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count(compare.ENTRIES_TITLE) == 1 and report.strip() in out
