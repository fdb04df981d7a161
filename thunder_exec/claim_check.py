"""Check a claim before it is trusted: segkit's replacement of a recognized (or routed) function against the
function itself, with the globals it calls, on real CPU tensors of the call's dtypes and shapes.

At trace time the lookaside (thunder_exec.recognize) sees proxies; here each becomes a random CPU tensor of its
dtype and shape (the leading dim of 3-D and wider tensors shrunk to 1 to keep it cheap; the normalized and
rotary dims kept), a module ``self`` a stand-in whose parameters and buffers are such tensors. The function runs
eagerly; the replacement runs with segkit's entry functions computing on the reference interpreter
(``CLAIM_MODE.real``: the fusion's own math, not the function's). Outputs must agree in structure, shape, dtype
and value: at most ``ULPS`` units in the last place of the output's dtype (only the reduction order may differ;
everything else rounds where the source rounds). Verdicts are kept per (function, input signature) in a bounded,
clearable cache (``CLAIM_VERDICTS``, ``clear()``).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import torch
from torch import nn
from thunder.core.proxies import TensorProxy

from thunder_exec.base import CLAIM_MODE, torch_dtype

ULPS = 1  # the most a claimed output may differ from the function's, in units in the last place of its dtype
_PLAIN = (bool, int, float, str, type(None))


@dataclass
class ClaimVerdicts:
    """Verdicts on claims: why a claim was refused (None: trusted), per (function, input signature); least recently
    used dropped. A backend's results have their own (segkit.verdicts.ResultVerdicts)."""

    maxsize: int = 1024
    _items: OrderedDict = field(default_factory=OrderedDict)

    def get(self, key: Hashable, decide: Callable[[], str | None]) -> str | None:
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        why = self._items[key] = decide()
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return why

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()


CLAIM_VERDICTS = ClaimVerdicts()


def clear() -> None:
    """Forget every verdict (the next trace checks each claim again)."""
    CLAIM_VERDICTS.clear()


def _is_tensor(v) -> bool:
    return isinstance(v, (TensorProxy, torch.Tensor))


def _spec(v) -> Hashable:
    """What of an argument a verdict depends on: a tensor's shape and dtype, a module's parameter and buffer
    specs and plain attributes (eps, add_unit_offset, dim), a plain value itself."""
    if _is_tensor(v):
        return ("tensor", tuple(v.shape), torch_dtype(v.dtype))
    if isinstance(v, nn.Module):
        tensors = tuple((n, tuple(t.shape), t.dtype) for n, t in (*v.named_parameters(recurse=False),
                                                                   *v.named_buffers(recurse=False)) if t is not None)
        plain = tuple(sorted((k, a) for k, a in vars(v).items() if not k.startswith("_") and isinstance(a, _PLAIN)))
        return (type(v), tensors, plain)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_spec(a) for a in v))
    return v if isinstance(v, _PLAIN) else (type(v), id(v))


def _random(shape, dtype, gen: torch.Generator, shrink: bool) -> torch.Tensor:
    shape = tuple(int(s) for s in shape)
    if shrink and len(shape) >= 3:
        shape = (min(shape[0], 1), *shape[1:])
    dtype = torch_dtype(dtype)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 0.5 + 0.25).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(0, 8, shape, generator=gen).to(dtype)


def _stand_in(module: nn.Module, gen: torch.Generator) -> nn.Module:
    """A shallow copy of ``module`` whose own parameters and buffers are random CPU tensors of their specs."""
    twin = copy.copy(module)
    twin._parameters = {n: None if p is None else nn.Parameter(_random(p.shape, p.dtype, gen, False), p.requires_grad)
                        for n, p in module._parameters.items()}
    twin._buffers = {n: None if b is None else _random(b.shape, b.dtype, gen, False) for n, b in module._buffers.items()}
    return twin


def _real(v, gen: torch.Generator):
    if _is_tensor(v):
        return _random(v.shape, v.dtype, gen, True)
    if isinstance(v, nn.Module):
        return _stand_in(v, gen)
    if isinstance(v, (tuple, list)):
        return type(v)(_real(a, gen) for a in v)
    return v


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _name(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


def ulps(want: torch.Tensor, got: torch.Tensor) -> float:
    """The largest distance between ``got`` and ``want`` in units in the last place of ``want``'s dtype (at the
    larger magnitude of each pair); NaN / Inf must sit in the same places (else inf)."""
    w, g = want.detach().double(), got.detach().double()
    same = (w == g) | (torch.isnan(w) & torch.isnan(g))
    if bool(same.all()):
        return 0.0
    if not bool((torch.isfinite(w) & torch.isfinite(g) | same).all()):
        return float("inf")
    fi = torch.finfo(want.dtype)
    _, exp = torch.frexp(torch.maximum(w.abs(), g.abs()))
    ulp = torch.clamp(torch.ldexp(torch.full_like(w, fi.eps), exp - 1), min=fi.tiny * fi.eps)
    return float(torch.where(same, 0.0, (w - g).abs() / ulp).max())


def difference(want, got) -> str | None:
    """How segkit's outputs ``got`` differ from the function's ``want`` (None when they agree)."""
    want, got = _flat(want), _flat(got)
    if len(want) != len(got):
        return f"it returns {len(want)} outputs, segkit's {len(got)}"
    for i, (w, g) in enumerate(zip(want, got)):
        if not (isinstance(w, torch.Tensor) and isinstance(g, torch.Tensor)):
            if w != g:
                return f"output {i} is {w!r}, segkit's {g!r}"
            continue
        if tuple(w.shape) != tuple(g.shape):
            return f"output {i} has shape {tuple(w.shape)}, segkit's {tuple(g.shape)}"
        if w.dtype != g.dtype:
            return f"output {i} is {_name(w.dtype)}, segkit's {_name(g.dtype)}"
        if w.dtype.is_floating_point:
            d = ulps(w, g)
            if d > ULPS:
                rel = float((w.double() - g.double()).abs().max() / w.double().abs().max().clamp(min=1e-30))
                return f"output {i} ({_name(w.dtype)}) differs by {d:.3g} ulps (rel err {rel:.2e})"
        elif not torch.equal(w, g):
            return f"output {i} ({_name(w.dtype)}) differs"
    return None


def _decide(original: Callable, replacement: Callable, args: tuple, kwargs: dict) -> str | None:
    gen = torch.Generator().manual_seed(0)
    real_args, real_kwargs = _real(args, gen), {k: _real(v, gen) for k, v in kwargs.items()}
    with torch.no_grad(), torch.autocast("cpu", enabled=False):
        try:
            want = original(*real_args, **real_kwargs)
        except Exception as e:  # noqa: BLE001 - the function itself fails on these inputs: nothing to claim
            return f"the function raised {type(e).__name__} on inputs of the call's shapes: {str(e)[:120]}"
        CLAIM_MODE.real = True
        try:
            got = replacement(*real_args, **real_kwargs)
        except Exception as e:  # noqa: BLE001 - segkit cannot compute it: refused, with the reason
            return f"segkit's replacement raised {type(e).__name__}: {str(e)[:120]}"
        finally:
            CLAIM_MODE.real = False
    why = difference(want, got)
    return None if why is None else f"{why} on inputs {describe(args)}"


def output_dtypes(fn: Callable, args: tuple) -> tuple | None:
    """The dtypes of ``fn(*args)``'s tensor outputs, run on meta tensors of the arguments' shapes and dtypes
    (None when it cannot run there): what a routed function returns, e.g. fp32 from bf16 x and fp32 tables."""
    meta = tuple(torch.empty(tuple(a.shape), dtype=torch_dtype(a.dtype), device="meta") if _is_tensor(a) else a
                 for a in args)
    try:
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            out = fn(*meta)
    except Exception:  # noqa: BLE001 - e.g. a .item() call: the caller keeps its own default
        return None
    return tuple(o.dtype if isinstance(o, torch.Tensor) else None for o in _flat(out))


def describe(args) -> str:
    """The call's tensors as ``(shape) dtype`` (a module as its class name), for the trace note."""
    parts = []
    for a in args:
        if _is_tensor(a):
            parts.append(f"{tuple(a.shape)} {_name(torch_dtype(a.dtype))}")
        elif isinstance(a, nn.Module):
            parts.append(type(a).__name__)
    return ", ".join(parts)


def disagreement(target: Callable, original: Callable, replacement: Callable, args: tuple,
                 kwargs: dict | None = None) -> str | None:
    """Why segkit's ``replacement`` of ``target`` must not be trusted for a call on ``args`` (proxies or
    tensors; None: it computes what ``original``, target's code with target's globals, computes). Cached per
    (target, input signature)."""
    kwargs = kwargs or {}
    try:
        key = (target, _spec(tuple(args)), _spec(tuple(sorted(kwargs.items()))))
        hash(key)
    except TypeError:
        key = None
    if key is None:
        return _decide(original, replacement, args, kwargs)
    return CLAIM_VERDICTS.get(key, lambda: _decide(original, replacement, args, kwargs))
