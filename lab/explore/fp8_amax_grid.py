"""Exploration for issue 38's fp8 bar (rowwise + columnwise + tensorwise amax at 4096 x 4096): the bit tiles'
loop nest (fusions/fp8_amax_bit_tiles.py) in one kernel, the reductions across tiles done by nvFuser grid
reductions, so that no second fusion reads partials back (the bit tiles' second fusion is several small kernels,
a large part of a short call). Each schedule is checked against the float64 reference before it is timed, beside
segkit as tuned for this GPU (the bit tiles) and torch.compile, CUPTI kernel time with a cold L2.

    python lab/explore/fp8_amax_grid.py [SHAPE ...] [--budget S] [--in-loop]

x is viewed as int32 pairs of bf16, (P, chunk, Q, W / 2), one CTA per tile (BIDx = p, BIDy = q)::

    lo, hi = v & 0x7FFF, (v >> 16) & 0x7FFF                 |x| of the even and odd column, as integer bits
    row[p, r] = max_{q, w} max(lo, hi)       block reduction over TIDx, grid reduction over BIDy
    col[q, w] = max_{p, r} lo | hi           per thread over its steps, block over TIDy, grid over BIDx
    all       = max_{p, r, q, w} max(lo, hi) per thread over its steps, block over TIDy, TIDx, grid over both

Each amax leaves as the bits of its fp32 value (a bf16's own bits << 16). The column pair (even, odd) leaves as
one int64, (hi << 48) | (lo << 16): on a little-endian GPU that is the two columns' fp32 values side by side, so
the host views the (Q, W / 2) int64 as the (cols,) fp32 column amax, without an interleaving kernel.

Where the row reduction crosses tiles (``row_after_loop``; one grid reduction over BIDy per loop step either way,
nvFuser's "entrances" into a grid reduction):

* True: each step's row segments (a block reduction over TIDx) stay in registers, chunk / rows per thread, and
  the grid reductions run after the loop, so no step's loads wait on another CTA;
* False (``--in-loop``): each step's grid reduction sits in the loop. nvFuser 0.2.36 accepts this schedule and
  returns wrong row and column amaxes; a later run of it did not return.

Rows across tiles through shared memory, a thread per row, are refused by nvFuser 0.2.36: a block reduction's
result is valid in TIDx 0 only, and a consumer parallelized on TIDx fails its sync analysis (sync_information.cpp:65).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import torch

from fusions.amax_staged import abs_bits, i32, x_viewed
from fusions.configs import AmaxConfig
from fusions.fp8_amax_bit_tiles import check_bit_tiles
from fusions.fp8_amax_tiles import TileSchedule, parallelize_tile_nest
from fusions.fp8_amax_tiles import candidates as tile_candidates
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.nvfuser.runnable import RunsOnBoth

GRID_TILES = "grid_tiles"  # its name in messages (not a registered formulation: it never won)


@dataclass(frozen=True)
class GridSchedule(TileSchedule):
    """A tile schedule (in bf16 columns, as the bit tiles') and where the row reduction crosses tiles."""

    row_after_loop: bool = True

    def describe(self) -> str:
        where = "after the loop" if self.row_after_loop else "in the loop"
        return super().describe().replace("tile schedule (", "one-kernel tile schedule (", 1)[:-1] + \
            f", rows across tiles {where})"


def define_grid(fd, cfg: AmaxConfig, s: GridSchedule) -> None:
    """The one fusion on x's bits (P, chunk, Q, W / 2): the amaxes ``cfg.amaxes`` asks for, in its order, each the
    bits of its fp32 value; the column amax as int64 pairs (module docstring)."""
    P, Q, W2 = cfg.lead // s.chunk, cfg.cols // s.width, s.width // 2
    v = fd.define_tensor(shape=[P, s.chunk, Q, W2], contiguity=[True] * 4, dtype=dt(fd, "Int32"))
    lo, hi = abs_bits(fd, v)
    both = fd.ops.maximum(lo, hi)
    c16, int64 = i32(fd, 16), dt(fd, "Int")

    def row():
        if s.row_after_loop:  # the segments (P, chunk, Q) first: what the registers hold until the loop ends
            return fd.ops.max(fd.ops.max(both, dims=[3]), dims=[2])
        return fd.ops.max(both, dims=[2, 3])

    def col():
        lo32, hi32 = (fd.ops.bitwise_left_shift(fd.ops.max(t, dims=[0, 1]), c16) for t in (lo, hi))
        hi64 = fd.ops.bitwise_left_shift(fd.ops.cast(hi32, dtype=int64), fd.define_scalar(32, dtype=int64))
        return fd.ops.bitwise_or(hi64, fd.ops.cast(lo32, dtype=int64))

    make = {"row": lambda: fd.ops.bitwise_left_shift(row(), c16), "col": col,
            "all": lambda: fd.ops.bitwise_left_shift(fd.ops.max(both, dims=[0, 1, 2, 3]), c16)}
    for name in cfg.amaxes:
        fd.add_output(make[name]())


def schedule_grid(nvfd: Any, s: GridSchedule) -> None:
    """The loop nest of the bit tiles on the translated fusion (``s`` in int32 pairs: width and vec halved),
    each reduction split into its per-thread, block and grid parts (module docstring)."""
    import nvfuser_direct as nvf

    PT, sched, fusion = nvf.ParallelType, nvf.schedule, nvfd.fusion
    guard = nvf.FusionGuard(fusion)
    try:
        tensors = [v for v in fusion.vals() if v.is_tensor()]
        x = next(v for v in fusion.inputs() if v.is_tensor())
        reduced = {tv: frozenset(i for i, d in enumerate(tv.get_logical_domain()) if d.is_reduction())
                   for tv in tensors}
        kept = [tv for tv in tensors if len(tv.get_logical_domain()) == 4 and reduced[tv] == {3}]  # the segments
        ref = x.cache_after()
        # [P, chunk, Q, W/2] -> [P, S, U, Y, Q, X, V]: BIDx, serial steps, unrolled steps, TIDy, BIDy, TIDx, vector
        ref.split(3, s.vec)
        ref.split(1, s.rows)
        ref.split(1, s.unroll)
        tiled = [ref] + [tv for tv in tensors if tv is not x]
        sched.transform_like(ref, tiled)
        last = 6
        for tv in tiled:
            r = reduced.get(tv, frozenset())
            if not r or len(tv.get_logical_domain()) != 4:
                continue
            if r in ({3}, {2, 3}):  # the row segments, or the row amax in the loop: per thread over V, then the rest
                tv.rfactor([last])
            elif r == {0, 1}:  # a column amax: per thread over the steps, then TIDy, then BIDx
                tv.rfactor([1, 2])
            elif r == {0, 1, 2, 3}:  # the tensorwise amax: per thread over the steps and V, then the rest
                tv.rfactor([1, 2, last])
        parallelize_tile_nest(ref, PT, sched)
        # the segments stay out of the row amax's loop: computed in the tiles' loop, reduced across tiles after it
        sched.inline_most([t for t in fusion.vals() if t.is_tensor() and t is not ref and t not in kept])
        sched.inline_at(ref, 2, True, [ref])
    finally:
        del guard


@dataclass
class AmaxGridTiles(RunsOnBoth):
    """The fp8 amaxes of bf16 x in one hand-scheduled kernel (module docstring)."""

    cfg: AmaxConfig
    schedule: GridSchedule
    _kernel: Any = field(default=None, init=False, repr=False)  # the scheduled nvFuser definition, compiled
    formulation: ClassVar[str] = GRID_TILES

    def __post_init__(self) -> None:
        check_bit_tiles(GRID_TILES, self.cfg, self.schedule)

    def describe(self) -> str:
        return self.schedule.describe()

    def recorded(self) -> FusionDefinition:
        with FusionDefinition() as fd:
            define_grid(fd, self.cfg, self.schedule)
        return fd

    def _args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        s, c = self.schedule, self.cfg
        shape = (c.lead // s.chunk, s.chunk, c.cols // s.width, s.width // 2)
        return [x_viewed(inputs[0], c, GRID_TILES, shape, torch.int32)]

    def _assembled(self, x: torch.Tensor, outs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Views: the row amax's bits as fp32 in x's leading dims, the column pairs' int64 as (cols,) fp32, the
        tensorwise amax's bits as a 0-dim fp32."""
        shape = {"row": x.shape[:-1], "col": (self.cfg.cols,), "all": ()}
        return [o.view(torch.float32).reshape(shape[n]) for n, o in zip(self.cfg.amaxes, outs)]

    def on_reference(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return self._assembled(inputs[0], run_reference(self.recorded(), self._args(inputs)))

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        args = self._args(inputs)
        if self._kernel is None:
            self._kernel = self._compiled(args)
        return self._assembled(inputs[0], self._kernel.ke.run(args))  # its KernelExecutor, past manual_execute

    def _compiled(self, args: list[torch.Tensor]) -> Any:
        from segkit.errors import error_summary
        from segkit.nvfuser.run import to_nvfuser

        try:
            nvfd = to_nvfuser(self.recorded())
            schedule_grid(nvfd, replace(self.schedule, width=self.schedule.width // 2, vec=self.schedule.vec // 2))
            nvfd.manual_execute(args)  # compiles the KernelExecutor (and runs it once)
        except Exception as e:  # noqa: BLE001  (whatever nvFuser raises, named with the schedule it refused)
            raise SegkitError(f"nvFuser refused the {self.describe()} for {self.cfg.name} {self.cfg.shape}: "
                              f"{error_summary(e, 240)}") from None
        return nvfd


def candidates(cfg: AmaxConfig, sm_count: int, in_loop: bool) -> list[GridSchedule]:
    """The bit tiles' schedules (fusions/fp8_amax_tiles.candidates, likeliest first), with the rows across tiles
    after the loop or (``in_loop``) in it."""
    return [GridSchedule(**vars(t), row_after_loop=not in_loop) for t in tile_candidates(cfg, sm_count)]


def main() -> None:
    import argparse
    import time

    from benchmarks.executors import amax
    from benchmarks.harness import copy_bandwidth_gbs, flush_l2
    from benchmarks.workloads import amax_bytes, case_data
    from segkit.compare import diff
    from segkit.nvfuser.timing import kernel_breakdown

    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*", default=["4096x4096"])
    ap.add_argument("--budget", type=float, default=120.0, help="seconds of candidates per shape")
    ap.add_argument("--in-loop", action="store_true", help="the row grid reductions in the loop (wrong on 0.2.36)")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    gbs = copy_bandwidth_gbs()
    print(f"{torch.cuda.get_device_name()} {sms} SMs, copy {gbs:.0f} GB/s, torch {torch.__version__}", flush=True)
    for shape in args.shapes:
        cfg, inputs, refs, _ = case_data("fp8_amax", shape, torch.bfloat16)
        cfg = replace(cfg, amaxes=("row", "col", "all"))
        floor_us = amax_bytes(cfg) / gbs / 1e3
        x = [inputs["x"]]
        for ex in ("segkit", "torch.compile"):  # segkit: the bit tiles, stage 1 then stage 2's kernels
            ks = kernel_breakdown(amax(cfg, ex, inputs).fn, 20, flush=flush_l2)
            us = sum(k.us for k in ks)
            print(f"RES {shape} {ex:60s} {us:8.1f} us {100 * floor_us / us:5.1f}% floor "
                  f"kernels [{', '.join(f'{k.us:.1f}' for k in ks)}]", flush=True)
        t_end = time.time() + args.budget
        for s in candidates(cfg, sms, args.in_loop):
            if time.time() > t_end:
                print(f"budget: stopped before {s}", flush=True)
                break
            tag = s.describe().split("(", 1)[1].rstrip(")")
            try:
                run = AmaxGridTiles(cfg, s)
                out = run.execute(x)
                bad = [str(d) for i, (r, g) in enumerate(zip(refs, out)) if not (d := diff(i, r, g)).ok]
                if bad:
                    print(f"WRONG {shape} {tag}: {'; '.join(bad)}", flush=True)
                    continue
                ks = kernel_breakdown(lambda run=run, x=x: run.execute(x), 20, flush=flush_l2)
            except SegkitError as e:
                print(f"FAIL {shape} {tag}: {e}", flush=True)
                continue
            us = sum(k.us for k in ks)
            print(f"RES {shape} {tag:60s} {us:8.1f} us {100 * floor_us / us:5.1f}% floor "
                  f"kernels [{', '.join(f'{k.us:.1f}' for k in ks)}]", flush=True)


if __name__ == "__main__":
    main()
