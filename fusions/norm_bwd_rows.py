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
from fusions.norm_bwd_two_stage import NORM_BWD, define_stage1, define_stage2, split_joint
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.tuning import ROWS, NvTuning


@dataclass(frozen=True)
class RowsSchedule:
    """The hand-written schedule's parameters: ``chunk`` rows per CTA (one partial each), ``rows`` of them in
    flight per loop step (TIDy), ``vec`` hidden elements per vectorized load / store, ``tidx`` threads per row
    (None: hidden / vec, one vector per thread; fewer, e.g. one warp, loop over the rest of the row).

    Unrolling two loop steps (two rows per thread in flight) was measured and dropped: 1.2-1.4x slower at
    576000 x 384 on an H100 (benchmarks/results/h100-2026-11-24-rows/)."""

    chunk: int
    rows: int = 4
    vec: int = 8
    tidx: int | None = None

    def threads(self, hidden: int) -> int:
        return self.tidx or hidden // self.vec

    def check(self, rows: int, hidden: int, what: str) -> None:
        """That the schedule fits ``rows`` x ``hidden`` (``what``: the config, for the message)."""
        problems = []
        if rows % self.chunk:
            problems.append(f"chunk {self.chunk} does not divide the {rows} rows")
        if hidden % self.vec or hidden % (self.vec * self.threads(hidden)):
            problems.append(f"vec {self.vec} x {self.threads(hidden)} threads do not divide hidden {hidden}")
        if self.chunk % self.rows:
            problems.append(f"rows {self.rows} does not divide chunk {self.chunk}")
        if self.threads(hidden) * self.rows > 1024:
            problems.append(f"{self.threads(hidden)} x {self.rows} threads exceed a CTA's 1024")
        if problems:
            raise SegkitError(f"rows schedule {self} for {what}: " + "; ".join(problems))

    def describe(self) -> str:
        per_row = f", {self.tidx} threads per row" if self.tidx else ""
        return f"rows schedule ({self.chunk} rows per CTA, {self.rows} in flight, vec {self.vec}{per_row})"

    def tuning(self, why: str = "segkit tune candidate") -> NvTuning:
        """As the tuning table keeps it (with formulation "rows" and this chunk)."""
        return NvTuning(why, scheduler=ROWS, vectorize=self.vec, rows_per_block=self.rows, threads_per_row=self.tidx)

    @classmethod
    def from_tuning(cls, chunk: int, tuning: NvTuning | None) -> RowsSchedule:
        if tuning is None or tuning.scheduler != ROWS:
            raise SegkitError(f"the rows formulation needs a {ROWS!r} tuning (vec, rows per block), got "
                              f"{tuning.describe() if tuning else None}")
        given = {"rows": tuning.rows_per_block, "vec": tuning.vectorize}
        return cls(chunk, tidx=tuning.threads_per_row, **{k: v for k, v in given.items() if v is not None})


def schedule_stage1(nvfd: Any, s: RowsSchedule, hidden: int) -> None:
    """Apply the loop nest of the module docstring to a translated stage-1 fusion: 3-D (P, chunk, hidden) inputs
    (and outputs, vectorized like the loads), reductions over hidden (per row) or over the chunk (per CTA). The
    norm backward's stage 1 is one; fp8_amax's rows formulation (a row amax and per-CTA column amaxes) another."""
    import nvfuser_direct as nvf

    PT, sched, fusion = nvf.ParallelType, nvf.schedule, nvfd.fusion
    guard = nvf.FusionGuard(fusion)  # the IR built below (splits, caches, rfactors) needs an active fusion
    try:
        _schedule(fusion, s, hidden, PT, sched)
    finally:
        del guard


def _schedule(fusion, s: RowsSchedule, hidden: int, PT, sched) -> None:
    ins = [v for v in fusion.inputs() if v.is_tensor()]
    outs = [v for v in fusion.outputs() if v.is_tensor() and len(v.get_logical_domain()) == 3
            and not any(i.is_reduction() for i in v.get_logical_domain())]  # dx, not the partials
    loads = [t.cache_after() for t in ins]
    for t in outs:
        t.cache_before()
    # the reference: the first 3-D output (dx), else the first 3-D load (x)
    ref = outs[0] if outs else next(t for t in loads if len(t.get_logical_domain()) == 3)

    # [P, chunk, H] -> [P, S, Y, (H/V/T,) T, V]: BIDx, serial rows, TIDy, (serial,) TIDx, vectorized
    ref.split(2, s.vec)
    looped = s.threads(hidden) * s.vec < hidden
    if looped:
        ref.split(2, s.tidx)
    ref.split(1, s.rows)
    sched.transform_like(ref)

    tidx = 4 if looped else 3
    for tv in _reductions(fusion):
        n = len(tv.get_loop_domain())
        if tv.get_logical_domain()[-1].is_reduction():  # the per-row sums over hidden: serial, then TIDx
            tv.rfactor([3, n - 1] if looped else [n - 1])
        else:  # the per-CTA partials over its rows: serial over S, then TIDy
            tv.rfactor([1])

    ref.axis(0).parallelize(PT.grid_x)
    ref.axis(2).parallelize(PT.block_y)
    ref.axis(tidx).parallelize(PT.block_x)
    sched.parallelize_like(ref)
    for tv in loads + outs:
        if len(tv.get_logical_domain()) == 3:  # x, dy, dx
            tv.axis(-1).parallelize(PT.vectorize)
    sched.inline_most()


def _reductions(fusion) -> list:
    return [v for v in fusion.vals() if v.is_tensor() and any(i.is_reduction() for i in v.get_logical_domain())]


class HandStaged:
    """Two recorded fusions, the first hand-scheduled on nvFuser (``manual_execute``) by ``schedule_first``, the
    second on nvFuser's own schedule; both run on the reference interpreter too. A subclass says what stage 1
    takes (``stage1_args``), what of its outputs stage 2 takes (``stage2_args``), and how the outputs of both
    make the formulation's (``assemble``)."""

    schedule: Any  # a RowsSchedule, or what the subclass's schedule_first takes
    _stages: tuple[Any, Any] | None

    def recorded(self) -> tuple[Any, Any]:
        raise NotImplementedError

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        raise NotImplementedError

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        raise NotImplementedError

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        raise NotImplementedError

    @property
    def hidden(self) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        return self.schedule.describe()

    def schedule_first(self, nvfd: Any) -> None:
        """Schedule the translated stage 1 by hand (the rows loop nest unless a subclass has its own)."""
        schedule_stage1(nvfd, self.schedule, self.hidden)

    def run(self, inputs: Sequence[torch.Tensor], backend: str = "reference") -> list[torch.Tensor]:
        """The formulation's outputs on the reference interpreter or nvFuser."""
        if backend == "nvfuser":
            return self.execute(inputs)
        if backend != "reference":
            raise ValueError(f"backend must be 'reference' or 'nvfuser', got {backend!r}")
        s1, s2 = self.recorded()
        first = run_reference(s1, self.stage1_args(inputs))
        return self.assemble(inputs, first, run_reference(s2, [t.contiguous() for t in self.stage2_args(first)]))

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if self._stages is None:
            from segkit.nvf import compiled, to_nvfuser

            s1, s2 = self.recorded()
            nvfd = to_nvfuser(s1)
            self.schedule_first(nvfd)
            self._stages = (nvfd, compiled(s2))
        nvfd, second = self._stages
        first = nvfd.manual_execute(self.stage1_args(inputs))
        return self.assemble(inputs, first, second.execute(self.stage2_args(first)))


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
    return RowsScheduled(cfg, RowsSchedule.from_tuning(how.chunk, how.tuning), layer_norm=spec_name == "layernorm_bwd")


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


def fitting(rows: int, hidden: int, sm_count: int, per_sm: Sequence[int], ctas: tuple[int, int],
            shapes: Sequence[tuple[int, int, int | None]]) -> list[RowsSchedule]:
    """Each (rows in flight, vec, tidx) of ``shapes`` at each chunk nearest ``per_sm`` CTAs per SM, among the
    chunks dividing ``rows`` into ``ctas`` = (fewest, most) CTAs, where it fits ``rows`` x ``hidden``; a
    ``tidx`` only where it leaves a loop over the row (else it is the one-vector-per-thread schedule again)."""
    fits = [c for c in divisors(rows) if ctas[0] <= rows // c <= ctas[1]]
    chunks = sorted({min(fits, key=lambda c: abs(rows // c - k * sm_count)) for k in per_sm}) if fits else []
    out = []
    for chunk in chunks:
        for r, v, t in shapes:
            s = RowsSchedule(chunk, rows=r, vec=v, tidx=t)
            try:
                s.check(rows, hidden, f"{rows} x {hidden}")
            except SegkitError:
                continue
            if t is None or s.threads(hidden) < hidden // v:
                out.append(s)
    return out


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))
