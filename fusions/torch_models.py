"""Eager PyTorch versions of the workloads, written the way litgpt / nanoGPT write them.

They are what Thunder traces (fixtures, thunder_exec tests, benchmarks) and the
independent check for the builders' float64 references: the math here is
written from the models' source, not from the builders.
"""

from __future__ import annotations

import torch
from torch import nn


class LitRMSNorm(nn.Module):
    """litgpt's RMSNorm: statistics in fp32, weight applied in fp32, cast back at the end."""

    def __init__(self, size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        norm_x = torch.mean(x * x, dim=-1, keepdim=True)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        return (x_normed * self.weight.float()).to(dtype=dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """litgpt's NeoX-style RoPE: rotate the two halves of the last dim."""
    head_size = x.size(-1)
    x1 = x[..., : head_size // 2]
    x2 = x[..., head_size // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    roped = (x * cos) + (rotated * sin)
    return roped.to(dtype=x.dtype)


def qkv_split_rope(
    qkv: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    n_head: int,
    n_query_groups: int,
    head_size: int,
    rope_n_elem: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """litgpt CausalSelfAttention from the fused qkv projection to roped q, k and v."""
    B, T, _ = qkv.shape
    q_per_kv = n_head // n_query_groups
    total_qkv = q_per_kv + 2
    qkv = qkv.view(B, T, n_query_groups, total_qkv, head_size)
    qkv = qkv.permute(0, 2, 3, 1, 4)  # (B, n_query_groups, total_qkv, T, hs)
    q, k, v = qkv.split((q_per_kv, 1, 1), dim=2)
    if n_query_groups != n_head:
        k = k.expand(B, n_query_groups, q_per_kv, T, head_size)
        v = v.expand(B, n_query_groups, q_per_kv, T, head_size)
    q = q.reshape(B, -1, T, head_size)
    k = k.reshape(B, -1, T, head_size)
    v = v.reshape(B, -1, T, head_size)
    q_roped = apply_rope(q[..., :rope_n_elem], cos, sin)
    k_roped = apply_rope(k[..., :rope_n_elem], cos, sin)
    q = torch.cat((q_roped, q[..., rope_n_elem:]), dim=-1)
    k = torch.cat((k_roped, k[..., rope_n_elem:]), dim=-1)
    return q, k, v


class QKVSplitRope(nn.Module):
    """The qkv split + RoPE region of litgpt's attention block as a module (no parameters)."""

    def __init__(self, n_head: int, n_query_groups: int, head_size: int, rope_n_elem: int) -> None:
        super().__init__()
        self.n_head, self.n_query_groups = n_head, n_query_groups
        self.head_size, self.rope_n_elem = head_size, rope_n_elem

    def forward(self, qkv, cos, sin):
        return qkv_split_rope(qkv, cos, sin, self.n_head, self.n_query_groups, self.head_size, self.rope_n_elem)


def _hf_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float, form: str) -> torch.Tensor:
    """RMSNorm over the last dim as Hugging Face's ``Qwen3RMSNorm`` ("qwen3": the normed value rounded to x's dtype,
    then the weight), ``Gemma3RMSNorm`` ("gemma3": 1 + w in fp32, rounded once) and ``Olmo2RMSNorm`` ("olmo2": the
    weight in fp32, rounded once) write it; statistics in fp32 (float64 for float64 x, so autograd checks are
    exact)."""
    dtype = x.dtype
    h = x.to(torch.promote_types(dtype, torch.float32))
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    if form == "qwen3":
        return w * h.to(dtype)
    if form == "gemma3":
        return (h * (1.0 + w.to(h.dtype))).type_as(x)
    return (w * h).to(dtype)


def _hf_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Hugging Face's ``apply_rotary_pos_emb`` on one of q or k (B, H, T, D); tables (B, T, D) or (T, D)."""
    if cos.ndim == 3:
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    half = x.shape[-1] // 2
    return (x * cos) + (torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin)


def qk_norm_rope(q: torch.Tensor, k: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, cos: torch.Tensor,
                 sin: torch.Tensor, head_dim: int, eps: float = 1e-6, form: str = "qwen3"):
    """Qwen3 / Gemma3 / OLMo2 attention from the q and k projections (B, T, heads * head_dim) to normed, roped q and
    k (B, heads, T, head_dim), in each model's order: Qwen3 norms the (B, T, H, D) view per head, then transposes;
    Gemma3 transposes, then norms per head; OLMo2 norms the whole projection, then splits the heads."""
    shape = (*q.shape[:-1], -1, head_dim)

    def one(x, w):
        if form == "qwen3":
            return _hf_rms_norm(x.view(shape), w, eps, form).transpose(1, 2)
        if form == "gemma3":
            return _hf_rms_norm(x.view(shape).transpose(1, 2), w, eps, form)
        return _hf_rms_norm(x, w, eps, form).view(shape).transpose(1, 2)

    return _hf_rope(one(q, w_q), cos, sin), _hf_rope(one(k, w_k), cos, sin)


def rope_cache(T: int, n_elem: int, device="cpu", base: int = 10000) -> tuple[torch.Tensor, torch.Tensor]:
    """litgpt's build_rope_cache: cos/sin of shape (T, n_elem), fp32."""
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device).float() / n_elem))
    idx_theta = torch.outer(torch.arange(T, device=device).float(), theta).repeat(1, 2)
    return torch.cos(idx_theta), torch.sin(idx_theta)


def fp8_amax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-row (last dim), per-column (leading dims) and global amax of |x| in fp32, as float8 scaling recipes take them."""
    a = x.float().abs()
    return a.amax(dim=-1), a.amax(dim=tuple(range(x.ndim - 1))), a.amax()


def fp8_amaxes(amaxes: tuple[str, ...]):
    """A function of x returning the amaxes of |x| named by ``amaxes`` ("row": last dim, "col": leading dims,
    "all"), in that order: one fp8 scaling case as a user writes it, for the compilers to take."""

    def amaxes_of(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = x.float().abs()
        by_name = {"row": lambda: a.amax(dim=-1), "col": lambda: a.amax(dim=tuple(range(x.ndim - 1))),
                   "all": lambda: a.amax()}
        return tuple(by_name[name]() for name in amaxes)

    return amaxes_of


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                 eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """A pre-norm block's residual add and the next norm, as litgpt's Block (``x = attention_output + x``, then
    ``norm_2(x)``) and Hugging Face's decoder layers write it: (the norm's output, the new residual)."""
    h = x + residual
    return nn.functional.rms_norm(h, (h.shape[-1],), weight, eps), h


def add_layer_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                   eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """add_rms_norm with a layer norm (nanoGPT's and GPT-2's blocks)."""
    h = x + residual
    return nn.functional.layer_norm(h, (h.shape[-1],), weight, bias, eps), h
