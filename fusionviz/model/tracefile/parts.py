"""The file layout of a trace: one JSON line for the core, then one per bulky part.

A trace file (version 2 on) is JSON Lines. Line 1 is the trace without its bulk:
nodes without reads/writes/origins, rounds without their candidates and verdicts.
Then, graph by graph, the nodes' details in lines of ``chunk`` nodes, and for every
round one line per field of ``ROUND_PARTS``. A lazy load parses line 1 only and each
other line when a field in it is first read; an eager load puts every part back in
place. A single JSON document (version 1, or a hand-written trace) still loads.

Version 3 (``columns``) writes the same lines in columns with one table of strings
(``tracefile.columns``): the core's graphs and entries, each details line (the
``[reads, writes, origins]`` of its nodes, a column each) and each round line. The
table is the core line's ``strings``; the core's ``parts`` says ``"columns": 1``, and
in ``"code"`` the graphs whose replay code has its numbered names written as
differences (``columns.encode_code``). A line is decoded when it is parsed, into the
JSON a version-2 file holds there, so the builders read both alike. Version 4 says
``"columns": 2``: times in whole nanoseconds (``tracefile.times``), the table's strings
coded as code is, and in ``"grouped"`` the entries whose eager kernels are written
grouped (``tracefile.kernel_order``). Version 2 writes a node's details as a list of
``[reads, writes, origins]`` and the rest as plain JSON records.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fusionviz.model.errors import TraceError
from fusionviz.model.lazy import Part
from fusionviz.model.trace import Access, Candidate, Entry, Graph, Origin, Verdict
from fusionviz.model.tracefile import columns, kernel_order

NODE_PARTS = ("reads", "writes", "origins")
OPTIONAL_NODE_FIELDS = ("collective", "extern_call")  # left out of the core where None
ROUND_PARTS = ("candidates", "verdicts")  # groups stay in the core: every step reads them
CHUNK = 1000  # nodes per line of details: each line parses in a few milliseconds
# Version 3: the types of the columns of a details line, of a round line, of the core
DETAILS = (tuple[Access, ...], tuple[Access, ...], tuple[Origin, ...])
ROUND_TYPES = {"candidates": tuple[Candidate, ...], "verdicts": tuple[Verdict, ...]}
CORE_COLUMNS = {"graphs": tuple[Graph, ...], "entries": tuple[Entry, ...]}


def encode(data: dict, dumps: Callable[[object], bytes], *, version: int = 3) -> bytes:
    """The lines of trace dict ``data`` (consumed: its bulk moves to the part lines),
    in columns (version 3, and 4: ``ns``) or as records (version 2)."""
    strings = columns.Strings() if version >= 3 else None
    ns = version >= 4
    parts: list[tuple[object, list]] = []  # (a details line's DETAILS | a round part, value)
    for graph in data.get("graphs", ()):
        details = []
        for node in graph.get("nodes", ()):
            details.append([node.pop(k, []) for k in NODE_PARTS])
            if strings is None:
                for key in OPTIONAL_NODE_FIELDS:  # most have neither: read back as None
                    if node.get(key, 0) is None:
                        del node[key]
        parts += [(DETAILS, details[i:i + CHUNK]) for i in range(0, len(details), CHUNK)]
        parts += [(k, rnd.pop(k, [])) for rnd in graph.get("rounds", ()) for k in ROUND_PARTS]
    data["parts"] = {"chunk": CHUNK, "lines": len(parts)}
    if strings is not None:
        if ns:
            data["parts"]["grouped"] = kernel_order.group(data.get("entries", []))
        data["parts"]["code"] = _encode_code(data.get("graphs", ()),
                                             columns.RECENT if ns else 1)
        # The core's columns first: the table numbers the graphs' node names in node
        # order, so the columns naming nodes (edges, groups) are runs of small steps.
        for key, tp in CORE_COLUMNS.items():
            if key in data:
                data[key] = columns.encode(tp, [data[key]], strings, ns)
    lines = []
    for kind, value in parts:
        if strings is None:
            lines.append(dumps(value))
        elif kind is DETAILS:
            lines.append(dumps([columns.encode(tp, [row[k] for row in value], strings, ns)
                                for k, tp in enumerate(DETAILS)]))
        else:
            lines.append(dumps(columns.encode(ROUND_TYPES[kind], [value], strings, ns)))
    if strings is not None:
        data["parts"]["columns"] = 2 if ns else 1
        data["strings"] = strings.table(coded=ns)
    return b"\n".join([dumps(data), *lines]) + b"\n"


def _encode_code(graphs: list, recent: int) -> list[int]:
    """Each graph's replay code with its numbered names written as differences
    (``columns.encode_code``), in place; the indices of the graphs whose code is so."""
    coded = []
    for i, graph in enumerate(graphs):
        replay = graph.get("replay")
        if type(replay) is dict and type(replay.get("code")) is str:
            code = columns.encode_code(replay["code"], recent)
            if code is not None:
                graph["replay"] = {**replay, "code": code}
                coded.append(i)
    return coded


def _decode_code(graphs: list, coded: object) -> None:
    """The replay code of graphs ``coded`` (``_encode_code``) read back, in place."""
    if type(coded) is not list or (coded and set(map(type, coded)) != {int}) \
            or len(set(coded)) != len(coded):
        raise TraceError("its list of graphs with coded replay code is not a list of "
                         "distinct indices")
    for i in coded:
        replay = graphs[i].get("replay") if 0 <= i < len(graphs) else None
        if type(replay) is not dict or type(replay.get("code")) is not str:
            raise TraceError(f"graph {i} has no replay code to read")
        replay["code"] = columns.decode_code(replay["code"])


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
            store = PartStore(raw[end + 1:].split(b"\n"), core.pop("parts"), parse,
                              partial, described_by=end)
            return store.decode_core(core), store
    doc = parse(raw)
    if isinstance(doc, dict) and "parts" in doc:  # a core line cut before its newline:
        store = PartStore([], doc.pop("parts"), parse, partial,  # its parts are missing
                          described_by=len(raw))
        return store.decode_core(doc), store
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
        self.columns = layout.get("columns") in (1, 2)  # version 3: lines in columns
        self.coded = layout.get("code", [])  # version 3: graphs whose replay code is coded
        # version 4: times in whole nanoseconds, the table's strings coded
        self.ns = layout.get("columns") == 2
        self.grouped = layout.get("grouped", [])  # version 4: entries' kernels grouped
        self.table: list[str] = []  # version 3: the file's strings
        self._kinds: list[object] = [None] * expected  # version 3: what each line holds
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

    def decode_core(self, core: dict) -> dict:
        """``core`` with its columns (version 3) decoded, its table of strings kept
        for the part lines; TraceError when they are not such columns."""
        if not self.columns:
            return core
        self.table = columns.table(core.pop("strings", None), coded=self.ns)
        try:
            grouped = kernel_order.check(self.grouped)
            for key, tp in CORE_COLUMNS.items():
                if key in core:
                    core[key] = columns.decode(tp, core[key], 1, self.table, self.ns,
                                               grouped)[0]
            kernel_order.restore(core.get("entries"), grouped)
            graphs = core.get("graphs")
            if type(graphs) is not list or not all(type(g) is dict for g in graphs):
                raise TraceError("its graphs are not records")
            _decode_code(graphs, self.coded)
        except TraceError as e:
            raise TraceError(f"the core line's columns: {e}") from None
        return core

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
            value = parse(text)
        except (ValueError, UnicodeDecodeError) as e:
            message = f"part line {line + 2} of the file is not JSON: {e}"
        except RecursionError:
            message = f"part line {line + 2} of the file is nested too deeply"
        else:
            if not self.columns:
                return value
            try:
                return self._decode(line, value)
            except TraceError as e:
                message = f"part line {line + 2} of the file: {e}"
        # raised outside the handler: the JSON error holds the whole line (its .doc),
        # and each field that failed keeps its error
        raise TraceError(message)

    def _decode(self, line: int, value: object) -> object:
        """Part ``line`` of a version-3 file, as a version-2 file holds it."""
        kind = self._kinds[line]
        if isinstance(kind, int):  # a details line of ``kind`` nodes
            if type(value) is not list or len(value) != len(DETAILS):
                raise TraceError(f"a details line is not {len(DETAILS)} columns")
            cols = [columns.decode(tp, col, kind, self.table, self.ns)
                    for tp, col in zip(DETAILS, value, strict=True)]
            return [list(row) for row in zip(*cols, strict=True)]
        if kind in ROUND_TYPES:
            return columns.decode(ROUND_TYPES[kind], value, 1, self.table, self.ns)[0]
        raise TraceError("the line is not one the core line names")  # pragma: no cover

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
                    self._kinds[line] = len(nodes[start:start + self.chunk])
                    chunk = None if lazy else self.parsed(line)
                    for i, node in enumerate(nodes[start:start + self.chunk]):
                        for k, name in enumerate(NODE_PARTS):
                            node[name] = (Part(self, line, (i, k)) if lazy
                                          else chunk[i][k])
                    self._uses[line] = len(NODE_PARTS) * len(nodes[start:start + self.chunk])
                    line += 1
                for rnd in graph.get("rounds", ()):
                    for name in ROUND_PARTS:
                        self._kinds[line] = name
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
