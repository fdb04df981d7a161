"""Residual add + RMSNorm / layer norm, forward (training: y, h and the statistics) and backward (only the
backward timed), against eager, torch.compile of the same function and Liger-Kernel's LigerFusedAddRMSNorm."""

from __future__ import annotations

import pytest

from benchmarks import add_norm, workloads
from benchmarks.harness import run

CASES = pytest.mark.parametrize("shape, dtype, executor",
                                workloads.cases(workloads.ADD_NORM_SHAPES, executors=add_norm.ADD_NORM_EXECUTORS),
                                ids=lambda v: str(v).removeprefix("torch."))
KINDS = pytest.mark.parametrize("kind", add_norm.KINDS)


@CASES
@KINDS
def test_add_norm_fwd(benchmark, copy_gbs, kind, shape, dtype, executor):
    cfg, inputs, refs, names = workloads.case_data(add_norm.spec_name(kind, "fwd"), shape, dtype)
    prepared = add_norm.forward(kind, cfg, executor, inputs)
    # every executor returns y and h first; segkit also the statistics, checked against the reference too
    n = len(refs) if executor == "segkit" else 2
    run(benchmark, prepared, refs[:n], names[:n], workloads.add_norm_bytes(kind, "fwd", cfg), copy_gbs)


@CASES
@KINDS
def test_add_norm_bwd(benchmark, copy_gbs, kind, shape, dtype, executor):
    cfg, inputs, refs, names = workloads.case_data(add_norm.spec_name(kind, "bwd"), shape, dtype)
    prepared = add_norm.backward(kind, cfg, executor, inputs)
    # the rivals return dresidual after dw (, db): the same gradient as dx
    refs, names = (refs, names) if executor == "segkit" else ((*refs, refs[0]), (*names, "dresidual"))
    run(benchmark, prepared, refs, names, workloads.add_norm_bytes(kind, "bwd", cfg), copy_gbs)
