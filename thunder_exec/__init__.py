"""segkit_ex: a Thunder executor that runs layer norm, RMSNorm, RoPE and qkv split + RoPE on segkit's fusions.

Use it first in the executor list, ``thunder.jit(model, executors=thunder_exec.executors())``: for each symbol
Thunder asks the executors in order and the first one that can execute *or fuse* it owns its grad rule. nvFuser
can fuse the decomposition of layer_norm / rms_norm, so with segkit_ex after nvFuser segkit's fused backward is
never consulted (and segkit_ex cannot notice from inside Thunder, hence ``executors()``).

What it claims, each family in its own file registered on ``segkit_ex`` (thunder_exec.base, which also reads the
compile options ``segkit_bookend`` / ``segkit_check``): the norms (thunder_exec.norms), RoPE on q or k
(thunder_exec.rope), qkv split + RoPE (thunder_exec.qkv_rope) and causal attention on cuDNN
(thunder_exec.attention, compile option ``segkit_attention``). By default (compile option ``segkit_fuse="auto"``;
fusions.cut_cost decides per call, ``"fused"`` / ``"opaque"`` force it) the norms and RoPE go into Thunder's own
nvFusion regions as operators of its nvFuser executor (thunder_exec.fusible) instead of cutting them. The libraries' own norm / RoPE
functions reach those symbols through Thunder lookasides (thunder_exec.recognize), a user's functions through
``route()`` (thunder_exec.routes, checked on first call by thunder_exec.route_verify). For Thunder's own nvFusion regions:
``transforms=[thunder_exec.CheckNvFusions()]`` (thunder_exec.check_hook) and ``ReuseNvFusions()``
(thunder_exec.reuse).

Importing this package also applies the narrow Thunder 0.2.6 / nvfuser_direct compatibility fix
(thunder_exec.compat) when it is needed.
"""

from __future__ import annotations

from thunder_exec.compat import install_nvfuser_direct_compat

install_nvfuser_direct_compat()

from thunder_exec.base import segkit_ex  # noqa: E402
from thunder_exec import attention  # noqa: E402,F401  (SDPA on cuDNN's fused attention)
from segkit.verdicts import UncheckedFusionWarning, WrongResultWarning  # noqa: E402
from thunder_exec.check_hook import CheckNvFusions  # noqa: E402
from thunder_exec.norms import rms_norm  # noqa: E402
from thunder_exec import fusible  # noqa: E402
from thunder_exec.fusible import FuseFallbackWarning  # noqa: E402
from thunder_exec import fx_claims  # noqa: E402,F401  (ThunderFX: claims in the graphs thunderfx hands Thunder)
from thunder_exec.qkv_rope import qkv_split_rope  # noqa: E402
from thunder_exec.recognize import install_import_hook, install_known  # noqa: E402
from thunder_exec.reuse import ReuseNvFusions, ReuseSkippedWarning  # noqa: E402
from thunder_exec.route_verify import RouteMismatchError  # noqa: E402
from thunder_exec.routes import route  # noqa: E402
from thunder_exec import claim_check  # noqa: E402
from fusions import runner  # noqa: E402

install_known()
install_import_hook()


def executors() -> list:
    """segkit_ex first, then Thunder's defaults: the order in which segkit's grad rules take effect. Also
    recognizes the norm / RoPE functions of libraries imported since thunder_exec (thunder_exec.recognize)."""
    import thunder

    install_known()
    return [segkit_ex, *[ex for ex in thunder.get_default_executors() if ex is not segkit_ex]]


def clear_caches() -> None:
    """Forget segkit_ex's state: the runners and their fusions, the first-use verdicts of claims and of the
    fusions, the rewritten ThunderFX graphs and the fused mode's notes and cut costs (e.g. between models, or to
    free memory)."""
    runner.clear_caches()
    fusible.clear_notes()
    claim_check.clear()
    fx_claims.clear_cache()


__all__ = ["CheckNvFusions", "FuseFallbackWarning", "ReuseNvFusions", "ReuseSkippedWarning", "RouteMismatchError",
           "UncheckedFusionWarning", "WrongResultWarning", "clear_caches", "executors", "qkv_split_rope", "rms_norm",
           "route", "segkit_ex"]
