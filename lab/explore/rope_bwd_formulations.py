"""Exploration for issue 21's RoPE bar: each qkv split + RoPE backward formulation (fusions/qkv_split_rope_bwd.py)
and the forward builder beside torch.compile and stock Thunder in one process: kernels per call and cold-L2
kernel time (CUPTI), every formulation checked against the float64 reference first.

    python lab/explore/rope_bwd_formulations.py [--why] [--backward] [--segkit-only] [--only=V,...] [CONFIG ...]
    (default configs: Llama-3-70B_bs2 Llama-2-13b-hf_bs2)

``--only`` keeps the named variants (builder, formulation names, or sums_then_cat: the grouped-query backward as
two fusions); ``--why`` prints what nvFuser's resize, pointwise and reduction schedulers say of each whole fusion,
for every variant of more kernels than fusions.
"""
import sys

import nvfuser_direct as nvf
import torch

import fusions
from benchmarks.executors import rope
from benchmarks.harness import flush_l2
from benchmarks.workloads import case_data
from fusions.rope_bwd_sums_then_cat import SumsThenCat
from segkit.compare import diff
from segkit.nvfuser.run import compiled, to_nvfuser
from segkit.nvfuser.timing import kernel_breakdown, nvfuser_scheduler


def timed(fn, setup=None):
    ks = kernel_breakdown(fn, 20, flush=(lambda: (setup(), flush_l2())) if setup else None)
    return sum(k.us for k in ks), ks


def variants(spec, cfg):
    """(tag, recorded fusions, what executes them) for the builder and each of the spec's formulations, and
    (backward, grouped-query) the two-fusion sums_then_cat."""
    out = []
    for form in [None, *spec.formulations]:
        rec = spec.build(cfg, formulation=form)
        out.append((f"segkit:{form or 'builder'}", [rec], lambda rec=rec: compiled(rec)))
    if spec.name == "qkv_split_rope_bwd" and cfg.q_per_kv > 1:
        two = SumsThenCat(cfg)
        out.append(("segkit:sums_then_cat", list(two.stages), lambda: two))
    return out


def stage_args(run, recs, args):
    """Each recorded fusion's inputs: the builder's for one fusion; sums_then_cat's stage 1 and 2 inputs for two."""
    if not isinstance(run, SumsThenCat):
        return [args]
    first = run.stage1_args(args)
    (sums,) = compiled(recs[0]).execute(first)
    return [first, run.stage2_args(args, sums)]


def main():
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    why, backward_only, segkit_only = "--why" in flags, "--backward" in flags, "--segkit-only" in flags
    only = next((a.split("=", 1)[1].split(",") for a in flags if a.startswith("--only=")), None)
    configs = [a for a in sys.argv[1:] if not a.startswith("--")] or ["Llama-3-70B_bs2", "Llama-2-13b-hf_bs2"]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    rows = []
    for name in configs:
        for mode, spec_name in (("backward", "qkv_split_rope_bwd"), ("forward", "qkv_split_rope_fwd"))[:1 if backward_only else 2]:
            spec = fusions.get(spec_name)
            cfg, inputs, refs, _ = case_data(spec_name, name, torch.bfloat16)
            args = list(inputs.values())
            for tag, recs, make in variants(spec, cfg):
                if only and tag.removeprefix("segkit:") not in only:
                    continue
                try:
                    nvfd = make()
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
                      f"[{', '.join(f'{nvfuser_scheduler(k.name)} {k.us:.1f}' for k in ks)}]", flush=True)
                if why and len(ks) > len(recs):
                    for i, (rec, rec_args) in enumerate(zip(recs, stage_args(nvfd, recs, args))):
                        for sched in ("resize", "pointwise", "reduction"):
                            try:
                                ok, msg = nvf.schedule.can_schedule(to_nvfuser(rec).fusion,
                                                                    getattr(nvf.SchedulerType, sched), rec_args)
                            except Exception as e:
                                ok, msg = "?", f"{type(e).__name__}: {e}"
                            where = f" stage {i + 1}" if len(recs) > 1 else ""
                            print(f"WHY {name} {mode} {tag}{where} {sched}: {ok} "
                                  f"{' | '.join(msg.strip().splitlines())[:600]}", flush=True)
            for ex in () if segkit_only else ("torch.compile", "thunder"):
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
