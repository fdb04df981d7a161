"""Where the host time of one lone step of litgpt's whole ``GPT`` goes, per variant, with fewer blocks than the
step table's whole-model row so that several Thunder variants' first steps fit one device call.

Why: in the whole-model row Thunder + segkit_ex, which claims attention alone there (every norm and RoPE call left
to Thunder by the evidence), showed far more host per lone step than stock Thunder measured in another process, while
the blocks cases (Llama-3.2-1B x2) pair level (lab run h200x2-2026-11-30-whole-gpt has the numbers).

What it does, in one process: the step table's own ``measure`` for each variant (first step, grads against eager,
timing, a torch.profiler trace of 5 lone steps), then 20 passes interleaved over the variants, each pass timing one
lone step of each (host ms to issue it), then cProfile over 5 lone steps per variant (profiling only the issue,
the GPU synchronized between steps).

Usage (repo root, GPU): python lab/probes/gpt_host.py N_LAYER OUT_DIR [VARIANTS]   (default thunder,segkit-auto)
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def gpt_case(n_layer: int):
    """The step table's whole-model row (``llama3.2-1b-gpt``) cut to ``n_layer`` blocks."""
    from benchmarks.model_cases import Case

    return Case(f"llama3.2-1b-gpt-x{n_layer}", "litgpt-gpt", "Llama-3.2-1B", 2048, overrides={"n_layer": n_layer},
                batch=4, chunk_size=0, note=f"the whole-model row's GPT cut to {n_layer} blocks (lab stand-in)")


def built_with_grads(case):
    """(the case built on the GPU, eager's grads on its inputs and on the changed inputs): what model_step's
    ``measure`` checks each variant against."""
    from benchmarks import model_step
    from benchmarks.model_cases import build

    built = build(case, "cuda")
    want = model_step._eager_grads(built)
    with model_step.changed_inputs(built):
        want = (want, model_step._eager_grads(built))
    return built, want


def main() -> None:
    from benchmarks import model_step
    from benchmarks.model_measure import time_step

    n_layer, out = int(sys.argv[1]), Path(sys.argv[2])
    names = (sys.argv[3] if len(sys.argv) > 3 else "thunder,segkit-auto").split(",")
    variants = {v.name: v for v in model_step.VARIANTS + model_step.load_variants(  # the campaign controls too
        Path(__file__).resolve().parents[1] / "campaigns" / "step_controls.json")}
    case = gpt_case(n_layer)
    built, want = built_with_grads(case)
    opts = model_step.Options(iters=10, profile=out / "profiles", traces=out / "traces")
    steps, rows = {}, {}
    for name in names:
        row = model_step.Row(case.name, built.label, name)
        steps[name] = model_step.measure(built, variants[name], want, row, "cuda", opts)
        rows[name] = row
        print(f"{name}: first {row.first_step_s:.1f} s, ms {row.ms:.2f}, host {row.host_ms:.2f}, regions {row.regions},"
              f" kernels {row.kernels}, err {row.grad_err:.1e}, breakdown {row.breakdown}", flush=True)
    hosts = {n: [] for n in names}
    for p in range(20):
        for name in names[p % len(names):] + names[:p % len(names)]:
            torch.cuda.synchronize()
            hosts[name].append(time_step(steps[name], True)[1])
    for name in names:
        prof = cProfile.Profile()
        for _ in range(5):
            torch.cuda.synchronize()
            prof.enable()
            steps[name]()
            prof.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        text.write(f"{name}: 5 lone steps, {stats.total_tt * 1e3 / 5:.2f} ms per step under cProfile\n")
        for key in ("tottime", "cumulative"):
            stats.sort_stats(key).print_stats(45)
        (out / f"cprofile-{name}.txt").write_text(text.getvalue())
    summary = {n: {"host_ms_median": statistics.median(h), "host_ms": h, "ms": rows[n].ms,
                   "first_step_s": rows[n].first_step_s, "regions": rows[n].regions, "kernels": rows[n].kernels,
                   "breakdown": rows[n].breakdown} for n, h in hosts.items()}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    ref = names[0]
    for name in names:
        paired = statistics.median(a / b for a, b in zip(hosts[ref], hosts[name]))
        print(f"RES L={n_layer} {name}: host median {statistics.median(hosts[name]):.2f} ms over 20 lone steps, "
              f"{ref}/{name} paired {paired:.3f}x, step {rows[name].ms:.2f} ms", flush=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"done in {time.perf_counter() - t0:.0f} s")
