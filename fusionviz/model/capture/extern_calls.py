"""What an extern (library) call computes: its aten op, the dtype, size and stride of
each tensor it reads and writes, its other arguments; and the settings that decide how
float32 matmuls and convolutions run (TF32 or not).

Read from Inductor's IR node of an ``ExternKernelSchedulerNode`` (private: every read
is feature-detected; what fails is said in ``ExternCall.note``, never raised).
"""

from __future__ import annotations

from fusionviz.model.trace import ExternCall, TensorSpec
from fusionviz.model.tracefile.io import json_value

_WRAPPER_ONLY = ("MultiOutput",)  # an indexing line in the wrapper, not a call
_MAX_NOTE = 300


def matmul_settings() -> dict:
    """How float32 matmuls and convolutions run now: ``float32_matmul_precision``
    (highest, high, medium), ``cuda_matmul_allow_tf32``, ``cudnn_allow_tf32``."""
    import torch

    reads = (("float32_matmul_precision", torch.get_float32_matmul_precision),
             ("cuda_matmul_allow_tf32", lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
             ("cudnn_allow_tf32", lambda: bool(torch.backends.cudnn.allow_tf32)))
    out = {}
    for key, read in reads:
        try:
            out[key] = read()
        except Exception:  # noqa: BLE001 - another torch: left out
            continue
    return out


def extern_call(snode) -> ExternCall | None:
    """The ``ExternCall`` of an extern scheduler node; None for a wrapper-only node."""
    ir_node = getattr(snode, "node", None)
    if ir_node is None or type(ir_node).__name__ in _WRAPPER_ONLY:
        return None
    try:
        return _record(ir_node)
    except Exception as e:  # noqa: BLE001 - another torch's IR: say what failed
        return ExternCall(note=_note("the call could not be read", e))


def _record(ir_node) -> ExternCall:
    op = op_name(ir_node)
    try:
        named = _named_args(ir_node)
    except Exception as e:  # noqa: BLE001
        return ExternCall(op=op, outputs=_outputs(ir_node)[0],
                          note=_note("its arguments could not be read", e))
    inputs, args, notes = [], {}, []
    for name, value in named:
        specs = _tensor_specs(name, value, notes)
        if specs is None:
            args[name] = _json(value)
        else:
            inputs += specs
    outputs, why = _outputs(ir_node)
    return ExternCall(op=op, inputs=tuple(inputs), outputs=outputs, args=args,
                      note="; ".join([*notes, *([why] if why else [])])[:_MAX_NOTE])


def op_name(ir_node) -> str:
    """``aten.addmm`` (the overload packet of the op called, ``.out`` or not), else the
    wrapper's callable (``extern_kernels.mm``)."""
    op = getattr(ir_node, "op_overload", None)
    packet = getattr(op, "overloadpacket", None)
    if packet is not None:
        return str(packet)
    return str(op or getattr(ir_node, "python_kernel_name", "") or "")


def _named_args(ir_node) -> list[tuple[str, object]]:
    """(schema name, value) of every argument but ``out``: tensors as IR nodes."""
    schema = getattr(getattr(ir_node, "op_overload", None), "_schema", None)
    params = [a for a in getattr(schema, "arguments", ()) if not _is_out(a)]
    unflatten = getattr(ir_node, "unflatten_args", None)
    if callable(unflatten):  # a FallbackKernel: args and kwargs as the op takes them
        args, kwargs = unflatten(ir_node.inputs, ir_node.constant_args)
        positional = [p.name for p in params if not p.kwarg_only]
        named = [(_name(positional, i), v) for i, v in enumerate(args)]
        return named + [(k, v) for k, v in (kwargs or {}).items()]
    # ExternKernelOut/Alloc: tensors in ``inputs``, the rest positional then by name
    tensors = [p.name for p in params if _tensor_type(p)]
    others = [p.name for p in params if not _tensor_type(p) and not p.kwarg_only]
    named = [(_name(tensors, i), v) for i, v in enumerate(ir_node.inputs)]
    named += [(_name(others, i), v) for i, v in enumerate(ir_node.constant_args)]
    return named + list((getattr(ir_node, "kwargs", None) or {}).items())


def _tensor_type(arg) -> bool:
    return str(arg.type).removeprefix("Optional[").startswith("Tensor")


def _is_out(arg) -> bool:
    alias = getattr(arg, "alias_info", None)
    return arg.name == "out" or bool(alias is not None and getattr(alias, "is_write", False)
                                     and getattr(arg, "kwarg_only", False))


def _name(names: list[str], i: int) -> str:
    return names[i] if i < len(names) else f"arg{i}"


def _is_tensor(value) -> bool:
    return hasattr(value, "get_size") and hasattr(value, "get_dtype")


def _tensor_specs(name: str, value, notes: list[str]) -> list[TensorSpec] | None:
    """The spec(s) of a tensor argument or a list of tensors; None: not a tensor."""
    if _is_tensor(value):
        return [tensor_spec(name, value, notes)]
    if isinstance(value, list | tuple) and value and all(_is_tensor(v) for v in value):
        return [tensor_spec(f"{name}[{i}]", v, notes) for i, v in enumerate(value)]
    return None


def tensor_spec(name: str, node, notes: list[str]) -> TensorSpec:
    """dtype, size and stride of an IR buffer or view (sizes as hints when symbolic)."""
    try:
        dtype = str(node.get_dtype()).removeprefix("torch.")
        size = list(node.get_size())
    except Exception as e:  # noqa: BLE001
        notes.append(_note(f"{name}: its dtype or size could not be read", e))
        return TensorSpec(name=name)
    try:
        stride = list(node.get_stride())
    except Exception:  # noqa: BLE001 - a layout not fixed yet has none
        stride = []
    symbolic = not all(_static(s) for s in size)
    ints = _ints(size)
    if ints is None:
        notes.append(f"{name}: a size has no value at compile time (data-dependent)")
    return TensorSpec(name=name, dtype=dtype, size=ints or (), stride=_ints(stride) or (),
                      size_expr=tuple(str(s) for s in size) if symbolic else ())


def _outputs(ir_node) -> tuple[tuple[TensorSpec, ...], str]:
    """The tensors the call writes (each output of a multi-output op), and a note."""
    notes: list[str] = []
    try:
        if type(getattr(ir_node, "layout", None)).__name__ == "MultiOutputLayout":
            flat = _flatten(getattr(ir_node, "outputs", None) or ())
            specs = tuple(tensor_spec(f"out{i}", o, notes) for i, o in enumerate(flat))
        else:
            specs = (tensor_spec("out", ir_node, notes),)
    except Exception as e:  # noqa: BLE001
        return (), _note("its outputs could not be read", e)
    return specs, "; ".join(notes)


def _flatten(values) -> list:
    out = []
    for v in values:
        if isinstance(v, list | tuple):
            out += _flatten(v)
        elif _is_tensor(v):
            out.append(v)
    return out


def _static(value) -> bool:
    if isinstance(value, int):
        return True
    return bool(getattr(value, "is_number", False))


def _ints(values) -> tuple[int, ...] | None:
    """Each value as an int: static ones as they are, symbolic ones by their hint;
    None when one has none."""
    out = []
    for v in values:
        try:
            out.append(int(v) if _static(v) else _hint(v))
        except Exception:  # noqa: BLE001 - unbacked, or another torch's API
            return None
    return tuple(out)


def _hint(expr) -> int:
    from torch._inductor.virtualized import V

    sizevars = V.graph.sizevars
    for method in ("guarding_hint_or_throw", "size_hint"):  # newer torch, then older
        read = getattr(sizevars, method, None)
        if read is not None:
            return int(read(expr))
    raise AttributeError("no size hint method on this torch")


def _json(value):
    """An argument as JSON: lists element-wise, dtypes and devices by name."""
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if _is_tensor(value):
        return str(getattr(value, "get_name", lambda: "tensor")())
    if getattr(value, "is_Integer", False):  # a sympy integer (json_value makes a float)
        return int(value)
    text = json_value(value)
    return text.removeprefix("torch.") if isinstance(text, str) else text


def _note(what: str, error: Exception) -> str:
    return f"{what}: {type(error).__name__}: {error}"[:_MAX_NOTE]
