"""Tensor layouts as nvFuser describes them: stride order plus contiguity in allocation order.

``compute_tensor_descriptor`` follows nvFuser's definition (python_utils.cpp):
non-broadcast dims are sorted by decreasing stride (stable), stride-0 dims keep
their logical position, and a dim is contiguous when its stride equals size
times stride of the next inner non-broadcast dim (1 for the innermost).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """Allocation order (logical dims, outermost first) and contiguity per allocated dim."""

    order: tuple[int, ...]
    contiguity: tuple[bool | None, ...]

    @property
    def stride_order(self) -> tuple[int, ...]:
        """nvFuser's stride_order: for each logical dim, 0 = innermost."""
        n = len(self.order)
        so = [0] * n
        for pos, d in enumerate(self.order):
            so[d] = n - 1 - pos
        return tuple(so)

    def contiguity_of(self, dim: int) -> bool | None:
        return self.contiguity[self.order.index(dim)]

    @staticmethod
    def from_stride_order(stride_order: Sequence[int] | None, contiguity: Sequence[bool | None]) -> Layout:
        n = len(contiguity)
        if not stride_order:
            return Layout(tuple(range(n)), tuple(contiguity))
        order = sorted(range(n), key=lambda d: -stride_order[d])
        return Layout(tuple(order), tuple(contiguity))

    @staticmethod
    def row_major(contiguity: Sequence[bool | None]) -> Layout:
        return Layout(tuple(range(len(contiguity))), tuple(contiguity))


def compute_tensor_descriptor(sizes: Sequence[int], strides: Sequence[int]) -> tuple[list[bool | None], list[int]]:
    """(contiguity in allocation order, stride_order) of a strided tensor, as nvFuser computes them."""
    if len(sizes) != len(strides):
        raise ValueError(f"sizes {list(sizes)} and strides {list(strides)} differ in rank")
    if any(s < 0 for s in strides):
        raise ValueError(f"negative strides are not supported: {list(strides)}")
    n = len(sizes)
    dims = sorted((d for d in range(n) if strides[d] != 0), key=lambda d: -strides[d])
    for d in range(n):  # stride-0 dims keep their logical position
        if strides[d] == 0:
            dims.insert(d, d)

    def is_bcast(d: int) -> bool:
        return strides[d] == 0 or sizes[d] == 1

    contiguity: list[bool | None] = [None] * n
    stride_order = [0] * n
    for pos, d in enumerate(dims):
        stride_order[d] = n - 1 - pos
        if is_bcast(d):
            continue
        inner = next((e for e in dims[pos + 1 :] if not is_bcast(e)), None)
        expected = 1 if inner is None else strides[inner] * sizes[inner]
        contiguity[pos] = strides[d] == expected
    return contiguity, stride_order


def layout_of(sizes: Sequence[int], strides: Sequence[int]) -> Layout:
    """The Layout of a strided tensor."""
    contiguity, stride_order = compute_tensor_descriptor(sizes, strides)
    return Layout.from_stride_order(stride_order, contiguity)


def allocation_domain_kept(stride_order: Sequence[int] | None) -> bool:
    """Whether nvFuser gives a tensor defined with ``stride_order`` an allocation domain. Its TensorViewBuilder drops
    a strictly descending order (row-major, the logical order) and any empty one (csrc/tensor_view.cpp:1563-1585 at
    NVIDIA/Fuser 7e04d265a), so only a real permutation keeps one."""
    so = list(stride_order or [])
    return any(a <= b for a, b in zip(so, so[1:]))


def alias_loses_layout(contiguity: Sequence[bool | None], stride_order: Sequence[int] | None) -> bool:
    """True when an output aliased to an input of this layout (``add_output(out, alias_input=in)``) would be written
    by nvFuser as a dense row-major tensor: Fusion::aliasOutputToInput replays the input's allocation domain and
    contiguity onto the output only when the input has an allocation domain (TransformReplay::selfReplay,
    csrc/transform_replay.cpp:353 at 7e04d265a), and an op's output is all-contiguous (csrc/ops/utils.cpp:490-494),
    so a row-major input with a non-contiguous dim has its view written as if it were dense."""
    return not allocation_domain_kept(stride_order) and any(c is False for c in contiguity)


def dense_stride_order(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """nvFuser's stride_order of a tensor that is dense in some order of its dims (a permuted contiguous tensor:
    no gaps, no overlap, no broadcast stride), else None. Cached: it is asked on every call of a fusion whose
    input may come permuted (to pick the fusion, then to lay the input out)."""
    return _dense_stride_order(tuple(sizes), tuple(strides))


@functools.lru_cache(maxsize=1024)
def _dense_stride_order(sizes: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    if any(st == 0 and sz != 1 for sz, st in zip(sizes, strides)):
        return None
    contiguity, order = compute_tensor_descriptor(sizes, strides)
    return tuple(order) if all(c in (True, None) for c in contiguity) else None


def dims_outer_first(stride_order: Sequence[int]) -> list[int]:
    """The dims in memory order, outermost first, for nvFuser's ``stride_order`` (higher: outer)."""
    return sorted(range(len(stride_order)), key=lambda d: -stride_order[d])


def laid_out(t, stride_order: Sequence[int] | None):
    """The torch tensor ``t``'s values dense in nvFuser's ``stride_order`` (None: contiguous): ``t`` itself where
    it already is, else a copy (what a fusion input defined with that stride_order must be given)."""
    if stride_order is None:
        return t.contiguous()
    if dense_stride_order(t.shape, t.stride()) == tuple(stride_order):
        return t
    outer = dims_outer_first(stride_order)
    return t.permute(outer).contiguous().permute([outer.index(d) for d in range(t.dim())])
