"""The Compiled vs eager pane and the modules' "vs eager" column, on a real GPU trace."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

DATA = Path(__file__).resolve().parents[1] / "data"
PATH = Qt.ItemDataRole.UserRole + 1


def in_front(window):
    """The pane, its dock brought to the front (it explains a new trace when shown)."""
    window.docks["eager"].raise_()
    return window.eager_pane


def test_the_pane_opens_on_the_module_that_lost_most_and_lists_both_sides(window, qtbot):
    assert window.open_trace(str(DATA / "gpu_bert_fp16_infer.json.gz")), window.errors
    pane = in_front(window)
    assert pane.entry_box.count() == 1
    assert pane.headline.text().startswith("BertModel: compiled ")
    report = pane.report.toPlainText()
    assert report.startswith("▲ attention is")  # the findings come first
    assert "Fix: Pass attention_mask=None" in report
    item = pane.tree.currentItem()
    path = item.data(0, PATH)
    assert path.startswith("encoder.layer.") and path.endswith(".attention.self"), path
    assert float(item.text(4)) > 0  # it lost time
    eager = [pane.eager_table.item(r, 0).text() for r in range(pane.eager_table.rowCount())]
    compiled = [pane.compiled_table.item(r, 0).text()
                for r in range(pane.compiled_table.rowCount())]
    assert any("sdpa" in name for name in eager), eager
    assert any("_scaled_dot_product_cudnn_attention" in name for name in compiled), compiled
    # slowest first
    ms = [pane.compiled_table.item(r, 4).data(Qt.ItemDataRole.UserRole)
          for r in range(pane.compiled_table.rowCount())]
    assert ms == sorted(ms, reverse=True)


def test_clicking_a_compiled_kernel_selects_it_everywhere(window, qtbot):
    assert window.open_trace(str(DATA / "gpu_bert_fp16_infer.json.gz")), window.errors
    pane = in_front(window)
    name = pane.compiled_table.item(0, 0).text()
    pane.compiled_table.cellClicked.emit(0, 0)
    assert window.state.kernel == name
    view = window.kernel_pane.views[0]
    assert "scaled_dot_product" in view.title.text()
    # the kernel pane says what eager ran where this kernel runs now
    facts = view.facts.text()
    assert "eager ran" in facts and ".attention.self: " in facts and "sdpa" in facts, facts


def test_the_backward_side_and_the_module_outline_show_time_lost_or_won(window, qtbot):
    assert window.open_trace(str(DATA / "gpu_llama_hf_train.json.gz")), window.errors
    pane = in_front(window)
    pane.side_box.setCurrentText("backward")
    root = pane.tree.topLevelItem(0)
    assert root.text(0) == "(whole model)" and float(root.text(2)) > 0
    outline = window.module_outline
    shown = [item.text(3) for item in outline.items.values() if item.text(3)]
    assert shown and all(text.endswith(" ms") for text in shown)


def test_a_trace_without_entries_says_why_the_pane_is_empty(window, qtbot):
    assert window.open_trace(str(DATA / "gpu_mlp_block.json.gz")), window.errors
    pane = in_front(window)
    assert pane.entry_box.count() == 0
    assert "recorded before fusionviz timed your own code" in pane.headline.text()
    assert pane.tree.topLevelItemCount() == 0


def test_the_speedup_tooltip_gives_both_clocks():
    from fusionviz.model.tracefile.io import load_trace
    from fusionviz.ui.graphs_list import speedup_tip

    trace = load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))
    forward = next(g for g in trace.graphs if g.kind == "forward")
    tip = speedup_tip(forward.timing)
    assert tip.startswith("device: eager ") and "\nwall: eager " in tip


def test_a_measured_cuda_graphs_what_if_is_in_the_report_and_needs_no_button(window, qtbot):
    assert window.open_trace(str(DATA / "gpu_mlp_train_cudagraphs.json.gz")), window.errors
    pane = in_front(window)
    report = pane.report.toPlainText()
    assert "Fix: CUDA graphs, measured: " in report
    assert "forward  wall   with CUDA graphs " in report
    assert "CUDA graphs (what-if, wall): " in report
    assert pane.cudagraphs_button.isHidden()


def test_the_cuda_graphs_button_captures_the_script_again_with_the_what_if(
        window, qtbot, tmp_path, monkeypatch):
    """Shown for a GPU entry not measured with CUDA graphs whose script is here."""
    from dataclasses import replace

    from fusionviz.model.tracefile.io import load_trace, save_trace

    trace = load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))
    gone, here = tmp_path / "gone.json.gz", tmp_path / "here.json.gz"
    script = tmp_path / "train.py"
    save_trace(replace(trace, script=replace(trace.script, path=str(script))), str(gone))
    assert window.open_trace(str(gone)), window.errors
    assert in_front(window).cudagraphs_button.isHidden()  # its script is not here
    script.write_text("print('hi')\n")
    save_trace(replace(trace, script=replace(trace.script, path=str(script))), str(here))
    runs = []
    monkeypatch.setattr(window, "run_script", lambda path, **options: runs.append(
        (path, options)))
    assert window.open_trace(str(here)), window.errors
    button = in_front(window).cudagraphs_button
    assert not button.isHidden()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert runs == [(str(script), {"what_if": ("reduce-overhead",)})]


def test_the_pane_explains_a_trace_when_it_shows_and_at_once_while_shown(window, qtbot):
    pane = window.eager_pane
    assert window.open_trace(str(DATA / "gpu_bert_fp16_infer.json.gz")), window.errors
    assert not pane.shown.on_screen and pane.entry_box.count() == 0  # not explained yet
    assert in_front(window).entry_box.count() == 1
    assert pane.headline.text().startswith("BertModel: compiled ")
    assert window.open_trace(str(DATA / "gpu_mlp_block.json.gz")), window.errors
    assert pane.shown.on_screen and pane.entry_box.count() == 0
    assert "recorded before fusionviz timed your own code" in pane.headline.text()


def test_a_cpu_figure_marked_approximate_says_so_in_the_headline(window, qtbot):
    """A real CPU train step whose eager forward ran much slower on memory given back
    to the OS: the headline, read first, points at the mark; the report gives why."""
    assert window.open_trace(str(DATA / "cpu_llama_tiny_train.json.gz")), window.errors
    pane = in_front(window)
    text = pane.headline.text()
    assert text.startswith("make_train_step.<locals>.forward_loss: compiled ")
    assert text.endswith(" (approximate: why below)"), text
    report = pane.report.toPlainText()
    assert "approximate: eager forward 1.099 ms as measured, 1.802 ms on fresh memory" \
        in report
