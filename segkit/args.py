"""Argument checks for the public entry points: ``@checked`` tests each argument against its annotation before
the function runs, so a wrong argument is one ArgumentError naming the function, the argument and what was given,
not an AttributeError from deep inside.

The annotations are the contract (no second list of types to keep in step). Understood: classes, ``None``, unions,
``Literal`` (a value outside it is named with the values allowed), ``list[X]`` / ``Sequence[X]`` / ``tuple`` /
``dict[K, V]`` (a str is not a sequence here; elements checked), ``Callable``, ``Any``, and ``Annotated[T, Is(...)]``
for what a type cannot say (e.g. "a segkit FusionDefinition or Fusion"). A ``float`` takes an int, an ``int`` no
bool. Not a general runtime type checker (beartype, typeguard): the public API uses these forms only, and segkit
takes no dependency for them.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import inspect
import math
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Union

from segkit.errors import ArgumentError

#: The marker ``@checked`` leaves on a function (tests/test_public_api.py walks the public entry points for it).
MARK = "__segkit_checked__"


@dataclass(frozen=True)
class Is:
    """``Annotated[T, Is(test, "what")]``: a value passes when ``test(value)`` is true; ``what`` says what it must
    be in the error."""

    test: Callable[[Any], bool]
    what: str


def checked(fn):
    """``fn`` with its annotated arguments checked on each call (hints resolved on the first call)."""
    sig = inspect.signature(fn)
    name = getattr(fn, "__qualname__", fn.__name__)
    hints: dict[str, Any] | None = None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal hints
        if hints is None:
            hints = _hints(fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{name}(): {e}") from None
        for arg, value in bound.arguments.items():
            hint = hints.get(arg)
            if hint is None:
                continue
            if sig.parameters[arg].kind is inspect.Parameter.VAR_POSITIONAL:
                values = list(enumerate(value))
            elif sig.parameters[arg].kind is inspect.Parameter.VAR_KEYWORD:
                values = list(value.items())
            else:
                values = [(None, value)]
            for key, v in values:
                problem = why_not(v, hint)
                if problem:
                    label = arg if key is None else f"{arg}[{key!r}]"
                    raise ArgumentError(f"{name}(): {label} must be {problem}, got {given(v)}")
        return fn(*args, **kwargs)

    setattr(wrapper, MARK, True)
    return wrapper


def fail(function: str, arg: str, expected: str, value: Any) -> ArgumentError:
    """The error ``@checked`` raises, for a check its annotations cannot state (raise what this returns)."""
    return ArgumentError(f"{function}(): {arg} must be {expected}, got {given(value)}")


def _hints(fn) -> dict[str, Any]:
    """The resolved annotations of ``fn`` (a name that does not resolve leaves its argument unchecked)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - one unresolvable name must not drop the others
        out = {}
        for arg, ann in getattr(fn, "__annotations__", {}).items():
            try:
                out[arg] = eval(ann, fn.__globals__) if isinstance(ann, str) else ann  # noqa: S307 - own annotations
            except Exception:  # noqa: BLE001
                pass
        return out


def given(value: Any) -> str:
    """A value as an error shows it: its type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def why_not(value: Any, hint: Any) -> str | None:
    """None when ``value`` fits ``hint``, else what it must be (for the error)."""
    return None if _fits(value, hint) else _describe(hint)


_SEQUENCES = (list, tuple, set, frozenset, abc.Sequence, abc.Iterable, abc.Collection, abc.Set, abc.MutableSequence)


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin, params = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return _fits(value, params[0]) and all(m.test(value) for m in hint.__metadata__ if isinstance(m, Is))
    if origin in (Union, types.UnionType):
        return any(_fits(value, h) for h in params)
    if origin is Literal:
        return any(value == p and type(value) is type(p) for p in params)
    if hint is abc.Callable or origin is abc.Callable:
        return callable(value)
    if origin in _SEQUENCES:
        if isinstance(value, (str, bytes)) or not isinstance(value, origin):
            return False
        if origin is tuple and params and params[-1] is not Ellipsis:
            return len(value) == len(params) and all(_fits(v, h) for v, h in zip(value, params))
        return not params or all(_fits(v, params[0]) for v in value)
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        return isinstance(value, origin) and (not params or all(
            _fits(k, params[0]) and _fits(v, params[1]) for k, v in value.items()))
    if origin is type:
        return isinstance(value, type)
    if origin is not None:  # another generic: its class only
        return isinstance(value, origin)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _describe(hint: Any) -> str:
    if hint is None or hint is type(None):
        return "None"
    origin, params = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        whats = [m.what for m in hint.__metadata__ if isinstance(m, Is)]
        return " and ".join(whats) if whats else _describe(params[0])
    if origin in (Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(h) for h in params))
    if origin is Literal:
        return "one of " + ", ".join(repr(p) for p in params)
    if hint is abc.Callable or origin is abc.Callable:
        return "a callable"
    if origin in (dict, abc.Mapping, abc.MutableMapping) and len(params) == 2:
        return f"a dict from {_describe(params[0]).removeprefix('a ')} to {_describe(params[1])}"
    if origin is not None:
        inner = f" of {_describe(params[0])}" if params and params[-1] is not Ellipsis and len(params) == 1 else ""
        return f"a {getattr(origin, '__name__', str(origin))}{inner}"
    return f"a {getattr(hint, '__name__', str(hint))}"


def _is_fusion(value: Any) -> bool:
    from segkit.ir import Fusion

    return isinstance(value, Fusion) or isinstance(getattr(value, "fusion", None), Fusion)


#: A recorded fusion as the public functions take it: a segkit FusionDefinition, a Fusion, or anything with one
#: as ``.fusion`` (segkit.interp.as_fusion).
FusionLike = Annotated[Any, Is(_is_fusion, "a segkit FusionDefinition or Fusion")]


def _is_device(value: Any) -> bool:
    import torch

    if not isinstance(value, (str, torch.device)):
        return False
    try:
        torch.device(value)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


#: A torch device, by name ("cpu", "cuda:0", "meta") or object.
Device = Annotated[Any, Is(_is_device, "a device name (cpu, cuda, cuda:0, meta) or a torch.device")]


def _finite_number(low: float, strict: bool) -> Is:
    def test(v: Any) -> bool:
        return math.isfinite(v) and (v > low if strict else v >= low)

    return Is(test, f"a finite number {'>' if strict else '>='} {low:g}")


#: A number that a tolerance, a threshold or a time takes: finite and not negative (NaN, Inf, -1 refused).
NonNegative = Annotated[float, _finite_number(0, strict=False)]
#: A number that must be finite and above zero (a bandwidth, a time limit).
Positive = Annotated[float, _finite_number(0, strict=True)]
#: A count that must be at least one (a top-N, a number of repetitions).
PositiveInt = Annotated[int, Is(lambda v: v > 0, "a whole number > 0")]
#: A name that says something (a range, a step): not empty, not only blanks.
Name = Annotated[str, Is(lambda v: v.strip() != "", "a non-empty name")]
