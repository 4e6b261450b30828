"""Peak math rates of known GPUs (dense TFLOP/s), by the math a kernel runs: tensor
cores on fp16, bf16, fp8 or tf32 inputs, or plain fp32 without tensor cores.

Numbers are NVIDIA's data sheets (H100/H200 "NVIDIA H100 Tensor Core GPU" and "NVIDIA
H200 Tensor Core GPU", GH200, A100, L4, L40S, A10, V100, T4). The sheets give tensor
core rates "with sparsity" (2:4 structured); a dense GEMM, which is what cuBLAS,
cuDNN and attention kernels run, gets half of that, and these are those halves.
"""

from __future__ import annotations

import re

RATES = ("fp32", "tf32", "bf16", "fp16", "fp8")

# Hopper SXM: H100 SXM5, H200 SXM and GH200's GPU (sheets: FP32 67, TF32 989*,
# BF16/FP16 1,979*, FP8 3,958*; * sparse)
_HOPPER_SXM = {"fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979}
# Hopper NVL: H100 NVL and H200 NVL (sheets: FP32 60, TF32 835*, BF16/FP16 1,671*,
# FP8 3,341*)
_HOPPER_NVL = {"fp32": 60, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5, "fp8": 1670.5}

# (pattern of torch.cuda.get_device_name(), short name, {rate: dense TFLOP/s}); the
# first match wins, so the more specific names come first.
_PEAKS: tuple[tuple[str, str, dict[str, float]], ...] = (
    (r"GH200", "GH200", _HOPPER_SXM),  # the Hopper GPU of the Grace Hopper superchip
    (r"H200 NVL", "H200 NVL", _HOPPER_NVL),
    (r"H200", "H200 SXM", _HOPPER_SXM),
    # H100 PCIe (sheet: FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026*)
    (r"H100 PCIe", "H100 PCIe",
     {"fp32": 51, "tf32": 378, "bf16": 756.5, "fp16": 756.5, "fp8": 1513}),
    (r"H100 NVL", "H100 NVL", _HOPPER_NVL),
    (r"H100", "H100 SXM", _HOPPER_SXM),  # torch's "NVIDIA H100 80GB HBM3"
    # A100 40GB and 80GB, SXM4 and PCIe (sheet: FP32 19.5, TF32 156, BF16/FP16 312)
    (r"A100", "A100",
     {"fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312}),
    # L40S (sheet: FP32 91.6, TF32 366*, BF16/FP16 733*, FP8 1,466*)
    (r"L40S", "L40S",
     {"fp32": 91.6, "tf32": 183, "bf16": 366.5, "fp16": 366.5, "fp8": 733}),
    # L4 (sheet: FP32 30.3, TF32 120*, BF16/FP16 242*, FP8 485*)
    (r"\bL4\b", "L4",
     {"fp32": 30.3, "tf32": 60, "bf16": 121, "fp16": 121, "fp8": 242.5}),
    # A10, not the A10G (sheet: FP32 31.2, TF32 62.5, BF16/FP16 125)
    (r"\bA10\b", "A10",
     {"fp32": 31.2, "tf32": 62.5, "bf16": 125, "fp16": 125}),
    # V100: fp16 tensor cores only (sheet: SXM2 FP32 15.7, tensor 125; PCIe 14, 112)
    (r"V100-PCIE", "V100 PCIe", {"fp32": 14, "fp16": 112}),
    (r"V100", "V100 SXM2", {"fp32": 15.7, "fp16": 125}),
    # T4 (sheet: FP32 8.1, FP16 mixed precision 65)
    (r"\bT4\b", "T4", {"fp32": 8.1, "fp16": 65}),
)


def gpu_peaks(device_name: str) -> tuple[str, dict[str, float]]:
    """(short name, dense peak TFLOP/s by rate) of the GPU ``device_name`` names;
    ("", {}) for a GPU not in the table (or a CPU)."""
    for pattern, name, peaks in _PEAKS:
        if re.search(pattern, device_name or "", re.IGNORECASE):
            return name, {k: float(v) for k, v in peaks.items()}
    return "", {}


def rate_of(dtype: str, *, conv: bool, env: dict) -> str:
    """The math a matmul or convolution of ``dtype`` inputs runs (one of ``RATES``, or
    "" for none of them): float32 runs on TF32 tensor cores where the recorded
    settings allow it (``cuda_matmul_allow_tf32`` or ``float32_matmul_precision``
    high/medium for matmuls, ``cudnn_allow_tf32`` for convolutions; torch's defaults
    where not recorded: matmuls in plain fp32, convolutions in TF32)."""
    if dtype in ("float16", "bfloat16"):
        return "fp16" if dtype == "float16" else "bf16"
    if dtype.startswith("float8"):
        return "fp8"
    if dtype != "float32":
        return ""
    if conv:
        return "tf32" if env.get("cudnn_allow_tf32", True) is True else "fp32"
    tf32 = (env.get("cuda_matmul_allow_tf32") is True
            or env.get("float32_matmul_precision") in ("high", "medium"))
    return "tf32" if tf32 else "fp32"


def rate_label(rate: str) -> str:
    """``bf16 tensor cores``, ``fp32 (no tensor cores)``."""
    return "fp32 (no tensor cores)" if rate == "fp32" else f"{rate} tensor cores"
