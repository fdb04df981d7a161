"""Norm backward with a hand-written nvFuser schedule: several rows per CTA, the partial dw (db) of each CTA
accumulated in registers, then a small fusion summing the per-CTA partials. Deterministic: no atomics, every
partial is a fixed serial + block reduction and stage 2 sums them in a fixed order.

Stage 1 is the two-stage formulation's (``norm_bwd_two_stage.define_stage1`` with host views: x, dy as
(P, chunk, hidden), one CTA per chunk), scheduled by hand instead of by nvFuser's segmenter (which splits it
into an inner-persistent kernel and a reduction kernel reading x and dy again). The loop nest, per CTA
``p`` (BIDx), with ``r`` rows in flight (TIDy) and ``vec`` elements per vectorized access (hidden = TIDx * vec, or a loop over it)::

    acc_dw[vec] = 0                                    # dw_rf: [P, rS, Y, H/V, V], S = chunk / r, serial
    for s in range(chunk / r):                         # the rows' loop, shared by dx and the dw accumulation
        x, dy = load(row s*r + TIDy)[TIDx*vec : +vec]  # vectorized, kept in registers (the persistent buffer)
        sum_gx = block_reduce_TIDx(g * xhat)           # s_rf: [.., H/V, rV] then s: [.., rH/V]
        dx[row] = rstd * (g - xhat * sum_gx / H)       # vectorized store
        acc_dw += dy * xhat                            # serial reduction over s
    dw_part[p] = block_reduce_TIDy(acc_dw)             # dw: [P, rY, H/V, V]

nvFuser's own inner-outer persistent kernel at hidden 384 puts one row in a 48-96 thread block and loses to
Inductor's mix-order reduction at 576000 x 384 (issue 21). Which chunk / rows / vec pays is measured per GPU
by ``segkit tune`` (``candidates`` below) and kept in the tuning table, not assumed. At 576000 x 384 bf16,
cold-L2 kernel time, side by side with torch.compile in one run (benchmarks/results/h*-2026-11-24-rows/):

* H200: RMSNorm 342.5 us (torch.compile 353.4), layer norm 405.1 us (423.9); nvFuser's own schedule with the
  hand rule 445.4 / 642.6 us.
* H100: RMSNorm 474.8 us (484.6); layer norm 519.0 us, still behind torch.compile's 507.0.
* The winners differ by GPU (layer norm: 288 rows per CTA, 4 in flight on the H200; 576 and 8 on the H100),
  and one warp per row (``tidx=32``) beat one vector per thread everywhere.

The first kernel is launched through ``manual_execute``, which costs more host time per call than
``fd.execute`` (see segkit.tuning); kernel time is what the benchmarks compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from fusions.configs import NormConfig
from fusions.formulations import Formulation, register
from fusions.hand_staged import HandStaged
from fusions.norm_bwd_two_stage import NORM_BWD, define_stage1, define_stage2, split_joint
from fusions.rows_schedule import RowsSchedule, fitting, schedule_stage1
from segkit.frontend import FusionDefinition

ROWS = "rows"  # the formulation's name in the tuning table


@dataclass
class RowsScheduled(HandStaged):
    """The norm backward: stage 1 dx and per-CTA partial dw (db), stage 2 their sum."""

    cfg: NormConfig
    schedule: RowsSchedule
    layer_norm: bool
    joint: str | None = None  # layer norm's stage 2 (norm_bwd_two_stage.JOINT); an exploration, not yet tuned
    _stages: tuple[Any, Any] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.schedule.check(self.cfg.rows, self.cfg.hidden, f"{self.cfg.name} {self.cfg.shape}")

    @property
    def chunk(self) -> int:
        return self.schedule.chunk

    @property
    def partials(self) -> int:
        return self.cfg.rows // self.schedule.chunk

    @property
    def hidden(self) -> int:
        return self.cfg.hidden

    def schedule_first(self, nvfd: Any) -> None:
        schedule_stage1(nvfd, self.schedule, self.cfg.hidden)

    def recorded(self) -> tuple[Any, Any]:
        """The two recorded segkit fusions (stage 1 with host views): what the reference interpreter runs."""
        built = []
        for define, kw in ((define_stage1, {"host_views": True}), (define_stage2, {"joint": self.joint})):
            with FusionDefinition() as fd:
                define(fd, self.cfg, self.schedule.chunk, self.layer_norm, **kw)
            built.append(fd)
        return tuple(built)

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """x, dy as (P, chunk, hidden), mean / rstd as (P, chunk), weight as is: views, no copies."""
        P, c, H = self.partials, self.schedule.chunk, self.cfg.hidden
        n_stats = 2 if self.layer_norm else 1
        x, dy, stats, w = inputs[0], inputs[1], list(inputs[2:2 + n_stats]), inputs[2 + n_stats]
        return [x.view(P, c, H), dy.view(P, c, H), *(t.view(P, c) for t in stats), w]

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        return first[1:]

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """dx, dw (, db) in the fused builder's order."""
        return [first[0].view(inputs[0].shape), *split_joint(second, self.cfg.hidden, self.layer_norm, self.joint)]


def rows_scheduled(spec_name: str, cfg: NormConfig, how: Any) -> RowsScheduled:
    """The rows formulation of ``spec_name`` as the tuning table keeps it (``how``: an entry or a candidate)."""
    return RowsScheduled(cfg, RowsSchedule.from_dict(how.chunk, how.schedule), layer_norm=spec_name == "layernorm_bwd")


register(Formulation(ROWS, NORM_BWD, rows_scheduled))


def candidates(cfg: NormConfig, sm_count: int, quick: bool = True) -> list[RowsSchedule]:
    """The schedules ``segkit tune`` tries: chunks giving about 4, 8 and 16 CTAs per SM (and 3, 6, 12 without
    ``quick``), rows in flight, one vector per thread per row or one warp per row. The quick set is what was
    fastest at 576000 x 384 on an H100 (benchmarks/results/h100-2026-11-24-rows/). One warp per row comes first,
    at every chunk: it won both norms on both GPUs at 576000 x 384 (chunk 576 on the H100, 288-576 on the H200),
    and a 40 s search that tried the other shapes first reached one chunk of it only
    (benchmarks/results/h200-2026-11-25-perf/perf.log). Six CTAs per SM is in the quick set since the H100's
    layer norm winner there (chunk 720: 484.0 us, and 483.7 against torch.compile's 507.6 in the benchmark after;
    benchmarks/results/h100-2026-11-26/) came from the full set only."""
    per_sm = (4, 6, 8, 16) if quick else (3, 4, 6, 8, 12, 16)
    shapes = ((4, 8, None), (2, 8, None), (2, 4, None), (4, 4, 32), (8, 4, 32)) if quick else \
        tuple((r, v, t) for r in (2, 4, 8, 16) for v, t in ((8, None), (4, None), (4, 32), (8, 16), (4, 16)))
    found = fitting(cfg.rows, cfg.hidden, sm_count, per_sm, (2 * sm_count, 16 * sm_count), shapes)
    return sorted(found, key=lambda s: s.tidx is None)  # stable: warp rows first, each kind in its order
