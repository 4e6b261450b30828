"""Defects a review of #11–#13 found, each pinned by a test on real inputs."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.run.settle import finalize_trace
from fusionviz.model.run.streams import CUT, Lines
from fusionviz.model.tracefile.bounded import read_bytes
from fusionviz.model.tracefile.io import load_trace, read_script
from fusionviz.model.tracefile.save_as import save_trace_as

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "v2_cpu_mlp_block.json.gz"  # format 2: a core line, then part lines


def test_a_long_line_that_comes_whole_in_one_chunk_is_cut_too():
    lines = Lines(10).feed(b"x" * 50 + b"\nshort\n")
    assert lines == ["x" * 10 + CUT, "short"]


def test_the_script_record_of_a_plain_trace_is_read_from_its_first_line_only(tmp_path):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(TRACE.read_bytes()))
    first = plain.read_bytes().split(b"\n", 1)[0]
    assert read_bytes(plain, max_bytes=len(first) + 10, first_line=True).rstrip(b"\n") == first
    assert read_script(plain) == load_trace(TRACE).script


def test_settling_never_replaces_a_file_it_could_not_read(tmp_path):
    """A trace whose core line this reader refuses (here: cut inside it) is left as it
    is, not overwritten by an empty trace of the ending."""
    cut = tmp_path / "cut.json"
    text = gzip.decompress(TRACE.read_bytes())
    cut.write_bytes(text[:200])
    with pytest.raises(TraceError):
        read_script(cut)
    settled = finalize_trace(str(cut), exit_code=None, status="cancelled", script="s.py")
    assert settled.status == "cancelled"
    assert cut.read_bytes() == text[:200]


def test_save_as_from_a_cut_gzip_says_why_instead_of_raising_eof(tmp_path):
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(TRACE.read_bytes()[:-40])
    with pytest.raises(OSError, match="cannot be read to the end"):
        save_trace_as(cut, tmp_path / "plain.json")
    assert not list(tmp_path.glob(".plain*"))
    save_trace_as(cut, tmp_path / "same.json.gz")  # bytes as they are: fine
    assert (tmp_path / "same.json.gz").read_bytes() == cut.read_bytes()
    shutil.rmtree(tmp_path)
