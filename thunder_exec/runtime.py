"""Run a fusions spec for the tensors a Thunder operator receives: built once per signature, cached.

On CUDA tensors with nvfuser_direct present the fusion runs on nvFuser (its
FusionDefinition is built once and kept); otherwise the reference interpreter
runs it, so the executor's routing can be tested on a CPU machine. With ``check``
(compile option ``segkit_check``) each signature's nvFuser result is validated once
against the reference and refused if wrong (thunder_exec.check_hook).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import fusions
from segkit.bookend import POLICIES, bookend
from segkit.interp import run_reference
from segkit.nvf import nvfuser_available, run_nvfuser
from thunder_exec.check_hook import Verdicts

_FUSIONS: dict[tuple, Any] = {}
_VERDICTS = Verdicts()


def fusion_for(spec_name: str, cfg: Any, policy: str):
    """The recorded fusion of ``spec_name`` for ``cfg``, with the bookend ``policy`` applied (cached)."""
    if policy not in POLICIES:
        raise ValueError(f"segkit_bookend must be one of {POLICIES}, got {policy!r}")
    key = (spec_name, cfg, policy)
    if key not in _FUSIONS:
        fd = fusions.get(spec_name).build(cfg)
        plan = None if policy == "none" else bookend(fd, policy)
        # No cut: the builder's own fusion, which keeps its nvFuser tuning (fd.nv_tuning).
        _FUSIONS[key] = fd if plan is None or not plan.cuts else plan.apply("segment_set")
    return _FUSIONS[key]


def run_spec(spec_name: str, cfg: Any, tensors: Sequence[torch.Tensor], policy: str,
             check: bool = False) -> list[torch.Tensor]:
    """Outputs of the spec's fusion on ``tensors`` (made contiguous: the builders define contiguous inputs)."""
    fd = fusion_for(spec_name, cfg, policy)
    args = [t.contiguous() for t in tensors]
    if not (all(t.is_cuda for t in args) and nvfuser_available()):
        return run_reference(fd, args)
    if not check:
        return run_nvfuser(fd, args, profile=False).outputs
    return _VERDICTS.outputs((spec_name, cfg, policy), f"segkit's {spec_name} ({policy}) on nvFuser", lambda: fd,
                             args, lambda: run_nvfuser(fd, args, profile=False).outputs)
