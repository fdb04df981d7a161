"""segkit: record, analyse, bookend and run nvFuser fusions; see README.md.

The public names below load on first use (module ``__getattr__``), so ``import segkit`` and
``segkit --help`` do not pay for torch; ``segkit.X`` and ``from segkit import X`` work as usual.
"""

from __future__ import annotations

import importlib
import types

#: public name -> module that defines it
_EXPORTS = {
    "find_aliases": "segkit.alias",
    "preferred_layouts": "segkit.alias",
    "HostPlan": "segkit.bookend",
    "Plan": "segkit.bookend",
    "bookend": "segkit.bookend",
    "run_plan": "segkit.bookend",
    "DataType": "segkit.dtypes",
    "FusionDefinitionError": "segkit.errors",
    "InputMismatchError": "segkit.errors",
    "NvFuserUnavailableError": "segkit.errors",
    "ReproError": "segkit.errors",
    "ResourceLimitError": "segkit.errors",
    "SegkitError": "segkit.errors",
    "UnsupportedOpError": "segkit.errors",
    "UsageError": "segkit.errors",
    "FusionDefinition": "segkit.frontend",
    "CheckReport": "segkit.compare",
    "check": "segkit.check",
    "check_outputs": "segkit.check",
    "random_inputs": "segkit.interp",
    "run_reference": "segkit.interp",
    "nvfuser_available": "segkit.nvfuser.replay",
    "run_nvfuser": "segkit.nvfuser.run",
    "to_nvfuser": "segkit.nvfuser.replay",
    "Repro": "segkit.repro",
    "emit_repro": "segkit.printing",
    "load_repro": "segkit.repro",
    "ReusePlan": "segkit.reuse",
    "reuse_reductions": "segkit.reuse",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'segkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """Keeps ``segkit.check`` and ``segkit.bookend`` the functions when their modules are imported
    (the import system binds a loaded submodule onto its package under the same name)."""

    def __setattr__(self, name: str, value) -> None:
        if (isinstance(value, types.ModuleType) and _EXPORTS.get(name) == value.__name__
                and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _Package
