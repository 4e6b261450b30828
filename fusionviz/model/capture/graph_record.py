"""Mutable per-graph recording state, turned into a ``trace.Graph`` on demand."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fusionviz.model.capture.kernels import KernelRecord
from fusionviz.model.capture.nodes import edges, members, node_record
from fusionviz.model.capture.rounds import RoundRecorder
from fusionviz.model.trace import (
    CommPass,
    Graph,
    Group,
    Node,
    Reorder,
    Round,
    Split,
    Timing,
)


@dataclass
class GraphRecord:
    """Everything recorded for one GraphLowering, filled in as compilation runs."""

    index: int
    compile_id: str
    kind: str
    t0: float = field(default_factory=time.perf_counter)
    device: str = "cpu"
    backend: str = ""
    scheduler: object = None
    nodes: list[Node] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    round: RoundRecorder | None = None
    in_fuse_nodes: bool = False
    fusion_s: float = 0.0
    final_groups: tuple[Group, ...] = ()
    kernels: list[KernelRecord] = field(default_factory=list)
    compile_s: float = 0.0
    timing: Timing | None = None
    warnings: list[str] = field(default_factory=list)
    reorders: list[Reorder] = field(default_factory=list)  # post-fusion order passes
    comm_passes: list[CommPass] = field(default_factory=list)  # FX passes on collectives
    replay: dict = field(default_factory=dict)  # what ``fusionviz replay`` compiles again
    replay_note: str = ""  # why it is not recorded
    large_bodies: tuple[int, ...] = ()  # op counts of bodies stored for their size
    aot_id: int | None = None  # AOTAutograd's graph id: a forward's backward shares it
    split: Split | None = None  # a piece of a Dynamo graph split before Inductor

    def snapshot_nodes(self, scheduler, snodes) -> None:
        """Record the pre-fusion nodes (first ``fuse_nodes`` call of a scheduler)."""
        self.scheduler = scheduler
        basic = [n for s in snodes for n in _basic(s)]
        self.nodes = [node_record(n, scheduler) for n in basic]

    def add_kernel(self, name: str, backend: str, snodes, nbytes=None) -> None:
        names = [m for s in snodes for m in members(s)]
        for rec in self.kernels:
            if rec.name == name and not rec.extern:  # same source reused: one kernel
                rec.nodes.extend(n for n in names if n not in rec.nodes)
                return
        self.kernels.append(KernelRecord(name=name, backend=backend, nodes=names, bytes=nbytes))
        self.backend = self.backend or backend

    def to_graph(self) -> Graph:
        groups = self.final_groups or (self.rounds[-1].groups_after if self.rounds else ())
        return Graph(
            index=self.index,
            compile_id=self.compile_id,
            kind=self.kind,
            device=self.device,
            backend=self.backend,
            nodes=tuple(self.nodes),
            edges=edges(self.nodes),
            rounds=tuple(self.rounds),
            final_groups=groups,
            kernels=tuple(k.to_kernel(groups) for k in self.kernels),
            compile_s=self.compile_s,
            fusion_s=self.fusion_s,
            timing=self.timing,
            warnings=tuple(self.warnings),
            reorders=tuple(self.reorders),
            comm_passes=tuple(self.comm_passes),
            replay=self.replay,
            replay_note=self.replay_note,
            large_bodies=self.large_bodies,
            split=self.split,
        )


def _basic(snode) -> list:
    try:
        return list(snode.get_nodes())
    except Exception:  # noqa: BLE001
        return [snode]
