"""The file layout of a trace: one JSON line for the core, then one per bulky part.

A trace file (version 2 on) is JSON Lines. Line 1 is the trace without its bulk:
nodes without reads/writes/origins, rounds without their candidates and verdicts. Then, graph by graph, the nodes' details in lines of ``chunk`` nodes (each a
list of ``[reads, writes, origins]``), and for every round one line per field of
``ROUND_PARTS``. A lazy load parses line 1 only (under half of a big trace's bytes) and
each other line when a field in it is first read; an eager load puts every part back
in place. A single JSON document (version 1, or a hand-written trace) still loads.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fusionviz.model.errors import TraceError
from fusionviz.model.lazy import Part

NODE_PARTS = ("reads", "writes", "origins")
OPTIONAL_NODE_FIELDS = ("collective", "extern_call")  # left out of the core where None
ROUND_PARTS = ("candidates", "verdicts")  # groups stay in the core: every step reads them
CHUNK = 1000  # nodes per line of details: each line parses in a few milliseconds


def encode(data: dict, dumps: Callable[[object], bytes]) -> bytes:
    """The lines of trace dict ``data`` (consumed: its bulk moves to the part lines)."""
    lines = []
    for graph in data.get("graphs", ()):
        details = []
        for node in graph.get("nodes", ()):
            details.append([node.pop(k, []) for k in NODE_PARTS])
            for key in OPTIONAL_NODE_FIELDS:  # most nodes have neither: read back as None
                if node.get(key, 0) is None:
                    del node[key]
        lines += [dumps(details[i:i + CHUNK]) for i in range(0, len(details), CHUNK)]
        for rnd in graph.get("rounds", ()):
            lines += [dumps(rnd.pop(k, [])) for k in ROUND_PARTS]
    data["parts"] = {"chunk": CHUNK, "lines": len(lines)}
    return b"\n".join([dumps(data), *lines]) + b"\n"


def split(raw: bytes, parse: Callable[[bytes], object],
          partial: bool = False) -> tuple[object, PartStore | None]:
    """(the trace's core JSON, the store of its part lines); a single JSON document
    (no part lines) gives (the document, None). ``partial``: a file cut after its core
    line still splits, its missing lines raising TraceError when read."""
    end = raw.find(b"\n")
    if end > 0:
        try:
            core = parse(raw[:end])
        except (ValueError, UnicodeDecodeError):
            core = None  # e.g. indented JSON: its first line is not a document
        if isinstance(core, dict) and "parts" in core:
            return core, PartStore(raw[end + 1:].split(b"\n"), core.pop("parts"), parse,
                                   partial, described_by=end)
    doc = parse(raw)
    if isinstance(doc, dict) and "parts" in doc:  # a core line cut before its newline:
        return doc, PartStore([], doc.pop("parts"), parse, partial,  # its parts are missing
                              described_by=len(raw))
    return doc, None


class PartStore:
    """The part lines of one file, each parsed on first use."""

    def __init__(self, lines: list[bytes], layout: object, parse, partial: bool = False,
                 *, described_by: int | None = None) -> None:
        """``described_by``: the bytes of the core line, which names every part (each
        node and round in it takes a few bytes), so a file cannot have more part lines."""
        if lines and not lines[-1]:
            lines.pop()  # the final newline
        expected = layout.get("lines") if isinstance(layout, dict) else None
        if isinstance(expected, int) and described_by is not None and expected > described_by:
            # Before the missing lines of a cut file are counted out: a core line
            # claiming 10**12 lines would ask for terabytes.
            raise TraceError(f"the file's core line claims {expected:,} part lines, more "
                             f"than its {described_by:,} bytes can describe (the file "
                             f"has {len(lines):,})")
        if not isinstance(layout, dict) or not isinstance(layout.get("chunk"), int) \
                or not isinstance(expected, int) or layout["chunk"] < 1 \
                or len(lines) > expected or (len(lines) < expected and not partial):
            raise TraceError(f"the file's parts are incomplete: {len(lines)} lines of "
                             f"{expected if expected is not None else '?'}")
        self.present = len(lines)  # a cut file: the lines after these are missing
        self.missing = expected - len(lines)
        lines = [*lines, *([None] * self.missing)]
        self.lines: list[bytes | None] = lines
        self.chunk: int = layout["chunk"]
        self._parse = parse
        self._parsed: dict[int, object] = {}
        self._failed: dict[int, str] = {}  # lines that could not be parsed: why
        self._uses = [0] * len(lines)  # lazy fields still to read from each line
        # Equal tuples of names built from this file share one object (see
        # build._SHARED): the core's and every lazily built part's.
        self.shared: dict[tuple, tuple] = {}
        self.source = ""  # the file's path, for errors raised when a part is read

    def parsed(self, line: int, reference: bool = False) -> object:
        if reference:  # json's reading (an eager load's fallback), not cached
            return self._parse_line(line, json.loads)
        if line in self._failed:  # every field of a bad line: one parse, one message
            raise TraceError(self._failed[line])
        if line not in self._parsed:
            try:
                self._parsed[line] = self._parse_line(line, self._parse)
            except TraceError as e:
                self._failed[line] = str(e)
                raise
            if not self._uses[line]:  # an eager load: the text is done with
                self.lines[line] = None
        return self._parsed[line]

    def _parse_line(self, line: int, parse) -> object:
        text = self.lines[line]
        if line >= self.present:
            raise TraceError(f"part line {line + 2} of the file is missing: the file is cut "
                             f"after line {self.present + 1}")
        if text is None:
            raise TraceError(f"part line {line + 2} of the file was already let go")
        try:
            return parse(text)
        except (ValueError, UnicodeDecodeError) as e:
            message = f"part line {line + 2} of the file is not JSON: {e}"
        except RecursionError:
            message = f"part line {line + 2} of the file is nested too deeply"
        # raised outside the handler: the JSON error holds the whole line (its .doc),
        # and each field that failed keeps its error
        raise TraceError(message)

    def get(self, line: int, path: tuple[int, ...], reference: bool = False) -> object:
        """The value at ``path`` in part ``line`` (for a lazy field: see ``Part``);
        ``reference``: as ``json`` reads it."""
        value = self.parsed(line, reference)
        try:
            for k in path:
                value = value[k]
        except (TypeError, IndexError, KeyError) as e:
            raise TraceError(f"part line {line + 2} of the file does not have the shape of "
                             f"its part: {e!r}") from e
        return value

    def done(self, line: int) -> None:
        """One field of ``line`` was built; once all were, the line (text and parsed
        JSON) is let go. A field that failed never is: its line stays for the others."""
        self._uses[line] -= 1
        if not self._uses[line]:
            self._parsed.pop(line, None)
            self.lines[line] = None

    def attach(self, core: dict, lazy: bool) -> dict:
        """Put each part in its place in ``core``: itself (eager), or a ``Part`` that
        says where it is (lazy). Returns ``core``."""
        line = 0
        try:
            for graph in core.get("graphs", ()):
                nodes = graph.get("nodes", ())
                for start in range(0, len(nodes), self.chunk):
                    chunk = None if lazy else self.parsed(line)
                    for i, node in enumerate(nodes[start:start + self.chunk]):
                        for k, name in enumerate(NODE_PARTS):
                            node[name] = (Part(self, line, (i, k)) if lazy
                                          else chunk[i][k])
                    self._uses[line] = len(NODE_PARTS) * len(nodes[start:start + self.chunk])
                    line += 1
                for rnd in graph.get("rounds", ()):
                    for name in ROUND_PARTS:
                        rnd[name] = Part(self, line) if lazy else self.parsed(line)
                        self._uses[line] = 1
                        line += 1
        except (TypeError, AttributeError, IndexError, KeyError) as e:
            raise TraceError(f"the file's parts do not match its graphs: {e!r}") from e
        if line != len(self.lines):
            raise TraceError(f"the file's parts do not match its graphs: {len(self.lines)} "
                             f"lines for {line} parts")
        return core


def dumps_stdlib(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
