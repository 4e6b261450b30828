"""Why a graph exists, in words: compile ids, graph breaks and failed guards as the
graphs list, summary and query say them, for the wordings of torch 2.5 to 2.14."""

from pathlib import Path

from fusionviz.model.report.graph_reasons import (
    compile_id_text,
    module_pattern,
    short_break,
    short_guard,
    step_calls,
    why_parts,
    why_text,
)
from fusionviz.model.trace import BreakReason, Frame, Graph, Trace
from fusionviz.model.tracefile.io import load_trace

RANKS = Path(__file__).parents[1] / "data" / "ranks"


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


def test_a_frame_of_its_own_names_its_code_its_modules_and_their_calls():
    """A module's forward that Dynamo began a frame at with no break before it (here
    as FSDP2 makes one): the graphs list's words, short and in full."""
    f = Frame(function="LlamaDecoderLayer.forward", file="/m/modeling_llama.py", line=290,
              module="model.layers.0", module_class="LlamaDecoderLayer",
              modules=tuple(f"model.layers.{i}" for i in range(4)), wrapped_by="fully_shard",
              caller="/m/modeling_llama.py:412 in forward")
    g = Graph(index=2, compile_id="9/0", kind="forward", frame=f)
    assert why_parts(g, 4) == ["a frame of its own: LlamaDecoderLayer.forward "
                               "(model.layers.*), wrapped by fully_shard; its 4 calls "
                               "reuse this graph"]
    assert why_parts(g) == ["a frame of its own: LlamaDecoderLayer.forward (model.layers.0 "
                            "of model.layers.*), wrapped by fully_shard"]
    text = why_text(g, 4)
    assert text.startswith("This graph's frame starts at LlamaDecoderLayer.forward "
                           "(/m/modeling_llama.py:290), with no graph break before it")
    assert "FSDP2's fully_shard wraps that module" in text
    assert "called this graph 4 time(s)" in text
    assert "Called from /m/modeling_llama.py:412 in forward." in text
    # the function handed to torch.compile: said in full, not as a reason to list
    entry = Graph(index=0, frame=Frame(function="train_step", file="/u/t.py", line=3,
                                       entry=True))
    assert why_parts(entry) == [] and "what torch.compile was handed" in why_text(entry)
    # modules of the class that no one pattern says: the module alone; a decorator's
    # wrapper of a forward: the module's class too
    norms = Frame(function="LlamaRMSNorm.forward", module="model.norm",
                  module_class="LlamaRMSNorm",
                  modules=("model.layers.0.input_layernorm", "model.norm"))
    assert why_parts(Graph(index=3, frame=norms)) == [
        "a frame of its own: LlamaRMSNorm.forward (model.norm)"]
    rope = Frame(function="dynamic_rope_update.<locals>.wrapper", module="model.rotary_emb",
                 module_class="LlamaRotaryEmbedding", modules=("model.rotary_emb",))
    assert why_parts(Graph(index=1, frame=rope)) == [
        "a frame of its own: dynamic_rope_update.<locals>.wrapper (model.rotary_emb, "
        "LlamaRotaryEmbedding)"]


def test_module_paths_said_short():
    assert module_pattern([f"h.{i}.attn" for i in range(12)]) == "h.*.attn"
    assert module_pattern(["encoder", "decoder"]) == "encoder, decoder"
    assert module_pattern(["a.0.b", "a.1.c"]) == "a.0.b, a.1.c"  # two parts differ
    assert module_pattern(["blocks.x", "blocks.y"]) == "blocks.x, blocks.y"  # not numbered
    assert module_pattern([""]) == "the model"


def test_the_profiled_steps_calls_of_each_graph():
    """nccl_fsdp2_llama (two H100s, torch 2.11): the step called each of the 4 layers'
    forward and backward graphs (2 and 7) four times, every other graph once."""
    trace = load_trace(RANKS / "nccl_fsdp2_llama" / "rank0.json.gz")
    calls = step_calls(trace)
    assert calls == {0: 1, 1: 1, 2: 4, 3: 1, 4: 1, 5: 1, 6: 1, 7: 4}
    assert step_calls(Trace()) == {} and step_calls(None) == {}
