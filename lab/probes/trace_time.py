"""The first call of a thunder.jit'ed litgpt GPT (forward + backward: tracing, transforms, the first run) with
stock Thunder against Thunder + segkit_ex, and how many instructions Thunder's interpreter stepped through, on
the CPU: what segkit_ex adds to a model's compile time (the step table's "first step s" holds the GPU's).

Usage (repo root): python lab/probes/trace_time.py [N_LAYERS ...]   (default 4 16; Llama-3.2-1B's config class
with tiny widths, batch 2, T=64: the interpreter's work follows the layers, not the widths)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def first_call(n_layer: int, ours: bool, history: bool = False) -> tuple[float, int | None]:
    """(seconds of the first call, instructions interpreted where ``history`` records them (slower), else None)."""
    import thunder
    import thunder_exec
    from litgpt.config import Config
    from litgpt.model import GPT

    torch.manual_seed(0)
    cfg = Config.from_name("Llama-3.2-1B", n_layer=n_layer, n_embd=256, n_head=8, n_query_groups=2,
                           intermediate_size=512, padded_vocab_size=1024, block_size=64)
    model = GPT(cfg)
    idx = torch.randint(0, 1024, (2, 64))
    executors = thunder_exec.executors() if ours else thunder.get_default_executors()
    jm = thunder.jit(model, executors=executors,
                     debug_options=thunder.DebugOptions(record_interpreter_history=history))
    start = time.perf_counter()
    jm(idx).sum().backward()
    return time.perf_counter() - start, len(thunder.last_interpreted_instructions(jm)) if history else None


def main() -> None:
    if sys.argv[1:2] == ["--one"]:  # one measurement in a fresh process: python trace_time.py --one N OURS HISTORY
        s, ins = first_call(int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1")
        print(f"{s:.1f} {ins}")
        return
    import subprocess

    import thunder

    layers = [int(a) for a in sys.argv[1:]] or [4, 16]
    print(f"torch {torch.__version__}, thunder {thunder.__version__}, CPU; each number from a fresh process",
          flush=True)
    print("layers  executors            first call s   interpreted instructions (1 layer)")
    def one(n_layer: int, ours: bool, history: bool) -> list[str]:
        argv = [sys.executable, __file__, "--one", str(n_layer), str(int(ours)), str(int(history))]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()[-2:]

    instructions = {ours: one(1, ours, True)[1] for ours in (False, True)}  # per executor list, not per row
    for n in layers:
        for ours in (False, True):
            s = one(n, ours, False)[0]
            print(f"{n:6d}  {'thunder + segkit_ex' if ours else 'thunder':20s} {s:>12s}   {instructions[ours]:>10s}",
                  flush=True)

if __name__ == "__main__":
    main()
