"""float8 scaling statistics: tensorwise + rowwise, and rowwise + columnwise + tensorwise amax of |x| (the seed
of segkit.reuse_reductions, pytorch/pytorch#136267), on the fp8 shapes and the seed's 3-D example."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from benchmarks import workloads
from benchmarks.executors import AMAX_EXECUTORS, amax
from benchmarks.harness import run
from fusions.configs import AMAXES

AMAX_SETS = {"tensorwise+rowwise": ("row", "all"), "rowwise+columnwise+tensorwise": ("row", "col", "all")}
SHAPES = sorted(workloads.AMAX_SHAPES, key=lambda s: not s.startswith("seed"))  # the seed's small case first
CASES = [(shape, torch.bfloat16, amaxes, ex) for shape in SHAPES for amaxes in AMAX_SETS for ex in AMAX_EXECUTORS]


@pytest.mark.parametrize("shape, dtype, amaxes, executor", CASES, ids=lambda v: str(v).removeprefix("torch."))
def test_fp8_amax(benchmark, copy_gbs, shape, dtype, amaxes, executor):
    cfg, inputs, refs, names = workloads.case_data("fp8_amax", shape, dtype)
    cfg = replace(cfg, amaxes=AMAX_SETS[amaxes])
    pick = [AMAXES.index(a) for a in cfg.amaxes]  # case_data's references are the config's: all three amaxes
    run(benchmark, amax(cfg, executor, inputs), [refs[i] for i in pick], [names[i] for i in pick],
        workloads.amax_bytes(cfg), copy_gbs)
