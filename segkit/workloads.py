"""Named workloads: what ``NAME:CONFIG`` resolves to, for the commands and passes that take one.

The core never imports a workload package: workloads register themselves here when they are imported
(``fusions`` registers each of its specs), and the layers above (the command line, the executor, the
benchmarks) import the package whose workloads they want.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import torch

from segkit.errors import UnknownNameError


class Workload(Protocol):
    """A named fusion with configs, inputs and an independent reference (``fusions.FusionSpec`` is one)."""

    name: str
    configs: Mapping[str, Any]
    reference: Callable[[dict, Any], tuple]

    def config(self, cfg: Any, dtype: torch.dtype | None = None) -> Any: ...

    def build(self, cfg: Any, dtype: torch.dtype | None = None) -> Any: ...

    def make_inputs(self, cfg: Any, device: str = "cpu", dtype: torch.dtype | None = None,
                    seed: int = 0) -> dict[str, torch.Tensor]: ...


_REGISTERED: dict[str, Workload] = {}


def register(workload: Workload) -> Workload:
    """Make ``workload`` resolvable by name; registering another under a taken name is an error."""
    held = _REGISTERED.get(workload.name)
    if held is not None and held is not workload:
        raise ValueError(f"a workload named {workload.name!r} is already registered")
    _REGISTERED[workload.name] = workload
    return workload


def get(name: str) -> Workload:
    try:
        return _REGISTERED[name]
    except KeyError:
        known = ", ".join(_REGISTERED) or "none registered (import a workload package, e.g. fusions)"
        raise UnknownNameError(f"no fusion spec {name!r}; known: {known}") from None


def names() -> list[str]:
    return list(_REGISTERED)
