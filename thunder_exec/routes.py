"""``route(fn, to)``: a user's own function claimed as segkit's ``to``, verified on its first call.

The route is taken at trace time (a lookaside, thunder_exec.recognize), but whether ``fn`` computes what
segkit's fusion computes is only known on real inputs: on the first call of each input signature the routed
function runs eagerly beside segkit's fusion and a disagreement raises RouteMismatchError naming the function
and the difference, instead of training on silently different numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.nvf import signature
from thunder_exec import recognize as rec


class RouteMismatchError(SegkitError):
    """A routed function and segkit's symbol disagree on real inputs."""


_MAKERS = {"rms_norm": rec.rms_norm_function, "apply_rope": rec.apply_rope_function,
           "qkv_split_rope": rec.qkv_split_rope_function}


@dataclass
class Routes:
    functions: dict[str, tuple[Callable, str]] = field(default_factory=dict)  # key -> (fn, to)
    verified: set = field(default_factory=set)  # (key, input signature)


ROUTES = Routes()


def _key(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def route(fn: Callable, to: str) -> None:
    """Make calls of the user's ``fn`` inside thunder.jit run as segkit's ``to`` ("rms_norm": fn(x, weight, eps),
    "apply_rope": fn(x, cos, sin) with broadcastable tables, "qkv_split_rope": thunder_exec.qkv_split_rope's
    arguments); no model edits needed. A method ``(self, x)`` cannot be routed: litgpt's and Hugging Face's norm
    modules are recognized without a route (thunder_exec.recognize)."""
    if to not in _MAKERS:
        raise ValueError(f"route(fn, to): to must be one of {sorted(_MAKERS)}, got {to!r}")
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"route(fn, {to!r}): fn must be a Python function, got {fn!r}")
    if "self" in fn.__code__.co_varnames[:1]:
        raise TypeError(f"route({_key(fn)}, {to!r}): a method (self, ...) cannot be routed; litgpt's and Hugging "
                        "Face's norm modules are claimed without a route")
    key, n = _key(fn), 1
    while key in ROUTES.functions and ROUTES.functions[key][0] is not fn:  # two lambdas, or same-named functions
        n += 1
        key = f"{_key(fn)}#{n}"
    if key in ROUTES.functions and ROUTES.functions[key][1] != to:
        raise ValueError(f"route({key}, {to!r}): already routed to {ROUTES.functions[key][1]!r}")
    ROUTES.functions[key] = (fn, to)
    rec.recognize(key, fn, _MAKERS[to](key, route=key))


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
    bad = [d for d in compare(want, outputs) if not d.ok]
    if bad:
        raise RouteMismatchError(
            f"route({key}, {to!r}): the function and segkit's {to} disagree on inputs ({_describe(inputs)}): "
            f"{bad[0]}; the function computes something else than {to}, so the route is refused (remove the "
            f"route() call, or route it to what it computes)")
    ROUTES.verified.add(sig)
