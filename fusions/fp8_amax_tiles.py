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

Tried and removed: one thread per row segment (rows on TIDx, 32-64 columns each, the row partial in registers,
one block reduction per CTA). A warp's load then touches 32 rows 16 bytes apart by a row's stride, not one
row's 512 contiguous bytes. On an H200 (2026-11-26, benchmarks/results/h200-2026-11-26/reuse.log, rowwise +
columnwise + tensorwise) the best of those tried took 90.0 us at 4096 x 4096, 669.2 at 16384 x 8192 and 750.1
at 8192 x 28672: 2.7-4.4x the tiles above, all exact.

On bf16, the same loop nest over x's bits (``AmaxBitTiles``, the formulation "bit_tiles") is faster at every
schedule measured: abs and max become integer ops, with no conversion to fp32 (the float tiles' kernel was
issue-bound rather than memory-bound, below). Stage 1 packs each pair's column maxima back into one int32, the
partials as bf16, which stage 2 reads as bf16; written as two int32 tensors (even, odd columns) reassembled in
stage 2, the same tiles took 1.5-1.6x longer (H200, benchmarks/results/h200-2026-11-26-packed/run1_probes.log).
The fp8 suite, tuned, rowwise + columnwise + tensorwise (H100 run 3 and H200 run 4 of
benchmarks/results/h100-2026-11-26-packed/ and h200-2026-11-26-packed/):

    shape          H100 bit tiles   torch.compile + reuse pass   H200 bit tiles   torch.compile + reuse pass
    4096 x 4096    19.3 us, 58%     32.8 us                      16.5 us, 49%     28.7 us
    16384 x 8192   100.3 us, 90%    179.7 us                     75.6 us, 86%     144.4 us
    8192 x 28672   165.0 us, 96%    322.2 us                     120.5 us, 94%    221.4 us

(% of the bytes floor, x read once.) Without a column amax the bit tiles take the tensorwise amax from the rows;
the tune picks fusions/fp8_amax_bits.py there at the large shapes. ``segkit tune fp8_amax:SHAPE [--amaxes ...]``
searches these schedules (the formulation "bit_tiles" for bf16, "tiles" otherwise, after nvFuser's defaults; the
reuse pass too, segkit.tune.rewrites); a table entry for the GPU makes the benchmarks' ``segkit`` run it
(``REUSE_TUNE_S=40 scripts/gpu/reuse.sh``).

Where the float tiles' time went (ncu on the H100, 8192 x 28672, chunk 256, ``ncu_tiles.txt`` there): 43% of DRAM
throughput against 72% of SM throughput; 55 registers a thread hold a CTA of 128 threads to 9 per SM (50%
achieved occupancy), and the 3584 CTAs are 3.02 waves. Outside the tune's chunks, 2 rows per step, unroll 4,
chunk 64 measured 266.6 us there and 162.3 at 16384 x 8192 (``tiles2.log``), 2-5% better. The reductions
written in bf16 (abs and max are exact in it; one cast of each partial to fp32) stop nvFuser 0.2.36 with an
internal assert (compiled_kernel.cpp:187) at every schedule tried.
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
        ref.axis(0).parallelize(PT.grid_x)
        ref.axis(2).parallelize(PT.unroll)
        ref.axis(3).parallelize(PT.block_y)
        ref.axis(4).parallelize(PT.grid_y)
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
    CTAs per SM (not one CTA down all rows of a small x: on the seed's 12 x 34 x 56 bit tiles of all 408 rows took
    34.6-64.4 us against 4.9 us in chunks of 4, H200, benchmarks/results/h200-2026-11-26-packed/run1_reuse.log).
    Likeliest first, so a search cut short has tried them: on an H100 (2026-11-25,
    benchmarks/results/h100-2026-11-25-bigshapes-fp8tiles/explore_fp8_tiles_unroll.log) the fastest at each of
    the three fp8 shapes was 256 columns, 4 rows per step, unroll 4, vec 8, 14-16 CTAs per SM; time grew with the
    steps per CTA (each step waits for its loads before it reduces). About 64 CTAs per SM is tried too: on bf16
    bits at 8192 x 28672 chunk 128 (54 per SM) measured 205.2 us against the tune's chunk 256's 213.1 (H100,
    benchmarks/results/h100-2026-11-26/bits.log)."""
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
