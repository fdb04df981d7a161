"""QK-norm + RoPE backward, one fusion for q and k (fusions/qk_norm_rope_fwd.py's forms: Qwen3, Gemma3, OLMo2).

From dq_out (B, n_head, T, head_dim), dk_out (B, n_kv_heads, T, head_dim), the saved q and k (B, T, heads, head_dim),
their rstd, the norm weights and cos / sin (constants): dq, dk (w.r.t. the projections, as (B, T, heads, head_dim))
and dw_q, dw_k. Per part, in fp32:

  dn   = dy cos + cat(s2, -s1), s = dy sin        (RoPE's adjoint), transposed back to (B, T, H, D)
  xhat = x rstd,  g = dn (weight_offset + w)
  dx   = rstd (g - xhat mean(g xhat))              (mean over the norm's dims: head_dim, or heads x head_dim)
  dw   = sum over every other dim of dn xhat
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions._qk_norm_rope as Q
from fusions.configs import QKNormRopeConfig, qk_norm_rope_configs
from fusions.qk_norm_rope_halves import define_bwd
from fusions.rope_bwd import reference as rope_adjoint_reference
from fusions.spec import FusionSpec, dt, nv_dtype, randn


def define(fd, cfg: QKNormRopeConfig) -> None:
    dys, xs, rstds, ws, cos, sin = Q.define_bwd_inputs(fd, cfg)
    done = [body(fd, *args, cos, sin, cfg, p) for *args, p in zip(dys, xs, rstds, ws, Q.PARTS)]
    for out in [dx for dx, _ in done] + [dw for _, dw in done]:
        fd.add_output(out)


def body(fd, dy, x, rstd, w, cos, sin, cfg: QKNormRopeConfig, part: str) -> tuple:
    """(dx (B, T, H, D) in q's dtype, dw in the weight's dtype) of one of q or k."""
    f32 = dt(fd, "Float")
    dn = Q.to_heads(fd, Q.rope_adjoint(fd, fd.ops.cast(dy, dtype=f32), cos, sin, cfg, part))
    rstd_b = Q.stat_broadcast(fd, rstd, cfg)
    xhat = fd.ops.mul(fd.ops.cast(x, dtype=f32), rstd_b)
    g = fd.ops.mul(dn, Q.weight_broadcast(fd, w, cfg, part))
    dims = Q.norm_dims(cfg)
    size = cfg.head_dim if cfg.norm == "head" else cfg.heads(part) * cfg.head_dim
    mean = fd.ops.mul(fd.ops.sum(fd.ops.mul(g, xhat), dims=dims, dtype=f32), 1.0 / size)
    dx = fd.ops.mul(fd.ops.sub(g, fd.ops.mul(xhat, Q.stat_broadcast(fd, mean, cfg))), rstd_b)
    dw = fd.ops.sum(fd.ops.mul(dn, xhat), dims=[0, 1, 2] if cfg.norm == "head" else [0, 1], dtype=f32)
    if cfg.norm == "width":
        dw = fd.ops.reshape(dw, new_shape=[cfg.weight_size(part)])
    return fd.ops.cast(dx, dtype=Q.io(fd, cfg)), fd.ops.cast(dw, dtype=dt(fd, nv_dtype(cfg.weight_dtype).name))


def inputs(cfg: QKNormRopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    xw = Q.make_proj_and_weights(cfg, gen)
    grads = {f"d{p}_out": randn(Q.heads_shape(cfg, p), gen, cfg.dtype) for p in Q.PARTS}
    saved = {p: xw[p] for p in Q.PARTS}
    rstds = {f"rstd_{p}": Q.exact_rstd(xw[p], cfg).float() for p in Q.PARTS}
    return {**grads, **saved, **rstds, **{f"w_{p}": xw[f"w_{p}"] for p in Q.PARTS}, **Q.make_tables(cfg, device)}


def reference(inp: dict, cfg: QKNormRopeConfig) -> tuple:
    """float64 from the saved rstd given (as the fusion reads it)."""
    dxs, dws = [], []
    for p in Q.PARTS:
        dn = rope_adjoint_reference({"dy": inp[f"d{p}_out"], "cos": inp["cos"], "sin": inp["sin"]}, cfg)[0]
        dn = dn.transpose(1, 2)
        rstd = Q.stat_view(N.f64(inp[f"rstd_{p}"]), cfg)
        xhat = N.f64(inp[p]) * rstd
        g = dn * Q.applied_weight(inp[f"w_{p}"], cfg, p)
        dims = tuple(Q.norm_dims(cfg))
        dxs.append(rstd * (g - xhat * (g * xhat).mean(dim=dims, keepdim=True)))
        dws.append((dn * xhat).sum(dim=(0, 1, 2) if cfg.norm == "head" else (0, 1)).reshape(-1))
    return (*dxs, *dws)


def bytes_floor(cfg: QKNormRopeConfig) -> int:
    """Read dq_out, dk_out, the saved q and k, their fp32 rstd, the weights and the tables; write dq, dk, dw_q, dw_k."""
    return 3 * Q.elements(cfg) * cfg.dtype.itemsize + 4 * Q.stats(cfg) + 2 * Q.bytes_weights(cfg) + Q.bytes_tables(cfg)


SPEC = FusionSpec("qk_norm_rope_bwd", qk_norm_rope_configs(), define, inputs, reference,
                  ("dq", "dk", "dw_q", "dw_k"), __doc__, bytes_floor=bytes_floor,
                  formulations={"sliced_inputs": define_bwd})
