"""segkit_ex: a Thunder executor that runs layer norm, RMSNorm, RoPE and qkv split + RoPE on segkit's fusions.

Use it first in the executor list, ``thunder.jit(model, executors=thunder_exec.executors())``, or by name, as
launchers pass executors (``executors=["segkit", "sdpa", "torchcompile_xentropy"]``, after ``import
thunder_exec``): for each symbol Thunder asks the executors in order and the first one that can execute *or fuse*
it owns its grad rule. nvFuser can fuse the decomposition of layer_norm / rms_norm, so with segkit_ex after nvFuser
segkit's fused backward is never consulted: a list that puts a fusion executor first ("nvfuser", "segkit") claims
so with a warning, once per list, when the first norm or RoPE is traced (thunder_exec.base.warn_if_shadowed).

What it claims, each family in its own file registered on ``segkit_ex`` (thunder_exec.base): the norms
(thunder_exec.norms), RoPE on q or k (thunder_exec.rope), qkv split + RoPE (thunder_exec.qkv_rope) and causal
attention on cuDNN (thunder_exec.attention, compile option ``segkit_attention``; grouped k / v unrepeated where a
step measured it faster: thunder_exec.gqa, ``segkit_gqa``). A norm / RoPE family file holds both forms of each
operator: segkit_ex's opaque symbol and the fused operator for Thunder's own nvFusion regions (registered on its
nvFuser executor: thunder_exec.nv_ops), and one call's configs are built once (thunder_exec.calls). Which form a
call takes, or whether it is claimed at all, is decided in one place, thunder_exec.decide (compile options
``segkit_fuse``, default "auto", ``segkit_bookend``, ``segkit_check``; the cut cost model, the step evidence). The
libraries' own norm / RoPE functions reach those symbols through Thunder lookasides (thunder_exec.recognize), a user's functions through
``route()`` (thunder_exec.routes, checked on first call by thunder_exec.route_verify). For Thunder's own nvFusion regions:
``transforms=[thunder_exec.CheckNvFusions()]`` (thunder_exec.check_hook) and ``ReuseNvFusions()``
(thunder_exec.reuse). Under ``thunder.distributed.fsdp``, a ZERO3 or bucketing request that this Thunder version
does not apply is said once (thunder_exec.sharding; docs/distributed.md).

Importing this package changes nothing outside segkit's own objects: the Thunder lookasides, the import hook
and the nvfuser_direct compatibility fix wait for ``thunder_exec.install()`` (thunder_exec.patches), which
``executors()`` and ``route()`` call, and so do the first read of ``thunder_exec.segkit_ex`` and the first
thunder.jit whose executors hold segkit_ex, by object or by name (``thunder.extend.get_executor("segkit")``:
thunder_exec.base.FirstUse), once, with what ``executors()`` recognizes. CheckNvFusions / ReuseNvFusions apply the
compatibility fix alone.
"""

from __future__ import annotations

from thunder_exec import base as _base
from thunder_exec import attention  # noqa: F401  (SDPA on cuDNN's fused attention)
from segkit.verdicts import UncheckedFusionWarning, WrongResultWarning
from thunder_exec.check_hook import CheckNvFusions
from thunder_exec.norms import rms_norm
from thunder_exec import decide
from thunder_exec.decide import FuseFallbackWarning
from thunder_exec import fx_claims  # (ThunderFX: claims in the graphs thunderfx hands Thunder, once installed)
from thunder_exec.patches import install
from thunder_exec.qkv_rope import qkv_split_rope
from thunder_exec.recognize import install_known
from thunder_exec.reuse import ReuseNvFusions, ReuseSkippedWarning
from thunder_exec.route_verify import RouteMismatchError
from thunder_exec.routes import route
from thunder_exec import calls, claim_check
from fusions import runner
from segkit.args import checked


@checked
def executors() -> list:
    """segkit_ex first, then Thunder's defaults: the order in which segkit's grad rules take effect. Installs
    thunder_exec's patches (``install()``) and recognizes the norm / RoPE functions of libraries imported since
    (thunder_exec.recognize)."""
    import thunder

    install()
    install_known()
    segkit_ex = _base.segkit_ex
    return [segkit_ex, *[ex for ex in thunder.get_default_executors() if ex is not segkit_ex]]


def _first_use() -> None:
    """What ``executors()`` installs, on segkit_ex's first use in thunder.jit (thunder_exec.base.FirstUse)."""
    install()
    install_known()


_base.segkit_ex._lookasides.on_first_use = _first_use


def __getattr__(name: str):
    """``thunder_exec.segkit_ex``: the executor, with thunder_exec's patches installed (``install()``), so that an
    executor list written by hand claims what ``executors()``' does."""
    if name == "segkit_ex":
        install()
        return _base.segkit_ex
    raise AttributeError(f"module 'thunder_exec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"segkit_ex"})


@checked
def clear_caches(keep_compiled: bool = False) -> None:
    """Forget segkit_ex's state: the runners and their fusions, the calls' configs, the first-use verdicts of
    claims and of the fusions, the rewritten ThunderFX graphs and the fused mode's notes and cut costs (e.g.
    between models, or to free memory). ``keep_compiled`` keeps the runners and calls (compiled fusions keyed by
    spec, config and policy: no decision rides on them) and forgets every decision, as the GPU tests do before
    each test."""
    if not keep_compiled:
        runner.clear_caches()
        calls.clear()
    decide.clear_notes()
    claim_check.clear()
    fx_claims.clear_cache()


__all__ = ["CheckNvFusions", "FuseFallbackWarning", "ReuseNvFusions", "ReuseSkippedWarning", "RouteMismatchError",
           "UncheckedFusionWarning", "WrongResultWarning", "clear_caches", "executors", "install", "qkv_split_rope",
           "rms_norm", "route", "segkit_ex"]
