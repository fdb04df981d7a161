"""The step table on N ranks: model_step.py's training step (grads set to None, forward, backward; no optimizer)
of litgpt's whole ``GPT`` with its loss, sharded over the ranks of ``torchrun`` as users shard it, one row per
(case, variant): tokens/s per GPU, step ms, peak memory per rank, saved-for-backward bytes, segkit's claims per
executed call on every rank, grads against single-process eager on the first step. Only rank 0 writes.

    torchrun --nproc-per-node 8 benchmarks/model_step_dist.py [--case llama3-8b-gpt] [--variants ...] [--iters 10]
        [--rounds 3] [--out table.md] [--json table.json]
    python benchmarks/model_step_dist.py --merge ws1.json ws2.json ws8.json --out scaling.md --json scaling.json

Each rank trains on its own batch (the case's batch x T tokens, seeded by rank); the reference is single-process
eager over every rank's batch, the mean of their losses (what data parallelism computes). The method is
model_step's: warm-up steps, the median of ``--iters``, with ``--rounds`` the variants kept alive and interleaved
pass by pass (model_step's rounds, the same order on every rank). A rank's step ms is its own CUDA events (wall
clock on CPU); the row's is the slowest rank's median, its tokens/s per GPU the case's tokens per rank over it.
``--merge`` joins several world sizes' runs and adds the weak-scaling table (benchmarks/model_dist_table.py).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

if __package__ in (None, ""):  # run as a script: the repository root on the path, as under ``python -m``
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import model_dist, model_dist_table, model_step  # noqa: E402
from benchmarks.model_cases import Built, Case, build  # noqa: E402
from benchmarks.model_measure import saved_for_backward, time_steps  # noqa: E402
from segkit.cli import argtypes, entry  # noqa: E402
from segkit.cli.parser import Parser  # noqa: E402

__all__ = ["CASES", "VARIANTS", "DistRow", "DistVariant", "run_case"]

#: litgpt Config overrides of the CPU case: 64 wide, 4 heads of 16 on 2 key/value groups, a 96-token vocabulary
TINY = dict(n_layer=2, n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96,
            padded_vocab_size=96, vocab_size=96)

CASES = [
    Case("llama3-8b-gpt", "litgpt-gpt", "Llama-3-8B", 4096, batch=1, chunk_size=0, cost_s=1800,
         note="litgpt's GPT whole (32 layers) and its loss, batch 1 per rank, as Thunder's litgpt benchmark runs it"),
    Case("llama3.2-1b-gpt", "litgpt-gpt", "Llama-3.2-1B", 2048, batch=4, chunk_size=0, cost_s=900,
         note="litgpt's GPT whole (16 layers) and its loss, batch 4 per rank"),
    Case("tiny-gpt", "litgpt-gpt", "Llama-3.2-1B", 16, TINY, batch=2, chunk_size=0, default=False, cost_s=60,
         note="Llama-3.2-1B's layout 64 wide, 2 layers, 96-token vocabulary: the CPU (gloo) case"),
]


@dataclass(frozen=True)
class DistVariant:
    """One way to shard and compile the step. ``shard``: "fsdp2" (torch's ``fully_shard`` on every block, then the
    model) or "thunder-fsdp" (``thunder.distributed.fsdp(thunder.jit(m))``, ZERO2); ``compiler``: "eager",
    "inductor" (torch.compile), "thunder" (thunder.jit) or "thunderfx"; ``segkit``: segkit_ex's executors (its
    default options); ``liger``: Liger-Kernel's operators first (benchmarks/liger_thunder.py)."""

    name: str
    label: str
    shard: str
    compiler: str
    segkit: bool = False
    liger: bool = False


VARIANTS = [
    DistVariant("eager-fsdp2", "eager + FSDP2 (the reference rival)", "fsdp2", "eager"),
    DistVariant("compile-fsdp2", "torch.compile + FSDP2", "fsdp2", "inductor"),
    DistVariant("thunder-fsdp", "Thunder FSDP (ZERO2)", "thunder-fsdp", "thunder"),
    DistVariant("segkit-fsdp", "Thunder FSDP (ZERO2) + segkit_ex", "thunder-fsdp", "thunder", segkit=True),
    DistVariant("fsdp2-thunderfx-segkit", "FSDP2 + ThunderFX + segkit_ex", "fsdp2", "thunderfx", segkit=True),
    DistVariant("thunder-fsdp-liger", "Thunder FSDP (ZERO2) + Liger-Kernel's operators", "thunder-fsdp", "thunder",
                liger=True),
]


@dataclass
class DistRow(model_step.Row):
    """A row of the table on N ranks: model_step's Row, this rank's values, and (``combined``) every rank's."""

    world_size: int = 1
    tokens_per_s: float | None = None  # per GPU (per rank): the case's tokens per rank over the row's step ms
    ms_ranks: list[float] = field(default_factory=list)   # each rank's step ms (its median)
    peak_gib_ranks: list[float] = field(default_factory=list)  # each rank's peak memory (GPU only)
    claims_agree: bool | None = None  # every rank claimed the same (``claims`` is the minimum over ranks)
    eager_calls: tuple[int, int] | None = None  # (norm calls, attention calls) of one eager forward


def _executors(variant: DistVariant) -> list:
    """Thunder's executor list for ``variant``: model_step's (segkit_ex's or Thunder's defaults, no cuDNN
    executor), Liger's first for the Liger variant."""
    executors = model_step.thunder_executors(model_step.Variant(variant.name, variant.label, thunder=True,
                                                                segkit=variant.segkit))
    if variant.liger:
        from benchmarks import liger_thunder

        executors = [liger_thunder.executor(), *executors]
    return executors


def make(variant: DistVariant, built: Built, device: torch.device) -> tuple[Callable, Callable]:
    """(the step's callable, the named parameters whose grads the step sets) of ``built`` sharded and compiled the
    variant's way; ``built.model`` is sharded in place."""
    import thunder

    model = built.model
    if variant.liger:
        from benchmarks import liger_thunder

        why = liger_thunder.unavailable(str(device))
        if why:
            raise model_step.Unavailable(f"variant {variant.name}: {why}")
    if variant.compiler in ("thunder", "thunderfx") and not variant.segkit:
        model_step.stock_thunder_fixes()  # a rival as its users run it: Thunder's fixes, none of segkit's
    if variant.shard == "thunder-fsdp":
        options = {}
        if variant.liger:
            from benchmarks import liger_patterns

            options["transforms"] = [liger_patterns.LigerPatterns()]
        jm = thunder.jit(model, executors=_executors(variant), **options)
        fn = thunder.distributed.fsdp(jm, device=device, sharding_strategy=thunder.distributed.FSDPType.ZERO2,
                                      bucketing_strategy=thunder.distributed.FSDPBucketingStrategy.NONE)
        return fn, fn.named_parameters
    from torch.distributed.fsdp import fully_shard

    for block in model.gpt.transformer.h:
        fully_shard(block)
    fully_shard(model)
    if variant.compiler == "eager":
        return model, model.named_parameters
    if variant.compiler == "inductor":
        return torch.compile(model), model.named_parameters
    from thunder.dynamo import thunderfx

    return thunderfx(model, executors=_executors(variant)), model.named_parameters


def _first_line(e: BaseException | Warning) -> str:
    return model_step._first_line(e)


def measure(case: Case, variant: DistVariant, want: dict, row: DistRow, device: torch.device, dtype,
            opts: model_step.Options) -> Callable[[], None]:
    """Fill this rank's ``row``: build, shard and compile, check the first step's grads against ``want`` (the
    reference's), count claims, time, measure saved bytes and peak memory. Returns the step, for more rounds."""
    from thunder_exec import claim_count

    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()  # variants kept alive for --rounds: not this one's
    built = _built(case, device, dtype)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn, named = make(variant, built, device)
        owner = fn if isinstance(fn, torch.nn.Module) else built.model

        def step() -> None:
            owner.zero_grad(set_to_none=True)
            fn(*built.inputs).backward()

        step()
    if cuda:
        torch.cuda.synchronize()
    row.first_step_s = time.perf_counter() - t0
    row.grad_err = model_dist.grad_error(lambda: [(n, p.grad) for n, p in named()], want,
                                         variant.shard == "thunder-fsdp")
    notes = list(dict.fromkeys(_first_line(w.message) for w in caught
                               if w.category.__module__.startswith(("thunder_exec", "segkit"))))
    if variant.compiler in ("thunder", "thunderfx"):
        row.claims = claim_count.claims(fn)  # the first step's calls: every Thunder function ran once per call
    if variant.liger:
        from benchmarks import liger_thunder

        notes.append("Liger " + ", ".join(f"{op} {f}/{b}" for op, (f, b) in liger_thunder.claims(fn).items()))
    row.ms, row.host_ms = time_steps(step, opts.iters, opts.warmup, cuda, opts.back_to_back)
    row.ms_rounds = [row.ms]
    try:
        live = [p for _, p in named()] + [*built.model.buffers(), *built.inputs]
        row.saved_gib = saved_for_backward(lambda: fn(*built.inputs), live) / 2**30
    except Exception as e:  # a variant that cannot run under saved-tensor hooks still has its other columns
        notes.append(f"saved bytes not measured: {_first_line(e)}")
    if cuda:
        row.peak_gib = (torch.cuda.max_memory_allocated() - before) / 2**30
    row.note = "; ".join(notes)
    return step


def _built(case: Case, device: torch.device, dtype) -> Built:
    """``case`` built from seed 0 (the same parameters on every rank), its inputs this rank's batch."""
    import torch.distributed as dist

    built = build(case, str(device), dtype)
    return dataclasses.replace(built, inputs=_batch(built, case, dist.get_rank(), device))


def _batch(built: Built, case: Case, rank: int, device) -> tuple:
    tokens = model_dist.rank_tokens(built.model.gpt.config.vocab_size, (case.batch, case.T + 1), rank, device)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def reference(case: Case, device: torch.device, dtype, world: int) -> tuple[dict, tuple[int, int]]:
    """The one-process eager reference's grads over every rank's batch (on the host; each block checkpointed:
    model_dist.eager_reference), and the eager step's (norm, attention) calls."""
    built = build(case, str(device), dtype)
    batches = [_batch(built, case, r, device) for r in range(world)]
    _, grads = model_dist.eager_reference(built.model, batches, list(built.model.gpt.transformer.h))
    return grads, model_dist.eager_calls(built.model, batches[0])


def combined(row: DistRow) -> DistRow:
    """``row`` with every rank's values (a collective: every rank calls it for the same row): step ms the slowest
    rank's, tokens/s per GPU over it, peak memory the highest, claims the minimum and whether all ranks agree,
    grad error the largest, notes of every rank. Interleaved steps (``ms_steps``) stay rank 0's."""
    ranks = model_dist.each_rank({k: getattr(row, k) for k in ("ms", "peak_gib", "claims", "grad_err", "note",
                                                                "saved_gib", "host_ms")})
    out = dataclasses.replace(row)
    ms = [r["ms"] for r in ranks]
    out.ms_ranks = [] if None in ms else ms
    out.ms = None if None in ms else max(ms)
    peaks = [r["peak_gib"] for r in ranks]
    out.peak_gib_ranks = [] if None in peaks else peaks
    out.peak_gib = None if None in peaks else max(peaks)
    claims = [r["claims"] for r in ranks]
    out.claims = {k: min(c.get(k, 0) for c in claims) for k in claims[0]} if all(claims) else {}
    out.claims_agree = all(c == claims[0] for c in claims) if any(claims) else None
    errs = [r["grad_err"] for r in ranks if r["grad_err"] is not None]
    out.grad_err = max(errs) if errs else None
    saved = [r["saved_gib"] for r in ranks if r["saved_gib"] is not None]
    out.saved_gib = max(saved) if saved else None
    out.note = "; ".join(dict.fromkeys(n for r in ranks for n in r["note"].split("; ") if n))
    return out


def run_case(case: Case, variants: list[DistVariant], device: torch.device, dtype, opts: model_step.Options,
             on_row: Callable[[DistRow], None] | None = None) -> list[DistRow]:
    """One combined row per variant, on every rank (``on_row`` sees each as made, and again after the rounds); a
    variant that fails is a row with the failure in its note."""
    import torch.distributed as dist

    world = dist.get_world_size()
    tokens = case.batch * case.T
    model_step._release(str(device))
    try:
        want, calls = reference(case, device, dtype, world)
    except Exception as e:  # a case that cannot run eagerly is rows too
        note = f"case failed: {_first_line(e)}"[:240]
        return [DistRow(case.name, case.name, v.name, world_size=world, note=note) for v in variants]
    model_step._release(str(device))  # the reference's model
    label = f"{case.config} GPT" + (" (tiny)" if case.overrides else "") + f" T={case.T} bs{case.batch} per rank"
    local, steps, out = [], {}, []
    for variant in variants:
        row = DistRow(case.name, label, variant.name, world_size=world, eager_calls=calls)
        try:
            step = measure(case, variant, want, row, device, dtype, opts)
            if opts.rounds > 1:
                steps[variant.name] = step
            del step
        except model_step.Unavailable as e:
            row.note = f"skipped: {e}"[:240]
        except Exception as e:  # a variant that fails is a row of the table, not the end of the run
            row.note = f"failed: {_first_line(e)}"[:240]
        if opts.rounds == 1:
            model_step._release(str(device))
        local.append(row)
        out.append(_with_tokens(combined(row), tokens))
        if on_row:
            on_row(out[-1])
    if opts.rounds > 1 and steps:
        model_step._more_rounds(local, steps, opts, device.type == "cuda")
        steps.clear()
        model_step._release(str(device))
        out = [_with_tokens(combined(r), tokens) for r in local]
        for r in out if on_row else ():
            on_row(r)
    return out


def _with_tokens(row: DistRow, tokens: int) -> DistRow:
    row.tokens_per_s = tokens / (row.ms / 1e3) if row.ms else None
    return row


def build_parser() -> Parser:
    """``torchrun ... benchmarks/model_step_dist.py``'s command line."""
    parser = Parser(prog="benchmarks/model_step_dist.py", description=__doc__.splitlines()[0])
    model_step.add_method_arguments(parser, "case names, comma separated (default: the Llama-3-8B and Llama-3.2-1B "
                                            "cases; tiny-gpt is the CPU one)")
    parser.add_argument("--dtype", choices=["auto", "float32", "bfloat16"], default="auto",
                        help="auto: bfloat16 on CUDA, float32 on CPU")
    parser.add_argument("--timeout-s", type=argtypes.positive_float, default=900.0,
                        help="the process group's timeout: how long ranks wait on one that failed")
    parser.add_argument("--out", type=model_step.TABLE_OUT, help="markdown table (rank 0)")
    parser.add_argument("--json", type=model_step.JSON_OUT, help="the rows and the machine block (rank 0)")
    parser.add_argument("--merge", nargs="+", metavar="JSON", type=argtypes.existing_file,
                        help="join these runs' JSON files (several world sizes) into one table with weak scaling")
    parser.add_argument("--list", action="store_true", help="print the cases and variants")
    parser.set_defaults(func=_model_step_dist)
    return parser


def main(argv: list[str] | None = None) -> int:
    return entry.run(build_parser, argv)


def _select(args) -> tuple[list[Case], list[DistVariant]]:
    cases, known = {c.name: c for c in CASES}, {v.name: v for v in VARIANTS}
    named = ((model_step._names(args.case), cases, "case"), (model_step._names(args.variants), known, "variant"))
    for names, table, what in named:
        unknown = [n for n in names if n not in table]
        if unknown:
            raise SystemExit(f"model_step_dist: unknown {what} {', '.join(unknown)}; known: {', '.join(table)}")
    chosen = [cases[n] for n in model_step._names(args.case)] or [c for c in CASES if c.default]
    return chosen, [known[n] for n in model_step._names(args.variants)] or VARIANTS


def _model_step_dist(args) -> int | None:
    if args.list:
        for c in CASES:
            print(f"case {c.name}: {c.kind} {c.config} T={c.T} batch {c.batch} per rank {c.overrides} {c.note}")
        for v in VARIANTS:
            print(f"variant {v.name}: {v.label}")
        return None
    if args.merge:
        doc = model_dist_table.merge([Path(p) for p in args.merge])
        model_dist_table.write(doc, args.out, args.json)
        print(model_dist_table.markdown(doc))
        return None
    import torch.distributed as dist

    cases, variants = _select(args)  # before the group: a bad name is one line, not a hang
    device = model_dist.init_group(args.timeout_s)
    dtype = (torch.bfloat16 if device.type == "cuda" else torch.float32) if args.dtype == "auto" else \
        getattr(torch, args.dtype)
    opts = model_step.Options(args.iters, args.warmup, args.rounds)
    rank, world = dist.get_rank(), dist.get_world_size()
    setting = {"world_size": world, "backend": dist.get_backend(), "dtype": str(dtype).removeprefix("torch."),
               "interconnect": model_dist.interconnect(device.type == "cuda", world)}
    rows: list[DistRow] = []

    def keep(row: DistRow) -> None:  # after every row: a run cut short keeps what it measured
        at = next((i for i, r in enumerate(rows) if (r.case, r.variant) == (row.case, row.variant)), None)
        rows.append(row) if at is None else rows.__setitem__(at, row)
        if rank == 0:
            print(model_dist_table.row_line(row), flush=True)
            doc = model_dist_table.document(rows, cases, variants, opts, str(device), setting)
            model_dist_table.write(doc, args.out, args.json)

    for case in cases:
        run_case(case, variants, device, dtype, opts, on_row=keep)
    if rank == 0:
        print(model_dist_table.markdown(model_dist_table.document(rows, cases, variants, opts, str(device),
                                                                  setting)))
    dist.destroy_process_group()
    return None


if __name__ == "__main__":
    import sys

    sys.exit(main())
