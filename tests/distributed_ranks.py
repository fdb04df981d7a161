"""One rank of segkit_ex's distributed tests: each way Thunder users shard a training step (Thunder's ``ddp`` and
``fsdp`` around ``thunder.jit``, torch FSDP2 ``fully_shard`` + ``thunderfx``) on a tiny litgpt model and a tiny
Hugging Face Llama, one step each, against single-process eager on every rank's batch.

``python -m torch.distributed.run --standalone --nproc_per_node 2 -m tests.distributed_ranks OUT`` (what
tests/test_distributed.py starts, on gloo) writes ``OUT/rank<R>.json``: per case the loss and grad errors, segkit's
claims in the traces next to the norm / RoPE calls eager made, the all-gathers in the forward and backward traces,
the traces' digests, segkit's warnings and the wall time; and the errors Thunder raises for the order users type first
(``jit(ddp(m))``, ``jit(fsdp(m))``). The GPU tests call ``run_case`` in one process at world size 1 (NCCL).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch
import torch.distributed as dist

import thunder
import thunder_exec
from benchmarks.model_dist import full_grad
from thunder_exec import claim_count
from tests import model_zoo

MODELS = {"litgpt": "Llama-3.2-1B", "hf": "hf-llama"}
N_LAYER = 2
# case -> (model, strategy, thunder.distributed.fsdp's sharding and bucketing by name)
CASES = {
    "litgpt-ddp": ("litgpt", "ddp", None),
    "litgpt-fsdp-zero2": ("litgpt", "fsdp", ("ZERO2", "NONE")),
    "litgpt-fsdp-zero3-block": ("litgpt", "fsdp", ("ZERO3", "BLOCK")),
    "litgpt-fsdp2-thunderfx": ("litgpt", "fsdp2", None),
    "hf-ddp": ("hf", "ddp", None),
    "hf-fsdp-zero2": ("hf", "fsdp", ("ZERO2", "NONE")),
    "hf-fsdp2-thunderfx": ("hf", "fsdp2", None),
}


def batch(rank: int, device) -> torch.Tensor:
    """Rank ``rank``'s token batch (each rank its own)."""
    gen = torch.Generator().manual_seed(100 + rank)
    return torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T), generator=gen).to(device)


def _step(model: str, device, dtype) -> torch.nn.Module:
    """The model and its loss as one module (model_zoo's), the same parameters on every rank."""
    return model_zoo._Loss(model_zoo.build(MODELS[model], n_layer=N_LAYER)).to(device=device, dtype=dtype)


def eager_reference(model: str, device, dtype, world: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Single-process eager over every rank's batch: the mean of the ranks' losses and its grads (what data
    parallelism computes)."""
    step = _step(model, device, dtype)
    loss = sum(step(batch(r, device)) for r in range(world)) / world
    loss.backward()
    return loss.detach().float(), {n: p.grad.float() for n, p in step.named_parameters()}


def _layers(step: torch.nn.Module) -> list[torch.nn.Module]:
    inner = step.model
    return list(inner.transformer.h) if hasattr(inner, "transformer") else list(inner.model.layers)


def _digest(trace) -> str:
    """The trace's symbols in order, hashed (its printed text carries per-run names)."""
    return hashlib.sha1(" ".join(b.sym.name for b in trace.bound_symbols).encode()).hexdigest()


def _claims(fn) -> list[int]:
    """segkit's claims per executed call of a thunder.jit module or a thunderfx callable, opaque or inside nvFusion
    regions (thunder_exec.claim_count): norms fw, norms bw, RoPEs fw, RoPEs bw (q and k count one RoPE each)."""
    counted = claim_count.claims(fn)
    return [counted[k] for k in ("norm_fw", "norm_bw", "rope_fw", "rope_bw")]


def _jit_traces(jm) -> dict:
    """What a thunder.jit module's last traces hold: the all-gathers, the symbols and their digests."""
    fw, bw = thunder.last_traces(jm)[-1], thunder.last_backward_traces(jm)[-1]
    return {"all_gathers": [sum("all_gather" in b.sym.name for b in t.bound_symbols) for t in (fw, bw)],
            "fw_symbols": sorted({b.sym.name for b in fw.bound_symbols}),
            "bw_symbols": sorted({b.sym.name for b in bw.bound_symbols}),
            "digests": [_digest(fw), _digest(bw)]}


def _compile(step, strategy: str, fsdp_options, device, **jit_options):
    """``step`` sharded and compiled as the strategy's users write it; the callable."""
    executors = thunder_exec.executors()
    if strategy == "ddp":
        return thunder.distributed.ddp(thunder.jit(step, executors=executors, **jit_options))
    if strategy == "fsdp":
        sharding, bucketing = fsdp_options
        return thunder.distributed.fsdp(thunder.jit(step, executors=executors, **jit_options), device=device,
                                        sharding_strategy=thunder.distributed.FSDPType[sharding],
                                        bucketing_strategy=thunder.distributed.FSDPBucketingStrategy[bucketing])
    from torch.distributed.fsdp import fully_shard
    from thunder.dynamo import thunderfx

    for layer in _layers(step):
        fully_shard(layer)
    fully_shard(step)
    return thunderfx(step, executors=executors, **jit_options)


def run_case(name: str, device, dtype=torch.float32, **jit_options) -> dict:
    """One training step of case ``name`` on this rank against eager on every rank's batch: a JSON-able dict."""
    model, strategy, fsdp_options = CASES[name]
    rank, world = dist.get_rank(), dist.get_world_size()
    torch._dynamo.reset()
    start = time.perf_counter()
    want_loss, want_grads = eager_reference(model, device, dtype, world)
    step = _step(model, device, dtype)
    idx = batch(rank, device)
    norms, attentions = model_zoo._eager_counts(step.model, idx, rope=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = _compile(step, strategy, fsdp_options, device, **jit_options)
        loss = fn(idx)
        loss.backward()
        traced = {"claims": _claims(fn), **(_jit_traces(fn) if strategy != "fsdp2" else {})}
    loss = loss.detach().float()
    dist.all_reduce(loss)
    loss /= world
    grads = {}
    for n, p in (fn.named_parameters() if strategy != "fsdp2" else step.named_parameters()):
        grads[n] = full_grad(p.grad, want_grads[n].shape[0], thunder_fsdp=strategy == "fsdp").float()
    assert grads.keys() == want_grads.keys(), sorted(grads.keys() ^ want_grads.keys())
    grad_err = max(((grads[n] - w).abs().max() / max(1.0, w.abs().max())).item() for n, w in want_grads.items())
    result = {"case": name, "rank": rank, "world": world, "loss": loss.item(),
              "loss_err": (loss - want_loss).abs().item(), "grad_err": grad_err,
              "eager_calls": [norms, attentions],
              "warnings": [f"{w.category.__name__}: {w.message}" for w in caught
                           if w.category.__module__.startswith("thunder_exec")]}
    result.update(traced)
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def upstream_errors(device) -> dict[str, str]:
    """What Thunder 0.2.6 raises for the order users type first: ``thunder.jit(ddp(m))`` and
    ``thunder.jit(fsdp(m))`` (the wrapper refuses the plain module before jit sees it)."""
    errors = {}
    for what, wrap in (("jit(ddp(m))", lambda m: thunder.distributed.ddp(m)),
                       ("jit(fsdp(m))", lambda m: thunder.distributed.fsdp(m, device=device))):
        try:
            thunder.jit(wrap(_step("litgpt", device, torch.float32)), executors=thunder_exec.executors())
            errors[what] = ""
        except Exception as e:  # noqa: BLE001 - the message is the result
            errors[what] = f"{type(e).__name__}: {e}"
    return errors


def main(out: Path) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))  # a rank that fails ends the others
    device = torch.device("cpu")
    rank = dist.get_rank()
    results = {"thunder": thunder.__version__, "cases": {}, "upstream_errors": upstream_errors(device)}
    only = os.environ.get("SEGKIT_DIST_CASES")
    for name in (only.split(",") if only else CASES):
        try:
            results["cases"][name] = run_case(name, device)
        except Exception as e:  # noqa: BLE001 - a case that fails is reported, the others still run
            where = traceback.format_exc(limit=-3)
            results["cases"][name] = {"case": name, "error": f"{type(e).__name__}: {e}"[:2000], "where": where}
        dist.barrier()
    (out / f"rank{rank}.json").write_text(json.dumps(results, indent=1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
