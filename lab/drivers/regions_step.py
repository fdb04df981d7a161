"""The Llama-3-8B step (litgpt, 1 layer, T=4096, bf16, forward + backward) under stock Thunder and Thunder +
segkit_ex (opaque, and fused: the step ``segkit regions`` estimates from the opaque one): each one's measured step
time and its final execution traces, saved for ``segkit regions``; and a
torch.profiler profile of 3 segkit_ex steps jitted with CallRanges (each call in its range), with its traces.

    python lab/drivers/regions_step.py OUT_DIR [--iters 10]

Writes OUT_DIR/{thunder,segkit_ex,segkit_fused,segkit_ex_profiled}/step.{fwd,bwd}.py,
OUT_DIR/segkit_ex_profiled/profile.json and OUT_DIR/steps.json ({variant: step ms}, and the GPU). The model, timing and litgpt import are
the step table's (benchmarks/model_cases.py, benchmarks/model_measure.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from benchmarks.model_cases import Blocks, import_litgpt
from benchmarks.model_measure import time_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()

    import thunder
    import thunder_exec
    from segkit.trace import capture
    from thunder_exec.trace_capture import CallRanges, save_traces

    model_mod, config_mod = import_litgpt()
    thunder_exec.executors()  # recognizes litgpt, imported after thunder_exec
    cfg = config_mod.Config.from_name("Llama-3-8B", block_size=4096, n_layer=1)
    torch.manual_seed(0)
    model = Blocks(model_mod, cfg).cuda().bfloat16()
    cos, sin = model_mod.build_rope_cache(4096, cfg.rope_n_elem, device="cuda")
    x = torch.randn(1, 4096, cfg.n_embd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    steps = {"gpu": torch.cuda.get_device_name()}
    ours = thunder_exec.executors()
    for variant, executors, options in [("thunder", None, {}), ("segkit_ex", ours, {"segkit_fuse": "opaque"}),
                                        ("segkit_fused", ours, {"segkit_fuse": "fused"})]:
        fn = thunder.jit(model, executors=executors, **options)
        steps[variant] = time_steps(lambda: fn(x, cos[None], sin[None]).backward(), args.iters, 3, cuda=True)[0]
        paths = save_traces(fn, args.out / variant, "step")
        print(f"{variant}: step {steps[variant]:.3f} ms; traces {', '.join(map(str, paths))}", flush=True)
    fn = thunder.jit(model, executors=thunder_exec.executors(), segkit_fuse="opaque", transforms=[CallRanges()])
    (args.out / "segkit_ex_profiled").mkdir(parents=True, exist_ok=True)
    time_steps(lambda: fn(x, cos[None], sin[None]).backward(), 1, 3, cuda=True)
    with capture(str(args.out / "segkit_ex_profiled" / "profile.json")):
        for _ in range(3):
            fn(x, cos[None], sin[None]).backward()
        torch.cuda.synchronize()
    save_traces(fn, args.out / "segkit_ex_profiled", "step")
    (args.out / "steps.json").write_text(json.dumps(steps, indent=1) + "\n")


if __name__ == "__main__":
    main()
