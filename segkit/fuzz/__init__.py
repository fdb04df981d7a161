"""Differential fuzzing of nvFuser against the reference interpreter (see segkit/fuzz/campaign.py).

The public names load on first use, so ``segkit --help`` (which registers ``segkit fuzz``) loads no torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Finding": "segkit.fuzz.findings", "Summary": "segkit.fuzz.campaign", "fuzz": "segkit.fuzz.campaign",
    "Case": "segkit.fuzz.gen", "cases": "segkit.fuzz.gen",
    "REALIZATIONS": "segkit.fuzz.targets", "Target": "segkit.fuzz.targets", "run_case": "segkit.fuzz.targets",
    "target": "segkit.fuzz.targets",
    "emit_standalone": "segkit.fuzz.triage", "replay": "segkit.fuzz.triage",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'segkit.fuzz' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
