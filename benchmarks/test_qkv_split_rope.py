"""litgpt qkv split + RoPE: inference, forward (autograd on) and backward, every litgpt config, bs 1 and 2."""

from __future__ import annotations

import pytest

from benchmarks import executors, workloads
from benchmarks.harness import run


@pytest.mark.parametrize("shape, dtype, mode, executor",
                         workloads.cases(workloads.ROPE_SHAPES, {"mode": ["inference", "forward", "backward"]},
                                                         executors=executors.ROPE_EXECUTORS),
                         ids=lambda v: str(v).removeprefix("torch."))
def test_qkv_split_rope(benchmark, copy_gbs, shape, dtype, mode, executor):
    spec = "qkv_split_rope_bwd" if mode == "backward" else "qkv_split_rope_fwd"
    cfg, inputs, refs, names = workloads.case_data(spec, shape, dtype)
    prepared = executors.rope(cfg, executor, inputs, mode)
    run(benchmark, prepared, refs, names, workloads.rope_bytes(cfg, mode), copy_gbs)
