"""Replay a recorded fusion into real nvFuser, run it, and read how nvFuser segmented it."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.errors import NvFuserUnavailableError
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion, run_reference
from segkit.ir import Value
from segkit.replay import replay
from segkit.tuned import TunedFusion


@functools.cache
def nvfuser_available() -> bool:
    """True when a CUDA device and nvfuser_direct are both present (asked once: it sits on per-call paths)."""
    if not torch.cuda.is_available():
        return False
    try:
        import nvfuser_direct  # noqa: F401
    except ImportError:
        return False
    return True


def _nvf():
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

    def input(self, v: Value) -> Any:
        if v.is_tensor:
            return self.out.define_tensor(shape=list(v.shape), contiguity=list(v.contiguity), dtype=self.atom(v.dtype),
                                          is_cpu=v.is_cpu, stride_order=list(v.stride_order or []))
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
        else:
            self.out.add_output(handle, alias_input)


def to_nvfuser(fd: Any, value_map: dict[int, Any] | None = None):
    """A real ``nvfuser_direct.FusionDefinition`` with the same inputs, ops and outputs; ``value_map``, when
    given, is filled with id(segkit Value) -> the nvFuser value it became (str() of a tensor names it, T12)."""
    nvf = _nvf()
    out = nvf.FusionDefinition()
    with out:
        handles = replay(as_fusion(fd), _NvFuserTarget(nvf, out))
    if value_map is not None:
        value_map.update(handles)
    return out


@dataclass
class KernelInfo:
    name: str
    scheduler: str
    time_ms: float
    grid: str = ""
    block: str = ""
    registers: int = 0


@dataclass
class NvRun:
    """Outputs of one nvFuser execution and how nvFuser segmented the fusion."""

    outputs: list[torch.Tensor]
    groups: list[str] = field(default_factory=list)
    kernels: list[KernelInfo] = field(default_factory=list)

    @property
    def segments(self) -> int:
        return len(self.groups)

    @property
    def kernel_count(self) -> int:
        return len(self.kernels)


_GROUP = re.compile(r"^\s+([a-z_]+)\{[\d, ]*\}\s*$")


def parse_groups(scheduled_ir: str) -> list[str]:
    """Scheduler name of each segment, from ``get_most_recent_scheduled_ir()``'s 'groups:' list."""
    lines = scheduled_ir.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "groups:")
    except StopIteration:
        return []
    groups = []
    for line in lines[start + 1 :]:
        m = _GROUP.match(line)
        if not m:
            break
        groups.append(m.group(1))
    return groups


def signature(args: Sequence[Any]) -> tuple:
    """What makes nvFuser compile a fusion anew: shape, strides, dtype and device of tensors, values of scalars."""
    return tuple((tuple(a.shape), a.stride(), a.dtype, a.device) if isinstance(a, torch.Tensor) else (type(a), a)
                 for a in args)


def compiled(fd: Any):
    """The nvFuser FusionDefinition of a recorded one, made once and kept in its ``nvfuser`` field (nvFuser
    caches kernels per definition); a ``TunedFusion`` when the fusion declares an ``NvTuning`` (``Fusion.tuning``).
    A Fusion (or anything with ``.fusion``) is compiled through the definition that recorded it."""
    if not isinstance(fd, FusionDefinition):
        fusion = as_fusion(fd)
        fd = fusion.recorder if isinstance(fusion.recorder, FusionDefinition) else FusionDefinition.from_fusion(fusion)
    if fd.nvfuser is None:
        tuning = as_fusion(fd).tuning
        fd.nvfuser = TunedFusion(fd, tuning) if tuning is not None else to_nvfuser(fd)
    return fd.nvfuser


def run_on(fd: Any, inputs: Sequence[Any], backend: str) -> list[torch.Tensor]:
    """A recorded fusion's outputs on the reference interpreter or on nvFuser (compiled once, cached on ``fd``)."""
    if backend == "reference":
        return run_reference(fd, list(inputs))
    if backend == "nvfuser":
        return compiled(fd).execute(list(inputs))
    raise ValueError(f"backend must be 'reference' or 'nvfuser', got {backend!r}")


def run_nvfuser(fd: Any, inputs: Sequence[Any], nvfd: Any = None, profile: bool = True) -> NvRun:
    """Execute on nvFuser (compiling on first use) and report segments and kernels."""
    nvfd = nvfd if nvfd is not None else compiled(fd)
    outputs = nvfd.execute(list(inputs))
    run = NvRun(outputs)
    if not profile:
        return run
    if not getattr(nvfd, "profilable", True):  # nvFuser's profiler cannot follow a manually scheduled kernel
        run.groups = segment_groups(nvfd, [])
        return run
    if isinstance(nvfd, TunedFusion) and nvfd.tuning.split:  # nvFuser's profiler reports one definition's run
        for part in nvfd.parts():
            run.kernels += profile_call(lambda: part.execute(list(inputs)))[1]
        run.groups = [k.scheduler for k in run.kernels]
        return run
    run.outputs, run.kernels = profile_call(lambda: nvfd.execute(list(inputs)))
    run.groups = segment_groups(nvfd, run.kernels)
    return run


def segment_groups(nvfd: Any, kernels: Sequence[KernelInfo]) -> list[str]:
    """Scheduler of each segment of the most recent run (a single-kernel fusion has no segmented dump)."""
    fec = getattr(nvfd, "fec", None)
    groups = parse_groups(fec.get_most_recent_scheduled_ir()) if fec is not None else getattr(nvfd, "groups", [])
    return groups or [k.scheduler for k in kernels] or ["expr_eval"]


def profile_call(call) -> tuple[Any, list[KernelInfo]]:
    """Run ``call()`` under nvFuser's profiler; its result and the kernels nvFuser launched."""
    from segkit.timing import claim_cupti

    claim_cupti("nvFuser's profiler")
    nvf = _nvf()
    with nvf.PythonProfiler() as prof:
        result = call()
    kernels = [KernelInfo(k.name, k.scheduler, k.time_ms, k.grid_str, k.block_str, k.registers)
               for k in prof.profile.kernel_profiles if k.name]
    return result, kernels
