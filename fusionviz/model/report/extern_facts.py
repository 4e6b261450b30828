"""What an extern kernel (a library call: cuBLAS, cuDNN, an attention kernel, a C++
aten op) computed and how fast: its op, dtypes and shapes, FLOPs, achieved TFLOP/s
against the GPU's peak for that math, bytes and GB/s, and the flag for a matmul or
convolution left in float32 in a graph that computes in half precision elsewhere.

Read from ``Node.extern_call`` (recorded at capture). Traces recorded before it was
have none: their facts say so (``NOT_RECORDED``) rather than guess.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from fusionviz.model.lazy import PerObject
from fusionviz.model.names import extern_op
from fusionviz.model.queries import node_index
from fusionviz.model.report.formatting import byte_size, gb_per_s, significant
from fusionviz.model.report.gpu_peaks import gpu_peaks, rate_label, rate_of
from fusionviz.model.trace import ExternCall, Graph, Kernel, Node, TensorSpec

NOT_RECORDED = "not recorded (trace captured before fusionviz recorded extern dtypes)"
FP32_LABEL = "⚠ float32"  # the label of the fp32 flag among the facts
HALF = ("float16", "bfloat16")
MATMULS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm")
CONVOLUTIONS = ("convolution", "_convolution", "convolution_overrideable",
                "convolution_backward")
# the input whose dtype is the math's, by op (its schema name)
_MAIN_INPUT = {"mm": "self", "addmm": "mat1", "bmm": "self", "baddbmm": "batch1",
               "_scaled_mm": "self", "convolution_backward": "input"}
_ITEM_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8,
               "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8,
               "complex128": 16}
_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}


@dataclass(frozen=True)
class ExternFacts:
    """One extern kernel's facts; what is unknown is None or "" (``note`` says why)."""

    op: str = ""  # aten.addmm ("" when not recorded)
    dtypes: tuple[str, ...] = ()  # its input tensors' dtypes, each once, in order
    out_dtypes: tuple[str, ...] = ()
    shapes: str = ""  # [2048, 768] × [768, 3072] → [2048, 3072]
    signature: str = ""  # what kernels of the same work share: addmm 2048×768×3072 bf16
    flops: float | None = None  # per launch
    formula: str = ""  # how: 2·M·N·K + M·N; causal: half; backward: 2.5× forward
    tflop_s: float | None = None  # achieved, from the kernel's time per launch
    rate: str = ""  # the math it runs: fp16, bf16, fp8, tf32, fp32 ("" unknown)
    gpu: str = ""  # the GPU whose peak is used (H100 SXM)
    peak_tflop_s: float | None = None
    bytes: int | None = None  # its tensors, read and written once, per launch
    gb_s: float | None = None
    fp32_warning: str = ""  # a matmul or convolution left in float32: what to do
    note: str = ""  # NOT_RECORDED, or what could not be read

    @property
    def peak_share(self) -> float | None:
        """Achieved over peak, in percent."""
        if self.tflop_s is None or not self.peak_tflop_s:
            return None
        return 100.0 * self.tflop_s / self.peak_tflop_s


# graph -> (the env they were computed with, its facts), while the graph lives
_kept: PerObject[tuple[dict | None, dict[str, ExternFacts]]] = PerObject()


def extern_facts(graph: Graph, env: dict | None = None,
                 only: tuple[str, ...] | None = None) -> dict[str, ExternFacts]:
    """Kernel name → facts, for every extern kernel of ``graph`` (not collectives), or
    for those named ``only``; ``env``: the trace's (GPU name and fp32 matmul settings).
    The kernel table and the charts ask for the same graph's: computed once (a new
    dict each time)."""
    hit = _kept.get(graph)
    facts = hit[1] if hit is not None and hit[0] is env else None
    if only is not None:
        if facts is not None:
            return {k: facts[k] for k in only if k in facts}
        return _extern_facts(graph, env or {}, set(only))
    if facts is None:
        facts = _kept.put(graph, (env, _extern_facts(graph, env or {})))[1]
    return dict(facts)


def _extern_facts(graph: Graph, env: dict, only: set[str] | None = None
                  ) -> dict[str, ExternFacts]:
    nodes = node_index(graph)
    halves = {n.name: _halves(n.extern_call) for n in graph.nodes if n.extern_call is not None}
    inputs = graph.replay.get("inputs")
    in_graph = Counter(_half_inputs(inputs if isinstance(inputs, list) else []))
    for found in halves.values():
        in_graph.update(found)
    cuda = graph.device == "cuda"
    gpu, peaks = gpu_peaks(str(env.get("device_name", ""))) if cuda else ("", {})
    out = {}
    for k in graph.kernels:
        if only is not None and k.name not in only:
            continue
        node = next((nodes[m] for m in k.nodes if m in nodes), None)
        if k.backend != "extern" or node is None or node.category != "extern":
            continue
        if node.extern_call is None:
            out[k.name] = ExternFacts(signature=f"{extern_op(k.name.split(':')[0])} "
                                      "(shapes not recorded)", note=NOT_RECORDED)
            continue
        elsewhere = in_graph - Counter(halves[node.name])  # half tensors but its own
        half = next(iter(sorted(elsewhere)), "")
        out[k.name] = _facts(k, node, half, env, (gpu, peaks) if cuda else None)
    return out


def _facts(k: Kernel, node: Node, half: str, env: dict,
           gpu: tuple[str, dict] | None) -> ExternFacts:
    """``gpu``: its name and peaks, None on the CPU."""
    call = node.extern_call
    short = call.op.rsplit(".", 1)[-1]
    flops, formula = op_flops(call)
    main = main_dtype(call)
    rate = rate_of(main, conv=short in CONVOLUTIONS, env=env) \
        if flops is not None and gpu is not None else ""
    name, peaks = gpu or ("", {})
    per_launch = k.ms / max(k.calls, 1) if k.ms and k.ms > 0 else None
    nbytes = tensor_bytes(call)
    return ExternFacts(
        op=call.op,
        dtypes=tuple(dict.fromkeys(s.dtype for s in call.inputs if s.dtype)),
        out_dtypes=tuple(dict.fromkeys(s.dtype for s in call.outputs if s.dtype)),
        shapes=shapes_text(call),
        signature=signature(call),
        flops=flops,
        formula=formula,
        tflop_s=_per_ms(flops, per_launch, 1e9),
        rate=rate,
        gpu=name if peaks.get(rate) else "",
        peak_tflop_s=peaks.get(rate),
        bytes=nbytes,
        gb_s=_per_ms(nbytes, per_launch, 1e6),
        fp32_warning=fp32_warning(node, half, env, gpu is not None) if main == "float32"
        else "",
        note=call.note,
    )


def _per_ms(amount: float | None, ms: float | None, scale: float) -> float | None:
    """``amount`` per ms over ``scale`` (FLOP → TFLOP/s: 1e9; bytes → GB/s: 1e6)."""
    if amount is None or ms is None:
        return None
    try:
        return amount / ms / scale
    except ArithmeticError:  # an absurd size from a damaged file
        return None


# -- FLOPs -------------------------------------------------------------------------

def op_flops(call: ExternCall) -> tuple[float | None, str]:
    """FLOPs of one call (a multiply-add counts 2) and the formula; (None, "") for an
    op without a formula here or shapes that do not fit it."""
    try:
        flops, formula = _op_flops(call)
        return (None, "") if flops is None else (float(flops), formula)
    except (KeyError, IndexError, ValueError, TypeError, ArithmeticError):  # not the op's
        return None, ""


def _op_flops(call: ExternCall) -> tuple[float | None, str]:
    short = call.op.rsplit(".", 1)[-1]
    t = {s.name: s.size for s in call.inputs}
    out = call.outputs[0].size if call.outputs else ()
    if short in ("mm", "_scaled_mm"):
        (m, k), (_, n) = t["self"], t["mat2"]
        return 2 * m * n * k, "2·M·N·K"
    if short == "addmm":  # the bias add counted, alpha/beta scaling not
        (m, k), (_, n) = t["mat1"], t["mat2"]
        return 2 * m * n * k + m * n, "2·M·N·K + M·N"
    if short == "bmm":
        (b, m, k), (_, _, n) = t["self"], t["mat2"]
        return 2 * b * m * n * k, "B·2·M·N·K"
    if short == "baddbmm":
        (b, m, k), (_, _, n) = t["batch1"], t["batch2"]
        return 2 * b * m * n * k + b * m * n, "B·(2·M·N·K + M·N)"
    if short in ("convolution", "_convolution", "convolution_overrideable"):
        return conv_flops(t["input"], t["weight"], out, call.args.get("transposed") is True)
    if short == "convolution_backward":
        return _conv_backward_flops(call, t)
    if "scaled_dot_product" in short:
        return _attention_flops(call, t, backward=short.endswith("_backward"))
    return None, ""


def conv_flops(x: tuple[int, ...], w: tuple[int, ...], out: tuple[int, ...],
               transposed: bool) -> tuple[int, str]:
    """2 × N × Cout × output spatial × Cin/groups × kernel spatial (the bias add not
    counted). The weight is (Cout, Cin/groups, k…), or (Cin, Cout/groups, k…) when
    transposed: the same products over the input's spatial size instead."""
    if len(x) < 3 or len(w) != len(x) or len(out) != len(x):
        raise ValueError("shapes do not fit a convolution")
    first, second, *kernel = w
    spatial = x[2:] if transposed else out[2:]
    return (2 * x[0] * first * second * math.prod(spatial) * math.prod(kernel),
            "2·N·Cin·HW(in)·Cout/g·k" if transposed else "2·N·Cout·HW(out)·Cin/g·k")


def _conv_backward_flops(call: ExternCall, t: dict) -> tuple[int, str]:
    """Each of grad_input and grad_weight costs what the forward did (output_mask says
    which were computed; the bias gradient is a sum, not counted)."""
    mask = call.args.get("output_mask") or [True, True, False]
    flops, _ = conv_flops(t["input"], t["weight"], t["grad_output"],
                          call.args.get("transposed") is True)
    n = sum(1 for m in mask[:2] if m is True)
    return n * flops, f"{n}× the forward's (grad_input, grad_weight)"


def _attention_flops(call: ExternCall, t: dict, backward: bool) -> tuple[float, str]:
    """Forward: Q·Kᵀ and P·V, 2·B·H·Lq·Lk·(D + Dv) = 4·B·H·Lq·Lk·D; half that when
    causal. Backward: 2.5× the forward, its five matmuls of the same size against the
    forward's two (Q·Kᵀ again, dV, dP, dQ, dK)."""
    b, h, lq, d = t["query"]
    lk, dv = t["key"][-2], t["value"][-1]
    flops = 2 * b * h * lq * lk * (d + dv)
    formula = "4·B·H·Lq·Lk·D" if d == dv else "2·B·H·Lq·Lk·(D+Dv)"
    if call.args.get("is_causal") is True:
        flops, formula = flops / 2, formula + ", causal: half"
    if backward:
        flops, formula = flops * 2.5, formula + "; backward: 2.5× the forward"
    return flops, formula


def main_dtype(call: ExternCall) -> str:
    """The dtype of the input the op's math runs in (mat1 of an addmm, the query of
    an attention, a convolution's input); "" when unknown."""
    short = call.op.rsplit(".", 1)[-1]
    name = _MAIN_INPUT.get(short, "query" if "scaled_dot_product" in short else "input")
    spec = next((s for s in call.inputs if s.name == name), None)
    spec = spec or next(iter(call.inputs), None)
    return spec.dtype if spec is not None else ""


# -- bytes, shapes -------------------------------------------------------------------

def tensor_bytes(call: ExternCall) -> int | None:
    """Bytes of every tensor read and written, each element once (a broadcast
    dimension, stride 0, counted once); None when a dtype or size is unknown."""
    total = 0
    for s in (*call.inputs, *call.outputs):
        item = _ITEM_BYTES.get(s.dtype) or (1 if s.dtype.startswith("float8") else None)
        if item is None or (not s.size and s.size_expr):
            return None
        stride = s.stride if len(s.stride) == len(s.size) else (1,) * len(s.size)
        total += item * math.prod(n for n, st in zip(s.size, stride) if st != 0)
    return total


def shapes_text(call: ExternCall) -> str:
    """``[2048, 768] bf16 × [768, 3072] bf16 → [2048, 3072] bf16``; a tensor laid out
    otherwise than row-major says how: ``transposed``, ``channels-last`` or its strides
    (``[2, 4, 32, 16] fp32 strides (2048, 16, 64, 1)``)."""
    def one(s: TensorSpec) -> str:
        size = ", ".join(s.size_expr) if s.size_expr else ", ".join(map(str, s.size))
        layout = _layout(s)
        return f"[{size}] {short_dtype(s.dtype)}".rstrip() + (f" {layout}" if layout else "")

    ins = " × ".join(one(s) for s in call.inputs)
    outs = ", ".join(one(s) for s in call.outputs)
    return f"{ins} → {outs}" if outs else ins


def _layout(s: TensorSpec) -> str:
    """How ``s`` is laid out when not row-major without gaps: "" (also for unknown
    strides), "transposed" (a matrix), "channels-last" (NCHW sizes) or its strides."""
    if len(s.stride) != len(s.size) or _dense(s.size, s.stride, range(len(s.size))):
        return ""
    if len(s.size) == 2 and _dense(s.size, s.stride, (1, 0)):
        return "transposed"
    if len(s.size) == 4 and _dense(s.size, s.stride, (0, 2, 3, 1)):
        return "channels-last"
    return f"strides ({', '.join(map(str, s.stride))})"


def _dense(size: tuple[int, ...], stride: tuple[int, ...], order) -> bool:
    """Whether the dimensions in ``order`` (outermost first) are packed without gaps, the
    last one's stride 1 (a dimension of size 1 may have any stride)."""
    expected = 1
    for d in reversed(tuple(order)):
        if size[d] != 1 and stride[d] != expected:
            return False
        expected *= size[d]
    return True


def signature(call: ExternCall) -> str:
    """What kernels doing the same work share: the op, its sizes (M×K×N for a matmul,
    B×H×Lq×Lk×D for attention, each input's sizes otherwise) and its dtype."""
    short = call.op.rsplit(".", 1)[-1] or "extern"
    t = {s.name: s.size for s in call.inputs}
    try:
        if short in ("mm", "_scaled_mm", "addmm"):
            a, b = t["mat1" if short == "addmm" else "self"], t["mat2"]
            sizes = f"{a[0]}×{a[1]}×{b[1]}"
        elif short in ("bmm", "baddbmm"):
            a, b = t["batch1" if short == "baddbmm" else "self"], t["mat2" if short == "bmm"
                                                                    else "batch2"]
            sizes = f"{a[0]}× {a[1]}×{a[2]}×{b[2]}"
        elif short in ("convolution", "_convolution", "convolution_overrideable"):
            sizes = "×".join(map(str, t["input"])) + " ⊛ " + "×".join(map(str, t["weight"]))
            stride = call.args.get("stride")
            if isinstance(stride, list) and any(x != 1 for x in stride):
                sizes += " stride " + "×".join(map(str, stride))
            sizes += " transposed" if call.args.get("transposed") is True else ""
        elif "scaled_dot_product" in short:
            q = t["query"]
            sizes = f"{q[0]}×{q[1]}×{q[2]}×{t['key'][-2]}×{q[3]}"
            sizes += " causal" if call.args.get("is_causal") is True else ""
        else:
            raise KeyError(short)
    except (KeyError, IndexError, TypeError):
        sizes = ", ".join("×".join(map(str, s.size)) or "·" for s in call.inputs)
    return " ".join(x for x in (short, sizes, short_dtype(main_dtype(call))) if x)


def short_dtype(dtype: str) -> str:
    """``bf16``, ``fp32``, ``float8_e4m3fn`` (as it is when it has no short form)."""
    return _SHORT.get(dtype, dtype)


# -- the fp32 flag -------------------------------------------------------------------

def _halves(call: ExternCall) -> list[str]:
    """The half dtypes (float16, bfloat16) of the tensors an extern call reads or
    writes, one per tensor: what says that a graph computes in half precision."""
    return [s.dtype for s in (*call.inputs, *call.outputs) if s.dtype in HALF]


def _half_inputs(inputs: list) -> list[str]:
    """The half dtypes among a graph's inputs (as its replay recorded them)."""
    dtypes = [str(i.get("dtype", "")).removeprefix("torch.") for i in inputs
              if isinstance(i, dict)]
    return [d for d in dtypes if d in HALF]


def fp32_warning(node: Node, half: str, env: dict, cuda: bool = True) -> str:
    """The flag of a matmul, convolution or attention run in float32 while the graph
    computes in ``half`` elsewhere ("" otherwise): the op, where it comes from, what
    to do (and, on the GPU with TF32 off, how to keep float32 on tensor cores)."""
    short = node.extern_call.op.rsplit(".", 1)[-1]
    if not half or not (short in MATMULS or short in CONVOLUTIONS
                        or "scaled_dot_product" in short):
        return ""
    text = (f"{node.extern_call.op} runs in float32 while this graph computes in {half} "
            "elsewhere: autocast or .half() did not cover it")
    where = _where(node)
    if where:
        text += f" ({where})"
    text += (f". Cast its inputs (or its module) to {half}, or move it into the autocast "
             "region, unless it needs float32 there")
    if cuda and rate_of("float32", conv=short in CONVOLUTIONS, env=env) == "fp32":
        text += ("; if it does, TF32 runs it on tensor cores: "
                 + ("torch.backends.cudnn.allow_tf32 = True" if short in CONVOLUTIONS
                    else "torch.set_float32_matmul_precision('high')"))
    return text + "."


def _where(node: Node) -> str:
    """``blocks.0.mlp (MLP), model.py:12 `y = x @ w```: the node's module and the
    user's line of the origin that called the op."""
    short = node.extern_call.op.rsplit(".", 1)[-1]
    origins = [o for o in node.origins if o.file]
    origin = next((o for o in origins if f".{short}." in f".{o.target}."), None)
    origin = origin or next(iter(origins), None)
    module = node.module + (f" ({node.module_class})" if node.module_class else "")
    line = (f"{origin.file.rsplit('/', 1)[-1]}:{origin.line}"
            + (f" `{origin.code}`" if origin.code else "")) if origin else ""
    return ", ".join(x for x in (f"in {module}" if node.module else "", line) if x)


# -- as text and JSON ------------------------------------------------------------------

def facts_lines(f: ExternFacts) -> list[tuple[str, str]]:
    """(label, value) pairs for the kernel pane; unknown values left out."""
    if not f.op:
        return [("extern facts", f.note or NOT_RECORDED)]
    lines = [("op", f.op)]
    if f.dtypes or f.out_dtypes:
        lines.append(("dtypes", ", ".join(map(short_dtype, f.dtypes)) + " → "
                      + ", ".join(map(short_dtype, f.out_dtypes))))
    if f.shapes:
        lines.append(("shapes", f.shapes))
    if f.flops is not None:
        lines.append(("FLOPs", f"{flops_text(f.flops)} per launch ({f.formula})"))
    if f.tflop_s is not None:
        lines.append(("achieved", rate_text(f)))
    if f.bytes is not None:
        gb_s = f", {gb_per_s(f.gb_s)}" if f.gb_s is not None else ""
        lines.append(("tensors", f"{byte_size(f.bytes)} read and written{gb_s}"))
    if f.fp32_warning:
        lines.append((FP32_LABEL, f.fp32_warning))
    if f.note:
        lines.append(("note", f.note))
    return lines


def rate_text(f: ExternFacts) -> str:
    """``612 TFLOP/s (62% of the H100 SXM's bf16 tensor cores, 989.5 TFLOP/s)``."""
    text = f"{flops_text(f.tflop_s * 1e12)}/s"
    if f.peak_share is not None:
        text += (f" ({f.peak_share:.0f}% of the {f.gpu}'s {rate_label(f.rate)}, "
                 f"{significant(f.peak_tflop_s, 4)} TFLOP/s)")
    elif f.rate:
        text += f" ({rate_label(f.rate)}; no peak known for this device)"
    return text


def extern_text(f: ExternFacts) -> str:
    """The facts as lines of text (a tooltip)."""
    return "\n".join(f"{label}: {value}" for label, value in facts_lines(f))


def facts_json(f: ExternFacts | None) -> dict | None:
    """The facts in ``fusionviz query --json`` (None: not an extern kernel)."""
    if f is None:
        return None
    return {"recorded": bool(f.op), "op": f.op, "dtypes": list(f.dtypes),
            "out_dtypes": list(f.out_dtypes), "shapes": f.shapes, "signature": f.signature,
            "flops": f.flops, "formula": f.formula, "tflop_s": f.tflop_s, "rate": f.rate,
            "gpu": f.gpu, "peak_tflop_s": f.peak_tflop_s, "peak_share": f.peak_share,
            "bytes": f.bytes, "gb_s": f.gb_s, "fp32_warning": f.fp32_warning,
            "note": f.note}


def flops_text(flops: float) -> str:
    """``25.8 GFLOP``."""
    for unit, scale in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6),
                        ("kFLOP", 1e3)):
        if flops >= scale:
            return f"{flops / scale:.3g} {unit}"
    return f"{flops:.0f} FLOP"

