"""fp8 amax statistics with x read once, in tiles: x viewed as (P, chunk, Q, W), one CTA per (chunk rows x W
columns) tile. Whole rows per CTA (fusions/fp8_amax_rows.py) put a block reduction of a long row inside the loop
over the CTA's rows, and its loads stay latency-bound; a tile's row segment is W / vec threads (one warp at
W = 256, vec 8), its column accumulators vec registers per thread, and the row amax becomes Q partials per row,
which stage 2 reduces with the column partials:

    stage 1:  row_part[p, r, q] = max_w |x[p, r, q, w]|      col_part[p, q, w] = max_r |x[p, r, q, w]|
    stage 2:  row[p r] = max_q row_part                        col[q w] = max_p col_part    all = max col

Loop nest per CTA (BIDx = p, BIDy = q; ``rows`` rows per step on TIDy, W / vec threads on TIDx, ``unroll``
steps' loads issued together)::

    acc_col[vec] = 0                                       # col_rf: [P, rS, rU, Y, Q, W/V, V], serial
    for s in range(chunk / (rows * unroll)):
        v[u] = load(row (s*unroll + u)*rows + TIDy, cols q*W + TIDx*vec : +vec)  for u < unroll  # vectorized
        for u in range(unroll):
            row_part[row, q] = block_reduce_TIDx(max(|v[u]|))   # row_rf: [.., W/V, rV], then rW/V
            acc_col = max(acc_col, |v[u]|)
    col_part[p, q] = block_reduce_TIDy(acc_col)

Deterministic (max is exact, every reduction in a fixed order). On bf16 the same loop nest runs on x's bits
(fusions/fp8_amax_bit_tiles.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from fusions.amax_staged import AmaxStaged
from fusions.configs import AmaxConfig
from fusions.formulations import Formulation, register
from fusions.hand_staged import HandSchedule
from fusions.rows_schedule import divisors
from fusions.spec import dt, nv_dtype
from segkit.errors import SegkitError


@dataclass(frozen=True)
class TileSchedule(HandSchedule):
    """``chunk`` rows x ``width`` columns per CTA, ``rows`` of them per loop step (TIDy), ``vec`` columns per
    vectorized load (``width / vec`` threads per row segment, TIDx), ``unroll`` loop steps loaded at once."""

    chunk: int
    width: int
    rows: int = 1
    vec: int = 8
    unroll: int = 1  # loop steps whose loads each thread issues before it reduces any (loads in flight)

    @property
    def threads(self) -> int:
        return self.width // self.vec * self.rows

    def check(self, lead: int, cols: int, what: str) -> None:
        """That the schedule fits ``lead`` rows x ``cols`` (``what``: the config, for the message)."""
        problems = []
        if lead % self.chunk:
            problems.append(f"chunk {self.chunk} does not divide the {lead} rows")
        if cols % self.width:
            problems.append(f"width {self.width} does not divide the {cols} columns")
        if self.width % self.vec:
            problems.append(f"vec {self.vec} does not divide width {self.width}")
        if self.chunk % (self.rows * self.unroll):
            problems.append(f"rows {self.rows} x unroll {self.unroll} does not divide chunk {self.chunk}")
        if self.threads > 1024:
            problems.append(f"{self.width // self.vec} x {self.rows} threads exceed a CTA's 1024")
        if problems:
            raise SegkitError(f"tile schedule {self} for {what}: " + "; ".join(problems))

    def describe(self) -> str:
        unroll = f", unroll {self.unroll}" if self.unroll > 1 else ""
        return (f"tile schedule ({self.chunk} rows x {self.width} columns per CTA, {self.rows} rows per step{unroll}, "
                f"vec {self.vec})")


def define_stage1(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    x = fd.define_tensor(shape=[P, s.chunk, Q, s.width], contiguity=[True] * 4,
                         dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a = fd.ops.abs(fd.ops.cast(x, dtype=dt(fd, "Float")))
    if "row" in cfg.amaxes:
        fd.add_output(fd.ops.max(a, dims=[3]))  # row_part (P, chunk, Q)
    fd.add_output(fd.ops.max(a, dims=[1]))  # col_part (P, Q, W)


def define_stage2(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    f32 = dt(fd, "Float")
    if "row" in cfg.amaxes:
        row_part = fd.define_tensor(shape=[cfg.lead, Q], contiguity=[True, True], dtype=f32)
        fd.add_output(fd.ops.max(row_part, dims=[1]))
    col = fd.ops.max(fd.define_tensor(shape=[P, cfg.cols], contiguity=[True, True], dtype=f32), dims=[0])
    for name in ("col", "all"):
        if name in cfg.amaxes:
            fd.add_output(col if name == "col" else fd.ops.max(col, dims=[0]))


def schedule_tiles(nvfd: Any, s: TileSchedule) -> None:
    """The loop nest of the module docstring on a translated stage-1 fusion."""
    import nvfuser_direct as nvf

    PT, sched, fusion = nvf.ParallelType, nvf.schedule, nvfd.fusion
    guard = nvf.FusionGuard(fusion)  # the IR built below (splits, caches, rfactors) needs an active fusion
    try:
        x = next(v for v in fusion.inputs() if v.is_tensor())
        ref = x.cache_after()
        # [P, chunk, Q, W] -> [P, S, U, Y, Q, W/V, V]: BIDx, serial steps, unrolled steps, TIDy, BIDy, TIDx, vectorized
        ref.split(3, s.vec)
        ref.split(1, s.rows)
        ref.split(1, s.unroll)
        sched.transform_like(ref)
        for tv in (v for v in _tensors(fusion) if any(i.is_reduction() for i in v.get_logical_domain())):
            if tv.get_logical_domain()[-1].is_reduction():  # row_part over W: per thread over V, then TIDx
                tv.rfactor([len(tv.get_loop_domain()) - 1])
            else:  # col_part over the chunk: serial over S and U, then TIDy
                tv.rfactor([1, 2])
        parallelize_tile_nest(ref, PT, sched)
        sched.inline_most([t for t in _tensors(fusion) if t is not ref])
        # the load sits outside the unrolled steps: U vectors per thread in registers, loaded before the reductions
        sched.inline_at(ref, 2, True, [ref])
    finally:
        del guard


def parallelize_tile_nest(ref: Any, PT: Any, sched: Any) -> None:
    """``ref``'s loop nest [P, S, U, Y, Q, W/V, V] on (BIDx, serial, unrolled, TIDy, BIDy, TIDx, vectorized), the
    parallel types propagated to every tensor, the vectorized load only on ``ref``."""
    for axis, pt in ((0, PT.grid_x), (2, PT.unroll), (3, PT.block_y), (4, PT.grid_y), (5, PT.block_x)):
        ref.axis(axis).parallelize(pt)
    sched.parallelize_like(ref)
    ref.axis(-1).parallelize(PT.vectorize)


def _tensors(fusion) -> list:
    return [v for v in fusion.vals() if v.is_tensor()]


@dataclass
class AmaxTiles(AmaxStaged):
    """Stage 1 per-tile row and column amaxes of x viewed (P, chunk, Q, W), stage 2 the rest."""

    schedule: TileSchedule
    formulation: ClassVar[str] = "tiles"
    defines: ClassVar[tuple[Callable, Callable]] = (define_stage1, define_stage2)

    def schedule_first(self, nvfd: Any) -> None:
        schedule_tiles(nvfd, self.schedule)

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        s = self.schedule
        return [self.x_viewed(inputs[0], (self.cfg.lead // s.chunk, s.chunk, self.cfg.cols // s.width, s.width))]

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        """The partials as stage 2 takes them, views, no copies: row_part (rows, Q) where there is a row amax, then
        col_part (P, Q, W) as (P, cols)."""
        rows = [first[0].reshape(self.cfg.lead, self.cfg.cols // self.schedule.width)] if "row" in self.cfg.amaxes else []
        return rows + [first[-1].reshape(first[-1].shape[0], self.cfg.cols)]

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """The outputs in ``cfg.amaxes`` order (stage 2 writes them row, col, all), the row amax viewed as x's
        leading dims."""
        names = [n for n in ("row", "col", "all") if n in self.cfg.amaxes]
        shapes = {"row": inputs[0].shape[:-1], "col": (self.cfg.cols,), "all": ()}
        by_name = {n: t.reshape(shapes[n]) for n, t in zip(names, second)}
        return [by_name[n] for n in self.cfg.amaxes]


register(Formulation(AmaxTiles.formulation, ("fp8_amax",),
                     lambda spec_name, cfg, how: AmaxTiles(cfg, TileSchedule.from_dict(how.chunk, how.schedule))))


def candidates(cfg: AmaxConfig, sm_count: int) -> list[TileSchedule]:
    """Tiles of 256-1024 columns (vec 8 or 4: 32-256 threads per row segment; whole rows where x is narrower),
    1-8 rows per step (at most 512 threads), 1, 2 or 4 steps unrolled, chunks giving about 16, 8, 32, 64, 4 and 2
    CTAs per SM (not one CTA down all rows of a small x). Likeliest first, so a search cut short has tried them:
    the fastest measured at each fp8 shape comes first."""
    out = []
    for vec in (8, 4):
        widths = [w for w in (256, 512, 1024) if cfg.cols % w == 0 and 32 <= w // vec <= 256]
        if not widths and cfg.cols % vec == 0 and cfg.cols // vec <= 256:  # narrow x (the tiny twins): whole rows
            widths = [cfg.cols]
        for rows in (4, 8, 2, 1):
            for unroll in (4, 2, 1):
                for width in widths:
                    if width // vec * rows > 512:
                        continue
                    q = cfg.cols // width
                    fits = [c for c in divisors(cfg.lead) if c % (rows * unroll) == 0]
                    for chunk in [min(fits, key=lambda c: abs(cfg.lead // c * q - per_sm * sm_count))
                                  for per_sm in (16, 8, 32, 64, 4, 2)] if fits else []:
                        s = TileSchedule(chunk, width, rows, vec, unroll)
                        if s not in out:
                            out.append(s)
    return out
