"""What runs on a backend: one recorded fusion, or a formulation of several (partials then their reduction).

``run`` takes the backend by name ("reference": segkit's interpreter, "nvfuser": real nvFuser), so a search or
a check validates on either; ``execute`` is the nvFuser path a benchmark or the executor calls per step.
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
