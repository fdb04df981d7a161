"""Kernel time and kernels per call of the qkv split + RoPE backward: the builder (one fusion with the cat), each
variant writing into slices of dqkv (fusions/qkv_rope_bwd_slices.py), grouped-query configs' sums_then_cat, and
torch.compile of the eager backward (the benchmarks' own setup, benchmarks/executors.py ``rope``), side by side
in one process. Each is checked against the spec's float64 reference before it is timed. Kernel time: the sum of
the call's kernels (torch.profiler, median of 20 calls, cold L2, as the benchmarks).

Usage (GPU host, repo root): python lab/probes/rope_bwd_probe.py [CONFIG ...]
    (default: Llama-2-13b-hf_bs2 Llama-3-70B_bs2; under 2 minutes, torch.compile's compiles most of it)
Output: one RES line per executor, then a table; FAIL / WRONG lines for any that failed or computed wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fusions  # noqa: E402
from benchmarks.executors import rope  # noqa: E402
from fusions.qkv_rope_bwd_slices import VARIANTS, SlicedRopeBwd  # noqa: E402
from fusions.rope_bwd_sums_then_cat import SumsThenCat  # noqa: E402
from segkit.compare import diff  # noqa: E402
from segkit.nvfuser.run import compiled  # noqa: E402
from segkit.nvfuser.timing import flush_l2, kernel_breakdown, nvfuser_scheduler  # noqa: E402
from segkit.tuning import TuningTable  # noqa: E402

SPEC = fusions.get("qkv_split_rope_bwd")


def segkit_runs(cfg) -> list[tuple[str, object]]:
    """(label, something with execute(inputs)): the builder as written (not the tuning table's choice), each
    slices variant, and for grouped-query configs sums_then_cat."""
    out = [("builder", compiled(SPEC.build(cfg, table=TuningTable([]))))]
    out += [(name, SlicedRopeBwd(cfg, v)) for name, v in VARIANTS.items()]
    if cfg.q_per_kv > 1:
        out.append(("sums_then_cat", SumsThenCat(cfg)))
    return out


def probe(config: str) -> list[tuple[str, str, int, float]]:
    torch.cuda.empty_cache()
    cfg = SPEC.config(config)
    inputs = SPEC.make_inputs(cfg, device="cuda")
    args = list(inputs.values())
    (ref,) = SPEC.reference(inputs, cfg)
    rows = []
    timed = [(label, (lambda r=r: r.execute(args)), None) for label, r in segkit_runs(cfg)]
    try:
        p = rope(cfg, "torch.compile", inputs, "backward")
        timed.append(("torch.compile", p.fn, p.setup))
    except Exception as e:  # noqa: BLE001  (a probe reports every executor it can)
        print(f"FAIL {config} torch.compile: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
    for label, fn, setup in timed:
        try:
            if setup is not None:
                setup()
            (got,) = fn()
            d = diff(0, ref, got)
            if not d.ok:
                print(f"WRONG {config} {label}: {d}", flush=True)
                continue
            ks = kernel_breakdown(fn, 20, flush=(lambda s=setup: (s(), flush_l2())) if setup else None)
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {config} {label}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
            continue
        us = sum(k.us for k in ks)
        rows.append((config, label, len(ks), us))
        print(f"RES {config} {label} kernels={len(ks)} {us:.1f} us "
              f"[{', '.join(f'{nvfuser_scheduler(k.name) or k.name[:40]} {k.us:.1f}' for k in ks)}]", flush=True)
    return rows


def main() -> None:
    configs = sys.argv[1:] or ["Llama-2-13b-hf_bs2", "Llama-3-70B_bs2"]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    rows = [row for config in configs for row in probe(config)]
    print("\nconfig               executor           kernels   kernel us")
    for config, label, k, us in rows:
        print(f"{config:20s} {label:18s} {k:7d} {us:11.1f}")


if __name__ == "__main__":
    main()
