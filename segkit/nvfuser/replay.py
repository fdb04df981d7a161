"""A recorded fusion replayed into real nvFuser (``nvfuser_direct``), and run there with nvFuser's own heuristics.

The layer under both ways segkit runs a fusion on nvFuser: ``PlainFusion`` here and
``segkit.nvfuser.tuned.TunedFusion`` (an ``NvTuning``'s schedule); ``segkit.nvfuser.run`` picks between them, runs
and profiles.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from segkit.args import FusionLike, checked
from segkit.dtypes import DataType
from segkit.errors import NvFuserUnavailableError
from segkit.interp import as_fusion
from segkit.ir import Value
from segkit.layout import alias_loses_layout
from segkit.replay import replay


@functools.cache
@checked
def nvfuser_available() -> bool:
    """True when a CUDA device and nvfuser_direct are both present (asked once: it sits on per-call paths)."""
    if not torch.cuda.is_available():
        return False
    try:
        import nvfuser_direct  # noqa: F401
    except ImportError:
        return False
    return True


def nvfuser_module():
    """The ``nvfuser_direct`` module, or an NvFuserUnavailableError saying how to install it."""
    try:
        import nvfuser_direct
    except ImportError as e:
        raise NvFuserUnavailableError(
            f"nvfuser_direct is not importable ({e}); install the nvfuser wheel matching your torch "
            "(see README: pip install 'segkit[gpu]')"
        ) from None
    return nvfuser_direct


class _NvFuserTarget:
    """Replay target: a real nvfuser_direct.FusionDefinition being defined."""

    def __init__(self, nvf: Any, out: Any) -> None:
        self.nvf, self.out = nvf, out
        self.tensor_inputs: dict[int, tuple[Any, Value]] = {}  # id(handle) -> (handle, the Value it defines)

    def input(self, v: Value) -> Any:
        if v.is_tensor:
            handle = self.out.define_tensor(shape=list(v.shape), contiguity=list(v.contiguity),
                                            dtype=self.atom(v.dtype), is_cpu=v.is_cpu,
                                            stride_order=list(v.stride_order or []))
            self.tensor_inputs[id(handle)] = (handle, v)
            return handle
        return self.out.define_scalar(dtype=self.atom(v.dtype))

    def constant(self, v: Value) -> Any:
        return self.out.define_scalar(v.value, dtype=self.atom(v.dtype))

    def literal(self, v: Value) -> Any:
        return v.value

    def atom(self, x: Any) -> Any:
        return getattr(self.nvf.DataType, x.name) if isinstance(x, DataType) else x

    def call(self, op, opdef, args, kwargs) -> Any:
        return getattr(self.out.ops, op.name)(*args, **kwargs)

    def output(self, handle: Any, alias_input: Any = None) -> None:
        if alias_input is None:
            self.out.add_output(handle)
            return
        source = self.tensor_inputs.get(id(alias_input))
        if source is not None and alias_loses_layout(source[1].contiguity, source[1].stride_order):
            # nvFuser would write this output dense (segkit.layout.alias_loses_layout): give it an allocation domain
            # of its own, every dim indexed by the aliased tensor's runtime strides (per-dim contiguity cannot be
            # set from Python), which aliasOutputToInput then leaves alone and cacheBefore replays.
            if id(handle) in self.tensor_inputs:  # an input written into another: the write needs an op
                handle = self.out.ops.set(handle)
            handle.set_allocation_domain(handle.get_logical_domain(), False)
        self.out.add_output(handle, alias_input)


@checked
def to_nvfuser(fd: FusionLike, value_map: dict[int, Any] | None = None):
    """A real ``nvfuser_direct.FusionDefinition`` with the same inputs, ops and outputs; ``value_map``, when
    given, is filled with id(segkit Value) -> the nvFuser value it became (str() of a tensor names it, T12)."""
    nvf = nvfuser_module()
    out = nvf.FusionDefinition()
    with out:
        handles = replay(as_fusion(fd), _NvFuserTarget(nvf, out))
    if value_map is not None:
        value_map.update(handles)
    return out


def signature(args: Sequence[Any]) -> tuple:
    """What makes nvFuser compile a fusion anew: shape, strides, dtype and device of tensors, values of scalars."""
    return tuple((tuple(a.shape), a.stride(), a.dtype, a.device) if isinstance(a, torch.Tensor) else (type(a), a)
                 for a in args)


def executor_cache(nvfd: Any) -> Any:
    """The FusionExecutorCache of an nvFuser definition (its segments' record), None before its first execute
    (nvFuser makes it then)."""
    return getattr(nvfd, "fec", None)


@dataclass
class PlainFusion:
    """An nvFuser definition run with nvFuser's own heuristics (a ``segkit.nvfuser.runnable.NvProgram``)."""

    definition: Any  # nvfuser_direct.FusionDefinition

    @classmethod
    def of(cls, fd: Any) -> PlainFusion:
        """A recorded fusion replayed into nvFuser."""
        return cls(to_nvfuser(fd))

    @property
    def profilable(self) -> bool:
        return True

    @property
    def groups(self) -> list[str]:
        return []  # nvFuser's profiler and executor cache tell them

    @property
    def fec(self) -> Any:
        return executor_cache(self.definition)

    def parts(self) -> list[Any]:
        return []

    def execute(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        return self.definition.execute(list(inputs))
