"""model.highlight: per-line pygments spans for Triton (Python) and C++ kernel source."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.highlight import STYLE_KEYS, language_for, line_spans
from fusionviz.model.tracefile.io import load_trace

TRACES = sorted(Path(__file__).parents[1].joinpath("data").glob("*.json.gz"))

# What Inductor emits for relu(x + 1) (trimmed triton_meta), on GPU and on CPU.
TRITON_SOURCE = '''\
import triton
import triton.language as tl

@triton_heuristics.pointwise(
    size_hints={'x': 1024},
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'xnumel': 'i32'}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    """Fused add + relu.
    Second docstring line."""
    xnumel = 1024
    xoffset = tl.program_id(0) * XBLOCK
    xmask = xindex < xnumel  # bounds
    tmp1 = 1.0
    tmp4 = triton_helpers.maximum(tmp3, tmp0 + tmp1)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
'''

CPP_SOURCE = """\
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void kernel(const float* in_ptr0,
                       float* out_ptr0)
{
    #pragma omp parallel num_threads(2)
    {
        /* vectorized main loop,
           16 lanes */
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1024L); x0+=static_cast<int64_t>(16L))
        {
            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
            auto tmp4 = at::vec::clamp_min(tmp0, decltype(tmp0)(0)); // relu
            tmp4.store(out_ptr0 + static_cast<int64_t>(x0));
        }
    }
}
"""


def styled(source: str, language: str) -> dict[tuple[int, str], str]:
    """(line number, styled text) → style key, for every span."""
    lines = source.split("\n")
    return {
        (row, lines[row][s : s + n]): key
        for row, spans in enumerate(line_spans(source, language))
        for s, n, key in spans
    }


def test_triton_source_keywords_names_strings_numbers_comments():
    spans = styled(TRITON_SOURCE, "python")
    assert spans[(0, "import")] == "keyword"
    assert spans[(3, "@triton_heuristics.pointwise")] == "decorator"
    assert spans[(4, "'x'")] == "string"
    assert spans[(4, "1024")] == "number"
    assert spans[(9, "@triton.jit")] == "decorator"
    assert spans[(10, "def")] == "keyword"
    assert spans[(10, "triton_poi_fused_add_relu_0")] == "name.function"
    assert spans[(15, "# bounds")] == "comment"
    assert spans[(16, "1.0")] == "number"


def test_multiline_string_is_styled_on_every_line_it_covers():
    spans = styled(TRITON_SOURCE, "python")
    assert spans[(11, '"""Fused add + relu.')] == "string"
    assert spans[(12, '    Second docstring line."""')] == "string"


def test_cpp_source_preprocessor_types_keywords_numbers_comments():
    spans = styled(CPP_SOURCE, "cpp")
    assert spans[(0, "#include")] == "preproc"
    assert spans[(1, "extern")] == "keyword"
    assert spans[(1, "void")] == "type"
    assert spans[(1, "float")] == "type"
    assert spans[(4, "#pragma omp parallel num_threads(2)")] == "preproc"
    assert spans[(6, "/* vectorized main loop,")] == "comment"
    assert spans[(7, "           16 lanes */")] == "comment"
    assert spans[(8, "for")] == "keyword"
    assert spans[(8, "1024L")] == "number"
    assert spans[(11, "// relu")] == "comment"


@pytest.mark.parametrize(
    "source,language", [(TRITON_SOURCE, "python"), (CPP_SOURCE, "cpp")]
)
def test_spans_are_ordered_disjoint_within_their_line_and_use_known_keys(source, language):
    lines = source.split("\n")
    per_line = line_spans(source, language)
    assert len(per_line) == len(lines)
    for text, spans in zip(lines, per_line, strict=True):
        end = 0
        for start, length, key in spans:
            assert start >= end and length > 0 and start + length <= len(text)
            assert key in STYLE_KEYS
            end = start + length


def test_result_is_cached_per_source_and_text_language_has_no_spans():
    assert line_spans(CPP_SOURCE, "cpp") is line_spans(CPP_SOURCE, "cpp")
    assert line_spans("int x;\nfor", "text") == ((), ())
    assert line_spans("", "python") == ((),)


def test_language_follows_backend_and_recognises_cpp_text():
    assert language_for("triton", TRITON_SOURCE) == "python"
    assert language_for("extern", "extern_kernels.mm(arg0_1, arg1_1, out=buf0)") == "python"
    assert language_for("cpp", "") == "cpp"
    assert language_for("", CPP_SOURCE) == "cpp"


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_every_kernel_of_recorded_traces_highlights_its_defining_keyword(path):
    trace = load_trace(path, strict=True)
    kernels = [k for g in trace.graphs for k in g.kernels if k.backend in ("triton", "cpp")]
    assert kernels, "a recorded trace has generated kernels"
    for kernel in kernels:
        language = language_for(kernel.backend, kernel.source)
        keys = {(text, key) for (_, text), key in styled(kernel.source, language).items()}
        defining = ("def", "keyword") if language == "python" else ("void", "type")
        assert defining in keys, kernel.name
