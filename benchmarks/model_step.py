"""Training steps (forward + backward, bf16) of litgpt blocks at real widths under eager, torch.compile, stock
Thunder and Thunder + segkit_ex: correctness against eager, step time (CUDA events, warm-up, median) and how many
norm / RoPE calls segkit_ex claims. Writes a markdown table.

    python benchmarks/model_step.py [--out results.md] [--iters 10]

litgpt's package ``__init__`` imports lightning and more; on a host with only litgpt's wheel (and PyYAML) the
model and config modules are imported without it (``import_litgpt``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
import types
from dataclasses import dataclass

import torch

NORM_FW = {"segkit_layer_norm_fwd", "segkit_rms_norm_fwd", "segkit_layer_norm", "segkit_rms_norm"}
NORM_BW = {"segkit_layer_norm_bwd", "segkit_rms_norm_bwd"}
ROPE_FW, ROPE_BW = {"segkit_rope_fwd"}, {"segkit_rope_bwd"}

# (litgpt config, overrides, T)
CASES = [
    ("Llama-3-8B", dict(n_layer=1), 4096),
    ("pythia-1b", dict(n_layer=2), 2048),
]


def import_litgpt():
    """litgpt.model and litgpt.config; without lightning installed, skipping litgpt/__init__ and the checkpoint
    converter model.py imports a helper from (unused for building and training a model)."""
    try:
        return importlib.import_module("litgpt.model"), importlib.import_module("litgpt.config")
    except ImportError:
        pass
    for name in [n for n in sys.modules if n == "litgpt" or n.startswith("litgpt.")]:
        del sys.modules[name]
    spec = importlib.util.find_spec("litgpt")
    package = types.ModuleType("litgpt")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["litgpt"] = package
    scripts = types.ModuleType("litgpt.scripts")
    scripts.__path__ = []
    converter = types.ModuleType("litgpt.scripts.convert_hf_checkpoint")

    def qkv_reassemble(*args, **kwargs):
        raise RuntimeError("litgpt's checkpoint converter is not available on this host")

    converter.qkv_reassemble = qkv_reassemble
    sys.modules.update({"litgpt.scripts": scripts, "litgpt.scripts.convert_hf_checkpoint": converter})
    return importlib.import_module("litgpt.model"), importlib.import_module("litgpt.config")


class Blocks(torch.nn.Module):
    """litgpt's transformer blocks as GPT runs them (rope tables fp32, (1, T, n)), and a scalar loss."""

    def __init__(self, model_mod, cfg) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(model_mod.Block(cfg, i) for i in range(cfg.n_layer))
        self.norm = cfg.norm_class(cfg.n_embd, eps=cfg.norm_eps)

    def forward(self, x, cos, sin):
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.norm(x).float().square().mean()


@dataclass
class Row:
    case: str
    variant: str
    ms: float
    grad_err: float
    claims: str
    note: str = ""


def _time(step, iters: int) -> float:
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def run_case(name: str, overrides: dict, T: int, iters: int) -> list[Row]:
    import thunder
    import thunder_exec

    model_mod, config_mod = import_litgpt()
    thunder_exec.executors()  # recognizes litgpt, imported after thunder_exec
    cfg = config_mod.Config.from_name(name, block_size=T, **overrides)
    torch.manual_seed(0)
    model = Blocks(model_mod, cfg).cuda().bfloat16()
    cos, sin = model_mod.build_rope_cache(T, cfg.rope_n_elem, device="cuda")
    cos, sin = cos[None], sin[None]
    x = torch.randn(1, T, cfg.n_embd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    label = f"{name} x{cfg.n_layer} T={T}"

    def grads(fn):
        model.zero_grad(set_to_none=True)
        x.grad = None
        fn(x, cos, sin).backward()
        return [x.grad.float()] + [p.grad.float() for p in model.parameters()]

    want = grads(model)
    variants = {
        "eager": lambda: model,
        "torch.compile": lambda: torch.compile(model),
        "thunder": lambda: thunder.jit(model),
        "thunder + segkit_ex": lambda: thunder.jit(model, executors=thunder_exec.executors()),
    }
    rows = []
    for variant, make in variants.items():
        t0 = time.perf_counter()
        try:
            fn = make()
            got = grads(fn)
            compile_s = time.perf_counter() - t0
            err = max(((g - w).abs().max() / w.abs().max().clamp(min=1e-6)).item() for g, w in zip(got, want))
            ms = _time(lambda: fn(x, cos, sin).backward(), iters)
            claims = ""
            if variant.startswith("thunder"):
                fw, bw = thunder.last_traces(fn)[-1], thunder.last_backward_traces(fn)[-1]
                count = lambda t, names: sum(b.sym.name in names for b in t.bound_symbols)  # noqa: E731
                claims = (f"norms {count(fw, NORM_FW)}/{count(bw, NORM_BW)}, "
                          f"RoPE {count(fw, ROPE_FW)}/{count(bw, ROPE_BW)}")
            rows.append(Row(label, variant, ms, err, claims, f"first step {compile_s:.0f} s"))
        except Exception as e:  # a variant that fails is a row of the table, not the end of the run
            rows.append(Row(label, variant, float("nan"), float("nan"), "", f"{type(e).__name__}: {e}"[:160]))
        print(rows[-1], flush=True)
    return rows


def markdown(rows: list[Row]) -> str:
    gpu = torch.cuda.get_device_name()
    import thunder

    head = (f"GPU: {gpu}; torch {torch.__version__}; Thunder {getattr(thunder, '__version__', '?')}; "
            f"date {time.strftime('%Y-%m-%d')}; bf16, batch 1, loss = mean(norm(x)^2) after the blocks; "
            "step = forward + backward, CUDA events, 3 warm-up steps, median\n\n")
    lines = ["| case | variant | step ms | vs eager | max rel grad err vs eager | segkit claims fw/bw | note |",
             "|---|---|---|---|---|---|---|"]
    eager = {r.case: r.ms for r in rows if r.variant == "eager"}
    for r in rows:
        lines.append(f"| {r.case} | {r.variant} | {r.ms:.2f} | {eager.get(r.case, float('nan')) / r.ms:.2f}x | "
                     f"{r.grad_err:.1e} | {r.claims} | {r.note} |")
    return head + "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    rows = []
    for name, overrides, T in CASES:
        rows += run_case(name, overrides, T, args.iters)
        if args.out:  # after every case: a run cut short still leaves its table
            with open(args.out, "w") as f:
                f.write(markdown(rows) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
