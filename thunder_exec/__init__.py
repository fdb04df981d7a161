"""Thunder executor routing norm and RoPE regions to segkit's fused nvFuser kernels (see executor.py).

Importing this package also applies the narrow Thunder 0.2.6 / nvfuser_direct compatibility fix
(thunder_exec.compat) when it is needed.
"""

from __future__ import annotations

from thunder_exec.compat import install_nvfuser_direct_compat

install_nvfuser_direct_compat()

from segkit.verdicts import UncheckedFusionWarning, WrongResultWarning  # noqa: E402
from thunder_exec.check_hook import CheckNvFusions  # noqa: E402
from thunder_exec.reuse import ReuseNvFusions, ReuseSkippedWarning  # noqa: E402
from thunder_exec.executor import qkv_split_rope, rms_norm, segkit_ex  # noqa: E402
from thunder_exec.recognize import install_import_hook, install_known  # noqa: E402
from thunder_exec.routes import RouteMismatchError, route  # noqa: E402
from fusions.runner import clear_caches  # noqa: E402

install_known()
install_import_hook()


def executors() -> list:
    """segkit_ex first, then Thunder's defaults: the order in which segkit's grad rules take effect. Also
    recognizes the norm / RoPE functions of libraries imported since thunder_exec (thunder_exec.recognize)."""
    import thunder

    install_known()
    return [segkit_ex, *[ex for ex in thunder.get_default_executors() if ex is not segkit_ex]]


__all__ = ["CheckNvFusions", "ReuseNvFusions", "ReuseSkippedWarning", "RouteMismatchError", "UncheckedFusionWarning",
           "WrongResultWarning", "clear_caches", "executors", "qkv_split_rope", "rms_norm", "route", "segkit_ex"]
