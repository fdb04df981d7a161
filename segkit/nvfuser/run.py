"""Run a recorded fusion on nvFuser and read how nvFuser segmented it.

``compiled`` makes the recorded fusion's ``NvProgram`` once (a ``TunedFusion`` when the fusion declares an
``NvTuning``, else a ``PlainFusion``); ``run_nvfuser`` runs and profiles it. Replaying into nvFuser is
segkit.nvfuser.replay (its public names are re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.args import FusionLike, checked
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion, run_reference
from segkit.nvfuser.replay import PlainFusion, nvfuser_available, nvfuser_module, signature, to_nvfuser
from segkit.nvfuser.runnable import NvProgram
from segkit.nvfuser.timing import claim_cupti
from segkit.nvfuser.tuned import TunedFusion

__all__ = ["KernelInfo", "NvRun", "PlainFusion", "compiled", "nvfuser_available", "nvfuser_module", "parse_groups",
           "profile_call", "run_nvfuser", "run_on", "segment_groups", "signature", "to_nvfuser"]


@dataclass
class KernelInfo:
    """One kernel nvFuser launched, as its profiler reports it."""

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


def compiled(fd: Any) -> NvProgram:
    """The recorded fusion on nvFuser, made once and kept in the definition's ``nvfuser`` field (nvFuser caches
    kernels per definition): a ``TunedFusion`` when the fusion declares an ``NvTuning`` (``Fusion.tuning``), else
    a ``PlainFusion``. A Fusion (or anything with ``.fusion``) is compiled through the definition that recorded it."""
    if not isinstance(fd, FusionDefinition):
        fusion = as_fusion(fd)
        fd = fusion.recorder if isinstance(fusion.recorder, FusionDefinition) else FusionDefinition.from_fusion(fusion)
    if fd.nvfuser is None:
        tuning = as_fusion(fd).tuning
        fd.nvfuser = TunedFusion(fd, tuning) if tuning is not None else PlainFusion.of(fd)
    return fd.nvfuser


def run_on(fd: Any, inputs: Sequence[Any], backend: str) -> list[torch.Tensor]:
    """A recorded fusion's outputs on the reference interpreter or on nvFuser (compiled once, cached on ``fd``)."""
    if backend == "reference":
        return run_reference(fd, list(inputs))
    if backend == "nvfuser":
        return compiled(fd).execute(list(inputs))
    raise ValueError(f"backend must be 'reference' or 'nvfuser', got {backend!r}")


@checked
def run_nvfuser(fd: FusionLike, inputs: Sequence[Any], nvfd: NvProgram | None = None, profile: bool = True) -> NvRun:
    """Execute on nvFuser (compiling on first use) and report segments and kernels."""
    nvfd = nvfd if nvfd is not None else compiled(fd)
    outputs = nvfd.execute(list(inputs))
    run = NvRun(outputs)
    if not profile:
        return run
    if not nvfd.profilable:  # nvFuser's profiler cannot follow a manually scheduled kernel
        run.groups = segment_groups(nvfd, [])
        return run
    parts = nvfd.parts()
    if parts:  # nvFuser's profiler reports one definition's run
        for part in parts:
            run.kernels += profile_call(lambda: part.execute(list(inputs)))[1]
        run.groups = [k.scheduler for k in run.kernels]
        return run
    run.outputs, run.kernels = profile_call(lambda: nvfd.execute(list(inputs)))
    run.groups = segment_groups(nvfd, run.kernels)
    return run


def segment_groups(nvfd: NvProgram, kernels: Sequence[KernelInfo]) -> list[str]:
    """Scheduler of each segment of the most recent run (a single-kernel fusion has no segmented dump)."""
    fec = nvfd.fec
    groups = parse_groups(fec.get_most_recent_scheduled_ir()) if fec is not None else nvfd.groups
    return groups or [k.scheduler for k in kernels] or ["expr_eval"]


def profile_call(call) -> tuple[Any, list[KernelInfo]]:
    """Run ``call()`` under nvFuser's profiler; its result and the kernels nvFuser launched."""
    claim_cupti("nvFuser's profiler")
    nvf = nvfuser_module()
    with nvf.PythonProfiler() as prof:
        result = call()
    kernels = [KernelInfo(k.name, k.scheduler, k.time_ms, k.grid_str, k.block_str, k.registers)
               for k in prof.profile.kernel_profiles if k.name]
    return result, kernels
