"""The multi-fusion formulations of the fusions specs, by the name the tuning table and ``segkit tune`` give them.

A formulation computes a spec's outputs in several fusions (per-chunk partials then their reduction, or the
grouped-query RoPE backward's sums then one cat). Each one's module registers it here when imported
(``fusions/__init__`` imports them all), saying which specs it serves and how to make it from a choice; what it
makes is a ``segkit.nvfuser.runnable.Runnable``. A spec's single-fusion alternatives (its named defines,
``FusionSpec.formulations``, and segkit's REUSE pass) are built by ``FusionSpec.build`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from segkit.errors import SegkitError
from segkit.registry import Registry
from segkit.nvfuser.runnable import Runnable


@dataclass(frozen=True)
class Formulation:
    """``name`` of the specs ``specs``, made by ``make(spec_name, cfg, how)``; ``how`` is a tuning table entry
    or a ``segkit tune`` candidate (its chunk, tuning and bookend)."""

    name: str
    specs: tuple[str, ...]
    make: Callable[[str, Any, Any], Runnable]


_REGISTERED: Registry[Formulation] = Registry("multi-fusion formulation")


def register(formulation: Formulation) -> Formulation:
    """Make ``formulation`` known by its name; another under a taken name is an error."""
    return _REGISTERED.register(formulation.name, formulation)


def names() -> list[str]:
    return _REGISTERED.names()


def realize(spec_name: str, cfg: Any, how: Any) -> Runnable:
    """The formulation ``how.formulation`` of ``spec_name`` at ``cfg``, as ``how`` (a tuning table entry or a
    tune candidate) chooses it."""
    found = _REGISTERED.get(how.formulation)
    if spec_name not in found.specs:
        raise SegkitError(f"the {found.name} formulation is for {' and '.join(found.specs)}, not {spec_name}")
    return found.make(spec_name, cfg, how)
