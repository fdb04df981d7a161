"""An output written into a strided view of an input (``add_output(out, alias_input=view)``) keeps the view's layout
on nvFuser: segkit.layout says when nvFuser would lose it (a row-major view with a non-contiguous dim defines no
allocation domain, so aliasOutputToInput leaves the output dense), and the nvFuser replay then gives the output an
allocation domain of its own. The define_tensor arguments are checked against values worked out by hand from
nvFuser's computeTensorDescriptor (python/python_common/python_utils.cpp:30-107 at NVIDIA/Fuser 7e04d265a)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from segkit.dtypes import DataType
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion
from segkit.layout import alias_loses_layout, allocation_domain_kept, compute_tensor_descriptor
from segkit.nvfuser.replay import _NvFuserTarget
from segkit.replay import replay


@pytest.mark.parametrize(("stride_order", "kept"), [
    ([], False), ([0], False), ([1, 0], False), ([3, 2, 1, 0], False),  # empty or row-major: dropped
    ([0, 1], True), ([3, 1, 2, 0], True), ([2, 0, 1], True),
])
def test_only_a_real_permutation_keeps_an_allocation_domain(stride_order, kept):
    assert allocation_domain_kept(stride_order) is kept


@pytest.mark.parametrize(("sizes", "strides", "contiguity", "stride_order", "lost"), [
    ([4, 3], [8, 1], [False, True], [1, 0], True),  # columns 2:5 of a (4, 8): row-major, rows not dense
    ([3, 4], [1, 8], [False, True], [0, 1], False),  # the same view transposed: a permutation, kept
    ([4, 3], [3, 1], [True, True], [1, 0], False),  # dense: nothing to lose
    ([2, 5, 3], [0, 3, 1], [None, True, True], [2, 1, 0], False),  # expanded dim 0, dense otherwise
    # columns 0:64 of k in a dqkv (B=2, T=4, G=3, 3, 128) as (B, T, G, 64), dqkv's order: lost; as (B, G, T, 64): kept
    ([2, 4, 3, 64], [4608, 1152, 384, 1], [True, True, False, True], [3, 2, 1, 0], True),
    ([2, 3, 4, 64], [4608, 384, 1152, 1], [True, True, False, True], [3, 1, 2, 0], False),
])
def test_views_as_nvfuser_describes_them(sizes, strides, contiguity, stride_order, lost):
    assert compute_tensor_descriptor(sizes, strides) == (contiguity, stride_order)
    assert alias_loses_layout(contiguity, stride_order) is lost


@dataclass
class _Handle:
    """A value the recording stand-in for nvfuser_direct's FusionDefinition gave back."""

    name: str
    calls: list = field(default_factory=list)

    def get_logical_domain(self) -> str:
        return f"logical({self.name})"

    def set_allocation_domain(self, domain: Any, contiguity: bool) -> None:
        self.calls.append(("set_allocation_domain", domain, contiguity))


class _Recorder:
    """Records what the replay asks of nvfuser_direct's FusionDefinition (no nvFuser behaviour is stood in for)."""

    def __init__(self) -> None:
        self.calls: list = []
        self.ops = SimpleNamespace(mul=self._op("mul"), set=self._op("set"))

    def _op(self, name: str):
        def call(*args, **kwargs):
            h = _Handle(f"{name}{len(self.calls)}")
            self.calls.append((name, args, h))
            return h
        return call

    def define_tensor(self, **kwargs) -> _Handle:
        h = _Handle(f"in{len(self.calls)}")
        self.calls.append(("define_tensor", kwargs, h))
        return h

    def add_output(self, *args) -> None:
        self.calls.append(("add_output", args))


def _replayed(view_sizes, view_strides, write_input: bool = False) -> _Recorder:
    with FusionDefinition() as fd:
        x = fd.define_tensor(sizes=view_sizes, strides=_dense(view_sizes), dtype=DataType.Float)
        view = fd.define_tensor(sizes=view_sizes, strides=view_strides, dtype=DataType.Float)
        fd.add_output(x if write_input else fd.ops.mul(x, x), alias_input=view)
    rec = _Recorder()
    replay(as_fusion(fd), _NvFuserTarget(SimpleNamespace(DataType=DataType), rec))
    return rec


def _dense(sizes: list[int]) -> list[int]:
    strides, acc = [], 1
    for n in reversed(sizes):
        strides.insert(0, acc)
        acc *= n
    return strides


def test_a_row_major_strided_view_gets_its_own_allocation_domain():
    rec = _replayed([4, 3], [8, 1])
    (_, x_kw, _), (_, view_kw, view) = rec.calls[0], rec.calls[1]
    assert (view_kw["contiguity"], view_kw["stride_order"]) == ([False, True], [1, 0])
    assert (x_kw["contiguity"], x_kw["stride_order"]) == ([True, True], [1, 0])
    name, _, out = rec.calls[2]
    assert name == "mul"
    assert out.calls == [("set_allocation_domain", out.get_logical_domain(), False)]
    assert rec.calls[-1] == ("add_output", (out, view))


@pytest.mark.parametrize(("sizes", "strides"), [([3, 4], [1, 8]), ([4, 3], [3, 1])])
def test_a_view_nvfuser_keeps_the_layout_of_is_aliased_as_it_is(sizes, strides):
    rec = _replayed(sizes, strides)
    out = rec.calls[2][2]
    assert out.calls == []
    assert rec.calls[-1] == ("add_output", (out, rec.calls[1][2]))


def test_an_input_written_into_a_strided_view_is_copied_by_a_set_first():
    rec = _replayed([4, 3], [8, 1], write_input=True)
    x, view = rec.calls[0][2], rec.calls[1][2]
    name, args, copy = rec.calls[2]
    assert (name, args) == ("set", (x,))
    assert x.calls == [] and copy.calls == [("set_allocation_domain", copy.get_logical_domain(), False)]
    assert rec.calls[-1] == ("add_output", (copy, view))
