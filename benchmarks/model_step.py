"""Training steps (forward + backward) of real models (benchmarks/model_cases.py) under eager, torch.compile, stock
Thunder, Thunder + segkit_ex (fused into Thunder's nvFuser regions, or opaque), Thunder with CUDA graphs and, when
named, Thunder with Liger-Kernel's operators bound as an executor (benchmarks/liger_thunder.py) or with its own cuDNN
executor (nvidia-cudnn-frontend: benchmarks/stage_cudnn_frontend.sh): step time, host
time, peak memory, bytes saved for the backward, kernels and nvFusion regions per step, segkit's claims, grads
against eager and the first (compiling) step. A variant that fails is a row with the failure in its note, one this host cannot run a row
skipped with the reason. Writes a markdown table and a JSON file with the machine block (benchmarks/model_table.py);
``--merge`` joins the JSON files of several runs.
The cases are benchmarks/model_cases.py, the measurements benchmarks/model_measure.py.

    python benchmarks/model_step.py [--case llama3-8b-x1,pythia-1b-x2] [--variants eager,thunder] [--iters 10]
        [--rounds 3] [--shard 0/4] [--case-limit-s 400] [--out table.md] [--json table.json] [--traces DIR]
        [--profile DIR] [--host-profile DIR] [--back-to-back K]
        [--variants-from CONTROLS.json]
    python benchmarks/model_step.py --merge a.json b.json --out table.md --json table.json

``VARIANTS`` are the rivals and segkit_ex's user-facing modes; ``--variants-from`` adds a table of more (a
campaign's controls: the lab's are lab/campaigns/step_controls.json, their runs read by benchmarks/cut_evidence.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

if __package__ in (None, ""):  # run as a script: the repository root on the path, as under ``python -m``
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.model_cases import CASES, Built, Case, build, import_litgpt, select, shard  # noqa: E402
from benchmarks import model_table  # noqa: E402
from segkit.cli import argtypes, entry  # noqa: E402
from segkit.cli.parser import Parser  # noqa: E402
from segkit.files import read_text  # noqa: E402
from benchmarks.model_measure import (  # noqa: E402
    NORM_BW, NORM_FW, ROPE_BW, ROPE_FW, host_profile, kernels_per_step, profile, save_traces, saved_for_backward,
    step_breakdown, time_step, time_steps, trace_counts)

__all__ = ["CASES", "NORM_BW", "NORM_FW", "ROPE_BW", "ROPE_FW", "VARIANTS", "Row", "Unavailable", "Variant",
           "case_variants", "import_litgpt", "load_variants", "run_case"]


@dataclass(frozen=True)
class Variant:
    """One way to run the model. ``fuse`` is segkit_ex's ``segkit_fuse`` compile option ("fused": segkit's symbols
    inside Thunder's nvFuser regions; "opaque": each its own hand-scheduled kernel; pairs: a mode per op, as the
    option's mapping); ``graphs`` adds Thunder's ``CUDAGraphTransform`` (the step replayed from CUDA graphs, inputs
    copied into static buffers; with ``inductor``, torch.compile's reduce-overhead mode); ``attention`` is
    segkit_ex's ``segkit_attention`` compile option, ``gqa`` its ``segkit_gqa`` and ``norm_saves`` its
    ``segkit_norm_saves``; ``liger`` puts Liger-Kernel's
    operators first among Thunder's executors (benchmarks/liger_thunder.py, with its pattern transform); ``cudnn``
    puts Thunder's own cuDNN executor first, as Thunder does whenever nvidia-cudnn-frontend imports. Every other
    Thunder variant runs without that executor, so a process with cudnn-frontend importable measures them as a host
    without it does."""

    name: str
    label: str
    default: bool = True  # in the table unless --variants names others
    thunder: bool = False
    inductor: bool = False
    segkit: bool = False
    fuse: str | tuple[tuple[str, str], ...] | None = None
    graphs: bool = False
    attention: str | None = None
    liger: bool = False
    cudnn: bool = False
    gqa: bool = True  # segkit_ex's segkit_gqa: grouped-query attention on cuDNN with k / v unrepeated
    norm_saves: str | None = None  # segkit_ex's segkit_norm_saves: "output", the norm backward from y

    @property
    def fuse_option(self) -> str | dict[str, str] | None:
        return dict(self.fuse) if isinstance(self.fuse, tuple) else self.fuse


VARIANTS = [
    Variant("eager", "eager"),
    Variant("compile", "torch.compile", inductor=True),
    Variant("compile-graphs", "torch.compile (reduce-overhead: CUDA graphs)", default=False, inductor=True,
            graphs=True),
    Variant("thunder", "Thunder", thunder=True),
    Variant("segkit-fused", "Thunder + segkit_ex (fused)", thunder=True, segkit=True, fuse="fused"),
    Variant("segkit-opaque", "Thunder + segkit_ex (opaque)", thunder=True, segkit=True, fuse="opaque"),
    Variant("segkit-auto", "Thunder + segkit_ex (auto, the default: step evidence, else the cut cost model)",
            thunder=True, segkit=True, fuse="auto"),
    Variant("segkit-auto-as-is", "Thunder + segkit_ex (auto, cuDNN reads q in Thunder's layout)", default=False,
            thunder=True, segkit=True, fuse="auto", attention="cudnn-as-is"),
    Variant("segkit-auto-repeated-kv", "Thunder + segkit_ex (auto, cuDNN on k / v repeated to q's heads, as the model "
            "repeats them)", default=False, thunder=True, segkit=True, fuse="auto", gqa=False),
    Variant("segkit-saves-output", "Thunder + segkit_ex (auto), the norm backward from the norm's output (x not "
            "saved for it)", default=False, thunder=True, segkit=True, fuse="auto", norm_saves="output"),
    Variant("segkit-own", "Thunder + segkit_ex (auto), attention left to Thunder: segkit's norms and RoPE alone",
            default=False, thunder=True, segkit=True, fuse="auto", attention="thunder"),
    Variant("thunder-again", "Thunder, compiled a second time: an A/A control, its ratio to Thunder the method's "
            "resolution", default=False, thunder=True),
    Variant("thunder-graphs", "Thunder + CUDA graphs", thunder=True, graphs=True),
    Variant("segkit-graphs", "Thunder + segkit_ex (auto, the default) + CUDA graphs", thunder=True, segkit=True,
            fuse="auto", graphs=True),
    Variant("thunder-liger", "Thunder + Liger-Kernel's operators", default=False, thunder=True, liger=True),
    Variant("thunder-cudnn", "Thunder + its cuDNN executor (nvidia-cudnn-frontend)", default=False, thunder=True,
            cudnn=True),
]


#: The user-facing variants above; a campaign's controls (one spec's mode, or one shape's, changed against these)
#: are a table given on the command line (``--variants-from``, ``load_variants``): the lab keeps its own in
#: lab/campaigns/step_controls.json, and benchmarks/cut_evidence.py turns their runs into evidence tables.
VARIANT_FIELDS = {f.name for f in dataclasses.fields(Variant)}


def load_variants(path: Path) -> list[Variant]:
    """The variants of a table file: JSON ``{"variants": [{Variant field: value, ..., "why": text}, ...]}``, ``fuse``
    a mode or a mapping of OP[@SHAPE] to mode (the ``segkit_fuse`` option); a field Variant lacks, a variant
    without a name or label, or a name twice is a SystemExit naming the file and the entry."""
    try:
        doc = json.loads(read_text(path))
    except (OSError, ValueError) as e:
        raise SystemExit(f"model_step: --variants-from {path}: cannot read it as JSON ({e})") from None
    entries = doc.get("variants") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise SystemExit(f"model_step: --variants-from {path}: want an object with a 'variants' list")
    out = []
    for i, entry in enumerate(entries):
        fields = {k: v for k, v in entry.items() if k != "why"} if isinstance(entry, dict) else {}
        unknown = sorted(set(fields) - VARIANT_FIELDS)
        if unknown or not fields.get("name") or not fields.get("label"):
            raise SystemExit(f"model_step: --variants-from {path}: variant {i} ({fields.get('name')!r}): "
                             + (f"unknown field {', '.join(unknown)}" if unknown else "needs a name and a label")
                             + f"; fields: {', '.join(sorted(VARIANT_FIELDS))}, why")
        if isinstance(fields.get("fuse"), dict):
            fields["fuse"] = tuple(fields["fuse"].items())
        out.append(Variant(**fields))
    names = [v.name for v in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SystemExit(f"model_step: --variants-from {path}: variant {', '.join(twice)} given twice")
    return out


class Unavailable(RuntimeError):
    """A variant this host cannot run (no CUDA device, a library not installed): its row says so, skipped."""


@dataclass
class Row:
    """One (case, variant) of the table; GPU-only columns (host ms, peak memory, kernels) are None on CPU."""

    case: str
    label: str
    variant: str
    ms: float | None = None                   # step: CUDA events (wall clock on CPU), median of --iters (with
                                              # --rounds: the median of the rounds' medians)
    ms_rounds: list[float] = field(default_factory=list)  # each round's median, rounds interleaved over variants
    ms_steps: list[float] = field(default_factory=list)   # rounds 2..: every step, the variants interleaved step by
                                                          # step (pass i of every variant side by side)
    host_ms: float | None = None              # host time to issue one step (queue empty at its start), median
                                              # (with --rounds: the median of the rounds' medians, as ms)
    host_steps: list[float] = field(default_factory=list)  # rounds 2..: each interleaved step's host ms, as ms_steps
    peak_gib: float | None = None             # torch.cuda.max_memory_allocated over the variant (model included)
    saved_gib: float | None = None            # what one forward saves for its backward, the model's parameters,
                                              # buffers and the inputs left out (model_measure.saved_for_backward)
    kernels: int | None = None                # CUDA kernels of one profiled step
    regions: tuple[int, int] | None = None    # nvFusion regions in the last forward / backward execution trace
    claims: dict[str, int] = field(default_factory=dict)  # segkit norm / RoPE symbols, forward and backward
    cuts: list[dict] = field(default_factory=list)  # each fusible call's choice (thunder_exec.decide.Choice)
    grad_err: float | None = None             # max |g - g_eager| / max |g_eager| over grads, first step and rerun
    first_step_s: float | None = None         # the first step (tracing, compiling and running it)
    breakdown: dict[str, float] = field(default_factory=dict)  # with --profile: us per step by kind of work
    note: str = ""


def make(variant: Variant, model: torch.nn.Module, device: str) -> Callable:
    """``model`` compiled the variant's way."""
    if variant.graphs and not device.startswith("cuda"):
        raise ValueError(f"variant {variant.name}: CUDA graphs need a CUDA device, not {device!r}")
    if variant.inductor:
        return torch.compile(model, mode="reduce-overhead" if variant.graphs else None)
    if not variant.thunder:
        return model
    import thunder

    if variant.liger:
        from benchmarks import liger_thunder

        why = liger_thunder.unavailable(device)
        if why:
            raise Unavailable(f"variant {variant.name}: {why}")
    options = {"segkit_fuse": variant.fuse_option} if variant.fuse else {}
    if variant.attention:
        options["segkit_attention"] = variant.attention
    if not variant.gqa:
        options["segkit_gqa"] = False
    if variant.norm_saves:
        options["segkit_norm_saves"] = variant.norm_saves
    if variant.graphs:
        from thunder.transforms.cudagraph import CUDAGraphTransform

        options["transforms"] = [CUDAGraphTransform()]
    if not variant.segkit:  # a rival's row is the rival as its users run it: Thunder's three fixes, none of segkit's
        stock_thunder_fixes()
    executors = thunder_executors(variant)  # segkit's: thunder_exec.executors() installs its patches
    if variant.liger:  # first in the list, as Thunder's tutorial puts it; its pattern transform finds the ops
        from benchmarks import liger_patterns, liger_thunder

        executors = [liger_thunder.executor(), *executors]
        options["transforms"] = [*options.get("transforms", ()), liger_patterns.LigerPatterns()]
    return thunder.jit(model, executors=executors, **options)


#: nvidia-cudnn-frontend that Thunder 0.2.6 runs with (1.32.0, the newest, fails in its SDPA: ../shared/gpu facts)
CUDNN_FRONTEND = "1.15.0"


def stock_thunder_fixes() -> None:
    """What stock Thunder 0.2.6 needs to run here, and nothing of segkit_ex's: the narrow fixes of thunder_exec.compat
    (its nvFuser executor against an nvfuser_direct-only install, the rematerialization of a split, the CUDA graph
    runner's copy of a saved view onto itself), not its lookasides, import hook or fusion pass. Those install once
    in a process; a stock variant measured after a segkit one in the same process runs them as no-ops (without
    segkit_ex among the executors they hand every call to Thunder)."""
    from thunder_exec import compat

    compat.install_thunder_fixes()


def thunder_executors(variant: Variant) -> list:
    """A Thunder variant's executor list: segkit_ex's or Thunder's defaults, without Thunder's cuDNN executor unless
    the variant is that rival (then first, where Thunder puts it when cudnn-frontend imports)."""
    import thunder
    import thunder_exec

    executors = thunder_exec.executors() if variant.segkit else thunder.get_default_executors()
    executors = [ex for ex in executors if ex.name != "cudnn"]
    if not variant.cudnn:
        return executors
    cudnn = thunder.extend.get_executor("cudnn")
    if cudnn is None:
        raise Unavailable(f"variant {variant.name}: Thunder's cuDNN executor is not registered (nvidia-cudnn-frontend "
                          f"not importable; Thunder 0.2.6 runs with {CUDNN_FRONTEND}: "
                          "benchmarks/stage_cudnn_frontend.sh)")
    return [cudnn, *executors]


def _step(fn: Callable, built: Built) -> None:
    """One training step: grads set to None (no accumulation kernels), forward, backward."""
    built.model.zero_grad(set_to_none=True)
    for t in built.grad_inputs:
        t.grad = None
    fn(*built.inputs).backward()


def _live(built: Built) -> list[torch.Tensor]:
    """The tensors a step's saved bytes leave out: they live whether or not a backward follows."""
    return [*built.model.parameters(), *built.model.buffers(), *built.inputs]


def _grads(fn: Callable, built: Built) -> list[torch.Tensor | None]:
    _step(fn, built)
    return [t.grad for t in built.grad_inputs] + [p.grad for p in built.model.parameters()]


def grad_error(got: list[torch.Tensor | None], want: list[torch.Tensor | None]) -> float:
    """Max over grads of max |g - w| / max |w|; a grad eager computes and the variant does not is an error."""
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        if g is None:
            raise RuntimeError(f"no grad for input/parameter {i} (eager computes one)")
        w = w.to(g.device).float()
        worst = max(worst, ((g.float() - w).abs().max() / w.abs().max().clamp(min=1e-6)).item())
    return worst


@contextlib.contextmanager
def changed_inputs(built: Built):
    """The inputs changed in place (floats negated, integers rolled) and restored after: a variant that replays a
    CUDA graph must copy new values into its static inputs, and its grads must follow them."""
    tensors = [t for t in built.inputs if isinstance(t, torch.Tensor)]
    with torch.no_grad():
        for t in tensors:
            t.neg_() if t.is_floating_point() else t.copy_(t.roll(1, -1))
    try:
        yield
    finally:
        with torch.no_grad():
            for t in tensors:
                t.neg_() if t.is_floating_point() else t.copy_(t.roll(-1, -1))



@dataclass
class Options:
    iters: int = 10
    warmup: int = 3
    rounds: int = 1  # >1: every variant timed again, round after round over the case's variants (interleaved)
    case_limit_s: float = 400.0
    traces: Path | None = None
    profile: Path | None = None
    back_to_back: int = 1  # steps per timing, issued back to back (a training loop's steady state)
    host_profile: Path | None = None


def measure(built: Built, variant: Variant, want: tuple[list, list], row: Row, device: str,
            opts: Options) -> Callable[[], None]:
    """Fill ``row``: compile and check the variant, time it, check it again on changed inputs (``want``: eager's
    grads on the inputs and on the changed inputs); a failure propagates (the caller notes it). Returns the
    variant's step, for more rounds."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    if variant.segkit:
        from thunder_exec import decide as fusible

        fusible.clear_notes()  # this variant's choices alone
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = make(variant, built.model, device)
        got = _grads(fn, built)
    if variant.segkit:
        row.cuts = [dataclasses.asdict(c) for c in fusible.CHOICES.values()]
    if cuda:
        torch.cuda.synchronize()
    row.first_step_s = time.perf_counter() - t0
    row.grad_err = grad_error(got, want[0])
    del got
    notes = list(dict.fromkeys(_first_line(w.message) for w in caught  # segkit's own: fallbacks, wrong results
                               if w.category.__module__.startswith(("thunder_exec", "segkit"))))
    if variant.thunder:
        row.regions, row.claims = trace_counts(fn)
        if opts.traces:
            save_traces(fn, opts.traces / row.case / variant.name)
    if variant.liger:  # Liger's operators that ran, forward / backward (segkit's claims are counted alike)
        from benchmarks import liger_thunder

        notes.append("Liger " + ", ".join(f"{op} {f}/{b}" for op, (f, b) in liger_thunder.claims(fn).items()))

    def step() -> None:
        _step(fn, built)

    row.ms, row.host_ms = time_steps(step, opts.iters, opts.warmup, cuda, opts.back_to_back)
    row.ms_rounds = [row.ms]
    with changed_inputs(built):
        row.grad_err = max(row.grad_err, grad_error(_grads(fn, built), want[1]))
    try:  # after the timing (a torch.compile variant may compile again under the hooks)
        row.saved_gib = saved_for_backward(lambda: fn(*built.inputs), _live(built)) / 2**30
    except Exception as e:  # a variant that cannot run under saved-tensor hooks still has its other columns
        notes.append(f"saved bytes not measured: {_first_line(e)}")
    if cuda:
        row.kernels = kernels_per_step(step)
        if opts.profile:
            path = opts.profile / f"{row.case}-{variant.name}.json.gz"
            profile(step, path)
            row.breakdown = step_breakdown(path)
        row.peak_gib = torch.cuda.max_memory_allocated() / 2**30
    if opts.host_profile:
        host_profile(step, opts.host_profile / f"{row.case}-{variant.name}.txt")
    row.note = "; ".join(notes)
    return step


def _first_line(e: BaseException | Warning) -> str:
    return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"


def _release(device: str) -> None:
    gc.collect()
    torch._dynamo.reset()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def _eager_grads(built: Built) -> list[torch.Tensor | None]:
    return [g.detach().to("cpu", copy=True) if g is not None else None  # on the host: in no variant's peak memory
            for g in _grads(built.model, built)]


def run_case(case: Case, variants: list[Variant], device: str, opts: Options, dtype: torch.dtype = torch.bfloat16,
             on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """One row per variant (``on_row`` sees each as it is made; with ``opts.rounds`` > 1 first as a copy noted
    ``ROUND_1_ONLY``, so that a process the rounds kill keeps its first round, then again, itself, once the rounds
    are done); a variant that fails, or that the case's wall-clock limit leaves out, is a row too. With rounds, every
    compiled variant stays alive until the case ends and is timed again round after round, the variants in turn,
    so that a slow spell of the host (another process compiling) lands on all of them rather than on one."""
    _release(device)  # the previous case's model and compiled functions
    start = time.perf_counter()
    try:
        built = build(case, device, dtype)
        want = _eager_grads(built)
        with changed_inputs(built):
            want = (want, _eager_grads(built))
    except Exception as e:  # a case that cannot be built or run eagerly is rows too, and the run goes on
        note = f"case failed: {_first_line(e)}"[:240]
        return [Row(case.name, case.name, v.name, note=note) for v in variants]
    rows, steps, apart = [], {}, rounds_apart(variants, opts.rounds)
    for variant in variants:
        row = Row(case.name, built.label, variant.name)
        elapsed = time.perf_counter() - start
        if variant.name in apart:
            row.note = apart[variant.name]
        elif elapsed > opts.case_limit_s:
            row.note = f"skipped: the case had run {elapsed:.0f} s, past its {opts.case_limit_s:.0f} s limit"
        else:
            try:
                step = measure(built, variant, want, row, device, opts)
                if opts.rounds > 1:  # kept alive for the later rounds; otherwise released with the variant
                    steps[variant.name] = step
                del step
            except Unavailable as e:  # a variant this host cannot run: skipped, with the reason
                row.note = f"skipped: {e}"[:240]
            except Exception as e:  # a variant that fails is a row of the table, not the end of the run
                row.note = f"failed: {_first_line(e)}"[:240]
        if opts.rounds == 1:
            _release(device)
        rows.append(row)
        print(model_table.row_line(row), flush=True)
        if on_row:
            on_row(row if opts.rounds == 1 or row.ms is None else
                   dataclasses.replace(row, note="; ".join(filter(None, (row.note, ROUND_1_ONLY)))))
    if opts.rounds > 1:
        _more_rounds(rows, steps, opts, device.startswith("cuda"))
        steps.clear()
        _release(device)
        if on_row:
            for row in rows:
                on_row(row)
    return rows


#: A row's note while its case's later rounds run: what a process that dies in them (a crash of one variant's
#: CUDA graphs, a time limit) leaves in its JSON for that row.
ROUND_1_ONLY = "round 1 only: the process ended before the interleaved rounds finished"


def _more_rounds(rows: list[Row], steps: dict[str, Callable[[], None]], opts: Options, cuda: bool) -> None:
    """Rounds 2..``opts.rounds``, the variants interleaved step by step: a warm-up step of each variant, then
    ``opts.iters`` passes of one timed step of every variant in turn, each pass starting one variant later than the
    last (A B C, B C A, C A B, ...), so that a drift of the GPU's clocks or a slow spell of the host lands on every
    variant alike and no variant always follows the same one (in a fixed order, two variants running the same
    kernels on a host-bound small model paired apart in most passes: the lab's index has the run; the
    ``thunder-again`` variant measures the pairing's resolution). A round's median per variant goes to
    ``ms_rounds`` (the row's step ms: the median of its rounds' medians); every interleaved step's time goes to
    ``ms_steps``, pass by pass, for the paired ratios of the table (model_table.paired_ratio); its host ms likewise
    to ``host_steps`` (the host bar pairs them: a lone step's host ms moves by a millisecond between leases)."""
    timed = [r for r in rows if r.variant in steps]
    host_rounds = {r.variant: [] if r.host_ms is None else [r.host_ms] for r in timed}
    passes = 0
    for _ in range(opts.rounds - 1):
        for row in timed:
            steps[row.variant]()
        if cuda:
            torch.cuda.synchronize()
        for _ in range(opts.iters):
            first = passes % len(timed)
            passes += 1
            for row in timed[first:] + timed[:first]:
                ms, host = time_step(steps[row.variant], cuda, opts.back_to_back)
                row.ms_steps.append(ms)
                if cuda:
                    row.host_steps.append(host)
        for row in timed:
            row.ms_rounds.append(statistics.median(row.ms_steps[-opts.iters:]))
            if cuda:
                host_rounds[row.variant].append(statistics.median(row.host_steps[-opts.iters:]))
    for row in timed:
        row.ms = statistics.median(row.ms_rounds)
        if host_rounds[row.variant]:
            row.host_ms = statistics.median(host_rounds[row.variant])
        print(f"{row.case} | {row.variant} | rounds {', '.join(f'{m:.2f}' for m in row.ms_rounds)} ms | "
              f"median {row.ms:.2f}", flush=True)


#: Variants that must not stay alive together in one process (--rounds keeps every variant alive), each pair with
#: what happens: the later variant of a pair is skipped with a note (run it in its own process). The lab's index
#: has the run that isolated each pair.
ROUNDS_APART = {frozenset({"thunder-graphs", "compile-graphs"}): "their CUDA graphs, replayed in turn, kill the "
                "process (unspecified launch failure; no segkit in either)"}


def rounds_apart(variants: list[Variant], rounds: int) -> dict[str, str]:
    """With ``rounds`` > 1: the variants to skip, each with its row's note (ROUNDS_APART), so that no pair of it
    shares the process; with one round every variant is released before the next and nothing is skipped."""
    if rounds < 2:
        return {}
    names, skip = [v.name for v in variants], {}
    for i, name in enumerate(names):
        for earlier in names[:i]:
            why = ROUNDS_APART.get(frozenset({earlier, name}))
            if why and earlier not in skip:
                skip[name] = (f"skipped: with --rounds every variant stays alive, and with {earlier} {why}; run it "
                              f"without {earlier}")
                break
    return skip


def case_variants(case: Case, named: list[Variant], table: list[Variant] | None = None) -> list[Variant]:
    """The variants ``--variants`` names, else the default ones of ``table`` (``VARIANTS`` and any given with
    ``--variants-from``) and those the case adds (``Case.variants``), in table order."""
    return named or [v for v in (VARIANTS if table is None else table) if v.default or v.name in case.variants]


def _names(values: list[str] | None) -> list[str]:
    return [n for v in values or () for n in v.split(",") if n]


#: The step table's outputs: its markdown (it opens "GPU: ...") and its JSON (rows and the machine block).
TABLE_OUT = argtypes.output_file_of("a step table", argtypes.text_starting("GPU: "))
JSON_OUT = argtypes.output_file_of("a step table's JSON", argtypes.json_holding("rows"))


def add_method_arguments(parser: Parser, case_help: str) -> None:
    """The step table's selection and timing arguments (--case, --variants, --iters, --warmup, --rounds), which the
    table on N ranks (benchmarks/model_step_dist.py) shares."""
    parser.add_argument("--case", action="append", type=argtypes.text, help=case_help)
    parser.add_argument("--variants", action="append", type=argtypes.text,
                        help="variant names, comma separated (default: all)")
    parser.add_argument("--iters", type=argtypes.positive_int, default=10)
    parser.add_argument("--warmup", type=argtypes.count, default=3)
    parser.add_argument("--rounds", type=argtypes.positive_int, default=1,
                        help="time every variant this many times, round after round over the case's variants "
                             "(their compiled functions kept alive); the step is the median of the rounds")


def build_parser() -> Parser:
    """``python benchmarks/model_step.py``'s command line."""
    parser = Parser(prog="benchmarks/model_step.py", description=__doc__.splitlines()[0])
    add_method_arguments(parser, "case names, comma separated (default: every case but those marked in --list)")
    parser.add_argument("--back-to-back", type=argtypes.positive_int, default=1, metavar="K",
                        help="time K steps issued back to back, per step (a training loop's steady state: a step's "
                             "host lead-in hides behind the previous step's kernels); default 1, each step alone")
    parser.add_argument("--case-limit-s", type=argtypes.nonnegative_float, default=400.0,
                        help="start no further variant of a case once it has run this long")
    parser.add_argument("--budget-s", type=argtypes.nonnegative_float,
                        help="this process's wall clock: a case's limit is at most the time left over the cases left")
    parser.add_argument("--shard", type=argtypes.shard,
                        help="I/N: run this shard of the selected cases (one process per GPU)")
    parser.add_argument("--device", type=argtypes.name, default="cuda")
    parser.add_argument("--out", type=TABLE_OUT, help="markdown table")
    parser.add_argument("--json", type=JSON_OUT, help="the rows and the machine block")
    parser.add_argument("--traces", type=argtypes.output_dir,
                        help="save each Thunder variant's forward/backward traces here")
    parser.add_argument("--profile", type=argtypes.output_dir_writing("*.json.gz"),
                        help="one torch.profiler chrome trace per variant here (.json.gz)")
    parser.add_argument("--host-profile", type=argtypes.output_dir_writing("*.txt"),
                        help="where each variant's host time per step goes (cProfile, text) here")
    parser.add_argument("--merge", nargs="+", metavar="JSON", type=argtypes.existing_file,
                        help="join these runs' JSON files into one table")
    parser.add_argument("--variants-from", type=argtypes.existing_file, metavar="JSON", action="append",
                        help="more variants from this table file (a campaign's controls, nameable in --variants; "
                             "load_variants says its form)")
    parser.add_argument("--list", action="store_true", help="print the cases and variants")
    parser.add_force()
    parser.set_defaults(func=_model_step)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The step table's command line: every failure one line (``benchmarks/model_step.py: error: ...``)."""
    return entry.run(build_parser, argv)


def _model_step(args) -> int | None:
    table = list(VARIANTS)
    for path in args.variants_from or ():
        more = load_variants(path)
        clash = sorted({v.name for v in table} & {v.name for v in more})
        if clash:
            raise SystemExit(f"model_step: --variants-from {path}: variant {', '.join(clash)} is already defined")
        table += more
    if args.list:
        for c in CASES:
            extra = f" +{','.join(c.variants)}" if c.variants else ""
            named = "" if c.default else " (only where --case names it)"
            print(f"case {c.name}{named}: {c.kind} {c.config} T={c.T} batch {c.batch} {c.overrides}{extra} {c.note}")
        for v in table:
            print(f"variant {v.name}: {v.label}")
        return
    if args.merge:
        doc = model_table.merge([Path(p) for p in args.merge])
    else:
        cases = select(_names(args.case))
        if args.shard:
            cases = shard(cases, *args.shard)
        known = {v.name: v for v in table}
        unknown = [n for n in _names(args.variants) if n not in known]
        if unknown:
            raise SystemExit(f"model_step: unknown variant {', '.join(unknown)}; known: {', '.join(known)}")
        named = [known[n] for n in _names(args.variants)]
        variants = [v for v in table if any(v in case_variants(c, named, table) for c in cases)]
        opts = Options(args.iters, args.warmup, args.rounds, args.case_limit_s, args.traces, args.profile,
                       args.back_to_back, args.host_profile)
        rows, start = [], time.perf_counter()

        def keep(row: Row) -> None:  # after every row: a run cut short keeps what it measured
            at = next((i for i, r in enumerate(rows) if (r.case, r.variant) == (row.case, row.variant)), None)
            if at is None:
                rows.append(row)
            else:  # a row reported again after the rounds replaces its round-1 copy
                rows[at] = row
            model_table.write(model_table.document(rows, cases, variants, opts, args.device), args.out, args.json)

        for i, case in enumerate(cases):
            if args.budget_s is not None:
                left = (args.budget_s - (time.perf_counter() - start)) / (len(cases) - i)
                opts = dataclasses.replace(opts, case_limit_s=min(args.case_limit_s, max(left, 0.0)))
            run_case(case, case_variants(case, named, table), args.device, opts, on_row=keep)
        doc = model_table.document(rows, cases, variants, opts, args.device)
    model_table.write(doc, args.out, args.json)
    print(model_table.markdown(doc))


if __name__ == "__main__":
    import sys

    sys.exit(main())
