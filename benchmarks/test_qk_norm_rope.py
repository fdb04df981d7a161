"""QK-norm + RoPE (Qwen3, Gemma3, OLMo2 forms), forward (autograd on) and backward, against eager and torch.compile of
the same function (fusions.torch_models.qk_norm_rope), each validated against the float64 reference first."""

from __future__ import annotations

import pytest

from benchmarks import executors, workloads
from benchmarks.harness import run


@pytest.mark.parametrize("shape, dtype, mode, executor",
                         workloads.cases(workloads.QK_NORM_ROPE_SHAPES, {"mode": ["forward", "backward"]},
                                         executors=executors.QK_NORM_ROPE_EXECUTORS),
                         ids=lambda v: str(v).removeprefix("torch."))
def test_qk_norm_rope(benchmark, copy_gbs, shape, dtype, mode, executor):
    spec = "qk_norm_rope_bwd" if mode == "backward" else "qk_norm_rope_fwd"
    cfg, inputs, refs, names = workloads.case_data(spec, shape, dtype)
    prepared = executors.qk_norm_rope(cfg, executor, inputs, mode)
    run(benchmark, prepared, refs, names, workloads.qk_norm_rope_bytes(cfg, mode), copy_gbs)
