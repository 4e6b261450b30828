"""Why a graph exists, in words: compile ids, graph breaks and failed guards as the
graphs list, summary and query say them, for the wordings of torch 2.5 to 2.14."""

from fusionviz.model.report.graph_reasons import (
    compile_id_text,
    short_break,
    short_guard,
    why_parts,
    why_text,
)
from fusionviz.model.trace import BreakReason, Graph


def test_compile_ids_in_words():
    assert compile_id_text("0/0") == (
        "frame 0 (the 1st function Dynamo compiled), compile 0 (its first compilation)")
    assert compile_id_text("2/1") == ("frame 2 (the 3rd function Dynamo compiled), "
                                      "compile 1 (its 2nd compilation: a recompile)")
    assert compile_id_text("0/0_1").endswith("attempt 1 (Dynamo restarted its analysis 1 time(s))")
    assert compile_id_text("!3").startswith("compiled autograd graph 3")
    assert compile_id_text("!0/1/2").endswith("frame 1 compile 2 inside it")
    assert compile_id_text("") == "no Dynamo compile id was recorded"
    assert compile_id_text("12/10").startswith("frame 12 (the 13th function")


def test_break_reasons_in_a_few_words():
    torch_2_13 = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how "
                  "to trace builtin operator `print` with argument types ['str'] ...")
    assert short_break(torch_2_13) == "print()"
    assert short_break("call_function BuiltinVariable(print) [ConstantVariable()] {}") == "print()"
    assert short_break("generic_jump TensorVariable()").startswith("data-dependent branch")
    assert short_break("Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
                       "  Explanation: ...") == "Tensor.item()"
    assert short_break("Unsupported: call_method UserDefinedObjectVariable(Foo) bar") == (
        "call_method UserDefinedObjectVariable(Foo) bar")
    assert len(short_break("x" * 300)) == 80


def test_failed_guards_in_a_few_words():
    assert short_guard("0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16") == (
        "x.size(0) changed 8 → 16")
    assert short_guard("0/1: tensor 'x' dtype mismatch. expected Float, actual Double") == (
        "x dtype changed Float → Double")
    assert short_guard("0/0: tensor 'L['x']' stride mismatch at index 1. expected 4, actual 1") == (
        "L['x'].stride(1) changed 4 → 1")
    stack = ("1/0: ___stack2 == 0.905                          # print(y.mean().item())  "
             "# t.py:13 in torch_dynamo_resume_in_f_at_13\nUser stack trace:\n  File ...")
    assert short_guard(stack) == "___stack2 == 0.905"
    assert short_guard("0/0: L['n'] == 3") == "L['n'] == 3"


def test_a_graph_says_what_came_before_it_why_it_was_recompiled_and_where_it_ends():
    brk = BreakReason(reason="generic_jump TensorVariable()", file="/u/m.py", line=7,
                      code="if x.sum() > 0:", function="forward")
    prev = BreakReason(reason="call_function BuiltinVariable(print) []", file="/u/m.py", line=5)
    g = Graph(index=3, compile_id="1/1", break_reasons=(brk,), resumed_after=prev,
              recompile_reasons=("1/0: tensor 'x' size mismatch at index 0. expected 8, "
                                 "actual 16", "other"))
    assert why_parts(g) == ["after graph break: print() at m.py:5",
                            "recompiled: x.size(0) changed 8 → 16 (+1 more)",
                            "ends at graph break: data-dependent branch (if on a tensor "
                            "value) at m.py:7"]
    text = why_text(g)
    assert "/u/m.py:7 in forward\n    if x.sum() > 0:\ngeneric_jump TensorVariable()" in text
    assert "- 1/0: tensor 'x' size mismatch" in text and "- other" in text
    assert why_parts(Graph(index=0)) == [] and why_text(Graph(index=0)) == ""
