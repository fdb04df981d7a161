"""Run a fusions spec for the tensors a Thunder operator receives: built once per signature, cached.

On CUDA tensors with nvfuser_direct present the fusion runs on nvFuser (its
FusionDefinition is built once and kept); otherwise the reference interpreter
runs it, so the executor's routing can be tested on a CPU machine. With ``check``
(compile option ``segkit_check``) each signature's nvFuser result is validated once
against the reference and refused if wrong (thunder_exec.check_hook).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

import fusions
from segkit.bookend import POLICIES, bookended
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.nvf import compiled, nvfuser_available
from thunder_exec.check_hook import Verdicts

_FUSIONS: dict[tuple, Any] = {}
_RUNNERS: dict[tuple, "SpecRunner"] = {}
_VERDICTS = Verdicts()


def only_outputs(fd: Any, outputs: tuple[int, ...]):
    """The recorded fusion ``fd`` with only the outputs at ``outputs`` and the ops they need (inference wants
    y, not the statistics a backward would read); the fusion's nvFuser tuning travels with it (keep_outputs)."""
    return FusionDefinition.from_fusion(fd.fusion.keep_outputs(outputs))


def fusion_for(spec_name: str, cfg: Any, policy: str, outputs: tuple[int, ...] | None = None):
    """The recorded fusion of ``spec_name`` for ``cfg`` (only ``outputs`` when given), with the bookend
    ``policy`` applied (cached)."""
    if policy not in POLICIES:
        raise ValueError(f"segkit_bookend must be one of {POLICIES}, got {policy!r}")
    key = (spec_name, cfg, policy, outputs)
    if key not in _FUSIONS:
        fd = fusions.get(spec_name).build(cfg)
        if outputs is not None:
            fd = only_outputs(fd, outputs)
        # The rewrite carries the builder's nvFuser tuning (Fusion.tuning); no cut: the builder's own fusion.
        _FUSIONS[key] = bookended(fd, policy)
    return _FUSIONS[key]


@dataclass(frozen=True)
class SpecRunner:
    """One spec, config and policy with its fusion resolved once, so a call costs what nvFuser's execute costs
    plus a contiguity check (the executor calls this for every Thunder operator call)."""

    spec_name: str
    cfg: Any
    policy: str
    check: bool
    fd: Any
    outputs: tuple[int, ...] | None = None
    staged: Any = None  # a multi-fusion formulation the tuning table chose for this GPU (e.g. two-stage norm bwd)

    def __call__(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Outputs of the fusion on ``tensors`` (made contiguous: the builders define contiguous inputs)."""
        args = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        if not (nvfuser_available() and all(t.is_cuda for t in args)):
            return run_reference(self.fd, args)
        execute = self.staged.execute if self.staged is not None else compiled(self.fd).execute
        if not self.check:
            return execute(args)
        return _VERDICTS.outputs((self.spec_name, self.cfg, self.policy, self.outputs),
                                 f"segkit's {self.spec_name} ({self.policy}) on nvFuser", lambda: self.fd, args,
                                 lambda: execute(args))


def runner(spec_name: str, cfg: Any, policy: str, check: bool = False,
           outputs: tuple[int, ...] | None = None) -> SpecRunner:
    """The cached SpecRunner of ``spec_name`` for ``cfg`` under bookend ``policy`` (only ``outputs`` when given)."""
    key = (spec_name, cfg, policy, check, outputs)
    found = _RUNNERS.get(key)
    if found is None:
        found = _RUNNERS[key] = SpecRunner(spec_name, cfg, policy, check,
                                           fusion_for(spec_name, cfg, policy, outputs), outputs,
                                           staged_for(spec_name, cfg) if outputs is None else None)
    return found


def staged_for(spec_name: str, cfg: Any, gpu: str | None = None, table: Any = None):
    """The two-stage formulation when the tuning table chose it for this spec and config on this GPU, else None."""
    entry = fusions.get(spec_name).table_entry(cfg, gpu, table)
    if entry is None or entry.formulation != "two_stage":
        return None
    from fusions.norm_bwd_two_stage import two_stage

    return two_stage(spec_name, cfg, entry.chunk).tuned(entry.tuning, entry.bookend)


def run_spec(spec_name: str, cfg: Any, tensors: Sequence[torch.Tensor], policy: str,
             check: bool = False) -> list[torch.Tensor]:
    """Outputs of the spec's fusion on ``tensors`` (see SpecRunner)."""
    return runner(spec_name, cfg, policy, check)(tensors)
