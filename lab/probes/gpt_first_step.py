"""Where the first step of litgpt's whole ``GPT`` under thunder.jit goes: Thunder's tracing and transforms, then the
first forward and backward runs (nvFuser's compiles), and how many nvFusion regions each trace holds, with litgpt's
chunked cross-entropy (logits split into rows of 128) against one plain cross-entropy over all rows.

Why: the step table's whole-model row (benchmarks/model_step.py --case llama3.2-1b-gpt) never got past stock
Thunder's first step within a device call's budget, where torch.compile's fit easily (lab run
h200x2-2026-11-30-whole-gpt-first-step has the numbers).

Usage (repo root): python lab/probes/gpt_first_step.py [thunder|segkit] [chunked|plain] [N_LAYER] [T] [BATCH]
    PROFILE=1 in the environment: cProfile's 40 costliest calls of the first step (also when a timeout's SIGINT cuts it)
    (defaults: thunder chunked 2 2048 4; Llama-3.2-1B's config, bf16, on cuda when present, else a tiny-width model
    on the CPU, where only Thunder's own passes are timed)
"""

from __future__ import annotations

import cProfile
import os
import pstats
import signal
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _regions(trace) -> tuple[int, int]:
    """(nvFusion regions, the most ops one of them holds) in an execution trace."""
    sizes = [len(b.subsymbols) for b in trace.bound_symbols if b.sym.name.startswith("nvFusion")]
    return len(sizes), max(sizes, default=0)


def main() -> None:
    import thunder
    import thunder_exec
    from litgpt.config import Config
    from litgpt.model import GPT

    from benchmarks.model_cases import GPTLoss

    argv = sys.argv[1:] + [None] * 5
    who, loss = argv[0] or "thunder", argv[1] or "chunked"
    n_layer, T, B = int(argv[2] or 2), int(argv[3] or 2048), int(argv[4] or 4)
    cuda = torch.cuda.is_available()
    widths = {} if cuda else dict(n_embd=64, n_head=4, n_query_groups=2, intermediate_size=128, padded_vocab_size=256)
    cfg = Config.from_name("Llama-3.2-1B", n_layer=n_layer, block_size=T, **widths)
    torch.manual_seed(0)
    device = "cuda" if cuda else "cpu"
    with torch.device(device):
        gpt = GPT(cfg).to(torch.bfloat16 if cuda else torch.float32)
    gpt.max_seq_length = T
    gpt.reset_parameters()
    model = GPTLoss(gpt, 128 if loss == "chunked" else 0)  # litgpt pretrain's chunks, or its compiled-step loss
    tokens = torch.randint(0, cfg.vocab_size, (B, T + 1), device=device)
    idx, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    thunder_exec.install()  # stock Thunder too: its nvFuser fusions need the nvfuser_direct compatibility fix
    executors = thunder_exec.executors() if who == "segkit" else thunder.get_default_executors()
    jm = thunder.jit(model, executors=executors)

    def synced() -> float:
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    profile = cProfile.Profile() if os.environ.get("PROFILE") else None
    t0 = synced()
    stage = ["the forward"]

    def interrupted(signum, frame) -> None:  # timeout -s INT: how far the first step got, and where its time went
        print(f"RES {who} {loss} L={n_layer} T={T} B={B}: interrupted after {time.perf_counter() - t0:.1f} s in "
              f"{stage[0]}{stage[1] if len(stage) > 1 else ''}", flush=True)
        _report(profile)
        sys.stdout.flush()
        os._exit(1)  # a KeyboardInterrupt would surface inside Thunder's interpreter, wrapped

    signal.signal(signal.SIGINT, interrupted)
    if profile:
        profile.enable()
    out = jm(idx, targets)
    t1 = synced()
    stage[:] = ["the backward", f" (the forward took {t1 - t0:.1f} s)"]
    out.backward()
    t2 = synced()
    _report(profile)
    cs = thunder.compile_stats(jm)
    tracing = (cs.last_trace_tracing_stop - cs.last_trace_tracing_start) / 1e9
    fw, bw = _regions(thunder.last_traces(jm)[-1]), _regions(thunder.last_backward_traces(jm)[-1])
    for p in model.parameters():
        p.grad = None
    t3 = synced()
    jm(idx, targets).backward()
    t4 = synced()
    print(f"RES {who} {loss} L={n_layer} T={T} B={B}: forward first {t1 - t0:.1f} s (tracing {tracing:.1f} s), "
          f"backward first {t2 - t1:.1f} s, second step {1e3 * (t4 - t3):.1f} ms; nvFusion regions fw {fw[0]} "
          f"(largest {fw[1]} ops), bw {bw[0]} (largest {bw[1]} ops)", flush=True)


def _report(profile: cProfile.Profile | None) -> None:
    """The profiled first step's 40 costliest calls by cumulative time, and 25 by their own time."""
    if profile is not None:
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
