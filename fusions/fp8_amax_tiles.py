"""fp8 amax statistics with x read once, in tiles: x viewed as (P, chunk, Q, W), one CTA per (chunk rows x W
columns) tile. fusions/fp8_amax_rows.py gives each CTA whole rows; at 4096-28672 columns that is a block
reduction of 256-1024 threads per row, inside the loop over the CTA's rows, and its loads stay latency-bound
(one read of x, yet 1.1-1.3x slower than reading it twice). A tile's row segment is W / vec threads (one warp
at W = 256, vec 8), its column accumulators vec registers per thread, and the row amax becomes Q partials per
row, which stage 2 reduces with the column partials:

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

With one thread per row segment (``threads_per_row=1``; W / vec <= 16 vectors, ``rows`` rows per step on TIDx)
the row partial never leaves the thread, and the only block reduction is the column partials' at the end::

    acc_col[W] = 0
    for s in range(chunk / (rows * unroll)):
        v[u][j] = load(row (s*unroll + u)*rows + TIDx, cols q*W + j*vec : +vec)  for u < unroll, j < W / vec
        for u in range(unroll):
            row_part[p, q, row] = max_j,k |v[u][j][k]|           # serial; stored (P, Q, chunk): a warp's rows adjacent
            acc_col = max(acc_col, |v[u]|)
    col_part[p, q] = block_reduce_TIDx(acc_col)                 # once per CTA

A warp's load then touches 32 rows, 16 bytes each; the next vector of each row is the other half of the same
32-byte sectors. Not yet measured on a GPU (``segkit tune`` tries 8 of these among its 24 quick tiles).

Deterministic (max is exact, every reduction in a fixed order). Measured on an H100 (2026-11-25,
benchmarks/results/h100-2026-11-25-bigshapes-fp8tiles/explore_fp8_tiles_unroll.log), rowwise + columnwise +
tensorwise, bf16, cold-L2 kernel time, all in one run, best tile schedule (4 rows per step, unroll 4, vec 8,
256 columns) first:

    shape          tiles      segkit + reuse (x read twice)   torch.compile + seed's reuse pass   floor
    4096 x 4096    32.5 us    31.4 us                         32.6 us                             34.8%
    16384 x 8192   171.6 us   185.4 us                        179.6 us                            52.7%
    8192 x 28672   295.1 us   323.6 us                        321.4 us                            53.6%

On an H200 (2026-11-25, benchmarks/results/h200-2026-11-25-perf/, the same schedule won the tune at every shape)
the tiles lose to reading x twice: 31.9 / 164.1 / 278.4 us against segkit + reuse's 27.9 / 149.0 / 245.3 and
torch.compile + reuse's 28.9 / 144.7 / 226.5. Unrolling bought 3-11% on the H100 (the same schedules without
it: 33.4, 190.0, 333.4 us). Stage 2 (four small
kernels) is 5.5 us of the 32.5 at 4096 x 4096. The exploration is
``benchmarks/explore/fp8_amax_rows.py --form tiles``.

``segkit tune fp8_amax:SHAPE`` searches these schedules (the formulation "tiles" of the tuning table, after
nvFuser's defaults); a table entry for the GPU makes the benchmarks' ``segkit`` run it
(``REUSE_TUNE_S=40 scripts/gpu/reuse.sh``). No tiles entry is committed: on the H200 the tune, which also
offers the reuse pass (segkit.tune.rewrites), chose the pass at all three shapes (fusions/tunings.json); the
H100, where the tiles won the two large shapes against the pass in the benchmark, has not been tuned with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from fusions.configs import AmaxConfig
from fusions.fp8_amax_rows import AmaxStaged
from fusions.norm_bwd_rows import divisors
from fusions.spec import dt, nv_dtype
from segkit.errors import SegkitError
from segkit.tuning import TILES, NvTuning


@dataclass(frozen=True)
class TileSchedule:
    """``chunk`` rows x ``width`` columns per CTA, ``rows`` of them per loop step (TIDy), ``vec`` columns per
    vectorized load (``width / vec`` threads per row segment, TIDx), ``unroll`` loop steps loaded at once."""

    chunk: int
    width: int
    rows: int = 1
    vec: int = 8
    unroll: int = 1  # loop steps whose loads each thread issues before it reduces any (loads in flight)
    threads_per_row: int | None = None  # None: width / vec (TIDx); 1: one thread per row segment (``rows`` on TIDx)

    @property
    def threads(self) -> int:
        return self.rows if self.by_row else self.width // self.vec * self.rows

    @property
    def by_row(self) -> bool:
        """One thread per row segment: its row partial in registers, no block reduction inside the loop."""
        return self.threads_per_row == 1

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
        if self.threads_per_row not in (None, 1):
            problems.append(f"threads_per_row {self.threads_per_row}: only 1 (one thread per row segment) or None "
                            f"(width / vec)")
        elif self.by_row and self.width // self.vec > 16:
            problems.append(f"one thread per row segment of {self.width} columns keeps {self.width} column maxima "
                            f"in registers; at most 16 vectors of {self.vec}")
        if self.threads > 1024:
            problems.append(f"{self.threads} threads exceed a CTA's 1024")
        if problems:
            raise SegkitError(f"tile schedule {self} for {what}: " + "; ".join(problems))

    def tuning(self, why: str = "segkit tune candidate") -> NvTuning:
        """As the tuning table keeps it (with formulation "tiles" and this chunk)."""
        return NvTuning(why, scheduler=TILES, vectorize=self.vec, rows_per_block=self.rows, tile_width=self.width,
                        unroll=self.unroll, threads_per_row=self.threads_per_row)

    @classmethod
    def from_tuning(cls, chunk: int, tuning: NvTuning | None) -> TileSchedule:
        if tuning is None or tuning.scheduler != TILES or tuning.tile_width is None:
            raise SegkitError(f"the tiles formulation needs a {TILES!r} tuning with a tile_width, got "
                              f"{tuning.describe() if tuning else None}")
        given = {"rows": tuning.rows_per_block, "vec": tuning.vectorize, "unroll": tuning.unroll,
                 "threads_per_row": tuning.threads_per_row}
        return cls(chunk, tuning.tile_width, **{k: v for k, v in given.items() if v is not None})

    def describe(self) -> str:
        unroll = f", unroll {self.unroll}" if self.unroll > 1 else ""
        by_row = ", one thread per row segment" if self.by_row else ""
        return (f"tile schedule ({self.chunk} rows x {self.width} columns per CTA, {self.rows} rows per step{unroll}, "
                f"vec {self.vec}{by_row})")


def define_stage1(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    x = fd.define_tensor(shape=[P, s.chunk, Q, s.width], contiguity=[True] * 4,
                         dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a = fd.ops.abs(fd.ops.cast(x, dtype=dt(fd, "Float")))
    if "row" in cfg.amaxes:
        row_part = fd.ops.max(a, dims=[3])  # (P, chunk, Q)
        # one thread per row: (P, Q, chunk), so that a warp's 32 rows store 32 adjacent floats
        fd.add_output(fd.ops.permute(row_part, dims=[0, 2, 1]) if s.by_row else row_part)
    fd.add_output(fd.ops.max(a, dims=[1]))  # col_part (P, Q, W)


def define_stage2(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    f32 = dt(fd, "Float")
    if "row" in cfg.amaxes:
        if s.by_row:  # (P, Q, chunk) -> (P, chunk)
            row_part = fd.define_tensor(shape=[P, Q, s.chunk], contiguity=[True] * 3, dtype=f32)
        else:  # (P chunk, Q) -> (P chunk)
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
        # (one thread per row segment: Y on TIDx, W/V serial)
        ref.split(3, s.vec)
        ref.split(1, s.rows)
        ref.split(1, s.unroll)
        sched.transform_like(ref)
        for tv in (v for v in _tensors(fusion) if any(i.is_reduction() for i in v.get_logical_domain())):
            if tv.get_logical_domain()[-1].is_reduction():  # row_part over W: per thread over V, then TIDx
                if not s.by_row:  # (by row: all of W in one thread, a serial reduction, nothing to rfactor)
                    tv.rfactor([len(tv.get_loop_domain()) - 1])
            else:  # col_part over the chunk: serial over S and U, then TIDy (by row: TIDx, once per CTA)
                tv.rfactor([1, 2])
        ref.axis(0).parallelize(PT.grid_x)
        ref.axis(2).parallelize(PT.unroll)
        ref.axis(3).parallelize(PT.block_x if s.by_row else PT.block_y)
        ref.axis(4).parallelize(PT.grid_y)
        if not s.by_row:
            ref.axis(5).parallelize(PT.block_x)
        sched.parallelize_like(ref)
        ref.axis(-1).parallelize(PT.vectorize)
        sched.inline_most([t for t in _tensors(fusion) if t is not ref])
        # the load sits outside the unrolled steps: U vectors per thread in registers, loaded before the reductions
        sched.inline_at(ref, 2, True, [ref])
    finally:
        del guard


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
        return [inputs[0].view(self.cfg.lead // s.chunk, s.chunk, self.cfg.cols // s.width, s.width)]

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        """The partials as stage 2 takes them: row_part (rows, Q) (by row: (P, Q, chunk) as written), col_part
        (P, cols); views, no copies."""
        col_part = first[-1].reshape(first[-1].shape[0], self.cfg.cols)
        if "row" not in self.cfg.amaxes:
            return [col_part]
        s = self.schedule
        row_part = first[0] if s.by_row else first[0].reshape(self.cfg.lead, self.cfg.cols // s.width)
        return [row_part, col_part]

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """The outputs in ``cfg.amaxes`` order, the row amax viewed as x's leading dims."""
        names = (["row"] if "row" in self.cfg.amaxes else []) + [n for n in ("col", "all") if n in self.cfg.amaxes]
        by_name = dict(zip(names, second))
        if "row" in by_name:
            by_name["row"] = by_name["row"].view(inputs[0].shape[:-1])
        return [by_name[n] for n in self.cfg.amaxes]


def amax_tiles(spec_name: str, cfg: AmaxConfig, chunk: int, tuning: NvTuning | None) -> AmaxTiles:
    """The tiles formulation of ``spec_name`` ("fp8_amax") as the tuning table keeps it."""
    if spec_name != "fp8_amax":
        raise SegkitError(f"the tiles formulation is for fp8_amax, not {spec_name}")
    return AmaxTiles(cfg, TileSchedule.from_tuning(chunk, tuning))


def candidates(cfg: AmaxConfig, sm_count: int) -> list[TileSchedule]:
    """Likeliest first, so that a search cut short has tried them: the 16 first tiles with a row segment over
    several threads (``_segment_tiles``), the 8 first with one thread per row segment (``_row_tiles``), then the
    rest of each."""
    seg, row = _segment_tiles(cfg, sm_count), _row_tiles(cfg, sm_count)
    return seg[:16] + row[:8] + seg[16:] + row[8:]


def _chunks(cfg: AmaxConfig, sm_count: int, q: int, step: int, per_sm: Sequence[int]) -> list[int]:
    """For each of ``per_sm`` CTAs per SM, the chunk (a divisor of the rows, a multiple of ``step``) nearest it."""
    fits = [c for c in divisors(cfg.lead) if c % step == 0]
    return list(dict.fromkeys(min(fits, key=lambda c: abs(cfg.lead // c * q - k * sm_count)) for k in per_sm)) \
        if fits else []


def _segment_tiles(cfg: AmaxConfig, sm_count: int) -> list[TileSchedule]:
    """Tiles of 256-1024 columns (vec 8 or 4: 32-256 threads per row segment; whole rows where x is narrower),
    1-8 rows per step (at most 512 threads), 1, 2 or 4 steps unrolled, chunks giving about 16, 8, 32, 4 and 2
    CTAs per SM. On an H100 (2026-11-25, benchmarks/results/h100-2026-11-25-bigshapes-fp8tiles/
    explore_fp8_tiles_unroll.log) the fastest at each of the three fp8 shapes was 256 columns, 4 rows per step,
    unroll 4, vec 8, 14-16 CTAs per SM; time grew with the steps per CTA (each step waits for its loads before
    its block reductions); the same schedule won on an H200."""
    out = []
    for vec in (8, 4):
        widths = [w for w in (256, 512, 1024) if cfg.cols % w == 0 and 32 <= w // vec <= 256]
        if not widths and cfg.cols % vec == 0 and cfg.cols // vec <= 256:  # narrow x (the tiny twins): whole rows
            widths = [cfg.cols]
        for rows in (4, 8, 2, 1):
            for unroll in (4, 2, 1):
                for width in (w for w in widths if w // vec * rows <= 512):
                    for chunk in _chunks(cfg, sm_count, cfg.cols // width, rows * unroll, (16, 8, 32, 4, 2)):
                        s = TileSchedule(chunk, width, rows, vec, unroll)
                        if s not in out:
                            out.append(s)
    return out


def _row_tiles(cfg: AmaxConfig, sm_count: int) -> list[TileSchedule]:
    """One thread per row segment of 32-64 columns (4-8 vectors of 8: no block reduction in the loop, the row
    partial in registers, one block reduction of the column partials per CTA), 128 or 256 rows per step on TIDx,
    1 or 2 steps unrolled, chunks giving about 8, 16 and 4 CTAs per SM. Not yet measured on a GPU."""
    out = []
    widths = [w for w in (64, 32) if cfg.cols % w == 0] or ([cfg.cols] if cfg.cols % 8 == 0 and cfg.cols <= 128 else [])
    for width in widths:
        for rows in (128, 256, 32, 8):  # (8: the tiny twins, whose leads are small)
            for unroll in (1, 2):
                for chunk in _chunks(cfg, sm_count, cfg.cols // width, rows * unroll, (8, 16, 4)):
                    s = TileSchedule(chunk, width, rows, 8, unroll, threads_per_row=1)
                    if s not in out:
                        out.append(s)
    return out
