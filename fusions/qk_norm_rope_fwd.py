"""QK-norm + RoPE forward, one fusion for q and k: RMSNorm of each projection, the head split's transpose, NeoX RoPE
over the whole head, and the rstd the backward needs.

From q (B, T, n_head, head_dim) and k (B, T, n_kv_heads, head_dim) (the projections viewed as the models view them),
their norm weights and cos / sin: q_out (B, n_head, T, head_dim), k_out (B, n_kv_heads, T, head_dim) in q's dtype,
rstd_q and rstd_k in fp32. Statistics, weight and rotation in fp32, rounded once at the output (eager rounds on the
way: the norm's output to q's dtype, Qwen3's normed value before its weight, and each RoPE product where the tables
are 16-bit), so the values are within bf16 rounding of eager's, not eager's bits.

Covered, as transformers writes them (fusions.torch_models.qk_norm_rope; the CPU tests check it against the models'
own modules):

* Qwen3: RMSNorm per head over head_dim (weight of head_dim) on the (B, T, H, D) view, then the transpose;
* Gemma3: the same norm after the transpose (the same values), its weight applied as 1 + w (``weight_offset=1``);
* OLMo2: RMSNorm over the whole q / k projection (weight of heads * head_dim) before the head split (``norm="width"``).

Not covered: partial rotary (all three rotate the whole head) and litgpt's interleaved RoPE.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions._qk_norm_rope as Q
from fusions._rope import rope_pairs
from fusions.configs import QKNormRopeConfig, qk_norm_rope_configs
from fusions.qk_norm_rope_halves import define_fwd
from fusions.spec import FusionSpec, dt


def define(fd, cfg: QKNormRopeConfig) -> None:
    xs, ws, cos, sin = Q.define_fwd_inputs(fd, cfg)
    done = [body(fd, x, w, cos, sin, cfg, p) for x, w, p in zip(xs, ws, Q.PARTS)]
    for out in [y for y, _ in done] + [rstd for _, rstd in done]:
        fd.add_output(out)


def body(fd, x, w, cos, sin, cfg: QKNormRopeConfig, part: str) -> tuple:
    """(roped (B, H, T, D) in q's dtype, rstd) of one of q or k (B, T, H, D)."""
    f32 = dt(fd, "Float")
    xf = fd.ops.cast(x, dtype=f32)
    size = cfg.head_dim if cfg.norm == "head" else cfg.heads(part) * cfg.head_dim
    ms = fd.ops.div(fd.ops.sum(fd.ops.mul(xf, xf), dims=Q.norm_dims(cfg), dtype=f32), float(size))
    rstd = fd.ops.rsqrt(fd.ops.add(ms, cfg.eps))
    normed = fd.ops.mul(fd.ops.mul(xf, Q.stat_broadcast(fd, rstd, cfg)), Q.weight_broadcast(fd, w, cfg, part))
    y = Q.rope(fd, Q.to_heads(fd, normed), cos, sin, cfg, part)
    return fd.ops.cast(y, dtype=Q.io(fd, cfg)), rstd


def inputs(cfg: QKNormRopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {**Q.make_proj_and_weights(cfg, gen), **Q.make_tables(cfg, device)}


def reference(inp: dict, cfg: QKNormRopeConfig) -> tuple:
    cos, sin = Q.tables64(inp)
    outs, stats = [], []
    for p in Q.PARTS:
        rstd = Q.exact_rstd(inp[p], cfg)
        normed = N.f64(inp[p]) * Q.stat_view(rstd, cfg) * Q.applied_weight(inp[f"w_{p}"], cfg, p)
        outs.append(rope_pairs(normed.transpose(1, 2), cos, sin))
        stats.append(rstd)
    return (*outs, *stats)


def bytes_floor(cfg: QKNormRopeConfig) -> int:
    """Read q, k, their weights and the tables; write roped q and k and the fp32 rstd of each."""
    return 2 * Q.elements(cfg) * cfg.dtype.itemsize + Q.bytes_weights(cfg) + Q.bytes_tables(cfg) + 4 * Q.stats(cfg)


SPEC = FusionSpec("qk_norm_rope_fwd", qk_norm_rope_configs(), define, inputs, reference,
                  ("q_out", "k_out", "rstd_q", "rstd_k"), __doc__, bytes_floor=bytes_floor,
                  formulations={"sliced_inputs": define_fwd})
