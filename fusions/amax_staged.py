"""Pieces shared by the fp8 amax formulations that read x once: x viewed without a copy, the two-fusion base
with the schedule its subclass takes, and the bits of |bf16| as integers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from fusions.configs import AmaxConfig
from fusions.hand_staged import HandStaged
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition


def x_viewed(x: torch.Tensor, cfg: AmaxConfig, formulation: str, shape: Sequence[int],
             dtype: torch.dtype | None = None) -> torch.Tensor:
    """x as a one-read formulation reads it, a view (no copy): an error naming what differs where x is not the
    config's contiguous x (a view of another shape or stride, or, for a view as ``dtype``, not aligned to it)."""
    problem = None
    if tuple(x.shape) != tuple(cfg.shape):
        problem = f"shape {tuple(x.shape)}, not {tuple(cfg.shape)}"
    elif x.dtype != cfg.dtype:
        problem = f"dtype {x.dtype}, not {cfg.dtype}"
    elif not x.is_contiguous():
        problem = f"strides {x.stride()}: not contiguous"
    elif dtype is not None and x.storage_offset() * x.dtype.itemsize % dtype.itemsize:
        problem = f"storage offset {x.storage_offset()}: not aligned to {dtype}"
    if problem:
        raise SegkitError(f"the {formulation} formulation of fp8_amax ({cfg.name}) reads x as a view; x has {problem}")
    return (x.view(dtype) if dtype is not None else x).view(*shape)


@dataclass
class AmaxStaged(HandStaged):
    """An fp8 amax of x read once in two fusions (a subclass's ``defines``, each taking the schedule): only where
    there is a column amax, since without one segkit.reuse_reductions already reads x once."""

    cfg: AmaxConfig
    schedule: Any
    _stages: tuple[Any, Any] | None = field(default=None, init=False)
    formulation: ClassVar[str]
    defines: ClassVar[tuple[Callable, Callable]]

    def __post_init__(self) -> None:
        self.check_amaxes()
        self.schedule.check(self.cfg.lead, self.cfg.cols, f"{self.cfg.name} {self.cfg.shape}")

    def check_amaxes(self) -> None:
        """That the formulation computes ``cfg.amaxes``: here, that there is a column amax."""
        if "col" not in self.cfg.amaxes:
            raise SegkitError(f"the {self.formulation} formulation of fp8_amax is for a column amax; {self.cfg.name} "
                              f"asks for {', '.join(self.cfg.amaxes)} (segkit.reuse_reductions reads x once there)")

    def x_viewed(self, x: torch.Tensor, shape: Sequence[int], dtype: torch.dtype | None = None) -> torch.Tensor:
        return x_viewed(x, self.cfg, self.formulation, shape, dtype)

    def recorded(self) -> tuple[Any, Any]:
        built = []
        for define in self.defines:
            with FusionDefinition() as fd:
                define(fd, self.cfg, self.schedule)
            built.append(fd)
        return tuple(built)


def i32(fd, value: int):
    return fd.define_scalar(value, dtype=dt(fd, "Int32"))


def abs_bits(fd, v) -> tuple:
    """The bits of |bf16| for both halves of ``v``, int32 pairs of bf16: (v & 0x7FFF, (v >> 16) & 0x7FFF). As
    integers they order as the values do, a NaN above inf."""
    mask = i32(fd, 0x7FFF)
    return fd.ops.bitwise_and(v, mask), fd.ops.bitwise_and(fd.ops.bitwise_right_shift(v, i32(fd, 16)), mask)
