"""The grouped-query qkv split + RoPE backward in two fusions, each written for one nvFuser kernel, every resize
of the second on the last axis:

    stage 1  (dk, dv)                          s = sum over the q_per_kv copies of cat(dk, dv)   (2 B, G, T, hs) fp32
    stage 2  (dq[:, :, 0], .., dq[:, :, Q-1],  dqkv = cat(q_0 lo, q_0 hi, .., k lo, k hi, v; last axis)
              s[:B], s[B:], cos, sin)               as (B, T, G, (Q + 2) hs), viewed (B, T, qkv_width)

Why this shape (nvFuser 0.2.36, csrc/scheduler/resize.cpp, ``canScheduleCompileTime``): the resize scheduler
refuses a resize of any ID whose broadcast group holds a broadcast ID. A product with the cos/sin tables, which
are broadcast over every axis but T and the last, is then resizable on those two only, and the formulations
that assembled the output along the head axis failed there. Here the head axis is never resized: the host
passes dq as q_per_kv strided views, one per query slot of a group (no copy), and the summed dk and dv as two
views of stage 1's output, so that stage 2's one cat is along the last axis, as in the multi-head
``sliced_inputs`` fusion that nvFuser runs as one kernel. Stage 1 is the sums as ONE reduction over a cat of the
two inputs along the batch (two unconnected sums are two kernels).

It runs as the 2 kernels designed, yet slower than the builder's: nvFuser's generated cat computes every piece
for every output element and keeps the one whose range holds it. A faster one-kernel stage 2 needs a cat whose
code evaluates only the piece an element falls in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

import fusions._rope as R
from fusions.configs import RopeConfig
from fusions.formulations import Formulation, register
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.nvfuser.run import run_on

SUMS_THEN_CAT = "sums_then_cat"


def define_summed_kv(fd, cfg: RopeConfig) -> None:
    """Stage 1: the grouped-query sums of dk and dv as one reduction, (2 B, G, T, hs) fp32, dk's first."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    f32 = dt(fd, "Float")
    dk, dv = (fd.define_tensor(shape=[B, cfg.n_head, T, H], contiguity=[True] * 4, dtype=R.io(fd, cfg)) for _ in "kv")
    both = fd.ops.reshape(fd.ops.cast(fd.ops.cat([dk, dv], dim=0), dtype=f32), new_shape=[2 * B, G, Q, T, H])
    fd.add_output(fd.ops.sum(both, dims=[2], dtype=f32))


def define_cat_of_heads(fd, cfg: RopeConfig) -> None:
    """Stage 2: from dq's q_per_kv slot views (B, G, T, hs) and the summed dk, dv (B, G, T, hs) fp32, RoPE's adjoint
    per half (``_rope.adjoint_halves``), every piece permuted to (B, T, G, .) and concatenated once along the last
    axis."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    rn, half = cfg.rope_n_elem, cfg.rope_n_elem // 2
    f32, io = dt(fd, "Float"), R.io(fd, cfg)
    # dq (B, n_head, T, hs) is (B, G, Q, T, hs): slot s of every group is a view with G's stride Q T hs
    q_slots = [fd.define_tensor(sizes=[B, G, T, H], strides=[cfg.n_head * T * H, Q * T * H, H, 1], dtype=io,
                                static_sizes=True) for _ in range(Q)]
    dk, dv = (fd.define_tensor(sizes=[B, G, T, H], strides=[G * T * H, T * H, H, 1], dtype=f32, static_sizes=True)
              for _ in "kv")
    cos, sin = R.define_cos_sin(fd, cfg)

    def cols(g, lo: int, hi: int):
        """g[..., lo:hi] of a (B, G, T, hs) input, in fp32, as (B, T, G, hi - lo)."""
        g = R.axis_slice(fd, g, [B, G, T, H], 3, lo, hi) if (lo, hi) != (0, H) else g
        return fd.ops.permute(fd.ops.cast(g, dtype=f32), dims=[0, 2, 1, 3])

    tables = R.half_tables(fd, cos, sin, cfg, 4, 1)  # broadcast over B and G only: never over the cat's axis

    def roped(g) -> list:
        return R.adjoint_halves(fd, cols(g, 0, half), cols(g, half, rn), tables) + ([cols(g, rn, H)] if rn < H else [])

    pieces = [p for g in (*q_slots, dk) for p in roped(g)] + [cols(dv, 0, H)]
    d = fd.ops.cat([fd.ops.cast(p, dtype=io) for p in pieces], dim=3)  # (B, T, G, (Q + 2) hs)
    fd.add_output(fd.ops.reshape(d, new_shape=[B, T, cfg.qkv_width]))


@dataclass
class SumsThenCat:
    """Both stages, recorded; runs on the reference interpreter or nvFuser (each stage on nvFuser's own
    schedulers), taking and giving what the one-fusion builder does: dq, dk, dv, cos, sin -> dqkv."""

    cfg: RopeConfig
    stages: tuple[Any, Any] = field(init=False)

    def __post_init__(self) -> None:
        if self.cfg.q_per_kv == 1:
            raise SegkitError(f"{SUMS_THEN_CAT} is for grouped-query configs; {self.cfg.name} has one query per kv "
                              "head (the sliced_inputs formulation is one kernel there)")
        built = []
        for define in (define_summed_kv, define_cat_of_heads):
            with FusionDefinition() as fd:
                define(fd, self.cfg)
            built.append(fd)
        self.stages = tuple(built)

    def describe(self) -> str:
        return f"{SUMS_THEN_CAT} (the grouped-query sums in one fusion, RoPE's adjoint and one last-axis cat in another)"

    @staticmethod
    def stage1_args(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """dk, dv of the builder's inputs (dq, dk, dv, cos, sin)."""
        return list(inputs[1:3])

    def stage2_args(self, inputs: Sequence[torch.Tensor], sums: torch.Tensor) -> list[torch.Tensor]:
        """dq's slot views, the summed dk and dv (views of stage 1's output, dk's first), cos, sin: no copies."""
        dq, _, _, cos, sin = inputs
        c = self.cfg
        slots = dq.view(c.batch, c.n_query_groups, c.q_per_kv, c.T, c.head_size).unbind(2)
        return [*slots, sums[:c.batch], sums[c.batch:], cos, sin]

    def run(self, inputs: Sequence[torch.Tensor], backend: str = "reference") -> list[torch.Tensor]:
        (sums,) = run_on(self.stages[0], self.stage1_args(inputs), backend)
        return run_on(self.stages[1], self.stage2_args(inputs, sums), backend)

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """On nvFuser, like a compiled fusion's ``execute``."""
        return self.run(inputs, "nvfuser")


register(Formulation(SUMS_THEN_CAT, ("qkv_split_rope_bwd",), lambda spec_name, cfg, how: SumsThenCat(cfg)))
