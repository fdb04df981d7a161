"""The rows schedule: a hand-written nvFuser loop nest for a stage 1 over x viewed as (P, chunk, hidden) (or as
(..., chunk, hidden), its leading dims merged into P: rows not in memory order, read in place), one CTA per chunk
of rows, with reductions over hidden (per row) and over the chunk (per CTA). The norm backward's rows
formulation (fusions/norm_bwd_rows.py) and the fp8 amax's (fusions/fp8_amax_rows.py) schedule their stage 1 with it.

The loop nest, per CTA ``p`` (BIDx), with ``r`` rows in flight (TIDy) and ``vec`` elements per vectorized access
(hidden = TIDx * vec, or a loop over it); for the norm backward::

    acc_dw[vec] = 0                                    # dw_rf: [P, rS, Y, H/V, V], S = chunk / r, serial
    for s in range(chunk / r):                         # the rows' loop, shared by dx and the dw accumulation
        x, dy = load(row s*r + TIDy)[TIDx*vec : +vec]  # vectorized, kept in registers (the persistent buffer)
        sum_gx = block_reduce_TIDx(g * xhat)           # s_rf: [.., H/V, rV] then s: [.., rH/V]
        dx[row] = rstd * (g - xhat * sum_gx / H)       # vectorized store
        acc_dw += dy * xhat                            # serial reduction over s
    dw_part[p] = block_reduce_TIDy(acc_dw)             # dw: [P, rY, H/V, V]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fusions.hand_staged import HandSchedule
from segkit.errors import SegkitError


@dataclass(frozen=True)
class RowsSchedule(HandSchedule):
    """The hand-written schedule's parameters: ``chunk`` rows per CTA (one partial each), ``rows`` of them in
    flight per loop step (TIDy), ``vec`` hidden elements per vectorized load / store, ``tidx`` threads per row
    (None: hidden / vec, one vector per thread; fewer, e.g. one warp, loop over the rest of the row). Unrolling
    two loop steps was measured and dropped."""

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



def schedule_stage1(nvfd: Any, s: RowsSchedule, hidden: int) -> None:
    """Apply the loop nest of the module docstring to a translated stage-1 fusion: (P, chunk, hidden) inputs, or
    (..., chunk, hidden) ones in any layout with their leading dims merged into P (and outputs of that shape,
    vectorized like the loads), reductions over hidden (per row) or over the chunk (per CTA). The
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
    rank = len(ins[0].get_logical_domain())  # x: (P, chunk, H), or (..., chunk, H) with the leading dims making P
    outs = [v for v in fusion.outputs() if v.is_tensor() and len(v.get_logical_domain()) == rank
            and not any(i.is_reduction() for i in v.get_logical_domain())]  # dx, not the partials
    loads = [t.cache_after() for t in ins]
    for t in outs:
        t.cache_before()
    # the reference: the first output of x's rank (dx), else x's load
    ref = outs[0] if outs else next(t for t in loads if len(t.get_logical_domain()) == rank)

    # [..., chunk, H] -> [P, chunk, H] -> [P, S, Y, (H/V/T,) T, V]: BIDx, serial rows, TIDy, (serial,) TIDx, vectorized
    for _ in range(rank - 3):
        ref.merge(0, 1)
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
        if len(tv.get_logical_domain()) == rank:  # x, dy, dx
            tv.axis(-1).parallelize(PT.vectorize)
    sched.inline_most()


def _reductions(fusion) -> list:
    return [v for v in fusion.vals() if v.is_tensor() and any(i.is_reduction() for i in v.get_logical_domain())]


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
