"""Per-signature check verdicts: validate a fusion's result the first time an input signature is seen, and from
then on run the reference interpreter instead of a backend that computed a wrong result there.

Shared by the layers that run fusions for a caller (fusions.runner, thunder_exec.check_hook): warn once, return
the reference's result, never pass a wrong one on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.check import check_outputs
from segkit.errors import SegkitError
from segkit.interp import run_reference


class WrongResultWarning(UserWarning):
    """nvFuser computed a wrong result for a fusion; the reference interpreter's result was returned instead."""


class UncheckedFusionWarning(UserWarning):
    """A fusion could not be validated (segkit cannot record it); nvFuser's result was returned unchecked."""


@dataclass
class ResultVerdicts:
    """Verdicts on a backend's results, per input signature: ``None`` trusted (validated or not checkable), a
    recorded fusion when refused (its signature runs on the reference interpreter from then on). Claims have
    their own (thunder_exec.claim_check.ClaimVerdicts)."""

    decided: dict[Hashable, Any] = field(default_factory=dict)

    def outputs(self, key: Hashable, label: str, record: Callable[[], Any], args: Sequence[Any],
                execute: Callable[[], Sequence[torch.Tensor]],
                against: Callable[[Sequence[Any], Sequence[torch.Tensor], str], Any] | None = None) -> list[torch.Tensor]:
        """``execute()``'s outputs, validated the first time ``key`` is seen (against the reference interpreter, or
        by ``against(args, outputs, label)`` -> CheckReport); the reference interpreter's if refused."""
        if key in self.decided:
            refused = self.decided[key]
            return list(execute()) if refused is None else run_reference(refused, args)
        outputs = list(execute())
        self.decided[key] = None
        try:
            fusion = record()
        except SegkitError as e:
            warnings.warn(UncheckedFusionWarning(f"{label}: not validated, segkit cannot record it: {e}"), stacklevel=2)
            return outputs
        report = against(args, outputs, label) if against else check_outputs(fusion, args, outputs, label=label)
        if report.ok:
            return outputs
        self.decided[key] = fusion
        warnings.warn(WrongResultWarning(
            f"{label} computed a wrong result ({report.worst or report.error}); returning the reference "
            f"interpreter's result for this input signature from now on"), stacklevel=2)
        return run_reference(fusion, args)
