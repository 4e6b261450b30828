"""Numbers with units and labels shortened by whole path segments, on the module paths
of the H100 traces (GPT-2, Llama), and the title bands of opened modules' frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusionviz.model.layout.frames import TITLE_H, frame_layout
from fusionviz.model.layout.sugiyama import layout
from fusionviz.model.module_view import ModuleTree
from fusionviz.model.queries import peak_dram_gb_s
from fusionviz.model.report.chart_data import bandwidth_text
from fusionviz.model.report.elide import ELLIPSIS, elide_items, elide_path, elide_title
from fusionviz.model.report.formatting import (
    byte_size,
    count,
    gb_per_s,
    ms_range,
    ms_short,
    plural,
    share_of_peak,
    significant,
)
from fusionviz.model.report.ledger_table import ledger_cell, ledger_tip
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def gpt2():
    return load_trace(DATA / "gpu_gpt2_train.json.gz")


@pytest.fixture(scope="module")
def module_paths(gpt2):
    llama = load_trace(DATA / "gpu_llama_hf_train.json.gz")
    return sorted({n.module for t in (gpt2, llama) for g in t.graphs for n in g.nodes
                   if n.module})


def test_numbers_carry_units_separators_and_sensible_digits():
    assert byte_size(11010048) == "10.5 MiB" and byte_size(205852672) == "196.3 MiB"
    assert byte_size(1536) == "1.5 KiB" and byte_size(512) == "512 B"
    assert byte_size(3 * 1024**3) == "3.0 GiB"
    assert count(11010048) == "11,010,048" and plural(1, "node") == "1 node"
    assert plural(1234, "kernel") == "1,234 kernels"
    assert [significant(v) for v in (31.37, 0.01097, 3352.3, 0.000896, 1e-7, 0.0)] == [
        "31.4", "0.011", "3,352", "0.000896", "0.0000001", "0"]
    assert ms_short(31.37) == "31.4 ms" and ms_range(0.01097, 31.37) == "0.011–31.4 ms"
    assert gb_per_s(2868.8) == "2,869 GB/s"
    assert share_of_peak(1843.8, 3352.3) == "1,844 GB/s (55% of peak 3,352 GB/s)"
    assert share_of_peak(2.31, None) == "2.31 GB/s"


def test_a_real_kernels_bandwidth_names_the_unit_of_its_peak(gpt2):
    peak = peak_dram_gb_s(gpt2)
    kernel = max((k for k in gpt2.graphs[0].kernels if k.bytes and k.ms),
                 key=lambda k: k.bytes / k.ms)
    text = bandwidth_text(kernel, peak)
    assert text.endswith(f"of peak {gb_per_s(peak)})") and " GB/s (" in text
    assert "3,352 GB/s" in text  # the H100 the trace ran on


def test_ledger_cells_show_bytes_and_times_with_units(gpt2):
    candidate = gpt2.graphs[0].rounds[0].candidates[1]
    memory = candidate.score["memory_score"]
    assert memory == 11010048
    assert ledger_cell("score_memory_score", memory) == "10.5 MiB"
    assert ledger_tip("score_memory_score", memory) == "10.5 MiB: 11,010,048 bytes"
    saved = candidate.bytes_saved
    assert ledger_cell("bytes_saved", saved) == byte_size(saved) and saved > 1024
    assert ledger_cell("ms_fused", 0.0123456) == "0.01235"
    assert ledger_cell("speedup", 1.2345) == "1.23×"
    assert ledger_cell("score_node_type_score", True) == "True"  # not a number of bytes
    assert ledger_cell("score_proximity_score", -1) == "-1"


@pytest.mark.parametrize("budget", [4, 8, 12, 16, 20, 28, 40])
def test_paths_are_shortened_by_whole_segments_keeping_the_first_and_last(module_paths,
                                                                          budget):
    for path in module_paths:
        parts = path.split(".")
        text = elide_path(path, budget)
        assert len(text) <= budget, (path, text)
        if len(path) <= budget:
            assert text == path
            continue
        shown = text.split(".")
        if ELLIPSIS in shown:  # whole segments around one ellipsis, the last one kept
            k = shown.index(ELLIPSIS)
            assert shown[:k] == parts[:k] and k <= 1
            assert shown[k + 1:] == parts[len(parts) - len(shown) + k + 1:]
            assert shown[-1] == parts[-1]
        elif text != parts[-1]:  # not even the last segment fits: cut in its middle
            head, tail = text.split(ELLIPSIS)
            assert parts[-1].startswith(head) and parts[-1].endswith(tail)


def test_examples_of_the_brief_and_the_traces():
    assert elide_path("transformer.h.3.attn", 18) == "transformer.….attn"
    assert elide_path("transformer.h.3.attn", 20) == "transformer.h.3.attn"
    assert (elide_path("model.model.layers.3.post_attention_layernorm", 35)
            == "model.….3.post_attention_layernorm")
    assert elide_path("blocks.10.attn.resid_drop", 19) == "blocks.….resid_drop"
    assert elide_path("blocks.10.attn.resid_drop", 18) == "….resid_drop"
    # the path is shortened first, then the class dropped; never "…sformer" or "…ean"
    assert elide_title("h.3", "GPT2Block", 20) == "h.3 (GPT2Block)"
    assert elide_title("transformer.h.3", "GPT2Block", 27) == "transformer.h.3 (GPT2Block)"
    assert elide_title("transformer.h.3", "GPT2Block", 26) == "transformer.h.3"
    assert (elide_title("model.model.layers.3.self_attn", "LlamaAttention", 34)
            == "model.….self_attn (LlamaAttention)")
    assert elide_title("blocks.3.attn", "CausalSelfAttention", 30) == "blocks.3.attn"
    assert elide_path("transformer", 8) == "tran…mer"
    assert elide_path("blocks.3.attn", 4) == "attn"
    assert elide_items(["var_mean", "add", "mul"], 16) == "var_mean, add, …"
    assert elide_items(["_scaled_dot_product_flash_attention"], 12) == ""


def _rects_intersect(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_frames_get_title_bands_that_cover_no_node_title_or_frame_edge(gpt2):
    graph = gpt2.graphs[0]
    tree = ModuleTree(graph)
    opened = ["blocks.3", "blocks.3.attn", "blocks.3.mlp", "blocks.3.attn.qkv", "blocks.4",
              "blocks.4.ln2", "lm_head"]
    frames = [(p, list(tree.members[p])) for p in opened]
    base = layout([n.name for n in graph.nodes], [(e.src, e.dst) for e in graph.edges])
    lay, placed = frame_layout(base, frames)
    assert [f.path for f in placed] == opened
    assert lay is not base and lay.height > base.height  # three titles on one layer
    assert np.array_equal(lay.x, base.x) and np.array_equal(lay.layer, base.layer)
    half_w, half_h = lay.node_width / 2, lay.node_height / 2
    nodes = np.column_stack([lay.x - half_w, lay.y - half_h,
                             lay.x + half_w, lay.y + half_h])
    for (s, d), path in zip(lay.edges, lay.edge_paths, strict=True):  # edges moved along
        assert np.allclose(path[0], (lay.x[s], lay.y[s] + half_h))
        assert np.allclose(path[-1], (lay.x[d], lay.y[d] - half_h))
    box = {f.path: (f.x0, f.y0, f.x1, f.y1) for f in placed}
    titles = {f.path: (f.x0, f.y0, f.x1, f.y0 + TITLE_H) for f in placed}
    for path, members in frames:  # each frame holds its nodes, and the frames inside it
        x0, y0, x1, y1 = box[path]
        ids = [lay.index(n) for n in members]
        assert (nodes[ids, 0] > x0).all() and (nodes[ids, 2] < x1).all()
        assert (nodes[ids, 1] > titles[path][3]).all() and (nodes[ids, 3] < y1).all()
        for inner in (p for p in box if p.startswith(path + ".")):
            assert x0 < box[inner][0] and box[inner][2] < x1 and y0 < box[inner][1]
            assert box[inner][3] < y1
    for path, t in titles.items():
        assert not any(_rects_intersect(t, n) for n in nodes), path
        for other, u in titles.items():
            assert other == path or not _rects_intersect(t, u), (path, other)
        for other, (x0, _y0, x1, y1) in box.items():  # another frame's bottom edge
            if not path.startswith(other + "."):
                assert not _rects_intersect(t, (x0, y1 - 1, x1, y1 + 1)), (path, other)


def test_no_frames_leave_the_layout_as_it_is(gpt2):
    graph = gpt2.graphs[0]
    base = layout([n.name for n in graph.nodes], [(e.src, e.dst) for e in graph.edges])
    assert frame_layout(base, []) == (base, [])
    assert frame_layout(base, [("blocks.99", ["no such node"])]) == (base, [])
