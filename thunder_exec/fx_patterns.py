"""The norm and RoPE regions of Hugging Face and litgpt models as TorchDynamo records them: each one a plain function
spelled op for op as the library writes it, every literal of the source (dtypes, exponents, dims, slices, eps) a
parameter.

A function is three things at once (thunder_exec.fx_claims): traced by ``torch.fx.symbolic_trace`` it is the
pattern matched in the FX graphs ThunderFX hands to Thunder (a parameter matches a graph node or a literal and
binds it); called with the bound values it computes exactly the matched nodes (the fallback when segkit does not
claim the region); and ``wants`` says which values of those literals make it the library's own function, which
segkit's replacement computes. Names are the library's: ``to_f32`` is ``.to(torch.float32)``, ``lo`` / ``hi`` are
rotate_half's two halves, ``rot`` / ``keep`` a partial rotary's rotated and passed columns.

Spellings covered (transformers 5.3): Llama's RMSNorm (Qwen2/3, Mistral, Phi-3, Granite, ... "Copied from"),
OLMo2's (multiply by the weight, then cast), Gemma's (``1 + weight`` in fp32, ``type_as``); Llama's RoPE on q and
k, OLMo2's (cast back), Phi-3's and GPT-NeoX's partial rotary (the same graph). litgpt 0.5.13: ``RMSNorm.forward``
(with and without ``add_unit_offset``) and ``apply_rope`` on the 4-D q or k of ``CausalSelfAttention`` (its
tables viewed as ``(B, 1, T, n)``); the qkv split and the rotary slice around it stay Thunder's ops, as under
thunder.jit, where litgpt's qkv split + RoPE is claimed as its two apply_rope calls.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch
import torch.fx

from thunder_exec.base import torch_dtype


# --------------------------------------------------------------------------- norms: (x, weight, *literals)
def llama_rms_norm(x, weight, to_f32, p, dim, keepdim, eps, out_dtype):
    h = x.to(to_f32)
    variance = h.pow(p).mean(dim, keepdim=keepdim)
    h = h * torch.rsqrt(variance + eps)
    return weight * h.to(out_dtype)


def olmo2_rms_norm(x, weight, to_f32, p, dim, keepdim, eps, out_dtype):
    h = x.to(to_f32)
    variance = h.pow(p).mean(dim, keepdim=keepdim)
    h = h * torch.rsqrt(variance + eps)
    return (weight * h).to(out_dtype)


def gemma_rms_norm(x, weight, p, dim, keepdim, eps, one):
    h = x.float()
    out = h * torch.rsqrt(h.pow(p).mean(dim, keepdim=keepdim) + eps)
    out = out * (one + weight.float())
    return out.type_as(x)


def litgpt_rms_norm(x, weight, dim, keepdim, eps, out_dtype):
    h = x.float()
    norm_x = torch.mean(h * h, dim=dim, keepdim=keepdim)
    x_normed = h * torch.rsqrt(norm_x + eps)
    return (x_normed * weight.float()).to(dtype=out_dtype)


def litgpt_unit_offset_rms_norm(x, weight, dim, keepdim, eps, one, out_dtype):
    h = x.float()
    norm_x = torch.mean(h * h, dim=dim, keepdim=keepdim)
    x_normed = h * torch.rsqrt(norm_x + eps)
    return (x_normed * (one + weight).float()).to(dtype=out_dtype)


def _litgpt_norm_wants(x, weight) -> dict:
    """litgpt's: the dim is the module's own (its replacement refuses any but the last, with a note)."""
    return {"keepdim": True, "one": 1, "out_dtype": torch_dtype(x.dtype)}


def _norm_wants(x, weight) -> dict:
    return {"to_f32": torch.float32, "p": 2, "dim": -1, "keepdim": True, "out_dtype": torch_dtype(x.dtype),
            "one": 1.0}


# --------------------------------------------------------------------------- RoPE: (q, k, cos, sin, *literals)
def _rotated(x, c, s, lo, hi, cat_dim):
    """``x * cos + rotate_half(x) * sin``, rotate_half as Llama writes it: ``cat((-x[..., h:], x[..., :h]))``."""
    return x * c + torch.cat((-x[..., hi], x[..., lo]), dim=cat_dim) * s


def llama_rope(q, k, cos, sin, unsqueeze_dim, lo, hi, cat_dim):
    c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return _rotated(q, c, s, lo, hi, cat_dim), _rotated(k, c, s, lo, hi, cat_dim)


def olmo2_rope(q, k, cos, sin, unsqueeze_dim, lo, hi, cat_dim, q_dtype, k_dtype):
    c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return _rotated(q, c, s, lo, hi, cat_dim).to(q_dtype), _rotated(k, c, s, lo, hi, cat_dim).to(k_dtype)


def partial_rope(q, k, cos, sin, unsqueeze_dim, rot, keep, lo, hi, cat_dim, out_cat_dim):
    c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    q_rot, q_pass = q[..., rot], q[..., keep]
    k_rot, k_pass = k[..., rot], k[..., keep]
    q_embed = torch.cat([_rotated(q_rot, c, s, lo, hi, cat_dim), q_pass], dim=out_cat_dim)
    k_embed = torch.cat([_rotated(k_rot, c, s, lo, hi, cat_dim), k_pass], dim=out_cat_dim)
    return q_embed, k_embed


# --------------------------------------------------------------------------- litgpt's RoPE: (x, cos, sin, *literals)
def litgpt_rope(x, cos, sin, lo, hi, cat_dim, b, h, t, n, out_dtype):
    rotated = torch.cat((-x[..., hi], x[..., lo]), dim=cat_dim)
    roped = (x * cos.view(b, h, t, n)) + (rotated * sin.view(b, h, t, n))
    return roped.to(dtype=out_dtype)


def _litgpt_rope_wants(x, cos, sin) -> dict | str:
    """litgpt's apply_rope on 4-D x with 3-D tables: ``cos.view(B, 1, T, n)``, x's halves, x's dtype."""
    if len(cos.shape) != 3 or len(x.shape) != 4:
        return f"x is {len(x.shape)}-D and cos {len(cos.shape)}-D where litgpt's attention has 4-D and 3-D"
    b, t, n = cos.shape
    return {**_halves(x.shape[-1]), "b": b, "h": 1, "t": t, "n": n, "out_dtype": torch_dtype(x.dtype)}


def _halves(n: int) -> dict:
    return {"lo": slice(None, n // 2, None), "hi": slice(n // 2, None, None), "cat_dim": -1}


def _tables(q, k, cos, sin) -> dict:
    n = cos.shape[-1]
    return {"q_dtype": torch_dtype(q.dtype), "k_dtype": torch_dtype(k.dtype), "rot": slice(None, n, None),
            "keep": slice(n, None, None), "out_cat_dim": -1}


def _rope_wants(q, k, cos, sin) -> dict | str:
    """Llama's rotate_half on the whole head (one pair of slices for q and k: their widths must agree) and
    OLMo2's casts back to q's and k's dtypes."""
    if q.shape[-1] != k.shape[-1]:
        return f"q's head dim {q.shape[-1]} and k's {k.shape[-1]} differ"
    return {**_tables(q, k, cos, sin), **_halves(q.shape[-1])}


def _partial_rope_wants(q, k, cos, sin) -> dict:
    """Phi-3's / GPT-NeoX's: rotate_half on the first ``cos.shape[-1]`` columns, the rest passed through."""
    return {**_tables(q, k, cos, sin), **_halves(cos.shape[-1])}


@dataclass(frozen=True)
class Pattern:
    """One region spelling: ``fn`` (tensors first, then literals), the reference family whose thunder.jit
    replacement (thunder_exec.recognize) claims it, and the literal values the library's code has."""

    fn: Callable
    kind: str                                  # "norm" (x, weight), "rope" (q, k, cos, sin), "rope_x" (x, cos, sin)
    family: str                                # key of recognize's _HF_NORMS / _HF_ROPES, or "litgpt"
    wants: Callable[..., dict | str]           # tensors -> {literal name: the library's value}, or why not

    @property
    def label(self) -> str:
        return f"ThunderFX region {self.fn.__name__}"

    @property
    def n_tensors(self) -> int:
        return {"norm": 2, "rope": 4, "rope_x": 3}[self.kind]

    @cached_property
    def literal_names(self) -> tuple[str, ...]:
        """``fn``'s parameters after the tensors (computed before tracing: Thunder would interpret inspect)."""
        return tuple(inspect.signature(self.fn).parameters)[self.n_tensors:]

    @cached_property
    def graph(self) -> torch.fx.Graph:
        """The pattern: ``fn`` traced, one placeholder per parameter."""
        return torch.fx.symbolic_trace(self.fn).graph

    @cached_property
    def replacement(self) -> torch.fx.Graph:
        """One call of ``fn`` on the pattern's placeholders (its outputs unpacked as the pattern returns them)."""
        g = torch.fx.Graph()
        args = tuple(g.placeholder(name) for name in inspect.signature(self.fn).parameters)
        call = g.call_function(self.fn, args)
        outputs = len(next(iter(self.graph.find_nodes(op="output"))).args[0]) if self.kind == "rope" else 0
        g.output(tuple(g.call_function(operator.getitem, (call, i)) for i in range(outputs)) if outputs else call)
        return g

    def mismatch(self, tensors, literals) -> str | None:
        """Where the matched literals differ from the library's (None when the region is the library's function)."""
        wants = self.wants(*tensors)
        if isinstance(wants, str):
            return wants
        for name, got in zip(self.literal_names, literals):
            if name in wants and not (type(got) is type(wants[name]) and got == wants[name]):
                return f"{name} is {got!r} where {self.family}'s code has {wants[name]!r}"
        return None


# Most specific first: a region is replaced by the first pattern that matches it.
PATTERNS = (
    Pattern(litgpt_unit_offset_rms_norm, "norm", "litgpt", _litgpt_norm_wants),
    Pattern(litgpt_rms_norm, "norm", "litgpt", _litgpt_norm_wants),
    Pattern(llama_rms_norm, "norm", "llama", _norm_wants),
    Pattern(olmo2_rms_norm, "norm", "olmo2", _norm_wants),
    Pattern(gemma_rms_norm, "norm", "gemma", _norm_wants),
    Pattern(olmo2_rope, "rope", "olmo2", _rope_wants),
    Pattern(partial_rope, "rope", "phi3", _partial_rope_wants),
    Pattern(llama_rope, "rope", "llama", _rope_wants),
    Pattern(litgpt_rope, "rope_x", "litgpt", _litgpt_rope_wants),
)
