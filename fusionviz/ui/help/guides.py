"""What each pane shows, in a few plain lines (F1: the guide to the focused pane).

``GUIDES`` is keyed by the dock's object name (``dock_graphs`` …) or, for the
explorer's own parts, ``graph``, ``stepper``, ``find``, ``comparison`` and ``window``
(anything else). A guide names the window actions whose keys it lists; the keys
themselves are read from those actions when it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QDockWidget, QWidget

WINDOW = "window"


@dataclass(frozen=True)
class Guide:
    title: str
    lines: tuple[str, ...]  # plain sentences, one paragraph each
    actions: tuple[str, ...] = ()  # window actions (``actions_by_name``) worth knowing here


GUIDES: dict[str, Guide] = {
    "graph": Guide("Graph", (
        "The shown graph's scheduler nodes before fusion, inputs at the top, outputs at "
        "the bottom; an edge means one node reads what the other wrote.",
        "A coloured region is a group fused at the current step. Each final kernel keeps "
        "one colour, the same in the Kernel pane, the Kernels table and the charts.",
        "Outlined nodes changed at this step (the stepper above picks the step).",
        "A box is a collapsed module, or N repeated blocks folded into one (×N): it shows "
        "its kernels' colours and node count; click it to open it. A number on an edge "
        "between boxes is how many edges it stands for.",
        "Click a node to select it and its kernel (the view stays put; K shows the whole "
        "kernel); Ctrl+click a second node to ask why the two were not fused. The wheel "
        "zooms, dragging pans.",
    ), ("fit", "whole_kernel", "why_not", "fold_repeated")),
    "stepper": Guide("Fusion stepper", (
        "Steps through how Inductor fused the shown graph: before fusion, each fusion "
        "round, the final kernels, then any pass that reordered them.",
        "The label names the step; the graph recolours its groups and outlines the nodes "
        "that changed.",
        "The Fusion ledger lists the candidate pairs of the round shown, with each verdict.",
    ), ("first", "prev", "next", "last")),
    "find": Guide("Find bar", (
        "Finds nodes of the shown graph by name, buffer, op or module path; the matches "
        "are marked in the graph and counted beside the field.",
        "Enter goes to the next match. A match inside a folded or collapsed box marks "
        "the box.",
    ), ("find",)),
    "comparison": Guide("Comparison", (
        "Two captures of one script side by side: an experiment's variants, or the ranks "
        "of a multi-process job.",
        "The two graph views move together; the tabs hold the metrics, the fusion "
        "verdicts that changed, kernel and per-graph differences and the report.",
        "Close the tab to go back to the explorer.",
    )),
    "dock_graphs": Guide("Graphs", (
        "Every graph torch.compile made from the script: forward, backward, and each "
        "piece between graph breaks. Click one to show it in every pane.",
        "why: why Dynamo made it (a graph break, a recompile); hover for the source line.",
        "nodes, kernels, rounds, fused: scheduler nodes before fusion, kernels after, "
        "fusion rounds, fusions made.",
        "compiled ms, eager ms, speedup: time per call (device time on a GPU, wall time "
        "on the CPU); hover for the spread.",
    ), ("next_graph", "prev_graph", "kernels_only")),
    "dock_modules": Guide("Modules", (
        "The nn.Module tree of the shown graph: every node knows the module it came from "
        "(a backward node: the forward module it differentiates).",
        "nodes: how many nodes the module holds; shown as: open, collapsed into a box, or "
        "folded with its repeated siblings.",
        "vs eager: compiled minus eager time of the module, where the trace timed the "
        "program eagerly; red rows lost time under compile.",
        "Click a module to bring it into view; double-click or Space collapses or opens it.",
    ), ("fold_repeated", "collapse_module", "expand_all")),
    "dock_notices": Guide("Notices", (
        "What you should know about the open trace: what this torch did not let "
        "fusionviz record, warnings from the recording, and parts of the file that do "
        "not hold together.",
        "A yellow strip above a pane names its first problem; click it to come here.",
        "When the script failed, its status and traceback are at the top.",
    )),
    "dock_kernel": Guide("Kernel", (
        "The source of one kernel as Inductor generated it (Triton on a GPU, C++ on the "
        "CPU), with its facts: time per graph call, launches, bandwidth against the "
        "GPU's peak, registers, spills, launch config.",
        "The list at the top picks the kernel; its swatch is the kernel's colour in the "
        "graph. Selecting a node shows its kernel.",
        "Side by side shows two kernels, for comparing a fused kernel with another.",
    ), ("find",)),
    "dock_details": Guide("Details", (
        "Everything the trace knows about the selected node: type and category, sizes, "
        "ops, the buffers it reads and writes with their bytes.",
        "FX origins: the traced ops it came from, with your source line; click the line "
        "to open it in your editor (File ▸ Editor Command).",
        "Producers, consumers and the kernel it ends up in; their names are links.",
    )),
    "dock_ledger": Guide("Fusion ledger", (
        "The candidate pairs of the round shown by the stepper, in the order Inductor "
        "scored them: the two groups (ops · module), the score fields, the outcome and "
        "the reasons.",
        "Outcome colours: green fused, red rejected or a cycle, orange slower in a "
        "benchmark or spilling registers, grey never decided.",
        "Benchmark columns: each side's and the fused kernel's ms, and the speedup.",
        "Click a row to highlight its pair in the graph; right-click it for what to try.",
    ), ("filter_ledger", "next", "why_not")),
    "dock_kernels": Guide("Kernels", (
        "Every kernel of the shown graph, slowest first: its kind, ops · module, "
        "launches, ms per call and % of the graph's kernel time.",
        "est. bytes and GB/s: the bytes it moves and the bandwidth that makes; regs and "
        "spills: registers per thread and spilled ones (GPU).",
        "Click a header to sort; type in the field to filter by kernel, op, module or "
        "node. Selecting a row selects the kernel everywhere.",
    ), ("kernels_only",)),
    "dock_charts": Guide("Charts", (
        "Kernel time: each kernel's time per call, slowest first, in its graph colour; "
        "click a bar to select the kernel.",
        "Rounds: nodes, bytes and time after each fusion round. Benchmark fusion: the "
        "speedups Inductor measured when it benchmarked a fusion.",
        "Timeline: when each kernel ran in one call of the graph, collectives on a lane "
        "of their own.",
        "A chart whose data the trace did not record says so instead.",
    ), ("sweep_rounds",)),
    "dock_eager": Guide("Compiled vs eager", (
        "Each function or module you compiled, timed against your own program run "
        "eagerly: the headline on both clocks, and the findings that explain the "
        "difference, each with its usual fix.",
        "The module tree: eager and compiled ms under each module, their difference and "
        "the speedup; tinted rows lost time.",
        "For the selected module, the eager kernels beside the compiled kernels that "
        "replaced them; click a compiled kernel to select it.",
    ), ("eager_tint",)),
    "dock_advisor": Guide("Advisor", (
        "What in the shown graph may be worth changing: refused fusions and settings, "
        "ranked by an estimate of the time they could save (an upper bound).",
        "Each row: the estimate, the bytes saved, why Inductor refused, and how to apply "
        "it. Measure replays the best ones and times them: a win is green, slower or "
        "changed results red.",
        "Above: the whole step, each change measured, added up over the graphs. "
        "Right-click a row to copy its replay command or compare it with the baseline.",
    ), ("advise_measure", "try_pair")),
    "dock_output": Guide("Script output", (
        "What the script printed while fusionviz captured it (or ran an experiment), as "
        "it runs.",
        "A trace opened from a file keeps no output of its own: the pane says so.",
    ), ("rerun", "cancel")),
    WINDOW: Guide("The fusionviz window", (
        "The graph in the middle, with the fusion stepper above it; Graphs, Modules and "
        "Notices on the left; Kernel and Details on the right; the fusion ledger, "
        "tables and charts below.",
        "Click into a pane and press F1 for what it shows. View ▸ Panes shows or hides "
        "each pane.",
    ), ("open_trace", "open_script", "shortcut_sheet")),
}


def pane_of(window, widget: QWidget | None) -> str:
    """The ``GUIDES`` key of the pane holding ``widget`` (``WINDOW`` for none)."""
    central = ((window.graph_view, "graph"), (window.stepper, "stepper"),
               (window.find_bar, "find"))
    while widget is not None and widget is not window:
        if isinstance(widget, QDockWidget) and widget.objectName() in GUIDES:
            return widget.objectName()
        for part, key in central:
            if widget is part:
                return key
        if window.views.indexOf(widget) > 0:  # a comparison's tab
            return "comparison"
        widget = widget.parentWidget()
    return WINDOW
