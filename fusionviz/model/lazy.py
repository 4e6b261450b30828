"""Trace fields built on first read, so a big trace opens before all of it is built.

A trace's bulk is in the parts one looks at a piece at a time: the reads, writes and
FX origins of each node (the details pane, a tooltip, a search) and the candidates
and verdicts of each round (the ledger of the step shown). ``load_trace(lazy=True)``
leaves those as ``Pending`` JSON; ``LazyField``, a data descriptor installed on the
model classes by ``lazy_fields``, builds the value the first time the field is read
and stores it in the object's ``__dict__``. Reading a field costs one Python call
more than a plain attribute; nothing else changes: equality, ``repr``, saving and
``dataclasses.replace`` all read the fields, and the frozen classes stay frozen.

``complete`` walks a trace and builds what is still pending, a step at a time, for a
caller (the window) that finishes the load in idle time and reports a malformed part
as soon as it is met.

``PerObject`` keeps what is derived from a model object (a graph's fusion steps, its
kernels' facts) once per object, for as long as the object lives.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

from fusionviz.model.errors import TraceError


class Pending:
    """Unbuilt JSON of a field and the function building it (raises TraceError).

    A build that failed keeps its error: every later read raises it again (the JSON
    it came from may be let go already), naming the file where one is known.
    """

    __slots__ = ("raw", "build", "error", "source")

    def __init__(self, raw: object, build: Callable[[object, object, str], object]) -> None:
        self.raw = raw
        self.build = build
        self.error: TraceError | None = None
        self.source = _SOURCE.get()  # the file being loaded (a part line names its own)

    def resolve(self, owner: object, name: str) -> object:
        if self.error is not None:  # a fresh traceback: raised again, it would grow
            raise self.error.with_traceback(None)
        try:
            return self.build(self.raw, owner, name)
        except TraceError as e:
            self.error = TraceError(self._where(str(e)))
            raise self.error from e
        except (RecursionError, ArithmeticError, ValueError, TypeError, KeyError, IndexError,
                AttributeError) as e:  # malformed JSON the builders did not foresee
            self.error = TraceError(self._where(
                f"{type(owner).__name__}.{name} is malformed: {type(e).__name__}: {e}"))
            raise self.error from e

    def _where(self, message: str) -> str:
        source = getattr(getattr(self.raw, "store", None), "source", "") or self.source
        return message if not source or message.startswith(source) else f"{source}: {message}"


_SOURCE: ContextVar[str] = ContextVar("fusionviz_lazy_source", default="")


@contextmanager
def sourced(path: str) -> Iterator[None]:
    """Fields left pending while this is open name ``path`` when they fail to build
    (a single-document trace holds them inline, in no part line that names its file)."""
    token = _SOURCE.set(path)
    try:
        yield
    finally:
        _SOURCE.reset(token)


class LazyField:
    """Data descriptor of one dataclass field: a ``Pending`` value is built when read.

    Being a data descriptor, it sees the frozen ``__init__``'s ``object.__setattr__``
    too (and stores the value as is); the class's defaults were bound by
    ``@dataclass`` before it was installed.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        state = obj.__dict__
        value = state[self.name]
        if value.__class__ is Pending:
            value = state[self.name] = value.resolve(obj, self.name)
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.name] = value


def lazy_fields(cls: type, *names: str) -> type:
    """Let fields ``names`` of dataclass ``cls`` hold ``Pending`` values."""
    for name in names:
        if name not in cls.__dataclass_fields__:
            raise TypeError(f"{cls.__name__} has no field {name!r}")
        setattr(cls, name, LazyField(name))
    cls.__lazy_fields__ = frozenset(names)
    return cls


def is_pending(obj: object, name: str) -> bool:
    return obj.__dict__.get(name).__class__ is Pending


def complete(trace) -> Iterator[tuple[int, int]]:
    """Build every pending field of ``trace``; yields (done, total) after each object.

    Graph by graph: the rounds' ledgers first (a step shows one), then the nodes'
    details. A malformed part raises TraceError from the step that meets it.
    """
    owners = [(obj, type(obj).__lazy_fields__)
              for graph in trace.graphs for part in (graph.rounds, graph.nodes) for obj in part]
    total = len(owners)
    for done, (obj, names) in enumerate(owners, 1):
        for name in names:
            getattr(obj, name)
        yield done, total


def pending_fields(trace) -> int:
    """How many fields of ``trace`` are still unbuilt."""
    return sum(is_pending(obj, name)
               for graph in trace.graphs for part in (graph.rounds, graph.nodes)
               for obj in part for name in type(obj).__lazy_fields__)


class Part:
    """Where a lazy field's JSON lies in a trace file's part lines (see ``tracefile.parts``):
    the store that parses a line on first use, the line, and the path inside it."""

    __slots__ = ("store", "line", "path")

    def __init__(self, store, line: int, path: tuple[int, ...] = ()) -> None:
        self.store = store
        self.line = line
        self.path = path

    def value(self) -> object:
        return self.store.get(self.line, self.path)

    def reference(self) -> object:
        """The value as the reference parser (``json``) reads it: what an eager load
        builds from when the fast parser's reading does not fit (integers beyond 64
        bits, which orjson reads as floats)."""
        return self.store.get(self.line, self.path, reference=True)

    def done(self) -> None:
        """The field was built: its line may be let go once all of its fields are."""
        self.store.done(self.line)


V = TypeVar("V")


class PerObject(Generic[V]):
    """A value per object, kept while the object lives (a trace is never mutated, so
    what is derived from one of its objects holds as long as it does).

    Keyed by identity: hashing a frozen ``Graph`` or ``Trace`` would walk every field.
    A weak reference tells the object from a newer one that got its id once it was
    freed, and drops the entry when the object goes, so a closed trace is not kept
    alive. The value must not refer to its object (it would never go).
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, V]] = {}

    def get(self, obj: object) -> V | None:
        hit = self._entries.get(id(obj))
        return hit[1] if hit is not None and hit[0]() is obj else None

    def put(self, obj: object, value: V) -> V:
        key = id(obj)
        self._entries[key] = (weakref.ref(obj, lambda ref: self._forget(key, ref)), value)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def _forget(self, key: int, ref: weakref.ref) -> None:
        hit = self._entries.get(key)
        if hit is not None and hit[0] is ref:  # not the entry of a newer object of that id
            del self._entries[key]
