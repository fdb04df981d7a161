"""fp8 tensorwise (and rowwise) amax without a column amax, on bf16 bits: nvFuser's own row schedule over x viewed
as int32 pairs, then the tensorwise amax in one CTA.

    stage 1 (nvFuser's inner reduction):  row[r] = max_c max(v[r, c] & 0x7FFF, (v[r, c] >> 16) & 0x7FFF) << 16
    stage 2 (one CTA, scheduled here):    all = max_r row[r]

Why two fusions and not the reuse pass's one (the tensorwise amax fed from the rows, which nvFuser segments into
the same two kernels): the rows of |x| as integers are faster for nvFuser's inner reduction scheduler (no
conversion to fp32 and no NaN test in each max; fusions/fp8_amax_bit_tiles.py says why the bits order as the
values do), and nvFuser's reduction heuristic (csrc/scheduler/reduction_non_tma.cpp, inner2dReductionHeuristic)
gives a full reduction of 8192 or more elements a grid reduction (a memset of its semaphores plus a kernel),
where one CTA needs one step of vectorized, unrolled loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from fusions.amax_staged import abs_bits, i32, x_viewed
from fusions.configs import AmaxConfig
from fusions.formulations import Formulation, register
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.nvfuser.runnable import RunsOnBoth


def define_rows(fd, cfg: AmaxConfig) -> None:
    """The row amaxes' fp32 bits from x viewed (rows, cols / 2) int32."""
    v = fd.define_tensor(shape=[cfg.lead, cfg.cols // 2], contiguity=[True, True], dtype=dt(fd, "Int32"))
    lo, hi = abs_bits(fd, v)
    fd.add_output(fd.ops.bitwise_left_shift(fd.ops.max(fd.ops.maximum(lo, hi), dims=[1]), i32(fd, 16)))


def define_max(fd, n: int, dtype: str = "Int32") -> None:
    """The max of a vector of ``n``: here the row amaxes' bits (non-negative, so their max is the max's bits)."""
    fd.add_output(fd.ops.max(fd.define_tensor(shape=[n], contiguity=[True], dtype=dt(fd, dtype)), dims=[0]))


@dataclass(frozen=True)
class OneCta:
    """One CTA of ``threads`` threads reduces a vector: each thread loads ``unroll`` vectors of ``vec`` elements
    before it reduces any (a step), steps repeat until the vector is covered, then one block reduction."""

    threads: int = 1024
    unroll: int = 8
    vec: int = 4

    @classmethod
    def for_size(cls, n: int) -> OneCta:
        """The fewest threads (128-1024) that cover ``n`` in one step of 8 vectors of 4: the fastest shape, or
        within 0.1 us of it, at each size measured."""
        threads = 128
        while threads < 1024 and threads * 32 < n:
            threads *= 2
        return cls(threads, 8, 4)

    def schedule(self, nvfd: Any, n: int) -> None:
        """On a translated ``define_max`` fusion::

            red: [rN]  ->  [rS, rU, rT, rV]   rf = red.rfactor(S, U, V): [rS, rU, iT, rV]   red: [rT]
            cache of x: [S, U, T, V], computed at S (the U loads issued together), V vectorized, T on TIDx"""
        import nvfuser_direct as nvf

        vec = self.vec if n % self.vec == 0 else 1
        PT, sched, fusion = nvf.ParallelType, nvf.schedule, nvfd.fusion
        guard = nvf.FusionGuard(fusion)
        try:
            x = next(v for v in fusion.inputs() if v.is_tensor())
            red = next(v for v in fusion.vals() if v.is_tensor() and v.get_logical_domain()
                       and v.get_logical_domain()[0].is_reduction())
            cache = x.cache_after()
            red.split(0, vec)
            red.split(0, self.threads)
            red.split(0, self.unroll)
            rf = red.rfactor([0, 1, 3])
            sched.transform_like(rf)
            rf.axis(1).parallelize(PT.unroll)
            rf.axis(2).parallelize(PT.block_x)
            sched.parallelize_like(rf)
            if vec > 1:
                cache.axis(3).parallelize(PT.vectorize)
            sched.inline_most([t for t in fusion.vals() if t.is_tensor() and t is not cache])
            sched.inline_at(cache, 1, True, [cache])
        finally:
            del guard


@dataclass
class AmaxBits(RunsOnBoth):
    """Tensorwise (with or without rowwise) amax of bf16 x: the rows' bits on nvFuser's schedule, then one CTA."""

    cfg: AmaxConfig
    tail: OneCta | None = None  # None: OneCta.for_size(the row count)
    _stages: tuple[Any, Any] | None = field(default=None, init=False)
    formulation: ClassVar[str] = "bits"

    def __post_init__(self) -> None:
        c = self.cfg
        if c.dtype != torch.bfloat16 or c.cols % 2:
            raise SegkitError(f"the {self.formulation} formulation of fp8_amax reads bf16 pairs as int32; {c.name} is "
                              f"{c.dtype} with {c.cols} columns")
        if "col" in c.amaxes or "all" not in c.amaxes:
            raise SegkitError(f"the {self.formulation} formulation of fp8_amax is the tensorwise amax from the rows, "
                              f"without a column amax; {c.name} asks for {', '.join(c.amaxes)}")
        if self.tail is None:
            self.tail = OneCta.for_size(c.lead)

    def describe(self) -> str:
        t = self.tail
        return (f"bits (nvFuser's row schedule on int32 pairs, then one CTA of {t.threads} threads, unroll {t.unroll}, "
                f"vec {t.vec})")

    def recorded(self) -> tuple[Any, Any]:
        with FusionDefinition() as rows:
            define_rows(rows, self.cfg)
        with FusionDefinition() as every:
            define_max(every, self.cfg.lead)
        return rows, every

    def x_viewed(self, x: torch.Tensor) -> torch.Tensor:
        return x_viewed(x, self.cfg, self.formulation, (self.cfg.lead, self.cfg.cols // 2), torch.int32)

    def assemble(self, x: torch.Tensor, rows: torch.Tensor, every: torch.Tensor) -> list[torch.Tensor]:
        out = {"row": rows.view(torch.float32).reshape(x.shape[:-1]), "all": every.view(torch.float32)}
        return [out[n] for n in self.cfg.amaxes]

    def on_reference(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        from segkit.interp import run_reference

        first, second = self.recorded()
        (rows,) = run_reference(first, [self.x_viewed(inputs[0])])
        (every,) = run_reference(second, [rows])
        return self.assemble(inputs[0], rows, every)

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if self._stages is None:
            from segkit.nvfuser.run import compiled, to_nvfuser

            first, second = self.recorded()
            tail = to_nvfuser(second)
            self.tail.schedule(tail, self.cfg.lead)
            self._stages = (compiled(first), tail)
        first, tail = self._stages
        (rows,) = first.execute([self.x_viewed(inputs[0])])
        (every,) = tail.manual_execute([rows])
        return self.assemble(inputs[0], rows, every)


register(Formulation(AmaxBits.formulation, ("fp8_amax",), lambda spec_name, cfg, how: AmaxBits(cfg)))
