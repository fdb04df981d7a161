"""Named workloads: what ``NAME:CONFIG`` resolves to, for the commands and passes that take one.

The core never imports a workload package: workloads register themselves here when they are imported
(``fusions`` registers each of its specs), and the layers above (the command line, the executor, the
benchmarks) import the package whose workloads they want.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import torch

from segkit.registry import Registry


class Workload(Protocol):
    """A named fusion with configs, inputs and an independent reference (``fusions.FusionSpec`` is one)."""

    name: str
    configs: Mapping[str, Any]
    reference: Callable[[dict, Any], tuple]

    def config(self, cfg: Any, dtype: torch.dtype | None = None) -> Any: ...

    def build(self, cfg: Any, dtype: torch.dtype | None = None) -> Any: ...

    def make_inputs(self, cfg: Any, device: str = "cpu", dtype: torch.dtype | None = None,
                    seed: int = 0) -> dict[str, torch.Tensor]: ...


_REGISTERED: Registry[Workload] = Registry("fusion spec", "none registered (import a workload package, e.g. fusions)")


def register(workload: Workload) -> Workload:
    """Make ``workload`` resolvable by its name; registering another under a taken name is an error."""
    return _REGISTERED.register(workload.name, workload)


def get(name: str) -> Workload:
    return _REGISTERED.get(name)


def names() -> list[str]:
    return _REGISTERED.names()
