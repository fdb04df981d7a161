"""Make Thunder 0.2.6's stock nvFuser executor work with nvfuser_direct-only installs.

Thunder 0.2.6 imports ``nvfuser_direct`` for everything except one helper,
``compute_contiguity``, which still does ``from nvfuser import
compute_tensor_descriptor``. nvFuser >= 0.2.36 ships only ``nvfuser_direct``
(which has ``compute_tensor_descriptor``), so every stock nvFuser fusion
fails at its first call. Upstream fixed this after 0.2.6 (unreleased).

The fix here is deliberately narrow: it replaces that one Thunder function
with the same computation against ``nvfuser_direct``. It does nothing when
the legacy ``nvfuser`` module imports, when nvfuser_direct is missing, or
when Thunder did not enable its nvFuser executor (no CUDA).
"""

from __future__ import annotations

import functools
import importlib.util

_installed = False


def _legacy_nvfuser_importable() -> bool:
    return importlib.util.find_spec("nvfuser") is not None


def install_nvfuser_direct_compat() -> bool:
    """Patch Thunder's ``compute_contiguity`` when it is needed; return whether it was patched."""
    global _installed
    if _installed:
        return True
    if _legacy_nvfuser_importable() or importlib.util.find_spec("nvfuser_direct") is None:
        return False
    import thunder.executors.nvfuserex as nvfuserex

    if nvfuserex.nvfuserex is None:  # no CUDA or nvFuser too old: Thunder did not load the impl
        return False
    import nvfuser_direct
    import thunder.executors.nvfuserex_impl as impl

    if not hasattr(nvfuser_direct, "compute_tensor_descriptor"):
        return False

    @functools.lru_cache(maxsize=2048)
    def compute_contiguity(shape, stride):
        """nvFuser's (contiguity, stride_order) for a strided tensor, via nvfuser_direct."""
        return tuple(tuple(x) for x in nvfuser_direct.compute_tensor_descriptor(shape, stride))

    impl.compute_contiguity = compute_contiguity
    _installed = True
    return True
