"""The committed real GPU traces (H200, Triton) load and carry the Triton-only facts."""

from pathlib import Path

import pytest

from fusionviz.model.trace_io import load_trace

DATA = Path(__file__).parents[1] / "data"
GPU = sorted(DATA.glob("gpu_*.json.gz"))


@pytest.mark.parametrize("path", GPU, ids=[p.name for p in GPU])
def test_gpu_trace_has_triton_kernels(path):
    trace = load_trace(path, strict=True)
    assert trace.script.status == "ok"
    assert trace.env["triton"] and "H200" in trace.env["device_name"]
    assert path.stat().st_size < 200_000
    for g in trace.graphs:
        assert g.device == "cuda" and g.backend == "triton"
        triton = [k for k in g.kernels if k.backend == "triton"]
        assert triton
        for k in triton:
            assert k.name.startswith(("triton_poi_", "triton_red_", "triton_per_"))
            assert "@triton.jit" in k.source
            assert "def triton_" in k.source
            assert k.n_regs and k.n_regs > 0 and k.n_spills is not None
            assert k.launch.get("num_warps") and k.ms and k.ms > 0
        assert g.timing.compiled_ms > 0 and g.timing.method.startswith("cuda events")


def test_benchmark_fusion_entries():
    trace = load_trace(DATA / "gpu_hub_branches_bench.json.gz")
    assert trace.config["benchmark_fusion"] is True
    cands = [c for r in trace.graphs[0].rounds for c in r.candidates if c.benchmark]
    assert len(cands) >= 3
    for c in cands:
        b = c.benchmark
        assert b.deferred and b.fuse is not None
        assert [k.role for k in b.kernels] == ["a", "b", "fused"]
        assert all(k.ms and k.ms > 0 and k.n_regs for k in b.kernels)
        assert b.speedup == pytest.approx((b.ms_a + b.ms_b) / b.ms_fused)
        assert c.outcome == ("fused" if b.fuse else "benchmark_slower")
    assert any(c.tried for c in cands)  # later pairs were tried through earlier fusions


def test_spilling_kernel_is_visible():
    g = load_trace(DATA / "gpu_hub_branches.json.gz").graphs[0]
    assert max(k.n_spills for k in g.kernels if k.n_spills is not None) > 0
