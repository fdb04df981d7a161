"""fp8 amax statistics with x read once in tiles, on bf16 bits (the formulation "bit_tiles"): the loop nest of
fusions/fp8_amax_tiles.py over x viewed as int32 pairs of bf16, abs and max as integer ops."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch

from fusions.amax_staged import abs_bits, i32
from fusions.configs import AmaxConfig
from fusions.formulations import Formulation, register
from fusions.fp8_amax_tiles import AmaxTiles, TileSchedule, schedule_tiles
from fusions.spec import dt
from segkit.errors import SegkitError


def define_bits_stage1(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    """Stage 1 on x's bits: x viewed as int32 pairs of bf16, (P, chunk, Q, W / 2). Outputs row_part (P, chunk, Q),
    each the bits of a row segment's amax as an fp32 (a bf16's own bits << 16), where there is a row amax or no
    column one (the tensorwise amax then comes from it), and col_part (P, Q, W / 2) where there is a column amax:
    the even (low half) and odd (high half) columns' maxima packed back into one int32, which is the column
    partials as bf16 (P, Q, W) to a host view:

        lo = v & 0x7FFF      hi = (v >> 16) & 0x7FFF      row_part = max_w max(lo, hi) << 16
        col_part = max_r hi << 16 | max_r lo"""
    P, Q, W2 = cfg.lead // s.chunk, cfg.cols // s.width, s.width // 2
    v = fd.define_tensor(shape=[P, s.chunk, Q, W2], contiguity=[True] * 4, dtype=dt(fd, "Int32"))
    lo, hi = abs_bits(fd, v)
    c16 = i32(fd, 16)
    if "row" in cfg.amaxes or "col" not in cfg.amaxes:
        fd.add_output(fd.ops.bitwise_left_shift(fd.ops.max(fd.ops.maximum(lo, hi), dims=[3]), c16))
    if "col" in cfg.amaxes:
        fd.add_output(fd.ops.bitwise_or(fd.ops.bitwise_left_shift(fd.ops.max(hi, dims=[1]), c16),
                                        fd.ops.max(lo, dims=[1])))


def define_bits_stage2(fd, cfg: AmaxConfig, s: TileSchedule) -> None:
    """The rest: the row amax as the max of its Q segments' bits (none left to take where Q is 1: stage 1 wrote
    it); the column amax from the column partials read as bf16 (P, cols), exact in fp32, and the tensorwise amax
    from it, or without a column amax the tensorwise amax as the max of all row segments' bits."""
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    if "row" in cfg.amaxes and Q > 1 or "col" not in cfg.amaxes:
        part = fd.define_tensor(shape=[cfg.lead, Q], contiguity=[True, True], dtype=dt(fd, "Int32"))
        if "row" in cfg.amaxes and Q > 1:
            fd.add_output(fd.ops.max(part, dims=[1]))
        if "col" not in cfg.amaxes:
            fd.add_output(fd.ops.max(part, dims=[0, 1]))
            return
    parts = fd.define_tensor(shape=[P, cfg.cols], contiguity=[True, True], dtype=dt(fd, "BFloat16"))
    col = fd.ops.cast(parts, dtype=dt(fd, "Float"))
    col = fd.ops.max(col, dims=[0]) if P > 1 else fd.ops.reshape(col, new_shape=[cfg.cols])
    for name in ("col", "all"):
        if name in cfg.amaxes:
            fd.add_output(col if name == "col" else fd.ops.max(col, dims=[0]))


def check_bit_tiles(formulation: str, cfg: AmaxConfig, s: TileSchedule) -> None:
    """That tiles on x's bits (``formulation``: for the message) can compute ``cfg`` with ``s``: bf16 x, a column
    amax or a tensorwise one (taken from the rows' bits), a schedule that fits, and an even vec (int32 pairs)."""
    if cfg.dtype != torch.bfloat16:
        raise SegkitError(f"the {formulation} formulation of fp8_amax reads bf16 bits; {cfg.name} is {cfg.dtype} "
                          f"(the tiles formulation reads any float)")
    if "col" not in cfg.amaxes and "all" not in cfg.amaxes:
        raise SegkitError(f"the {formulation} formulation of fp8_amax takes a column or a tensorwise amax; "
                          f"{cfg.name} asks for the row amax only (one inner reduction, x read once)")
    s.check(cfg.lead, cfg.cols, f"{cfg.name} {cfg.shape}")
    if s.vec % 2:
        raise SegkitError(f"{formulation}: vec {s.vec} must be even (vectors of int32 pairs)")


@dataclass
class AmaxBitTiles(AmaxTiles):
    """The tiles on x's bits (bf16 only): the loop nest of ``schedule_tiles`` over int32 pairs of bf16, vectors of
    vec / 2 of them. The bits of |v| are v & 0x7FFF, and as integers they order as the values do (a NaN above
    inf), so abs and max become integer ops: no conversion to fp32, and no NaN test in each max (nvFuser's float
    max, runtime/helpers.cu, is ``a != a ? a : (a > b ? a : b)``; its abs a compare and a select). The bits of a
    bf16's fp32 value are its own << 16, so the row amax leaves as int32 viewed as float32; the column partials
    leave packed as bf16 pairs, which stage 2 reads as bf16 (no lo/hi reassembly there)."""

    formulation: ClassVar[str] = "bit_tiles"
    defines: ClassVar[tuple[Callable, Callable]] = (define_bits_stage1, define_bits_stage2)

    def __post_init__(self) -> None:
        check_bit_tiles(self.formulation, self.cfg, self.schedule)

    @property
    def segments(self) -> int:
        """Q, the row segments (tiles across a row)."""
        return self.cfg.cols // self.schedule.width

    def schedule_first(self, nvfd: Any) -> None:
        schedule_tiles(nvfd, replace(self.schedule, width=self.schedule.width // 2, vec=self.schedule.vec // 2))

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        s, c = self.schedule, self.cfg
        return [self.x_viewed(inputs[0], (c.lead // s.chunk, s.chunk, self.segments, s.width // 2), torch.int32)]

    @property
    def _row_in_stage2(self) -> bool:
        return "row" in self.cfg.amaxes and self.segments > 1

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        """Views, no copies: the row segments' bits (rows, Q) where stage 2 takes the row amax or (without a column
        amax) the tensorwise one, then the column partials as bf16 (P, cols)."""
        col = "col" in self.cfg.amaxes
        rows = [first[0].reshape(self.cfg.lead, self.segments)] if self._row_in_stage2 or not col else []
        cols = first[-1].view(torch.bfloat16) if col else None
        return rows + ([cols.reshape(cols.shape[0], self.cfg.cols)] if col else [])

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        """The outputs in ``cfg.amaxes`` order: the row amax (stage 2's, or stage 1's where Q is 1) as x's leading
        dims, its int32 bits viewed as float32; the tensorwise amax likewise where it came from the rows."""
        second = list(second)
        by_name = {}
        if "row" in self.cfg.amaxes:
            bits = second.pop(0) if self._row_in_stage2 else first[0]
            by_name["row"] = bits.view(torch.float32).reshape(inputs[0].shape[:-1])
        if "col" in self.cfg.amaxes:
            by_name.update(zip([n for n in ("col", "all") if n in self.cfg.amaxes], second))
        else:
            by_name["all"] = second[0].view(torch.float32)
        return [by_name[n] for n in self.cfg.amaxes]


register(Formulation(AmaxBitTiles.formulation, ("fp8_amax",),
                     lambda spec_name, cfg, how: AmaxBitTiles(cfg, TileSchedule.from_dict(how.chunk, how.schedule))))
