"""Comparison of two real traces: metrics table, verdict changes, kernels, node mapping."""

import dataclasses
import json
from pathlib import Path

from fusionviz.model.experiment import compare
from fusionviz.model.trace import Origin
from fusionviz.model.tracefile.io import load_trace

EXP = Path(__file__).parents[1] / "data" / "experiments"


def _pair(name):
    meta = json.loads((EXP / name / "experiment.json").read_text())
    return [load_trace(EXP / name / v["trace"]) for v in meta["variants"]]


def test_metrics_rows_and_changes():
    a, b = _pair("cpu_ab_whatif_ops")
    c = compare.compare(a, b, "default", "max_fusion_size=1")
    rows = {m: (x, y, ch) for m, x, y, ch in c.rows}
    assert rows["Net node reduction"][1] == 0 and rows["Net node reduction"][0] > 0
    assert rows["Kernels"][2] == f"{rows['Kernels'][1] - rows['Kernels'][0]:+d}"
    assert any(v.outcome_a == "fused" and v.outcome_b != "fused" for v in c.verdicts)
    md = compare.table_markdown(c)
    assert md.splitlines()[0] == "| Metric | default | max_fusion_size=1 | Change |"
    assert compare.table_csv(c).splitlines()[0] == "metric,default,max_fusion_size=1,change"


def test_kernels_matched_by_nodes_not_names():
    a, b = _pair("gpu_sweep_mlp_block")[:2]  # baseline vs no fusion
    c = compare.compare(a, b)
    both = [k for k in c.kernels if k.name_a and k.name_b]
    assert both and all(k.ms_a is not None for k in both)
    assert c.added and c.removed  # no fusion splits fused kernels into single-node ones


def test_node_mapping_by_name_then_by_origin():
    g = load_trace(Path(__file__).parents[1] / "data" / "cpu_mlp_block.json.gz").graphs[0]
    assert compare.node_mapping(g, g) == {n.name: n.name for n in g.nodes}
    # the same graph with its nodes renumbered: the FX origins still find each node
    renamed = dataclasses.replace(
        g, nodes=tuple(dataclasses.replace(n, name=f"x{n.name}") for n in g.nodes))
    mapping = compare.node_mapping(g, renamed)
    unique = [n for n in g.nodes if n.origins and all(
        not ({o.name for o in n.origins} & {o.name for o in m.origins})
        for m in g.nodes if m is not n)]
    assert unique and all(mapping[n.name] == f"x{n.name}" for n in unique)
    # names swapped between two nodes: origins win over the misleading names
    a, b = unique[0], unique[1]
    swapped = dataclasses.replace(g, nodes=tuple(
        dataclasses.replace(n, name=b.name) if n is a else
        dataclasses.replace(n, name=a.name) if n is b else n for n in g.nodes))
    m2 = compare.node_mapping(g, swapped)
    assert m2[a.name] == b.name and m2[b.name] == a.name
    # no shared origins at all: fall back to the name
    lone = dataclasses.replace(g, nodes=(dataclasses.replace(a, origins=(Origin("zz", "t"),)),))
    assert compare.node_mapping(g, lone)[a.name] == a.name


def test_a_sweep_ends_at_the_last_round_that_fused_and_says_which_rounds_it_left(tmp_path):
    """The H100 sweep of mlp_block was recorded with rounds 0-4; its baseline fused in
    rounds 1-2 only, and 'after round 3/4' repeat 'after round 2'. Finished with the
    rounds a sweep captures now, the report names the rounds it left out."""
    from fusionviz.model.experiment import runs

    exp = runs.read_experiment(EXP / "gpu_sweep_mlp_block")
    base = exp.variants[0]
    assert runs.last_fusing_round(base.trace) == 2
    repeat = [(len(v.trace.graphs[0].final_groups), len(v.trace.graphs[0].kernels))
              for v in exp.variants[3:]]
    assert len(set(repeat)) == 1  # after rounds 2, 3 and 4: the same nodes and kernels
    now = runs.finish_sweep(exp.script, tmp_path, list(exp.variants[:4]))
    assert "The baseline's rounds 3–4 fused nothing" in now.report
    assert "stopped after round 2, so the sweep ends there" in now.report
    assert "| after round 2 |" in now.report and "| after round 3 |" not in now.report
    whole = runs.finish_sweep(exp.script, tmp_path, list(exp.variants))
    assert "fused nothing" not in whole.report  # every round swept: nothing to say
