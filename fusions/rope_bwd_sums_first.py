"""The grouped-query qkv split + RoPE backward as two fusions, so that nvFuser can run it in two kernels:

    stage 1  (dk, dv) -> one reduction kernel:  s = sum over the q_per_kv copies of cat(dk, dv), (2 B, G, T, hs) fp32
    stage 2  (dq, s[:B], s[B:], cos, sin) -> the resize scheduler's one kernel (define_sliced_inputs' form)

Why (H100, nvFuser 0.2.36, benchmarks/results/h100-2026-11-25-rope/): in one fusion the grouped-query sums are
reductions the resize scheduler refuses ("No support for reduction ops"), the two sums are two reduction kernels
because their graphs are not connected, and the slices after them are not of fusion inputs, which the pointwise
scheduler refuses; every one-fusion formulation tried took 5 to 12 kernels at Llama-3-70B bs2. Here stage 1
connects the two sums through a cat of its inputs (read once each), and stage 2's slices are all of its own
inputs, as in the multi-head case that the resize scheduler ran as one kernel. The sums are kept in fp32 like
the builder's, at the cost of writing and reading them once (2 x n_query_groups heads of fp32).

Not yet run on a GPU: how many kernels each stage takes, and its time beside the builder's five, is what
``benchmarks/explore/rope_bwd_formulations.py --only=builder,sums_first`` measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from fusions.configs import RopeConfig
from fusions.qkv_split_rope_bwd import define_rope_of_summed, define_summed_kv
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.nvf import run_on

SUMS_FIRST = "sums_first"


@dataclass
class SumsFirst:
    """Both stages, recorded; runs on the reference interpreter or nvFuser (each stage on nvFuser's own
    schedulers), taking and giving what the one-fusion builder does."""

    cfg: RopeConfig
    stages: tuple[Any, Any] = field(init=False)

    def __post_init__(self) -> None:
        if self.cfg.q_per_kv == 1:
            raise SegkitError(f"{SUMS_FIRST} is for grouped-query configs; {self.cfg.name} has one query per kv head "
                              "(the sliced_inputs formulation is one kernel there)")
        built = []
        for define in (define_summed_kv, define_rope_of_summed):
            with FusionDefinition() as fd:
                define(fd, self.cfg)
            built.append(fd)
        self.stages = tuple(built)

    def describe(self) -> str:
        return f"{SUMS_FIRST} (the grouped-query sums in one fusion, RoPE's adjoint of the sums in another)"

    @staticmethod
    def stage1_args(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """dk, dv of the builder's inputs (dq, dk, dv, cos, sin)."""
        return list(inputs[1:3])

    def stage2_args(self, inputs: Sequence[torch.Tensor], sums: torch.Tensor) -> list[torch.Tensor]:
        """dq, the summed dk and dv (views of stage 1's one output, dk's first), cos, sin."""
        dq, _, _, cos, sin = inputs
        B = self.cfg.batch
        return [dq, sums[:B], sums[B:], cos, sin]

    def run(self, inputs: Sequence[torch.Tensor], backend: str = "reference") -> list[torch.Tensor]:
        """dqkv from dq, dk, dv, cos, sin (the builder's inputs and output)."""
        (sums,) = run_on(self.stages[0], self.stage1_args(inputs), backend)
        return run_on(self.stages[1], self.stage2_args(inputs, sums), backend)

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """On nvFuser, like a compiled fusion's ``execute``."""
        return self.run(inputs, "nvfuser")


def sums_first(spec_name: str, cfg: RopeConfig) -> SumsFirst:
    """The sums-first formulation of ``spec_name`` ("qkv_split_rope_bwd") as the tuning table names it."""
    if spec_name != "qkv_split_rope_bwd":
        raise SegkitError(f"the {SUMS_FIRST} formulation is for qkv_split_rope_bwd, not {spec_name}")
    return SumsFirst(cfg)
