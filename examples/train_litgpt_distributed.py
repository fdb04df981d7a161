"""Train a litgpt model for a few steps with segkit_ex on any number of ranks, sharded as Thunder users shard it.

    torchrun --nproc_per_node 2 examples/train_litgpt_distributed.py --strategy fsdp       # CPU: gloo, a tiny model
    torchrun --nproc_per_node 8 examples/train_litgpt_distributed.py --strategy fsdp --size full --config Llama-3.2-1B

``--strategy ddp``: ``thunder.distributed.ddp(thunder.jit(model, executors=thunder_exec.executors()))``; ``fsdp``:
``thunder.distributed.fsdp(thunder.jit(model, ...))`` (ZERO2); ``fsdp2``: torch's ``fully_shard`` on every block and
the model, then ``thunder.dynamo.thunderfx(model, executors=...)``. ``--compile thunder`` uses Thunder's default
executors instead, ``--compile eager`` no Thunder (torch DDP for ddp, torch ``fully_shard`` for fsdp and fsdp2): the
reference. The loss (cross entropy, next token) is computed outside the compiled model, as litgpt's Thunder
pretraining does. Each rank trains on its own fixed batch of random tokens (seeded), so the loss falls as the model
learns them. On CUDA (one GPU per rank, ``LOCAL_RANK``) the group is NCCL's, else gloo's; run without torchrun it is
one rank. Rank 0 prints each step's loss (the mean over ranks) and tokens/s (every rank's tokens over the step's wall
time; the first step includes compilation); every rank then prints segkit's claims in its last step, per executed
call (thunder_exec.claim_count; docs/distributed.md).
"""

from __future__ import annotations

import os
import sys
import time

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser

# litgpt Config overrides of --size tiny: 64 wide, 4 heads of 16 on 2 key/value groups, a 96-token vocabulary
TINY = dict(n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96, padded_vocab_size=96,
            vocab_size=96)


def build_parser() -> Parser:
    parser = Parser(prog="examples/train_litgpt_distributed.py", description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", choices=["ddp", "fsdp", "fsdp2"], default="fsdp",
                        help="Thunder's ddp / fsdp around thunder.jit, or torch FSDP2 + thunderfx (default fsdp)")
    parser.add_argument("--compile", choices=["segkit", "thunder", "eager"], default="segkit",
                        help="segkit_ex first in Thunder's executors (default), Thunder's defaults, or no Thunder")
    parser.add_argument("--config", type=argtypes.name, default="Llama-3.2-1B", help="a litgpt config name")
    parser.add_argument("--size", choices=["tiny", "full"], default="tiny",
                        help="tiny: the config 64 wide with a 96-token vocabulary (default); full: as litgpt has it")
    parser.add_argument("--n-layer", type=argtypes.positive_int,
                        help="layers (default: 2 when tiny, else the config's)")
    parser.add_argument("--steps", type=argtypes.positive_int, default=3, help="optimizer steps (default 3)")
    parser.add_argument("--batch", type=argtypes.positive_int, default=2, help="sequences per rank (default 2)")
    parser.add_argument("--seq", type=argtypes.positive_int, default=16, help="tokens per sequence (default 16)")
    parser.add_argument("--lr", type=argtypes.positive_float, default=3e-3, help="AdamW learning rate (default 3e-3)")
    parser.add_argument("--dtype", choices=["auto", "float32", "bfloat16"], default="auto",
                        help="parameters' dtype; auto: bfloat16 on CUDA, float32 on CPU")
    parser.add_argument("--seed", type=argtypes.whole_number, default=0, help="init and data seed (default 0)")
    parser.set_defaults(func=train)
    return parser


def _init_group():
    """The process group: torchrun's (NCCL on CUDA, else gloo), or one rank of its own; this rank's device."""
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    backend = "nccl" if cuda else "gloo"
    if "RANK" in os.environ:
        dist.init_process_group(backend, device_id=device if cuda else None)
    else:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    return device


def _model(args, device, dtype):
    import torch
    from litgpt import GPT, Config

    overrides = TINY if args.size == "tiny" else {}
    n_layer = args.n_layer or (2 if args.size == "tiny" else None)
    cfg = Config.from_name(args.config, block_size=args.seq, **overrides, **({"n_layer": n_layer} if n_layer else {}))
    torch.manual_seed(args.seed)  # the same parameters on every rank
    return GPT(cfg).to(device=device, dtype=dtype), cfg


def _sharded(model, args, device):
    """``model`` sharded and compiled by ``--strategy`` and ``--compile``: the callable the step runs."""
    import thunder
    import thunder_exec

    if args.compile == "eager":
        from torch.distributed.fsdp import fully_shard
        from torch.nn.parallel import DistributedDataParallel

        if args.strategy == "ddp":
            return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        for block in model.transformer.h:
            fully_shard(block)
        return fully_shard(model)
    executors = thunder_exec.executors() if args.compile == "segkit" else thunder.get_default_executors()
    if args.strategy == "ddp":
        return thunder.distributed.ddp(thunder.jit(model, executors=executors))
    if args.strategy == "fsdp":
        return thunder.distributed.fsdp(thunder.jit(model, executors=executors), device=device)
    from torch.distributed.fsdp import fully_shard
    from thunder.dynamo import thunderfx

    for block in model.transformer.h:
        fully_shard(block)
    fully_shard(model)
    return thunderfx(model, executors=executors)


def train(args) -> int:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from thunder_exec import claim_count

    device = _init_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    auto = torch.bfloat16 if device.type == "cuda" else torch.float32
    dtype = auto if args.dtype == "auto" else getattr(torch, args.dtype)
    model, cfg = _model(args, device, dtype)
    fn = _sharded(model, args, device)
    params = fn.parameters() if args.strategy != "fsdp2" or args.compile == "eager" else model.parameters()
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq + 1), generator=gen).to(device)
    if rank == 0:
        print(f"{args.config} ({args.size}, {cfg.n_layer} layers, {dtype}) on {world} rank(s), {device.type}, "
              f"strategy {args.strategy}, compile {args.compile}", flush=True)
    since = None
    for step in range(1, args.steps + 1):
        if step == args.steps and args.compile != "eager":
            since = claim_count.calls(fn)  # claims are counted over the last step's calls
        start = time.perf_counter()
        logits = fn(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean = mean.item() / world  # waits for the step
        seconds = time.perf_counter() - start
        if rank == 0:
            print(f"step {step}/{args.steps} loss {mean:.6f} tokens/s {world * args.batch * args.seq / seconds:.1f}"
                  f"{' (compiling)' if step == 1 and args.compile != 'eager' else ''}", flush=True)
    if args.compile != "eager":
        claims = claim_count.claims(fn, since)
        for r in range(world):  # in rank order
            if r == rank:
                print(f"rank {rank}: segkit claims norms fw/bw {claims['norm_fw']}/{claims['norm_bw']}, "
                      f"RoPE fw/bw {claims['rope_fw']}/{claims['rope_bw']}", flush=True)
            dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(entry.run(build_parser, None))
