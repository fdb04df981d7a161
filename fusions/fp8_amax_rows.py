"""fp8 amax statistics with x read once, by the rows schedule (fusions/rows_schedule.py): x viewed as
(P, chunk, cols), one CTA per chunk; stage 1 takes each row's amax (an inner reduction) and the CTA's partial
column amax (accumulated in registers over its rows, then across TIDy); stage 2 reduces the P partials to the
column amax and that to the tensorwise amax.

    stage 1:  row[p, r] = max_c |x[p, r, c]|          col_part[p, c] = max_r |x[p, r, c]|
    stage 2:  col[c] = max_p col_part[p, c]           all = max_c col[c]

It is the inner-outer pattern nvFuser's own inner-outer scheduler was tried on (fusions/fp8_amax.py's
variants). Only configs with a column amax: without one the reuse pass already reads x once
(segkit.reuse_reductions). Right and bitwise deterministic, but slower than reading x twice (the loop over a
long row is not unrolled, so loads stay latency-bound): an exploration, not
wired into the benchmarks or the tuning search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from fusions.amax_staged import AmaxStaged
from fusions.configs import AmaxConfig
from fusions.rows_schedule import RowsSchedule, fitting, schedule_stage1
from fusions.spec import dt, nv_dtype


def define_stage1(fd, cfg: AmaxConfig, s: RowsSchedule) -> None:
    P, N = cfg.lead // s.chunk, cfg.cols
    x = fd.define_tensor(shape=[P, s.chunk, N], contiguity=[True] * 3, dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a = fd.ops.abs(fd.ops.cast(x, dtype=dt(fd, "Float")))
    if "row" in cfg.amaxes:
        fd.add_output(fd.ops.max(a, dims=[2]))
    fd.add_output(fd.ops.max(a, dims=[1]))


def define_stage2(fd, cfg: AmaxConfig, s: RowsSchedule) -> None:
    part = fd.define_tensor(shape=[cfg.lead // s.chunk, cfg.cols], contiguity=[True, True], dtype=dt(fd, "Float"))
    col = fd.ops.max(part, dims=[0])
    for name in ("col", "all"):
        if name in cfg.amaxes:
            fd.add_output(col if name == "col" else fd.ops.max(col, dims=[0]))


@dataclass
class AmaxRows(AmaxStaged):
    """Stage 1 the row amax and per-CTA column amaxes of x viewed (P, chunk, cols), stage 2 the rest."""

    schedule: RowsSchedule
    formulation: ClassVar[str] = "rows"
    defines: ClassVar[tuple[Callable, Callable]] = (define_stage1, define_stage2)

    def schedule_first(self, nvfd: Any) -> None:
        schedule_stage1(nvfd, self.schedule, self.cfg.cols)

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return [self.x_viewed(inputs[0], (self.cfg.lead // self.schedule.chunk, self.schedule.chunk, self.cfg.cols))]

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        return [first[-1]]

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """The outputs in ``cfg.amaxes`` order: the row amax from stage 1 (viewed as x's leading dims)."""
        by_name = dict(zip([n for n in ("col", "all") if n in self.cfg.amaxes], second))
        if "row" in self.cfg.amaxes:
            by_name["row"] = first[0].view(inputs[0].shape[:-1])
        return [by_name[n] for n in self.cfg.amaxes]


def candidates(cfg: AmaxConfig, sm_count: int) -> list[RowsSchedule]:
    """About 1, 2 and 4 CTAs per SM (fewer partials: each is a row of ``cols`` floats), vectors of 8 or 4, 256-1024
    threads per row (at most 64 column accumulators per thread), 1 or 2 rows in flight."""
    shapes = tuple((r, v, t) for v in (8, 4) for t in (None, 256, 512, 1024) for r in (1, 2))
    return [s for s in fitting(cfg.lead, cfg.cols, sm_count, (1, 2, 4), (sm_count // 2, 8 * sm_count), shapes)
            if cfg.cols // s.threads(cfg.cols) <= 64]
