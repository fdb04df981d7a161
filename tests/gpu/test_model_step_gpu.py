"""The step table on the GPU host, on a small litgpt Llama (2 layers, n_embd 256, T=256, fp32): every variant
runs, the CUDA-graph variants replay with the inputs they are given (grads checked again on changed inputs), and
the GPU-only columns (host time, peak memory, kernels, nvFusion regions) are filled."""

from __future__ import annotations

import pytest
import torch

from benchmarks.model_cases import Case
from benchmarks.model_step import VARIANTS, Options, run_case

pytestmark = pytest.mark.gpu

SMALL = Case("small-llama", "litgpt", "Llama-3-8B", 256,
             dict(n_layer=2, n_embd=256, n_head=4, n_query_groups=2, head_size=64, intermediate_size=512))


@pytest.mark.fresh_process  # counts kernels with torch.profiler
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.default and v.name != "compile"], ids=lambda v: v.name)
def test_every_variant_runs_on_the_gpu(variant, record):
    """One variant per test (Inductor's compile is slow and not segkit's), so the sharded suite spreads them."""
    (row,) = run_case(SMALL, [variant], "cuda", Options(iters=3, warmup=2), dtype=torch.float32)
    record({"test": "model_step_small", "row": row.__dict__})
    assert not row.note.startswith(("failed", "case failed")), row
    assert row.ms > 0 and row.host_ms > 0 and row.peak_gib > 0 and row.kernels > 0, row
    assert row.grad_err < 1e-3, row
    if variant.thunder:
        assert row.regions[0] > 0 and row.regions[1] > 0, row
    if variant.segkit:
        assert row.claims == {"norm_fw": 5, "norm_bw": 5, "rope_fw": 4, "rope_bw": 4}, row
