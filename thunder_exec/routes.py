"""``route(fn, to)``: a user's own function claimed as segkit's ``to``, verified on its first call.

The route is taken at trace time (a lookaside, thunder_exec.recognize), but whether ``fn`` computes what
segkit's fusion computes is only known on real inputs: on the first call of each input signature the routed
function runs eagerly beside segkit's fusion and a disagreement raises RouteMismatchError naming the function
and the difference, instead of training on silently different numbers (thunder_exec.route_verify).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from segkit.args import checked

from thunder_exec.patches import install
from thunder_exec.recognize import apply_rope_function, qkv_split_rope_function, recognize, rms_norm_function
from thunder_exec.route_verify import ROUTES

_MAKERS = {"rms_norm": rms_norm_function, "apply_rope": apply_rope_function, "qkv_split_rope": qkv_split_rope_function}


def _key(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


@checked
def route(fn: Callable, to: Literal["rms_norm", "apply_rope", "qkv_split_rope"]) -> None:
    """Make calls of the user's ``fn`` inside thunder.jit run as segkit's ``to`` ("rms_norm": fn(x, weight, eps),
    "apply_rope": fn(x, cos, sin) with broadcastable tables, "qkv_split_rope": thunder_exec.qkv_split_rope's
    arguments); no model edits needed. A method ``(self, x)`` cannot be routed: litgpt's and Hugging Face's norm
    modules are recognized without a route (thunder_exec.recognize). Installs thunder_exec's patches
    (thunder_exec.install()) if they are not yet."""
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
    install()
    ROUTES.functions[key] = (fn, to)
    recognize(key, fn, _MAKERS[to](key, route=key))

