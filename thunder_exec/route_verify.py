"""The first-call check of a routed function (thunder_exec.routes): the ``segkit_verify_route`` symbol passes
segkit's outputs through and, on the first call of each input signature, runs the routed function eagerly on the
same inputs; a disagreement raises RouteMismatchError naming the function and the difference.

Below the symbol files that use it (the norms, qkv split + RoPE, RoPE) and above nothing but base: the routes
themselves are recorded here (``ROUTES``) by ``route()``, which sits on top with thunder_exec.recognize.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from thunder.core.proxies import TensorProxy

from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.nvfuser.run import signature
from thunder_exec.base import segkit_ex


class RouteMismatchError(SegkitError):
    """A routed function and segkit's symbol disagree on real inputs."""


@dataclass
class Routes:
    """Every routed function and which input signatures have been verified."""

    functions: dict[str, tuple[Callable, str]] = field(default_factory=dict)  # key -> (fn, to)
    verified: set = field(default_factory=set)  # (key, input signature)


ROUTES = Routes()


def _describe(inputs: Sequence) -> str:
    return ", ".join(f"{tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}" if isinstance(t, torch.Tensor)
                     else repr(t) for t in inputs)


def verify(key: str, outputs: Sequence[torch.Tensor], inputs: Sequence) -> None:
    """On the first call of an input signature: ``fn(*inputs)`` eagerly against segkit's ``outputs``."""
    sig = (key, signature(inputs))
    if sig in ROUTES.verified:
        return
    fn, to = ROUTES.functions[key]
    with torch.no_grad():
        want = fn(*inputs)
    want = want if isinstance(want, (tuple, list)) else (want,)
    if len(want) != len(outputs):
        raise RouteMismatchError(f"route({key}, {to!r}): the function returns {len(want)} outputs, segkit's {to} "
                                 f"{len(outputs)}; refusing the route")
    bad = [d for d in compare(want, outputs, label=f"segkit's {to}") if not d.ok]  # dtype and shape too
    if bad:
        raise RouteMismatchError(
            f"route({key}, {to!r}): the function and segkit's {to} disagree on inputs ({_describe(inputs)}): "
            f"{bad[0]}; the function computes something else than {to}, so the route is refused (remove the "
            f"route() call, or route it to what it computes)")
    ROUTES.verified.add(sig)


def _verify_meta(route, outputs, inputs):
    return tuple(TensorProxy(like=o) for o in outputs)


def _verify_impl(route, outputs, inputs):
    verify(route, outputs, inputs)
    return tuple(outputs)


verify_route = segkit_ex.register_operator("segkit_verify_route", meta=_verify_meta, fn=_verify_impl)
