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
def test_every_variant_runs_on_the_gpu(record):
    variants = [v for v in VARIANTS if v.name != "compile"]  # Inductor's compile is slow and not segkit's
    rows = run_case(SMALL, variants, "cuda", Options(iters=3, warmup=2), dtype=torch.float32)
    record({"test": "model_step_small", "rows": [r.__dict__ for r in rows]})
    for r in rows:
        assert not r.note.startswith(("failed", "case failed")), r
        assert r.ms > 0 and r.host_ms > 0 and r.peak_gib > 0 and r.kernels > 0, r
        assert r.grad_err < 1e-3, r
    for r in rows[1:]:  # the Thunder variants
        assert r.regions[0] > 0 and r.regions[1] > 0, r
    segkit = [r for r in rows if r.variant.startswith("segkit")]
    assert segkit and all(r.claims == {"norm_fw": 5, "norm_bw": 5, "rope_fw": 4, "rope_bw": 4} for r in segkit), segkit
