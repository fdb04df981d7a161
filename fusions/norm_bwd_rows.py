"""Norm backward with a hand-written nvFuser schedule (the formulation "rows"): several rows per CTA, the partial
dw (db) of each CTA accumulated in registers, then a small fusion summing the per-CTA partials. Deterministic: no
atomics, every partial is a fixed serial + block reduction and stage 2 sums them in a fixed order.

Stage 1 is the two-stage formulation's (``norm_bwd_two_stage.define_stage1`` with host views: x, dy as
(P, chunk, hidden), one CTA per chunk), scheduled by the rows loop nest (fusions/rows_schedule.py) instead of by
nvFuser's segmenter (which splits it into an inner-persistent kernel and a reduction kernel reading x and dy
again). nvFuser's own inner-outer persistent kernel at hidden 384 puts one row in a 48-96 thread block and loses
to Inductor's mix-order reduction at 576000 x 384 (issue 21). Which chunk / rows / vec pays differs by GPU: it is
measured by ``segkit tune`` (``candidates`` below) and kept in the tuning table, not assumed.

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
    # stage 1 compiled per layout of rows not in memory order ((shape, strides) of its views), bounded
    _by_layout: dict[Layout, tuple[Any, Any]] = field(default_factory=dict, init=False)

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

    def recorded(self, strided: Layout | None = None) -> tuple[Any, Any]:
        """The two recorded segkit fusions (stage 1 with host views, in the ``strided`` layout when given: see
        ``strided_views``): what the reference interpreter runs."""
        built = []
        for define, kw in ((define_stage1, {"host_views": True, "strided": strided}),
                           (define_stage2, {"joint": self.joint})):
            with FusionDefinition() as fd:
                define(fd, self.cfg, self.schedule.chunk, self.layer_norm, **kw)
            built.append(fd)
        return tuple(built)

    @property
    def _n_rows_args(self) -> int:
        """How many inputs are per row: x, dy (, mean), rstd."""
        return 4 if self.layer_norm else 3

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """x, dy as (P, chunk, hidden), mean / rstd as (P, chunk), weight as is: views where the rows are in memory
        order (else copies: ``strided_views`` takes the layouts it can read in place)."""
        P, c, H = self.partials, self.schedule.chunk, self.cfg.hidden
        x, dy, *stats = inputs[:self._n_rows_args]
        return [x.reshape(P, c, H), dy.reshape(P, c, H), *(t.reshape(P, c) for t in stats), inputs[-1]]

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        return [t if t.dim() == 2 else t.view(self.partials, self.cfg.hidden) for t in first[1:]]

    def strided_views(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor] | None:
        """x, dy (, mean), rstd split at their last row dim into (..., chunk, hidden) / (..., chunk), each in its own
        layout, where some are not in row-major memory order (a per-head norm over ``q.view(B, T, nh, hs)
        .transpose(1, 2)``, its grad contiguous in (B, nh, T, hs)): stage 1 reads them in place instead of after
        a copy. None where they are all in row order, or where the split does not fit (copied then)."""
        rows = inputs[:self._n_rows_args]
        if all(t.is_contiguous() for t in rows):
            return None
        return split_rows(rows, self.schedule.chunk)

    def stage1_inputs(self, inputs: Sequence[torch.Tensor]) -> tuple[list[torch.Tensor], Layout | None]:
        """``stage1_args``, or where some rows are not in memory order the ``strided_views`` read in place and their
        layout (stage 1 recorded and compiled for it)."""
        views = self.strided_views(inputs)
        if views is None:
            return self.stage1_args(inputs), None
        return [*views, inputs[-1]], layout_of(views)

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """dx, dw (, db) in the fused builder's order."""
        return [first[0].view(inputs[0].shape), *split_joint(second, self.cfg.hidden, self.layer_norm, self.joint)]


Layout = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]  # (shape, strides) of each per-row input's view


def layout_of(views: Sequence[torch.Tensor]) -> Layout:
    return tuple((tuple(v.shape), tuple(v.stride())) for v in views)


def split_rows(rows: Sequence[torch.Tensor], chunk: int) -> list[torch.Tensor] | None:
    """``rows`` (x-shaped tensors, then per-row statistics of x's shape less its last dim) with their last row dim
    split into (size / chunk, chunk): views in any layout, no copies. None where that dim is not a multiple of
    ``chunk``, a statistic's shape is not x's rows, or an x-shaped tensor's last dim is not unit-strided (the
    schedule's vectorized loads need it)."""
    x = rows[0]
    if x.dim() < 2 or x.shape[-2] % chunk:
        return None
    split = (x.shape[-2] // chunk, chunk)
    views = []
    for t in rows:
        if t.shape == x.shape and t.stride(-1) == 1:
            views.append(t.unflatten(-2, split))
        elif t.shape == x.shape[:-1]:
            views.append(t.unflatten(-1, split))
        else:
            return None
    return views


def rows_scheduled(spec_name: str, cfg: NormConfig, how: Any) -> RowsScheduled:
    """The rows formulation of ``spec_name`` as the tuning table keeps it (``how``: an entry or a candidate)."""
    return RowsScheduled(cfg, RowsSchedule.from_dict(how.chunk, how.schedule), layer_norm=spec_name == "layernorm_bwd")


register(Formulation(ROWS, NORM_BWD, rows_scheduled))


def candidates(cfg: NormConfig, sm_count: int, quick: bool = True) -> list[RowsSchedule]:
    """The schedules ``segkit tune`` tries: chunks giving about 4, 6, 8 and 16 CTAs per SM (3 to 16 without
    ``quick``), rows in flight, one vector per thread per row or one warp per row. The quick set holds the winners
    measured at 576000 x 384; one warp per row comes first, at every chunk, since it won both norms on both GPUs
    measured there and a short search that tried the other shapes first reached few of its chunks."""
    per_sm = (4, 6, 8, 16) if quick else (3, 4, 6, 8, 12, 16)
    shapes = ((4, 8, None), (2, 8, None), (2, 4, None), (4, 4, 32), (8, 4, 32)) if quick else \
        tuple((r, v, t) for r in (2, 4, 8, 16) for v, t in ((8, None), (4, None), (4, 32), (8, 16), (4, 16)))
    found = fitting(cfg.rows, cfg.hidden, sm_count, per_sm, (2 * sm_count, 16 * sm_count), shapes)
    return sorted(found, key=lambda s: s.tidx is None)  # stable: warp rows first, each kind in its order
