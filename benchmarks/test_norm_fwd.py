"""RMSNorm and layer norm forward, including nanoGPT's layer norm (16x128x1600)."""

from __future__ import annotations

import pytest

from benchmarks import executors, workloads
from benchmarks.harness import run


@pytest.mark.parametrize("shape, dtype, executor",
                         workloads.cases(["nanogpt"] + workloads.NORM_SHAPES, fp32=workloads.FP32_SHAPES),
                         ids=lambda v: str(v).removeprefix("torch."))
@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
def test_norm_fwd(benchmark, copy_gbs, kind, shape, dtype, executor):
    cfg, inputs, refs, names = workloads.case_data(f"{kind}_fwd", shape, dtype)
    prepared = executors.norm_forward(kind, cfg, executor, inputs)
    run(benchmark, prepared, refs[:1], names[:1], workloads.norm_bytes(kind, "fwd", cfg), copy_gbs)
