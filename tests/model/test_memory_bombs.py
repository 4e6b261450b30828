"""Memory bounded in proportion to the file (#11): a small gzip file that inflates to
hundreds of megabytes of tiny JSON values (a 100 KB one took 3 GB) is refused after
its first few megabytes, eager, lazy, by the command line and by ``read_script``;
real traces stay far below their budget; gzip files of several members still load."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.errors import TraceError
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile import bounded
from fusionviz.model.tracefile.io import load_trace, read_script, save_trace

DATA = Path(__file__).resolve().parents[1] / "data"
REAL_TRACES = sorted(DATA.glob("*.json.gz"))
SHAPES = {"lists": b"[],", "dicts": b"{},", "floats": b"0.5,", "strings": b'"ab",'}
BOMB_MB = 100  # of JSON: 100 to 150 KB of gzip
REFUSED = r"would take more than .* of memory .* may take up to 256\.0 MB"


def _deflate(pieces, level: int = 9) -> bytes:
    deflate = zlib.compressobj(level, zlib.DEFLATED, 31)
    return b"".join([*(deflate.compress(p) for p in pieces), deflate.flush()])


def _bomb(unit: bytes, megabytes: int, head: bytes = b"[", tail: bytes = b"[]]") -> bytes:
    block = unit * (1024 * 1024 // len(unit))
    return _deflate([head, *[block] * megabytes, tail])


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    paths = {}
    for shape, unit in SHAPES.items():
        paths[shape] = folder / f"{shape}.json.gz"
        paths[shape].write_bytes(_bomb(unit, BOMB_MB))
        assert paths[shape].stat().st_size < 200_000
    return paths


def _peak_mb(fn) -> float:
    """Peak memory (MB) Python allocated while ``fn`` ran."""
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 2**20


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_bomb_of_each_shape_is_refused_in_little_memory(bombs, shape, lazy):
    def load():
        with pytest.raises(TraceError, match=rf"{shape}\.json\.gz: reading .*{REFUSED}"):
            load_trace(bombs[shape], lazy=lazy)

    assert _peak_mb(load) < 200  # it took 1.6 GB (floats) to 3.2 GB (lists)


def test_a_bomb_in_a_part_line_of_a_real_trace_is_refused_everywhere(tmp_path, capsys):
    core, first, *rest = gzip.decompress((DATA / "v2_cpu_mlp_block.json.gz").read_bytes()
                                         ).split(b"\n")
    bomb = b"[" + b"[]," * (BOMB_MB * 1024 * 1024 // 3) + b"[]],"  # then the line's items
    path = tmp_path / "bomb_in_part.json.gz"
    path.write_bytes(_deflate([core, b"\n[", bomb, first[1:], b"\n", b"\n".join(rest)]))
    for lazy in (False, True):
        with pytest.raises(TraceError, match=REFUSED):
            load_trace(path, lazy=lazy)
    assert main(["summary", str(path)]) == 2
    assert "bomb_in_part.json.gz: reading this trace would take" in capsys.readouterr().err


def test_a_bomb_in_the_core_line_is_refused_by_read_script(tmp_path):
    path = tmp_path / "core_bomb.json.gz"
    path.write_bytes(_bomb(b"{},", BOMB_MB, head=b'{"format":"fusionviz-trace","x":['))

    def read():
        with pytest.raises(TraceError, match=rf"core_bomb\.json\.gz: reading .*{REFUSED}"):
            read_script(path)

    assert _peak_mb(read) < 200


def test_a_plain_json_bomb_is_bounded_by_the_ceiling(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "MAX_MEMORY", 64 * 2**20)
    monkeypatch.setattr(bounded, "MEMORY_FLOOR", 16 * 2**20)
    path = tmp_path / "plain.json"
    path.write_bytes(b"[" + b"[]," * 2**20 + b"[]]")  # 3 MB: 3,000 lists a KB
    with pytest.raises(TraceError, match=r"plain\.json: .* may take up to 64\.0 MB"):
        load_trace(path)


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_real_traces_stay_far_below_their_budget(path):
    raw = bounded.read_bytes(path)
    assert bounded.estimate_memory(raw) < bounded.memory_budget(path.stat().st_size) / 10


def test_the_estimate_is_near_what_a_big_trace_takes(tmp_path):
    path = tmp_path / "big.json.gz"
    save_trace(synthetic_trace(3000, seed=4, rounds=3), path)
    load_trace(path)  # the builders' code is made once: not part of what a trace takes
    raw = bounded.read_bytes(path)
    tracemalloc.start()
    trace = load_trace(path)
    kept = tracemalloc.get_traced_memory()[0] + len(raw)
    tracemalloc.stop()
    assert trace.graphs[0].nodes
    ratio = bounded.estimate_memory(raw) / kept
    assert 1 <= ratio <= 3, ratio
    # the estimate counts pieces: a text's estimate is its pieces' sum
    assert bounded.estimate_memory(raw) == sum(map(bounded.estimate_memory,
                                                   (raw[:1000], raw[1000:5000], raw[5000:])))


def test_gzip_of_several_members_and_zero_padding_loads_and_garbage_after_does_not(tmp_path):
    text = gzip.decompress((DATA / "v2_cpu_mlp_block.json.gz").read_bytes())
    cut = text.index(b"\n") + 100
    path = tmp_path / "members.json.gz"
    path.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]) + b"\0" * 10)
    assert load_trace(path) == load_trace(DATA / "v2_cpu_mlp_block.json.gz")
    path.write_bytes(gzip.compress(text) + b"junk")
    with pytest.raises(TraceError, match=r"members\.json\.gz: cannot read the file: Not a "
                                         "gzipped file"):
        load_trace(path)
