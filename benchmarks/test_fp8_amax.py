"""float8 scaling statistics: per-row, per-column and global amax of |x|."""

from __future__ import annotations

import pytest

from benchmarks import executors, workloads
from benchmarks.harness import run


@pytest.mark.parametrize("shape, dtype, executor", workloads.cases(workloads.AMAX_SHAPES),
                         ids=lambda v: str(v).removeprefix("torch."))
def test_fp8_amax(benchmark, copy_gbs, shape, dtype, executor):
    cfg, inputs, refs, names = workloads.case_data("fp8_amax", shape, dtype)
    run(benchmark, executors.amax(cfg, executor, inputs), refs, names, workloads.amax_bytes(cfg), copy_gbs)
