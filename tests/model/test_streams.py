"""Bounded reading of a child's output: line length and tail size stay bounded."""

from fusionviz.model.run.streams import CUT, Lines, Tail


def test_lines_are_split_across_chunks_and_the_last_one_is_kept():
    lines = Lines()
    assert lines.feed(b"a\nb") == ["a"]
    assert lines.feed(b"c\r\nd") == ["bc"]
    assert lines.close() == ["d"]


def test_an_overlong_line_is_cut_and_its_rest_dropped():
    lines = Lines(max_line=10)
    got = []
    for _ in range(100):
        got += lines.feed(b"y" * 7)
    got += lines.feed(b"zz\nnext\n")
    assert got == ["y" * 10 + CUT, "next"]
    assert len(lines._buf) <= 10
    assert lines.close() == []


def test_tail_keeps_the_last_lines_within_its_size():
    tail = Tail(max_lines=5, max_chars=100)
    for i in range(1000):
        tail.add(f"line {i}")
    assert tail.text().splitlines() == ["[… 995 earlier lines not kept]",
                                        *(f"line {i}" for i in range(995, 1000))]
    tail.add("w" * 1000)
    assert len(tail.text()) < 150 and tail.text().endswith("w")
    tail.clear()
    assert tail.text() == ""


def test_progress_messages_are_checked_field_by_field():
    from fusionviz.model.run.protocol import encode_progress, parse_progress

    good = encode_progress("round", graph=0, round=2, nodes=7, extra=[1])
    assert parse_progress(good) == {"event": "round", "graph": 0, "round": 2, "nodes": 7}
    assert parse_progress(encode_progress("timing", graph=1, compiled_ms=None))["graph"] == 1
    for bad in (
        'FUSIONVIZ {"event":"round","round":"x"}',
        'FUSIONVIZ {"event":"round","round":true}',
        'FUSIONVIZ {"event":"round","round":-1}',
        'FUSIONVIZ {"event":"variant","index":0,"of":99999999999}',
        'FUSIONVIZ {"event":"timing","compiled_ms":NaN}',
        'FUSIONVIZ {"event":"start","script":null}',
        'FUSIONVIZ {"event":"nope"}',
        'FUSIONVIZ ["event"]',
        "FUSIONVIZ " + "[" * 100000 + "]" * 100000,
        "FUSIONVIZ garbage",
        "hello",
    ):
        assert parse_progress(bad) is None, bad
