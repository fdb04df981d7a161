"""The forward region between the qkv projection and attention in litgpt 0.5.13 (split all-q / all-k / all-v, RoPE on
q and k, k / v repeated for grouped-query attention): kernel time of torch.compile, stock Thunder, Thunder +
segkit_ex (auto), and hand-written nvFuser fusions of the same region in several formulations, side by side in one
process, each checked against float64 eager before it is timed (cold L2, median of 20 calls, torch.profiler).

Why: in the Llama-3-8B step this section is segkit_ex's largest forward gap to Inductor (63.4 against 49.7 us,
lab/runs/sections-h200.md): q's RoPE kernel runs at ~2.7 TB/s, and k's RoPE fused with its repeat at ~1.5 TB/s.

Formulations (``rot`` is how the half-rotation is written, ``k`` where k's repeat runs):
    cat       y = x cos + cat(-x2, x1) sin                      (fusions/rope_fwd.py, as segkit ships it)
    halves    y = cat(x1 c1 - x2 s1, x2 c2 + x1 s2)
    pairs     as cat, with the last dim viewed (2, n/2): the rotation is a cat along the axis of 2
    gather    y = x cos + take_along_axis(x, (i + n/2) mod n) * sign * sin    (not in FORMS: nvFuser 0.2.36
              fails to compile it, an internal assert at fusion_kernel_runtime.cpp:476, H200 2026-11-29)
  and for k: fused (roped, then expanded in the same fusion), or seg (a segment_set between the RoPE and the expand:
  k roped once, then a copy kernel as Inductor's).

With --spec it times segkit's qkv_split_rope_fwd builder (k roped, then repeated by its own kernel) against its
"k_fused" formulation (one kernel ropes k and writes its copies) and torch.compile (the benchmarks' setup) on the
grouped-query configs of the old interleaved qkv layout.

Usage (GPU host, repo root): python lab/probes/rope_fwd_region.py [--cpu | --spec] [CASE ...]
    CASE: llama3-8b (B=1, T=4096) and llama3.2-1b (B=4, T=2048) by default; --cpu checks every formulation on the
    reference interpreter at a tiny shape and exits. --q times q's RoPE kernel alone (llama3-8b by default), with
    fp32 tables and with them split into three exact bf16 parts (``split3``, the split kernel timed apart).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from segkit import FusionDefinition  # noqa: E402
from segkit.compare import diff  # noqa: E402
from segkit.nvfuser.run import run_on  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    B: int
    T: int
    nh: int
    G: int
    hs: int

    @property
    def Q(self) -> int:
        return self.nh // self.G

    @property
    def width(self) -> int:
        return (self.nh + 2 * self.G) * self.hs


CASES = {"llama3-8b": Case("llama3-8b", 1, 4096, 32, 8, 128), "llama3.2-1b": Case("llama3.2-1b", 4, 2048, 32, 8, 64),
         "tiny": Case("tiny", 2, 8, 4, 2, 16)}


def litgpt_prep(c: Case):
    """litgpt 0.5.13's CausalSelfAttention.forward from the qkv projection's output to the attention's q, k, v."""
    from litgpt.model import apply_rope

    def prep(qkv, cos, sin):
        q, k, v = qkv.split((c.nh * c.hs, c.G * c.hs, c.G * c.hs), dim=-1)
        q = q.view(c.B, c.T, c.nh, c.hs).transpose(1, 2)
        k = k.view(c.B, c.T, c.G, c.hs).transpose(1, 2)
        v = v.view(c.B, c.T, c.G, c.hs).transpose(1, 2)
        q = torch.cat((apply_rope(q[..., : c.hs], cos, sin), q[..., c.hs:]), dim=-1)
        k = torch.cat((apply_rope(k[..., : c.hs], cos, sin), k[..., c.hs:]), dim=-1)
        return q, k.repeat_interleave(c.Q, dim=1), v.repeat_interleave(c.Q, dim=1)

    return prep


def define(fd, c: Case, rot: str, k_mode: str, q_bthd: bool = False) -> None:
    from segkit.dtypes import DataType

    F, BF = DataType.Float, DataType.BFloat16
    B, T, nh, G, hs, Q = c.B, c.T, c.nh, c.G, c.hs, c.Q
    h = hs // 2
    qkv = fd.define_tensor(shape=[B, T, c.width], contiguity=[True] * 3, dtype=BF)
    cos = fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=F)
    sin = fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=F)

    def tab(t, lo=0, hi=hs):
        if (lo, hi) != (0, hs):
            t = fd.ops.slice(t, start_indices=[0, lo], end_indices=[T, hi])
        return fd.ops.broadcast(t, is_broadcast_dim=[True, True, False, False])

    def heads(lo: int, n: int):
        t = fd.ops.slice(qkv, start_indices=[0, 0, lo * hs], end_indices=[B, T, (lo + n) * hs])
        return fd.ops.permute(fd.ops.reshape(t, new_shape=[B, T, n, hs]), dims=[0, 2, 1, 3])

    def half(t, n, lo, hi):
        return fd.ops.slice(t, start_indices=[0, 0, 0, lo], end_indices=[B, n, T, hi])

    def rope(x, n):
        xf = fd.ops.cast(x, dtype=F)
        if rot == "cat":
            r = fd.ops.cat([fd.ops.neg(half(xf, n, h, hs)), half(xf, n, 0, h)], dim=3)
            y = fd.ops.add(fd.ops.mul(xf, tab(cos)), fd.ops.mul(r, tab(sin)))
        elif rot == "pairs":  # the halves as an axis of 2: the cat resizes that axis, the last stays whole
            p5 = [B, n, T, 2, h]
            x5 = fd.ops.reshape(xf, new_shape=p5)

            def part(lo):
                return fd.ops.slice(x5, start_indices=[0, 0, 0, lo, 0], end_indices=[B, n, T, lo + 1, h])

            r = fd.ops.cat([fd.ops.neg(part(1)), part(0)], dim=3)

            def tab5(t):
                return fd.ops.broadcast(fd.ops.reshape(t, new_shape=[T, 2, h]), is_broadcast_dim=[True, True, False, False, False])

            y = fd.ops.reshape(fd.ops.add(fd.ops.mul(x5, tab5(cos)), fd.ops.mul(r, tab5(sin))), new_shape=[B, n, T, hs])
        elif rot == "halves":
            x1, x2 = fd.ops.cast(half(x, n, 0, h), dtype=F), fd.ops.cast(half(x, n, h, hs), dtype=F)
            lo = fd.ops.sub(fd.ops.mul(x1, tab(cos, 0, h)), fd.ops.mul(x2, tab(sin, 0, h)))
            hi = fd.ops.add(fd.ops.mul(x2, tab(cos, h, hs)), fd.ops.mul(x1, tab(sin, h, hs)))
            y = fd.ops.cat([lo, hi], dim=3)
        elif rot == "gather":
            i = fd.ops.iota(hs, 0, 1, dtype=DataType.Int)
            idx = fd.ops.fmod(fd.ops.add(i, h), hs)
            idx = fd.ops.expand(fd.ops.broadcast(idx, is_broadcast_dim=[True, True, True, False]), shape=[B, n, T, hs])
            sign = fd.ops.where(fd.ops.lt(i, h), -1.0, 1.0)
            sign = fd.ops.broadcast(sign, is_broadcast_dim=[True, True, True, False])
            r = fd.ops.mul(fd.ops.cast(fd.ops.take_along_axis(x, idx, 3), dtype=F), sign)
            y = fd.ops.add(fd.ops.mul(xf, tab(cos)), fd.ops.mul(r, tab(sin)))
        else:
            raise ValueError(rot)
        return fd.ops.cast(y, dtype=BF)

    def repeat(t):
        t = fd.ops.broadcast(t, is_broadcast_dim=[False, False, True, False, False])
        return fd.ops.reshape(fd.ops.expand(t, shape=[B, G, Q, T, hs]), new_shape=[B, nh, T, hs])

    q = rope(heads(0, nh), nh)
    fd.add_output(fd.ops.stride_order(q, stride_order=[3, 1, 2, 0]) if q_bthd else q)
    k = rope(heads(nh, G), G)
    if k_mode == "seg":
        k = fd.ops.segment_set(k)
    fd.add_output(repeat(k))
    fd.add_output(repeat(heads(nh + G, G)))


FORMS = [(rot, k) for rot in ("cat", "pairs", "cat_bthd", "halves") for k in ("fused", "seg")]


def build(c: Case, rot: str, k_mode: str):
    """``cat_bthd``: the cat formulation with q written in (B, T, H, hs) memory order, as the qkv projection lays
    it out (and as Inductor writes it)."""
    with FusionDefinition() as fd:
        define(fd, c, rot.removesuffix("_bthd"), k_mode, q_bthd=rot.endswith("_bthd"))
    return fd


def make_inputs(c: Case, device: str):
    from fusions._rope import cos_sin

    g = torch.Generator(device="cpu").manual_seed(0)
    qkv = torch.randn(c.B, c.T, c.width, generator=g).to(device=device, dtype=torch.bfloat16)
    cos, sin = cos_sin(c.T, c.hs, torch.float32, device)
    return qkv, cos, sin


def reference(c: Case, qkv, cos, sin):
    return litgpt_prep(c)(qkv.double(), cos.double()[None], sin.double()[None])


def check_cpu() -> None:
    c = CASES["tiny"]
    qkv, cos, sin = make_inputs(c, "cpu")
    ref = reference(c, qkv, cos, sin)
    for rot, k in FORMS:
        got = run_on(build(c, rot, k), [qkv, cos, sin], "reference")
        print(rot, k, [str(diff(i, r, o)) for i, (r, o) in enumerate(zip(ref, got))])
    parts = [*split3(cos), *split3(sin)]
    assert [torch.equal(a, b) for a, b in zip(run_on(split_fusion(c.T, c.hs), [cos, sin], "reference"), parts)] \
        == [True] * 6
    for rot in (True, False):
        fp32 = run_on(q_only(c, rot, True), [qkv, cos, sin], "reference")[0]
        bf16x3 = run_on(q_only(c, rot, True, parts=True), [qkv, *parts], "reference")[0]
        print(f"q rot={rot}: bf16x3 tables give the fp32 tables' bits: {torch.equal(fp32, bf16x3)}")


def timed_if_right(case: str, label: str, fn, refs) -> list | None:
    """fn's kernels (cold L2, median of 20) once its outputs match ``refs``; None after a WRONG line."""
    from segkit.nvfuser.timing import flush_l2, kernel_breakdown, nvfuser_scheduler

    got = fn()
    bad = [str(d) for d in (diff(i, r, o) for i, (r, o) in enumerate(zip(refs, got))) if not d.ok]
    if bad:
        print(f"WRONG {case} {label}: {bad}", flush=True)
        return None
    ks = kernel_breakdown(fn, 20, flush=flush_l2)
    print(f"RES {case} {label} kernels={len(ks)} {sum(k.us for k in ks):.1f} us "
          f"[{', '.join(f'{nvfuser_scheduler(k.name) or k.name[:48]} {k.us:.1f}' for k in ks)}]", flush=True)
    return ks


SPEC_CONFIGS = ["Llama-3-8B_bs1", "Llama-3-70B_bs2", "Mistral-7B_bs2", "Llama-2-70b-hf_bs2"]


def spec_mode() -> None:
    import fusions
    from benchmarks.executors import rope
    from segkit.nvfuser.run import compiled
    from segkit.tuning import TuningTable

    spec = fusions.get("qkv_split_rope_fwd")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    rows = []
    for config in [a for a in sys.argv[1:] if not a.startswith("-")] or SPEC_CONFIGS:
        torch.cuda.empty_cache()
        cfg = spec.config(config)
        inputs = spec.make_inputs(cfg, device="cuda")
        args = list(inputs.values())
        refs = spec.reference(inputs, cfg)
        runs = [(f, (lambda p=compiled(spec.build(cfg, table=TuningTable([]), formulation=f)), a=args: p.execute(a)))
                for f in (None, "k_fused")]
        runs.append(("torch.compile", rope(cfg, "torch.compile", inputs, "forward").fn))
        for label, fn in runs:
            ks = timed_if_right(config, label or "builder", fn, refs)
            if ks is not None:
                us = sum(k.us for k in ks)
                rows.append((config, label or "builder", len(ks), us, spec.bytes_floor(cfg) / us / 1e6))
        del inputs, args, refs, runs
    print("\nconfig               executor        kernels   kernel us   TB/s (bytes floor)")
    for config, label, k, us, tbs in rows:
        print(f"{config:20s} {label:15s} {k:7d} {us:11.1f} {tbs:8.2f}")


def split3(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """An fp32 table as three bf16 parts whose fp32 sum (hi + mid) + lo is the table exactly (8 mantissa bits
    each; checked by the caller): a fusion reading only 16-bit inputs, the RoPE kernel may vectorize 8 wide where
    fp32 tables hold nvFuser 0.2.36 at 4 (one factor per kernel, sized by the widest input)."""
    hi = t.bfloat16()
    r1 = t - hi.float()
    mid = r1.bfloat16()
    return hi, mid, (r1 - mid.float()).bfloat16()


def split_fusion(T: int, hs: int):
    """The split as its own fusion (cos and sin in, six bf16 parts out): the kernel a step would run once per
    table pair before the RoPEs read the parts."""
    from segkit.dtypes import DataType

    F, BF = DataType.Float, DataType.BFloat16
    with FusionDefinition() as fd:
        for _ in range(2):
            t = fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=F)
            hi = fd.ops.cast(t, dtype=BF)
            r1 = fd.ops.sub(t, fd.ops.cast(hi, dtype=F))
            mid = fd.ops.cast(r1, dtype=BF)
            for out in (hi, mid, fd.ops.cast(fd.ops.sub(r1, fd.ops.cast(mid, dtype=F)), dtype=BF)):
                fd.add_output(out)
    return fd


def q_only(c: Case, rot: bool, strided: bool, parts: bool = False):
    """q's RoPE alone (``rot``) or without the rotation (y = x cos + x sin, the pointwise ceiling), reading q as a
    view of the qkv projection (``strided``) or from a contiguous (B, nh, T, hs) tensor; with ``parts`` the tables
    come as ``split3``'s bf16 parts (cos hi, mid, lo, then sin's) and are summed back in fp32 in the kernel."""
    from segkit.dtypes import DataType

    F, BF = DataType.Float, DataType.BFloat16
    B, T, nh, hs, h = c.B, c.T, c.nh, c.hs, c.hs // 2
    with FusionDefinition() as fd:
        if strided:
            qkv = fd.define_tensor(shape=[B, T, c.width], contiguity=[True] * 3, dtype=BF)
            x = fd.ops.slice(qkv, start_indices=[0, 0, 0], end_indices=[B, T, nh * hs])
            x = fd.ops.permute(fd.ops.reshape(x, new_shape=[B, T, nh, hs]), dims=[0, 2, 1, 3])
        else:
            x = fd.define_tensor(shape=[B, nh, T, hs], contiguity=[True] * 4, dtype=BF)
        if parts:
            p = [fd.ops.cast(fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=BF), dtype=F)
                 for _ in range(6)]
            cos, sin = (fd.ops.add(fd.ops.add(a, b), c3) for a, b, c3 in (p[:3], p[3:]))
        else:
            cos = fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=F)
            sin = fd.define_tensor(shape=[T, hs], contiguity=[True] * 2, dtype=F)
        xf = fd.ops.cast(x, dtype=F)
        cb, sb = (fd.ops.broadcast(t, is_broadcast_dim=[True, True, False, False]) for t in (cos, sin))
        if rot:
            def half(lo, hi):
                return fd.ops.slice(xf, start_indices=[0, 0, 0, lo], end_indices=[B, nh, T, hi])
            r = fd.ops.cat([fd.ops.neg(half(h, hs)), half(0, h)], dim=3)
        else:
            r = xf
        fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.mul(xf, cb), fd.ops.mul(r, sb)), dtype=BF))
    return fd


def q_mode() -> None:
    """q's RoPE kernel alone: with and without the rotation, strided and contiguous input (NVFUSER_DUMP to see
    the schedules)."""
    from segkit.nvfuser.run import compiled
    from segkit.nvfuser.timing import flush_l2, kernel_breakdown, nvfuser_scheduler

    names = [a for a in sys.argv[1:] if not a.startswith("-")] or ["llama3-8b"]
    for name in names:
        c = CASES[name]
        qkv, cos, sin = make_inputs(c, "cuda")
        parts = [*split3(cos), *split3(sin)]
        assert all(bool(((a.float() + b.float()) + d.float() == t).all())
                   for t, (a, b, d) in ((cos, parts[:3]), (sin, parts[3:]))), "split3 is not exact here"
        q = qkv[..., : c.nh * c.hs].view(c.B, c.T, c.nh, c.hs).transpose(1, 2)
        want = (q.double() * cos.double() + torch.cat((-q[..., c.hs // 2:], q[..., : c.hs // 2]), -1).double()
                * sin.double()).float().bfloat16()
        split = compiled(split_fusion(c.T, c.hs))
        got = split.execute([cos, sin])
        assert all(torch.equal(g, p) for g, p in zip(got, parts)), "the split kernel disagrees with split3"
        ks = kernel_breakdown(lambda: split.execute([cos, sin]), 20, flush=flush_l2)
        print(f"RES {name} split kernels={len(ks)} {sum(k.us for k in ks):.1f} us", flush=True)
        for rot in (True, False):
            for strided in (True, False):
                x = qkv if strided else q.contiguous()
                fp32 = compiled(q_only(c, rot, strided)).execute([x, cos, sin])[0]
                for tables in ("fp32", "bf16x3"):
                    prog = compiled(q_only(c, rot, strided, parts=tables == "bf16x3"))
                    args = [x, cos, sin] if tables == "fp32" else [x, *parts]
                    fn = (lambda p=prog, a=args: p.execute(a))
                    y = fn()[0]
                    same = torch.equal(y, fp32)  # the parts must give the fp32 tables' bits
                    right = "" if not rot else f" max |y - float64| {(y.float() - want.float()).abs().max().item():.3g}"
                    ks = kernel_breakdown(fn, 20, flush=flush_l2)
                    us = sum(k.us for k in ks)
                    bits = "same" if same else "DIFFER"
                    print(f"RES {name} q rot={rot} strided={strided} tables={tables} bits={bits}{right}"
                          f" kernels={len(ks)} {us:.1f} us ({4 * q.numel() / us / 1e6:.2f} TB/s) "
                          f"[{', '.join(nvfuser_scheduler(k.name) or k.name for k in ks)}]", flush=True)


def main() -> None:
    if "--q" in sys.argv:
        q_mode()
        return
    if "--cpu" in sys.argv:
        check_cpu()
        return
    if "--spec" in sys.argv:
        spec_mode()
        return
    import thunder
    import thunder_exec
    from segkit.nvfuser.run import compiled

    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, thunder {thunder.__version__}", flush=True)
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or ["llama3-8b", "llama3.2-1b"]
    rows = []
    for name in names:
        c = CASES[name]
        qkv, cos, sin = make_inputs(c, "cuda")
        ref = reference(c, qkv, cos, sin)
        nbytes = 2 * (c.B * c.T * c.width + 2 * c.B * c.T * c.nh * c.hs + c.B * c.T * c.nh * c.hs)
        prep = litgpt_prep(c)
        leaf = qkv.clone().requires_grad_(True)
        thunder_exec.install()
        stock = [ex for ex in thunder.get_default_executors() if ex.name != "cudnn"]
        ours = [ex for ex in thunder_exec.executors() if ex.name != "cudnn"]
        runs = [("torch.compile", (lambda f=torch.compile(prep): f(leaf, cos[None], sin[None]))),
                ("thunder", (lambda f=thunder.jit(prep, executors=stock): f(leaf, cos[None], sin[None]))),
                ("thunder+segkit_ex", (lambda f=thunder.jit(prep, executors=ours): f(leaf, cos[None], sin[None])))]
        for rot, k in FORMS:
            try:
                prog = compiled(build(c, rot, k))
            except Exception as e:  # noqa: BLE001  (a probe reports every formulation it can)
                print(f"FAIL {name} {rot}/{k}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
                continue
            runs.append((f"nvfuser {rot}/{k}", (lambda p=prog: p.execute([qkv, cos, sin]))))
        for label, fn in runs:
            try:
                ks = timed_if_right(name, label, fn, ref)
            except Exception as e:  # noqa: BLE001
                print(f"FAIL {name} {label}: {type(e).__name__}: {str(e).strip().splitlines()[:2]}", flush=True)
                continue
            if ks is not None:
                us = sum(k.us for k in ks)
                rows.append((name, label, len(ks), us, nbytes / us / 1e6))
    print("\ncase         executor                  kernels   kernel us   TB/s (floor bytes)")
    for name, label, k, us, tbs in rows:
        print(f"{name:12s} {label:25s} {k:7d} {us:11.1f} {tbs:8.2f}")


if __name__ == "__main__":
    main()
