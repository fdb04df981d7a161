"""RMSNorm and layer norm backward: only the backward is timed (the forward runs untimed in each round's setup)."""

from __future__ import annotations

import pytest
import torch

from benchmarks import executors, workloads
from benchmarks.harness import run


@pytest.mark.parametrize("shape, dtype, executor",
                         workloads.cases(workloads.NORM_SHAPES, fp32=workloads.FP32_SHAPES)
                         + [(s, torch.bfloat16, executors.TWO_STAGE) for s in workloads.TWO_STAGE_SHAPES],
                         ids=lambda v: str(v).removeprefix("torch."))
@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
def test_norm_bwd(benchmark, copy_gbs, kind, shape, dtype, executor):
    cfg, inputs, refs, names = workloads.case_data(f"{kind}_bwd", shape, dtype)
    prepared = executors.norm_backward(kind, cfg, executor, inputs)
    run(benchmark, prepared, refs, names, workloads.norm_bytes(kind, "bwd", cfg), copy_gbs)
