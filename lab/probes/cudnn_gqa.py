"""Does torch's cuDNN attention take grouped k / v (fewer heads than q) forward and backward, and what does it save
against what segkit_ex runs now (litgpt's ``repeat_interleave`` of k / v, then cuDNN on as many heads as q, then the
backward's sums over each group)?

Per shape: the max abs difference of y, dq, dk, dv between the two paths (both bf16 on cuDNN; the reference is the
expanded path), and kernel us per call (cold L2, median of 30, every kernel of the call summed) of the forward
(with the two repeats) and of the backward (with the two sums); then each backward's kernels, cuDNN's on the
repeated k / v alone ("bo") and on the grouped ("bg"); then the host time per call of each cuDNN call.

    python lab/probes/cudnn_gqa.py
"""

import torch

from segkit.nvfuser.timing import async_host_us, kernel_breakdown

SHAPES = (("qwen3-0.6b bs4", 4, 2048, 16, 8, 128), ("llama-3-8b bs1", 1, 4096, 32, 8, 128))


def fwd(q, k, v):
    y, lse, _, _, _, _, seed, offset, _ = torch.ops.aten._scaled_dot_product_cudnn_attention(
        q, k, v, None, True, 0.0, True, False, scale=q.shape[-1] ** -0.5)
    return y, lse, seed, offset


def bwd(dy, q, k, v, y, lse, seed, offset):
    return torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        dy, q, k, v, y, lse, seed, offset, None, None, None, q.shape[2], k.shape[2], 0.0, True,
        scale=q.shape[-1] ** -0.5)


def main() -> None:
    print(f"GPU {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print("| shape | max diff y / dq / dk / dv | fwd repeat + cuDNN us | fwd grouped us | "
          "bwd cuDNN + sums us | bwd grouped us |")
    print("|---|---|---|---|---|---|")
    for name, B, T, nh, ng, hs in SHAPES:
        r = nh // ng
        gen = torch.Generator(device="cuda").manual_seed(0)

        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=gen)

        q = randn(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs) in (B, T, nh, hs) memory, as segkit_ex passes q
        k, v = randn(B, ng, T, hs), randn(B, ng, T, hs)
        dy = randn(B, T, nh, hs).transpose(1, 2)

        def expanded_fwd():
            return fwd(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1))

        ke, ve = k.repeat_interleave(r, 1), v.repeat_interleave(r, 1)
        ye, lse_e, s_e, o_e = fwd(q, ke, ve)
        y, lse, s, o = fwd(q, k, v)
        dy_e = dy if dy.stride() == ye.stride() else torch.empty_like(ye).copy_(dy)
        dy_g = dy if dy.stride() == y.stride() else torch.empty_like(y).copy_(dy)

        def expanded_bwd_only():
            return bwd(dy_e, q, ke, ve, ye, lse_e, s_e, o_e)

        def expanded_bwd():
            dq, dke, dve = expanded_bwd_only()
            return dq, dke.unflatten(1, (ng, r)).sum(2), dve.unflatten(1, (ng, r)).sum(2)

        def grouped_bwd():
            return bwd(dy_g, q, k, v, y, lse, s, o)

        want = (ye, *expanded_bwd())
        got = (y, *grouped_bwd())
        shapes_ok = all(a.shape == b.shape for a, b in zip(want, got))
        diffs = " / ".join(f"{(a.float() - b.float()).abs().max().item():.2e}" for a, b in zip(want, got))
        kernels = {label: kernel_breakdown(fn) for label, fn in (
            ("fe", expanded_fwd), ("fg", lambda: fwd(q, k, v)), ("be", expanded_bwd), ("bg", grouped_bwd),
            ("bo", expanded_bwd_only))}
        us = {label: sum(t.us for t in ks) for label, ks in kernels.items()}
        print(f"| {name} (B {B}, T {T}, {nh} q heads, {ng} kv heads; shapes ok {shapes_ok}) | {diffs} | "
              f"{us['fe']:.1f} | {us['fg']:.1f} | {us['be']:.1f} | {us['bg']:.1f} |")
        for label in ("bo", "bg"):
            print(f"    {label}: " + ", ".join(f"{t.name[:40]} {t.us:.1f}" for t in kernels[label]))
        # v as litgpt hands it over: a (B, ng, T, hs) view of the qkv projection's output, rows W apart
        W = (nh + 2 * ng) * hs
        qkv = randn(B, T, W)
        v_view = qkv[..., (nh + ng) * hs:].view(B, T, ng, hs).transpose(1, 2)
        v_view.copy_(v)
        y_s, lse_s, s_s, o_s = fwd(q, k, v_view)
        strided = {label: sum(t.us for t in kernel_breakdown(fn)) for label, fn in (
            ("fwd", lambda: fwd(q, k, v_view)),
            ("bwd", lambda: bwd(dy_g, q, k, v_view, y_s, lse_s, s_s, o_s)))}
        print(f"    grouped with v a strided view of qkv (strides {v_view.stride()}): fwd {strided['fwd']:.1f} us, "
              f"bwd {strided['bwd']:.1f} us")
        host = {label: async_host_us(fn, calls=20) for label, fn in (
            ("fwd on repeated k / v", lambda: fwd(q, ke, ve)), ("fwd grouped", lambda: fwd(q, k, v)),
            ("bwd on repeated k / v", expanded_bwd_only), ("bwd grouped", grouped_bwd))}
        print("    host us per call, 20 issued back to back: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))


if __name__ == "__main__":
    main()
