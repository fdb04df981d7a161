"""Issue 52, defect 3: the qkv split + RoPE forward got slower when it started rounding as eager does in 16 bits.
Times, side by side in one process, cold L2, the forward fusion in several spellings of that rounding (and without
it) against torch.compile and stock Thunder, and checks each spelling bit for bit against eager PyTorch's 16-bit
RoPE (litgpt's apply_rope on the same q, k).

    python lab/drivers/rope_fwd_rounding.py OUT.json [--configs Llama-2-13b-hf_bs2,Llama-3-8B_bs2] [--reps 40]
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager

import torch

import fusions
import fusions._rope as R
from benchmarks import executors
from segkit.nvfuser.run import compiled
from segkit.nvfuser.timing import kernel_breakdown, kernel_us
from sweep.machine import machine_block

F32 = "Float"


def _r(fd, t, to):
    return fd.ops.cast(fd.ops.cast(t, dtype=to), dtype=R.dt(fd, F32))


SPELLINGS = {
    # what main does: each product and the sum rounded, the sum cast back to fp32 (then to the output dtype)
    "per_op": None,
    # no 16-bit rounding at all (the fp32 sum, one rounding at the output): not eager's bits
    "fp32": lambda fd, a, b, to: fd.ops.add(a, b),
    # the same bits as per_op without the sum's round trip (the output cast rounds it once)
    "products_only": lambda fd, a, b, to: fd.ops.add(_r(fd, a, to), _r(fd, b, to)),
    # the products rounded by 16-bit outputs of the ops themselves (nvFuser casts back internally)
    "bf16_ops": lambda fd, a, b, to: fd.ops.cast(fd.ops.add(fd.ops.cast(a, dtype=to), fd.ops.cast(b, dtype=to)),
                                                 dtype=R.dt(fd, F32)),
}


@contextmanager
def spelled(name: str):
    fn = SPELLINGS[name]
    original = R.rope_sum
    if fn is not None:
        R.rope_sum = lambda fd, a, b, round_to=None: (fd.ops.add(a, b) if round_to is None else fn(fd, a, b, round_to))
    try:
        yield
    finally:
        R.rope_sum = original


def eager_rope(qkv, cos, sin, cfg):
    """litgpt's apply_rope in the input's 16-bit dtype, on the q and k of litgpt's split (the bits to match)."""
    from fusions import torch_models as tm

    return tm.qkv_split_rope(qkv, cos, sin, cfg.n_head, cfg.n_query_groups, cfg.head_size, cfg.rope_n_elem)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--configs", default="Llama-2-13b-hf_bs2,Llama-3-8B_bs2,Llama-3-70B_bs2")
    p.add_argument("--reps", type=int, default=40)
    args = p.parse_args()
    spec = fusions.get("qkv_split_rope_fwd")
    rows = []
    for name in args.configs.split(","):
        cfg = spec.config(name)
        inputs = spec.make_inputs(cfg, device="cuda")
        xs = list(inputs.values())
        want = [t.contiguous() for t in eager_rope(inputs["qkv"], inputs["cos"], inputs["sin"], cfg)]
        for sp in SPELLINGS:
            with spelled(sp):
                fd = spec.build(cfg)
            ex = compiled(fd)
            outs = ex.execute(xs)
            same = [bool(torch.equal(o.contiguous(), w)) for o, w in zip(outs, want)]
            ks = kernel_breakdown(lambda: ex.execute(xs), reps=10)
            us = kernel_us(lambda: ex.execute(xs), reps=args.reps)
            rows.append({"config": name, "who": f"segkit:{sp}", "kernel_us": us, "kernels": [k.name[:50] for k in ks],
                         "bits_as_eager": same})
            print(rows[-1], flush=True)
        for who in ("torch.compile", "thunder"):
            prep = executors.rope(cfg, who, inputs, "inference")
            us = kernel_us(prep.fn, reps=args.reps)
            rows.append({"config": name, "who": who, "kernel_us": us})
            print(rows[-1], flush=True)
        del inputs, xs, want
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"machine": machine_block(None), "rows": rows}, f, indent=1)
    print("\nconfig                who                    kernel us")
    for r in rows:
        print(f"{r['config']:22s} {r['who']:22s} {r['kernel_us']:8.1f} {r.get('bits_as_eager', '')}")


if __name__ == "__main__":
    main()
