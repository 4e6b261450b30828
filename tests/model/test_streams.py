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
