"""Exploration for issue 21's RoPE bar: each qkv split + RoPE backward formulation (fusions/qkv_split_rope_bwd.py)
and the forward builder beside torch.compile and stock Thunder in one process: kernels per call and cold-L2
kernel time (CUPTI), every formulation checked against the float64 reference first.

    python benchmarks/explore/rope_bwd_formulations.py [CONFIG ...]   default: Llama-3-70B_bs2 Llama-2-13b-hf_bs2
"""
import sys

import torch

import fusions
from benchmarks.executors import rope
from benchmarks.harness import flush_l2
from benchmarks.workloads import case_data
from segkit.compare import diff
from segkit.nvf import compiled
from segkit.timing import kernel_breakdown


def timed(fn, setup=None):
    ks = kernel_breakdown(fn, 20, flush=(lambda: (setup(), flush_l2())) if setup else None)
    return sum(k.us for k in ks), ks


def main():
    configs = sys.argv[1:] or ["Llama-3-70B_bs2", "Llama-2-13b-hf_bs2"]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    rows = []
    for name in configs:
        for mode, spec_name in (("backward", "qkv_split_rope_bwd"), ("forward", "qkv_split_rope_fwd")):
            spec = fusions.get(spec_name)
            cfg, inputs, refs, _ = case_data(spec_name, name, torch.bfloat16)
            args = list(inputs.values())
            for form in [None, *spec.formulations]:
                tag = f"segkit:{form or 'builder'}"
                try:
                    nvfd = compiled(spec.build(cfg, formulation=form))
                    out = nvfd.execute(args)
                    bad = [str(d) for i, (r, g) in enumerate(zip(refs, out)) if not (d := diff(i, r, g)).ok]
                    if bad:
                        print(f"WRONG {name} {mode} {tag}: {'; '.join(bad)}", flush=True)
                        continue
                    us, ks = timed(lambda: nvfd.execute(args))
                except Exception as e:
                    print(f"FAIL {name} {mode} {tag}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
                    continue
                rows.append((name, mode, tag, len(ks), us))
                print(f"RES {name} {mode} {tag} kernels={len(ks)} {us:.1f} us "
                      f"[{', '.join(f'{k.us:.1f}' for k in ks)}]", flush=True)
            for ex in ("torch.compile", "thunder"):
                try:
                    p = rope(cfg, ex, inputs, mode if mode == "backward" else "inference")
                    us, ks = timed(p.fn, p.setup)
                except Exception as e:
                    print(f"FAIL {name} {mode} {ex}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
                    continue
                rows.append((name, mode, ex, len(ks), us))
                print(f"RES {name} {mode} {ex} kernels={len(ks)} {us:.1f} us", flush=True)
    print("\nconfig               mode      executor                    kernels   kernel us")
    for name, mode, tag, k, us in rows:
        print(f"{name:20s} {mode:9s} {tag:28s} {k:7d} {us:10.1f}")


if __name__ == "__main__":
    main()
