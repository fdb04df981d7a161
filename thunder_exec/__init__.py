"""Thunder executor routing norm and RoPE regions to segkit's fused nvFuser kernels (see executor.py).

Importing this package also applies the narrow Thunder 0.2.6 / nvfuser_direct compatibility fix
(thunder_exec.compat) when it is needed.
"""

from __future__ import annotations

from thunder_exec.compat import install_nvfuser_direct_compat

install_nvfuser_direct_compat()

from thunder_exec.check_hook import CheckNvFusions, UncheckedFusionWarning, WrongResultWarning  # noqa: E402
from thunder_exec.reuse import ReuseNvFusions, ReuseSkippedWarning  # noqa: E402
from thunder_exec.executor import qkv_split_rope, rms_norm, route, segkit_ex  # noqa: E402


def executors() -> list:
    """segkit_ex first, then Thunder's defaults: the order in which segkit's grad rules take effect."""
    import thunder

    return [segkit_ex, *[ex for ex in thunder.get_default_executors() if ex is not segkit_ex]]


__all__ = ["CheckNvFusions", "UncheckedFusionWarning", "WrongResultWarning", "executors", "qkv_split_rope", "rms_norm",
           "route", "segkit_ex", "ReuseNvFusions", "ReuseSkippedWarning"]
