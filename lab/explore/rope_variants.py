"""Exploration behind the qkv split + RoPE builders: variants' kernel count and cold-L2 time (CUDA events,
median of 15) against the current builder, correctness checked against its outputs.

    python lab/explore/rope_variants.py Llama-2-13b-hf_bs2,Llama-3-70B_bs2

Logs of the runs on an H200: lab/runs/h200-2026-11-21-tuning/rope*.log.
"""
import sys

import torch
import nvfuser_direct as nvf

import fusions
from fusions import _rope as R
from fusions.qkv_split_rope_fwd import _rope
from fusions.spec import dt
from benchmarks.harness import event_us
from segkit.nvfuser.run import profile_call


def sl(fd, x, shape, dim, lo, hi):
    start = [0] * len(shape)
    end = list(shape)
    start[dim], end[dim] = lo, hi
    return fd.ops.slice(x, start_indices=start, end_indices=end)


def cat_pad(fd, parts, shapes, dim):
    """cat along dim as zero pads + adds (each part padded to the full extent)."""
    n, total = len(shapes[0]), sum(s[dim] for s in shapes)
    acc, off = None, 0
    for t, s in zip(parts, shapes):
        pads = [0] * (2 * n)
        pads[2 * (n - 1 - dim)] = off
        pads[2 * (n - 1 - dim) + 1] = total - off - s[dim]
        off += s[dim]
        t = fd.ops.pad(t, pad_widths=pads, value=0.0)
        acc = t if acc is None else fd.ops.add(acc, t)
    return acc


def cat(fd, parts, shapes, dim, how):
    return fd.ops.cat(parts, dim=dim) if how == "cat" else cat_pad(fd, parts, shapes, dim)


def adjoint(fd, g, shape, cfg, cos, sin, t_dim, rot):
    n, rn, half = len(shape), cfg.rope_n_elem, cfg.rope_n_elem // 2
    gr = sl(fd, g, shape, n - 1, 0, rn) if rn < cfg.head_size else g
    rshape = shape[:-1] + [rn]
    gs = fd.ops.mul(gr, R.table(fd, sin, n, t_dim))
    hshape = rshape[:-1] + [half]
    rot_t = cat(fd, [sl(fd, gs, rshape, n - 1, half, rn), fd.ops.neg(sl(fd, gs, rshape, n - 1, 0, half))],
                [hshape, hshape], n - 1, rot)
    out = fd.ops.add(fd.ops.mul(gr, R.table(fd, cos, n, t_dim)), rot_t)
    if rn == cfg.head_size:
        return out
    return cat(fd, [out, sl(fd, g, shape, n - 1, rn, cfg.head_size)], [rshape, shape[:-1] + [cfg.head_size - rn]], n - 1,
               rot)


def group_sum(fd, g, shape, dim, how):
    Q = shape[dim]
    if how == "reduce":
        return fd.ops.sum(g, dims=[dim], keepdim=True, dtype=dt(fd, "Float"))
    acc = sl(fd, g, shape, dim, 0, 1)
    for i in range(1, Q):
        acc = fd.ops.add(acc, sl(fd, g, shape, dim, i, i + 1))
    return acc


def bwd_variant(layout, how, order="sum_first", heads="cat", rot="cat"):
    def define(fd, cfg):
        B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
        f32, io = dt(fd, "Float"), R.io(fd, cfg)
        grads = [fd.define_tensor(shape=[B, cfg.n_head, T, H], contiguity=[True] * 4, dtype=io) for _ in range(3)]
        cos, sin = R.define_cos_sin(fd, cfg)
        if layout == "btgqh":  # permute first: everything in the output's (B, T, G, Q, H) order
            gs = [fd.ops.reshape(fd.ops.permute(fd.ops.cast(g, dtype=f32), dims=[0, 2, 1, 3]), new_shape=[B, T, G, Q, H])
                  for g in grads]
            shape, hd, t_dim = [B, T, G, Q, H], 3, 1
        else:
            gs = [fd.ops.reshape(fd.ops.cast(g, dtype=f32), new_shape=[B, G, Q, T, H]) for g in grads]
            shape, hd, t_dim = [B, G, Q, T, H], 2, 3
        dq, dk, dv = gs
        one = list(shape)
        one[hd] = 1
        if order == "rope_first":
            dk = adjoint(fd, dk, shape, cfg, cos, sin, t_dim, rot)
        if Q > 1:
            dk, dv = (group_sum(fd, g, shape, hd, how) for g in (dk, dv))
        dq = adjoint(fd, dq, shape, cfg, cos, sin, t_dim, rot)
        if order != "rope_first":
            dk = adjoint(fd, dk, one, cfg, cos, sin, t_dim, rot)
        d = cat(fd, [dq, dk, dv], [shape, one, one], hd, heads)
        if layout != "btgqh":
            d = fd.ops.permute(d, dims=[0, 3, 1, 2, 4])
        fd.add_output(fd.ops.cast(fd.ops.reshape(d, new_shape=[B, T, cfg.qkv_width]), dtype=io))
    return define


def fwd_variant(layout):
    def define(fd, cfg):
        B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
        qkv = fd.define_tensor(shape=[B, T, cfg.qkv_width], contiguity=[True] * 3, dtype=R.io(fd, cfg))
        cos, sin = R.define_cos_sin(fd, cfg)
        x = fd.ops.reshape(qkv, new_shape=[B, T, G, Q + 2, H])
        if layout == "permute_first":
            x = fd.ops.permute(x, dims=[0, 2, 3, 1, 4])
            shape, hd, t_dim = [B, G, Q + 2, T, H], 2, 3
        else:
            shape, hd, t_dim = [B, T, G, Q + 2, H], 3, 1
        qk_shape = list(shape)
        qk_shape[hd] = Q + 1
        qk = _rope(fd, sl(fd, x, shape, hd, 0, Q + 1), cfg, qk_shape, t_dim, cos, sin)
        q, k, v = sl(fd, qk, qk_shape, hd, 0, Q), sl(fd, qk, qk_shape, hd, Q, Q + 1), sl(fd, x, shape, hd, Q + 1, Q + 2)
        if layout != "permute_first":
            q, k, v = (fd.ops.permute(t, dims=[0, 2, 3, 1, 4]) for t in (q, k, v))
        q = fd.ops.reshape(q, new_shape=[B, G * Q, T, H])
        if Q > 1:
            k, v = (fd.ops.reshape(fd.ops.expand(t, shape=[B, G, Q, T, H]), new_shape=[B, G * Q, T, H]) for t in (k, v))
        else:
            k, v = (fd.ops.squeeze(t, dims=[2]) for t in (k, v))
        fd.add_output(q)
        fd.add_output(k)
        fd.add_output(v)
    return define


def try_variant(tag, define, cfg, inputs, ref):
    try:
        with nvf.FusionDefinition() as fd:
            define(fd, cfg)
        out = fd.execute(inputs)
        _, kernels = profile_call(lambda: fd.execute(inputs))
        ok = all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2) and a.shape == b.shape for a, b in zip(out, ref))
        us = event_us(lambda: fd.execute(inputs))
        print(f"RES {cfg.name:22s} {tag:24s} {us:8.1f} us  kernels={len(kernels)} "
              f"[{' '.join(k.scheduler for k in kernels)}] ok={ok}", flush=True)
    except Exception as e:
        print(f"FAIL {cfg.name} {tag}: {str(e).splitlines()[0][:300] if str(e) else repr(e)}", flush=True)


# rope.log: both forward layouts, backward layout x GQA sum (reduction or unrolled slice adds).
# rope2.log / rope3.log: (rotation cat or pad+add, GQA sum before or after the RoPE adjoint, heads joined by
# cat or pad+add); rope3.log ran only the last one, the builder before "current" cast ahead of the cat.
BWD_VARIANTS = [("cat", "rope_first", "cat"), ("pad", "rope_first", "pad"), ("pad", "sum_first", "pad"),
                ("pad", "sum_first", "cat"), ("cat", "sum_first", "pad"), ("cat", "sum_first", "cat")]
for shape in sys.argv[1].split(","):
    for direction in ("fwd", "bwd"):
        spec = fusions.get(f"qkv_split_rope_{direction}")
        cfg = spec.config(shape, torch.bfloat16)
        inputs = list(spec.make_inputs(cfg, device="cuda").values())
        with nvf.FusionDefinition() as fd0:
            spec.define(fd0, cfg)
        ref = fd0.execute(inputs)
        try_variant("current", spec.define, cfg, inputs, ref)
        if direction == "fwd":
            for layout in ("permute_first", "permute_last"):
                try_variant("qk_" + layout, fwd_variant(layout), cfg, inputs, ref)
            continue
        for layout in ("bgqth", "btgqh"):
            for how in ("reduce", "slices") if cfg.q_per_kv > 1 else ("reduce",):
                try_variant(f"{layout}_{how}", bwd_variant(layout, how), cfg, inputs, ref)
        for rot, order, heads in BWD_VARIANTS:
            if order == "rope_first" and cfg.q_per_kv == 1:
                continue
            try_variant(f"rot={rot} {order} heads={heads}", bwd_variant("bgqth", "reduce", order, heads, rot), cfg,
                        inputs, ref)
