"""Why the qkv split + RoPE backward written into slices of dqkv was wrong on nvFuser, and whether the fix holds.

Part 1, nvfuser_direct alone (a (4, 8) buffer, columns 2:5 written through ``add_output(y, alias_input=view)``):
  plain       y = 2x into the row-major view (strides (8, 1)). Diagnosis: WRONG, written as a dense (4, 3) from
              the view's start: TensorViewBuilder drops a row-major stride_order, so the view has no allocation
              domain, aliasOutputToInput replays none, and the output keeps its all-contiguous default.
  own_alloc   the same, the output first given an allocation domain, contiguity False (segkit's replay fallback).
  permuted    the same view taken as its transpose (3, 4), strides (1, 8): a real stride order, kept. RIGHT.
  cast_pair   bf16 y = cast(cast(x, fp32), bf16) into the permuted view. Diagnosis: UNWRITTEN: ConsecutiveCastPass
              folds the pair into x, the aliased output becomes an input and nothing writes the buffer.
  set         y = set(x) (bf16) into the permuted view. RIGHT.
Part 2, each slices variant in the fusion's (B, G, [Q,] T) order (the fix) and in dqkv's (B, T, G) order (which
needs the replay's fallback) against the spec's float64 reference, with its kernel time (sum of the call's
kernels, median of 10 cold-L2 calls) beside the builder's (one fusion, the cat).

Usage (GPU host, repo root): python lab/probes/alias_slice_probe.py [CONFIG ...]   (default Llama-2-13b-hf_bs2;
under a minute). Output: one TINY line per part-1 case (RIGHT / WRONG / UNWRITTEN and what was found), one RES or
WRONG line per variant and order.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fusions  # noqa: E402
from fusions.qkv_rope_bwd_slices import ORDERS, VARIANTS, SlicedRopeBwd  # noqa: E402
from segkit.compare import diff  # noqa: E402
from segkit.nvfuser.run import compiled  # noqa: E402
from segkit.nvfuser.timing import kernel_breakdown  # noqa: E402
from segkit.tuning import TuningTable  # noqa: E402

SPEC = fusions.get("qkv_split_rope_bwd")


def tiny(case: str) -> str:
    from nvfuser_direct import DataType, FusionDefinition

    bf16 = case in ("cast_pair", "set")
    dtype = torch.bfloat16 if bf16 else torch.float32
    nv = DataType.BFloat16 if bf16 else DataType.Float
    buf = torch.zeros(4, 8, dtype=dtype, device="cuda")
    x = torch.randn(4, 3, dtype=dtype, device="cuda")
    permuted = case != "plain" and case != "own_alloc"
    view = buf[:, 2:5].t() if permuted else buf[:, 2:5]
    arg = x.t().contiguous() if permuted else x
    with FusionDefinition() as fd:
        tx = fd.define_tensor(sizes=list(arg.shape), strides=list(arg.stride()), dtype=nv)
        tv = fd.define_tensor(sizes=list(view.shape), strides=list(view.stride()), dtype=nv)
        if case == "cast_pair":
            y = fd.ops.cast(fd.ops.cast(tx, dtype=DataType.Float), dtype=nv)
        elif case == "set":
            y = fd.ops.set(tx)
        else:
            y = fd.ops.mul(tx, fd.define_scalar(2.0, dtype=DataType.Double))
        if case == "own_alloc":
            y.set_allocation_domain(y.get_logical_domain(), False)
        fd.add_output(y, alias_input=tv)
    fd.execute([arg, view])
    want = torch.zeros_like(buf)
    want[:, 2:5] = x if bf16 else 2 * x
    if torch.equal(buf, want):
        return "RIGHT"
    if not buf.any():
        return "UNWRITTEN (the buffer is all zeros)"
    dense = torch.zeros(32, dtype=dtype, device="cuda")
    dense[2:14] = (want[:, 2:5]).reshape(-1)
    where = "as a dense (4, 3) from the view's start" if torch.equal(buf.reshape(-1), dense) else "elsewhere"
    return f"WRONG: {int((buf != want).sum())} of 32 elements differ, written {where}"


def probe(config: str) -> None:
    torch.cuda.empty_cache()
    cfg = SPEC.config(config)
    inputs = SPEC.make_inputs(cfg, device="cuda")
    args = list(inputs.values())
    (ref,) = SPEC.reference(inputs, cfg)
    runs = [("builder", "-", compiled(SPEC.build(cfg, table=TuningTable([]))))]
    runs += [(name, order, SlicedRopeBwd(cfg, replace(v, order=order)))
             for name, v in VARIANTS.items() for order in ORDERS]
    for name, order, r in runs:
        try:
            (got,) = r.execute(args)
            d = diff(0, ref, got)
            if not d.ok:
                print(f"WRONG {config} {name} order={order}: {d}", flush=True)
                continue
            ks = kernel_breakdown(lambda r=r: r.execute(args), 10)
        except Exception as e:  # noqa: BLE001  (a probe reports every variant it can)
            print(f"FAIL {config} {name} order={order}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}",
                  flush=True)
            continue
        print(f"RES {config} {name} order={order} rel_err={d.rel_err:.2e} kernels={len(ks)} "
              f"{sum(k.us for k in ks):.1f} us", flush=True)


def main() -> None:
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    for case in ("plain", "own_alloc", "permuted", "cast_pair", "set"):
        try:
            print(f"TINY {case}: {tiny(case)}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"TINY {case}: FAIL {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
    for config in sys.argv[1:] or ["Llama-2-13b-hf_bs2"]:
        probe(config)


if __name__ == "__main__":
    main()
