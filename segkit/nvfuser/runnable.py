"""What runs on a backend: one recorded fusion, or a formulation of several (partials then their reduction).

``Runnable.run`` takes the backend by name ("reference": segkit's interpreter, "nvfuser": real nvFuser), so a
search or a check validates on either; ``execute`` is the nvFuser path a benchmark or the executor calls per step.
``NvProgram`` is one recorded fusion made runnable on nvFuser (what ``segkit.nvfuser.run.compiled`` returns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import torch

BACKENDS = ("reference", "nvfuser")


@runtime_checkable
class Runnable(Protocol):
    def run(self, inputs: Sequence[Any], backend: str = "reference") -> list[torch.Tensor]: ...

    def execute(self, inputs: Sequence[Any]) -> list[torch.Tensor]: ...


@runtime_checkable
class NvProgram(Protocol):
    """A recorded fusion on nvFuser: ``segkit.nvfuser.replay.PlainFusion`` (nvFuser's heuristics) or
    ``segkit.nvfuser.tuned.TunedFusion`` (the fusion's ``NvTuning``); what run_nvfuser needs to run and profile it."""

    @property
    def profilable(self) -> bool:
        """Can nvFuser's profiler follow its runs? (Not a manual schedule's KernelExecutor.)"""
        ...

    @property
    def groups(self) -> list[str]:
        """Scheduler of each segment where neither the profiler nor an executor cache tells them, else []."""
        ...

    @property
    def fec(self) -> Any:
        """The FusionExecutorCache whose most recent run holds the segments, or None."""
        ...

    def parts(self) -> list[Any]:
        """The nvFuser definitions it runs one after another (a split, profiled one by one); [] when it runs as one."""
        ...

    def execute(self, inputs: Sequence[Any]) -> list[torch.Tensor]: ...


class RunsOnBoth:
    """Base of a Runnable with a reference path of its own (``on_reference``): ``run`` picks the path by name."""

    def run(self, inputs: Sequence[Any], backend: str = "reference") -> list[torch.Tensor]:
        if backend == "nvfuser":
            return self.execute(inputs)
        if backend != "reference":
            raise ValueError(f"backend must be 'reference' or 'nvfuser', got {backend!r}")
        return self.on_reference(inputs)

    def on_reference(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        raise NotImplementedError

    def execute(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        raise NotImplementedError
