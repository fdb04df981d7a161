"""segkit_ex itself and what every file of its symbols shares: the dtypes the fusions take, the claim mode, the
executor-order warning and Thunder / torch dtype helpers.

The bottom of thunder_exec: the symbol files (norms, qkv_rope, rope, route_verify) register on ``segkit_ex`` from
here, and recognize / routes sit above them, so the imports run one way. The compile options (``segkit_bookend``,
``segkit_check``, ``segkit_fuse``, ...) and what they decide are thunder_exec.decide's.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from thunder.core import dtypes
from thunder.extend import FusionExecutor, OperatorExecutor, TemporaryExecutor, register_executor



class FirstUse(dict):
    """segkit_ex's executor lookasides (it has none), which run ``on_first_use`` (thunder_exec's patches) once, the
    first time they are read whole. thunder.jit reads every listed executor's before it traces
    (``executor_lookasides.update(ex._lookasides)``), whether the list names it ("segkit", as launchers pass
    executors; ``thunder.extend.get_executor("segkit")``) or holds the object, so that read is segkit_ex's first
    use. Registering an operator (``update``) is not a read."""

    def __init__(self) -> None:
        super().__init__()
        self.on_first_use: Callable[[], None] | None = None

    def _first_use(self) -> None:
        hook, self.on_first_use = self.on_first_use, None
        if hook is not None:
            try:
                hook()
            except BaseException:
                self.on_first_use = hook  # not installed: the next use tries again
                raise

    def keys(self):
        self._first_use()
        return super().keys()

    def __iter__(self):
        self._first_use()
        return super().__iter__()

    def items(self):
        self._first_use()
        return super().items()


segkit_ex = OperatorExecutor("segkit", version="0.2")
segkit_ex._lookasides = FirstUse()
register_executor(segkit_ex)

@dataclass
class ClaimMode:
    """``real``: a claim is being checked (thunder_exec.claim_check) on real CPU tensors, so segkit's entry
    functions compute with torch on the reference interpreter instead of putting symbols in a trace."""

    real: bool = False


CLAIM_MODE = ClaimMode()

_WARNED: set[tuple[str, ...]] = set()


def warn_if_shadowed(executors) -> None:
    """Warn (once per executor list, whether its executors were named or passed) when a fusion executor comes
    before segkit_ex: the first executor that can run or fuse a symbol owns its grad rule, so segkit's fused
    backward would never run."""
    executors = list(executors or ())
    if segkit_ex not in executors:
        return
    before = [e for e in executors[:executors.index(segkit_ex)] if isinstance(e, FusionExecutor)]
    # thunder.jit's own ad hoc executor, first in every list, is named for itself: not part of the user's order
    names = tuple(str(e.name) for e in executors if not isinstance(e, TemporaryExecutor))
    if before and names not in _WARNED:
        _WARNED.add(names)
        warnings.warn(f"segkit_ex comes after {', '.join(str(e.name) for e in before)} in the executors list "
                      f"{list(names)}: they take the norms first and segkit's fused backward is never used; "
                      "put segkit_ex first (thunder_exec.executors(), or \"segkit\" first in a list of names)",
                      stacklevel=3)


def supported(d) -> bool:
    """Whether segkit's norm and RoPE fusions take dtype ``d`` (Thunder's or torch's)."""
    return torch_dtype(d) in (torch.bfloat16, torch.float16, torch.float32)


def torch_dtype(d) -> torch.dtype:
    """``d`` as a torch dtype (Thunder's proxies carry Thunder dtypes, real tensors torch's)."""
    return d if isinstance(d, torch.dtype) else dtypes.to_torch_dtype(d)


def dtype_name(d) -> str:
    """``d``'s short name ("bfloat16"), for refusal messages."""
    return str(torch_dtype(d)).removeprefix("torch.")


def with_options(meta):
    """The meta of segkit_ex's opaque symbol for an operator of meta ``meta``: the same outputs, from the same
    parameters and then the compile options' (bookend policy, check: CompileOptions.symbol_args)."""
    params = list(inspect.signature(meta).parameters.values())
    options = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in ("policy", "check")]
    signature = inspect.Signature([*params, *options])

    def opaque_meta(*args, **kwargs):
        return meta(*signature.bind(*args, **kwargs).args[:len(params)])

    opaque_meta.__signature__ = signature
    opaque_meta.__name__ = opaque_meta.__qualname__ = f"{meta.__name__}_with_options"
    return opaque_meta
