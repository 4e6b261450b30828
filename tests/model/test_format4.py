"""Format 4 (#23): times in whole nanoseconds (``tracefile.times``), an entry's eager
kernels written grouped (``tracefile.kernel_order``), numbered names counted from one
of a prefix's last numbers, in code and in the table of strings (``columns``): each
read back to the same trace (its times to the nanosecond, once), and each malformed
value a TraceError naming the file, eager and lazy."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from pathlib import Path

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import EagerKernel, Entry
from fusionviz.model.tracefile import columns, kernel_order, times
from fusionviz.model.tracefile.io import load_trace, save_trace, to_dict

REAL = Path(__file__).parents[1] / "data" / "gpu_gpt2_train.json.gz"


@pytest.fixture(scope="module")
def real():
    return load_trace(REAL)


@pytest.fixture(scope="module")
def saved(real, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("format4") / "t.json"  # plain text, to edit lines
    save_trace(real, path)
    return path


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _damaged(saved: Path, tmp_path: Path, change) -> Path:
    lines = _lines(saved)
    core = json.loads(lines[0])
    change(core)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\n".join([json.dumps(core).encode(), *lines[1:]]) + b"\n")
    return bad


def _refused(path: Path, message: str) -> None:
    for lazy in (False, True):
        with pytest.raises(TraceError, match=rf"bad\.json: .*{message}"):
            load_trace(path, lazy=lazy)


def test_times_are_whole_nanoseconds_read_back_to_the_nanosecond():
    columns_of = {  # times; spreads; launches' starts and ends
        "times": ([12.35704300006546, None, 3], [12.357043, None, 3.0]),
        "spreads": ([[1.5, 2.2500004], []], [[1.5, 2.25], []]),
        "launches": ([[[0.1, 0.2000004]], []], [[[0.1, 0.2]], []]),
    }
    for values, expected in columns_of.values():
        for delta in (False, True):
            column = times.encode_times(values, delta)
            back = times.decode_times(json.loads(json.dumps(column)), len(values), delta)
            assert back == expected
            assert times.encode_times(back, delta) == column  # rounded once: a re-save
    assert times.encode_times(columns_of["times"][0], False) == [12357043, None, 3000000]
    assert times.encode_times([5.0, None, 5.000001, 7.5], True) == [5000000, None, 1,
                                                                    2499999]
    assert times.encode_times([[7.0, 7.5], [8.0]], True) == {  # lists: lengths, items
        "n": [2, 1], "v": [7000000, 500000, 500000]}


@pytest.mark.parametrize("odd", [math.nan, math.inf, True, "5", 1e300, [1.0], {}])
def test_a_column_with_something_else_than_times_is_written_as_it_is(odd):
    column = times.encode_times([1.0, odd], False)
    assert column == {"plain": [1.0, odd]}
    deep = [[[[1.0]]]]  # lists in lists in lists: deeper than launches
    assert times.encode_times(deep, False) == {"plain": deep}
    strings = columns.Strings()
    written = columns.encode(EagerKernel, [to_dict(EagerKernel(name="k", ms=1.0))], strings,
                             ns=True)
    assert written["ms"] == [1_000_000]


@pytest.mark.parametrize(("column", "message"), [
    (["1"], "something else than whole nanoseconds"),
    ([1.5], "something else than whole nanoseconds"),
    ([True], "something else than whole nanoseconds"),
    ([[1, [2, [3]]]], "something else than whole nanoseconds"),
    ([{"a": 1}], "something else than whole nanoseconds"),
    ([2**53], "out of range"),
    ([1, 2], r"holds 2 for 1 records"),
    ({"n": [1]}, r"not \{n, v\}"),
    ({"n": [-1], "v": []}, "something else than lengths"),
    ({"n": [3], "v": [1]}, r"holds 1 for 3 records"),
    ([[1, 2]], "something else than whole nanoseconds"),
])
def test_a_bad_column_of_times_is_refused(column, message):
    with pytest.raises(TraceError, match=message):
        times.decode_times(column, 1, False)


def test_starts_that_add_up_past_the_range_are_refused():
    with pytest.raises(TraceError, match="out of range"):
        times.decode_times([2**52, 2**52], 2, True)


def test_a_real_trace_is_written_in_nanoseconds_and_reads_back(real, saved):
    core = json.loads(_lines(saved)[0])
    assert core["version"] == 4 and core["parts"]["columns"] == 2
    kernels = core["graphs"]["v"]["kernels"]["v"]
    assert all(type(n) is int for n in kernels["ms"] if n is not None)
    trace = load_trace(saved)
    ms = [k.ms for g in real.graphs for k in g.kernels]
    assert [k.ms for g in trace.graphs for k in g.kernels] == [
        None if x is None else round(x * 1e6) / 1e6 for x in ms]
    launches = [k.launches for g in trace.graphs for k in g.kernels if k.launches]
    assert launches and launches == [
        tuple((round(a * 1e6) / 1e6, round(b * 1e6) / 1e6) for a, b in k.launches)
        for g in real.graphs for k in g.kernels if k.launches]


@pytest.mark.parametrize(("change", "message"), [
    (lambda v: v["ms"].__setitem__(0, "x"), "whole nanoseconds"),
    (lambda v: v["start_ms"].__setitem__(0, 2**60), "out of range"),
    (lambda v: v["launches"]["n"].append(0), "records"),
    (lambda v: v["ms_spread"]["v"].append(0), "records"),
])
def test_a_bad_time_in_a_file_is_refused_at_open(saved, tmp_path, change, message):
    bad = _damaged(saved, tmp_path, lambda core: change(core["graphs"]["v"]["kernels"]["v"]))
    _refused(bad, message)


def test_eager_kernels_are_written_grouped_and_read_back_heaviest_first(real, saved):
    core = json.loads(_lines(saved)[0])
    assert core["parts"]["grouped"] == [0]
    table = columns.table(core["strings"], coded=True)
    written = columns.decode(Entry, core["entries"]["v"], 1, table, True)[0]["kernels"]
    def in_order(kernels) -> float:  # the share of neighbours in grouped order
        keys = list(map(kernel_order._key, kernels))
        return sum(a <= b for a, b in zip(keys, keys[1:], strict=False)) / len(keys)

    assert in_order(written) > 0.95 and in_order(map(to_dict, real.entries[0].kernels)) < 0.6
    assert load_trace(saved).entries[0].kernels == tuple(
        dataclasses.replace(k, ms=round(k.ms * 1e6) / 1e6) for k in real.entries[0].kernels)


def test_kernels_of_equal_time_keep_their_order(tmp_path):
    # heaviest first; equal times in an order the grouping does not give (and a time
    # that only its nanosecond rounding makes equal to the one before it)
    spec = [("b.1", 2.0), ("a.2", 1.0), ("b.0", 1.0), ("a.1", 1.0), ("a.10", 1.0),
            ("a.2", 0.5), ("a.0", 0.5000000001), ("a.9", 0.5)]
    spec[5:7] = [("a.2", 0.5000000001), ("a.0", 0.5)]  # (heaviest first, still)
    kernels = tuple(EagerKernel(name=f"k{i}", module=m, ms=ms) for i, (m, ms) in
                    enumerate(spec))
    trace = dataclasses.replace(load_trace(REAL), entries=(Entry(name="f", kernels=kernels),))
    save_trace(trace, tmp_path / "t.json.gz")
    back = load_trace(tmp_path / "t.json.gz")
    assert [k.name for k in back.entries[0].kernels] == [k.name for k in kernels]
    entries = [to_dict(e) for e in trace.entries]
    assert kernel_order.group(entries) == [0]
    assert [k["name"] for k in entries[0]["kernels"]] != [k.name for k in kernels]


def test_kernels_that_are_not_heaviest_first_are_written_as_they_are(real, tmp_path):
    kernels = tuple(reversed(real.entries[0].kernels))
    trace = dataclasses.replace(real, entries=(dataclasses.replace(real.entries[0],
                                                                  kernels=kernels),))
    save_trace(trace, tmp_path / "t.json")
    assert json.loads(_lines(tmp_path / "t.json")[0])["parts"]["grouped"] == []
    assert [k.name for k in load_trace(tmp_path / "t.json").entries[0].kernels] == [
        k.name for k in kernels]


@pytest.mark.parametrize(("grouped", "message"), [
    ([5], "entry 5 has no kernels"), ([-1], "entry -1 has no kernels"),
    ([0, 0], "not a list of distinct indices"), ([True], "not a list of distinct"),
    ("0", "not a list of distinct indices"),
])
def test_a_bad_list_of_grouped_entries_is_refused_at_open(saved, tmp_path, grouped, message):
    bad = _damaged(saved, tmp_path, lambda core: core["parts"].__setitem__("grouped", grouped))
    _refused(bad, rf"the core line's columns: .*{message}")


def test_grouped_kernels_without_times_are_refused_at_open(saved, tmp_path):
    def change(core):
        ms = core["entries"]["v"]["kernels"]["v"]["ms"]
        core["entries"]["v"]["kernels"]["v"]["ms"] = {"plain": ["x", *ms[1:]]}

    _refused(_damaged(saved, tmp_path, change), "have no times to sort them by")


BACKWARD = "".join(  # a backward's new names between the forward's saved ones
    f"    mul_{900 + i} = torch.ops.aten.mul.Tensor(mul_{300 - i}, add_{100 - i})\n"
    f"    add_{800 + i} = torch.ops.aten.add.Tensor(mul_{900 + i}, add_{100 - i})\n"
    for i in range(60))


def test_code_names_are_counted_from_the_nearest_of_a_prefixs_last_numbers():
    written = columns.encode_code(BACKWARD, columns.RECENT)
    assert columns.decode_code(written) == BACKWARD
    assert "$1mul_" in written and "$1add_" in written  # from the second-last
    once = columns.encode_code(BACKWARD)  # format 3: from the last only
    assert "$1" not in once and columns.decode_code(once) == BACKWARD
    assert len(gzip.compress(written.encode())) < 0.8 * len(gzip.compress(once.encode()))


@pytest.mark.parametrize("text", ["$1add_1", "$add_3 $2add_1", "$9add_1"])
def test_code_counted_from_a_number_its_prefix_lacks_is_refused(text):
    with pytest.raises(TraceError, match="counted from a number its prefix does not have"):
        columns.decode_code(text)


def test_the_table_writes_numbered_names_inside_its_strings_as_differences():
    texts = ["extern_kernels.mm(buf3, primals_6, out=buf4)",
             "extern_kernels.mm(buf5, primals_7, out=buf6)", "a$b_1 c", "x1y23 buf03 é_5 0x1f",
             "buf" + "9" * 17 + " buf" + "9" * 18 + ")", "", "blocks.3.attn"]
    strings = columns.Strings()
    for s in texts:
        strings(s)
    written = strings.table(coded=True)
    assert written[:2] == ["extern_kernels.mm($buf4, $primals_7, out=$buf1)",
                           "extern_kernels.mm($buf1, $primals_1, out=$buf1)"]  # a layer
    assert written[2] == ["a$b_1 c"]  # holds the marker: as it is
    assert written[3] == "$x1y24 buf03 é_5 0x1f"  # leading zeros, not ASCII: as they are
    assert written[4] == f"$buf{10**17 - 7} buf{'9' * 18})"  # (18 digits: too long)
    assert columns.table(json.loads(json.dumps(written)), coded=True) == texts
    assert written[5:] == texts[5:]
    with pytest.raises(TraceError, match="not a list of strings"):
        columns.table([["a"]])  # format 3: no [string]s


def test_a_table_string_that_grows_past_twice_its_size_is_refused():
    bomb = ["$a_" + "9" * 16 + " " + "$a_0 " * 300_000]
    with pytest.raises(TraceError, match="grow past twice"):
        columns.table(bomb, coded=True)


def test_format_4_is_smaller_than_format_3_for_a_real_trace(real, tmp_path):
    save_trace(real, tmp_path / "v3.json.gz", version=3)
    save_trace(real, tmp_path / "v4.json.gz")
    v3, v4 = (tmp_path / "v3.json.gz").stat().st_size, (tmp_path / "v4.json.gz").stat().st_size
    assert v4 < 0.9 * v3, (v3, v4)
    assert load_trace(tmp_path / "v3.json.gz") == real
