"""What the step table on N ranks (benchmarks/model_step_dist.py) and the distributed tests share: the process
group and this rank's device, each rank's own token batch, a sharded grad gathered to its parameter's full grad
(FSDP2's DTensor, Thunder FSDP's dim-0 shard), the single-process eager reference over every rank's batch, the
eager step's norm and attention calls, the ranks' values side by side, and the host's interconnect.

Data parallelism computes the mean of the ranks' losses: the reference is that mean, computed in one process over
every rank's batch (one batch at a time, grads accumulated, so its memory is one batch's), its grads kept on the
host in the model's dtype.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import re
import subprocess
from collections.abc import Callable

import torch
import torch.distributed as dist

#: The norm and attention modules whose calls the eager step counts (litgpt's and Hugging Face's Llama-like ones).
NORM_CLASS = re.compile(r".*(RMSNorm|LayerNorm)$")
ATTENTION_CLASS = re.compile(r"^(CausalSelfAttention|\w+Attention)$")


def init_group(timeout_s: float = 600.0) -> torch.device:
    """torchrun's process group (NCCL with one GPU per rank, ``LOCAL_RANK``, where CUDA is available, else gloo),
    or a one-rank group of its own without torchrun; this rank's device. A rank that fails leaves the others in a
    collective at most ``timeout_s``."""
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    backend, timeout = ("nccl" if cuda else "gloo"), datetime.timedelta(seconds=timeout_s)
    if "RANK" in os.environ:
        dist.init_process_group(backend, timeout=timeout, **({"device_id": device} if cuda else {}))
    else:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout)
    return device


def rank_tokens(vocab: int, shape: tuple[int, int], rank: int, device) -> torch.Tensor:
    """Rank ``rank``'s token batch of ``shape`` (each rank its own, the same on every run)."""
    gen = torch.Generator().manual_seed(100 + rank)
    return torch.randint(0, vocab, shape, generator=gen).to(device)


def gathered(shard: torch.Tensor, full_rows: int) -> torch.Tensor:
    """A Thunder FSDP grad shard (dim 0, padded to the world size) gathered to its parameter's full grad: a
    collective, every rank in the same order."""
    parts = [torch.empty_like(shard) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, shard.contiguous())
    return torch.cat(parts)[:full_rows]


def full_grad(grad: torch.Tensor, full_rows: int, thunder_fsdp: bool) -> torch.Tensor:
    """The full grad of a parameter from this rank's grad: FSDP2's DTensor gathered (``full_tensor``), Thunder
    FSDP's dim-0 shard gathered (``thunder_fsdp``), anything else as it is (replicated: DDP, one rank)."""
    if hasattr(grad, "full_tensor"):
        return grad.full_tensor()
    return gathered(grad, full_rows) if thunder_fsdp else grad


def eager_reference(model: torch.nn.Module, batches: list[tuple],
                    blocks: list[torch.nn.Module] = ()) -> tuple[float, dict[str, torch.Tensor]]:
    """Single-process eager over every rank's inputs (``batches``, rank order): the mean of their losses and its
    grads by parameter name, on the host in the model's dtype (one batch's activations at a time). Each of
    ``blocks`` runs under activation checkpointing (the same ops, its forward run again in the backward), so that
    the whole unsharded model's reference fits beside its grads on one GPU."""
    model.zero_grad(set_to_none=True)
    total = 0.0
    with _checkpointed(blocks):
        for inputs in batches:
            loss = model(*inputs) / len(batches)
            loss.backward()
            total += loss.detach().float().item()
    grads = {n: p.grad.detach().to("cpu", copy=True) for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return total, grads


@contextlib.contextmanager
def _checkpointed(blocks):
    """Each module of ``blocks`` called through ``torch.utils.checkpoint`` (non-reentrant) while inside."""
    from torch.utils.checkpoint import checkpoint

    for b in blocks:
        b.forward = functools.partial(checkpoint, type(b).forward.__get__(b), use_reentrant=False)
    try:
        yield
    finally:
        for b in blocks:
            del b.forward


def eager_calls(model: torch.nn.Module, inputs: tuple) -> tuple[int, int]:
    """(norm calls, attention calls) of one eager forward: what a compiled step must claim (every norm forward
    and backward, q and k's RoPE in every attention)."""
    counts = [0, 0]
    hooks = []
    for m in model.modules():
        name = type(m).__name__
        kind = 0 if NORM_CLASS.match(name) else 1 if ATTENTION_CLASS.match(name) else None
        if kind is not None:
            hooks.append(m.register_forward_hook(lambda *_, k=kind: counts.__setitem__(k, counts[k] + 1)))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return counts[0], counts[1]


def grad_error(named: Callable[[], list[tuple[str, torch.Tensor | None]]], want: dict[str, torch.Tensor],
               thunder_fsdp: bool) -> float:
    """Max over parameters of max |g - w| / max |w| (model_step's grad error), every rank's grad gathered to the
    full grad first, one parameter at a time; a parameter eager gives a grad and the variant none is an error."""
    worst = 0.0
    for name, grad in named():
        w = want.get(name)
        if w is None:
            continue
        if grad is None:
            raise RuntimeError(f"no grad for parameter {name} (eager computes one)")
        g = full_grad(grad, w.shape[0], thunder_fsdp).float()
        w = w.to(g.device).float()
        worst = max(worst, ((g - w).abs().max() / w.abs().max().clamp(min=1e-6)).item())
    return worst


def each_rank(value):
    """Every rank's ``value`` (any picklable object), in rank order, on every rank."""
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def topo_summary(text: str, gpus: int | None = None) -> str | None:
    """``nvidia-smi topo -m``'s matrix summed up: each link kind between the first ``gpus`` GPUs (all where None)
    with its pair count ("NV18 x28"), kinds most common first; None where the text holds no GPU matrix."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    header = next((t for t in lines if t and t[0].startswith("GPU0")), None)
    if header is None:
        return None
    n = sum(bool(re.fullmatch(r"GPU\d+", t)) for t in header)
    n = min(n, gpus) if gpus else n
    rows = {t[0]: t[1:1 + n] for t in lines if re.fullmatch(r"GPU\d+", t[0]) and t is not header}
    kinds: dict[str, int] = {}
    for i in range(n):
        cells = rows.get(f"GPU{i}") or []
        for j in range(i + 1, min(n, len(cells))):
            kinds[cells[j]] = kinds.get(cells[j], 0) + 1
    if not kinds:
        return f"{n} GPU" if n == 1 else None
    return ", ".join(f"{k} x{c}" for k, c in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def interconnect(cuda: bool, gpus: int) -> str:
    """How this run's ranks talk: "gloo/cpu" without a GPU; else the link kinds between its ``gpus`` GPUs from
    ``nvidia-smi topo -m`` ("NV18 x28"), or why they are unknown."""
    if not cuda:
        return "gloo/cpu"
    try:
        out = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown (nvidia-smi topo -m: {type(e).__name__})"
    return topo_summary(out, gpus) or "unknown (nvidia-smi topo -m printed no GPU matrix)"
