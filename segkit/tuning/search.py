"""``segkit tune``'s search: formulations x nvFuser scheduler options x bookend policy for one fusion.

Every candidate is first run and compared with the reference (a workload's float64 reference, or the interpreter
for a repro script); a wrong or failing candidate is reported and never timed. The rest are timed beside
nvFuser's defaults and the builder's hand-picked rule in the same process, L2 flushed before each call, median,
two ways: the summed kernel time (CUPTI), which ranks them, and the time between CUDA events around one call,
which adds launch and host gaps and is shown beside it. Kernel time ranks because it is what the benchmarks
report: event time let host time (a manual schedule's, or whatever else the CPUs were doing) pick a slower
kernel. Host time is its own question, measured under CUDA-graph replay
(``segkit.experiment``). The fastest is the winner: a ``TableEntry`` for this GPU model.

The core knows the generic candidates (nvFuser's defaults, the builder's rule, enable options, bookend policies,
the reuse pass); a workload adds its own (``SpecCandidates``: heuristic override grids, its formulations and
their schedules) and realizes the formulations the core does not know (``realize``'s hook). fusions.tune does
both for a fusions spec (``tune_spec``).

A grid bigger than the budget: candidates come in order of promise (the heuristic overrides nearest the
builder's rule first, one parameter changed before two), the result says how long the rest would need, and
``--shard i/n`` splits the grid over processes or GPUs (the baselines run in every shard) for
``TuningTable.fastest_of`` to merge. On a machine without a GPU, ``--reference`` validates every candidate's
formulation on the reference interpreter (no timing).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from segkit.bookend import POLICIES, bookend, bookended
from segkit.compare import compare
from segkit.errors import SegkitError, error_summary
from segkit.interp import run_reference
from segkit.nvfuser.timing import event_us, kernel_us
from segkit.tuning.table import REUSE, NvTuning, TableEntry, describe_schedule, formulation_label


@dataclass(frozen=True)
class Candidate:
    formulation: str = "fused"  # REUSE, or a formulation the caller's realize hook knows (a workload's own)
    chunk: int | None = None
    tuning: NvTuning | None = None
    bookend: str = "none"
    origin: str = ""  # "nvFuser defaults", "builder rule": the baselines the search must reproduce or beat
    # a hand-written schedule of the formulation, opaque here (its parameters by name, as the table keeps it)
    schedule: dict | None = field(default=None, hash=False)

    def label(self) -> str:
        form = formulation_label(self.formulation, self.chunk)
        how = self.tuning.describe() if self.tuning else describe_schedule(self.schedule) if self.schedule \
            else "defaults"
        extra = f" [{self.origin}]" if self.origin else ""
        return f"{form} / {how} / bookend {self.bookend}{extra}"


def trial_tuning(**kw) -> NvTuning:
    """An NvTuning the search tries (``kw``: its scheduler choices)."""
    return NvTuning("segkit tune candidate", **kw)


def _same(a: NvTuning | None, b: NvTuning | None) -> bool:
    """The same scheduler choices (``why`` aside)."""
    return a is not None and b is not None and replace(a, why="") == replace(b, why="")


_OVERRIDES = ("scheduler", "vectorize", "maxrregcount", "blocks_per_sm", "persistent_batch", "rows_per_block")


def distance(t: NvTuning, rule: NvTuning | None) -> int:
    """How many scheduler choices ``t`` changes from ``rule`` (no rule: from nvFuser's defaults)."""
    return sum(getattr(t, k) != (getattr(rule, k) if rule is not None else None) for k in _OVERRIDES)


@dataclass(frozen=True)
class SpecCandidates:
    """What a workload adds to the generic search, by where it goes in the order of promise: ``first`` right
    after the baselines (its most promising formulations), ``overrides`` (nvFuser heuristic overrides, tried
    nearest the builder's rule first), ``staged`` (its chunked formulations: those without a bookend beside the
    named formulations, the bookended ones after the bookend variants) and ``last`` (least promising)."""

    first: Sequence[Candidate] = ()
    overrides: Sequence[NvTuning] = ()
    staged: Sequence[Candidate] = ()
    last: Sequence[Candidate] = ()


def space(rule: NvTuning | None, own: SpecCandidates = SpecCandidates(), cut_policies: Sequence[str] = ("none",),
          formulations: Sequence[str] = ()) -> list[Candidate]:
    """The candidates of one search: nvFuser's defaults and the builder's ``rule`` first, then the workload's
    ``own`` candidates, enable options, the named ``formulations`` and bookend policies (only policies that cut),
    most promising first, so a search cut short by its budget has tried them."""
    out = [Candidate(origin="nvFuser defaults")]
    if rule is not None:
        out.append(Candidate(tuning=rule, origin="builder rule"))
    if REUSE in formulations:  # one candidate, and where it pays the fastest: before the schedule grids
        out.append(Candidate(REUSE))
        formulations = [f for f in formulations if f != REUSE]
    out += own.first
    ws = trial_tuning(enable_options=("ws_normalization",))
    out += [Candidate(tuning=ws)]
    out += [Candidate(name) for name in formulations] + [c for c in own.staged if c.bookend == "none"]
    # the overrides nearest the rule first (a coordinate search around it), then the rest of the grid
    out += [Candidate(tuning=t) for t in sorted(own.overrides, key=lambda t: distance(t, rule)) if not _same(t, rule)]
    for policy in (p for p in cut_policies if p != "none"):  # bookend: the baselines and enable options only
        out += [Candidate(tuning=t, bookend=policy) for t in dict.fromkeys([None, rule, ws])]
        out += [Candidate(name, bookend=policy) for name in formulations]
    return out + [c for c in own.staged if c.bookend != "none"] + list(own.last)


def shard(candidates: Sequence[Candidate], index: int, count: int) -> list[Candidate]:
    """Shard ``index`` of ``count`` of a search: the baselines (nvFuser's defaults, the builder's rule), which
    every shard times so that each shard's winner says what it bought, and every ``count``-th other candidate."""
    if not 0 <= index < count:
        raise SegkitError(f"--shard {f'{index}/{count}'!r}: I must be in 0..N-1 (0..{count - 1})")
    rest = [c for c in candidates if not c.origin]
    return [c for c in candidates if c.origin] + rest[index::count]


@dataclass(frozen=True)
class Timing:
    kernel_us: float  # summed kernel time of one call, cold L2, median: what ranks
    call_us: float | None = None  # CUDA events around the call, cold L2, median: launch and host gaps included


def measure(fn: Callable[[], Any]) -> Timing:
    """Both times of one candidate's call, on the current GPU."""
    return Timing(kernel_us(fn, reps=15), event_us(fn, reps=15))


class _Single:
    """One recorded fusion, run on the reference or on nvFuser."""

    def __init__(self, fd: Any) -> None:
        self.fd = fd

    def run(self, inputs: Sequence[Any], backend: str) -> list[torch.Tensor]:
        from segkit.nvfuser.run import run_on

        return run_on(self.fd, inputs, backend)


def single(fd: Any, cand: Candidate) -> _Single:
    """The recorded fusion ``fd`` run the way ``cand`` says: its tuning, bookended by its policy."""
    from segkit.frontend import FusionDefinition

    tuned = FusionDefinition.from_fusion(fd.fusion.copy()[0])
    tuned.nv_tuning = cand.tuning
    return _Single(bookended(tuned, cand.bookend))


#: how a caller realizes the formulations the core does not know (a workload's own): the candidate -> something
#: with ``run(inputs, backend)`` (a segkit.nvfuser.runnable.Runnable)
Realize = Callable[[Candidate], Any]


def realize(fd: Any, cand: Candidate, other: Realize | None = None):
    """The candidate as something with ``run(inputs, backend)``; ``fd`` is the builder's (or script's) fusion.
    The core knows the fused fusion and REUSE; ``other`` realizes the rest."""
    if cand.formulation == "fused":
        return single(fd, cand)
    if cand.formulation == REUSE:
        from segkit.reuse import reuse_reductions

        return single(reuse_reductions(fd).apply(), cand)
    if other is None:
        raise SegkitError(f"unknown formulation {cand.formulation!r}")
    return other(cand)


@dataclass
class Trial:
    candidate: Candidate
    ok: bool
    note: str = ""  # the error, or the worst relative error
    us: float | None = None  # kernel time (Timing.kernel_us)
    call_us: float | None = None  # event time around the call (Timing.call_us)
    seconds: float | None = None  # what validating and timing it took (None: not tried)


def validate(runner: Any, inputs: Sequence[Any], refs: Sequence[torch.Tensor], backend: str) -> tuple[bool, str]:
    """Run once and compare with ``refs`` (dtype-aware tolerances); (ok, what was found)."""
    try:
        outs = runner.run(list(inputs), backend)
    except Exception as e:  # nvFuser refused the schedule, or the formulation does not record
        return False, f"failed: {error_summary(e, 240)}"
    if len(outs) != len(refs):
        return False, f"{len(outs)} outputs, the reference has {len(refs)}"
    diffs = compare(refs, outs)
    worst = max(d.rel_err for d in diffs)
    bad = [d for d in diffs if not d.ok]
    return (not bad), (f"WRONG: {bad[0]}" if bad else f"max rel err {worst:.1e}")


MIN_GAIN = 0.03  # a tuning must beat nvFuser's defaults by 3% to be kept


@dataclass
class TuneResult:
    spec: str
    config: str
    signature: str  # the tuning table's key for the config (fusions.spec.signature)
    trials: list[Trial] = field(default_factory=list)

    def not_tried(self) -> list[Trial]:
        return [t for t in self.trials if t.seconds is None and t.note.startswith("not tried")]

    def budget_hint(self) -> str | None:
        """How long the candidates the budget cut would need, at the pace of the ones tried."""
        skipped, tried = self.not_tried(), [t.seconds for t in self.trials if t.seconds is not None]
        if not skipped or not tried:
            return None
        each = sum(tried) / len(tried)
        return (f"{len(skipped)} candidates not tried; at {each:.1f} s each (validation, compile, timing of the "
                f"{len(tried)} tried) they need about {len(skipped) * each:.0f} s more: raise --budget, or split the "
                f"grid with --shard i/n over GPUs")

    def timed(self) -> list[Trial]:
        return [t for t in self.trials if t.ok and t.us is not None]

    def baseline(self, origin: str) -> Trial | None:
        return next((t for t in self.trials if t.candidate.origin == origin), None)

    @property
    def winner(self) -> Trial | None:
        """The valid candidate with the least kernel time, unless it beats nvFuser's defaults by less than
        ``MIN_GAIN`` (timing noise; and a manual schedule costs host time per call that kernel time leaves out):
        then the defaults."""
        best = min(self.timed(), key=lambda t: t.us, default=None)
        default = self.baseline("nvFuser defaults")
        if best is not None and default is not None and default.ok and default.us is not None \
                and best.us > default.us * (1 - MIN_GAIN):
            return default
        return best

    def entry(self, gpu: str) -> TableEntry:
        win, default, rule = self.winner, self.baseline("nvFuser defaults"), self.baseline("builder rule")
        if win is None:
            raise SegkitError(f"segkit tune {self.spec}:{self.config}: no candidate passed and was timed")
        c = win.candidate
        default_us = default.us if default and default.ok else None
        tuning = c.tuning
        if tuning is not None:
            bought = f", {default_us:.1f} -> {win.us:.1f} us" if default_us else ""
            tuning = replace(tuning, why=f"segkit tune winner on {gpu}{bought}")
        versions = f"torch {torch.__version__}" + _nvfuser_version()
        return TableEntry(gpu, self.spec, self.config, self.signature, c.formulation, c.chunk, tuning, c.bookend,
                          round(win.us, 2), default_us and round(default_us, 2),
                          rule.us and round(rule.us, 2) if rule is not None else None,
                          f"{datetime.date.today().isoformat()}, {versions}", "kernel",
                          win.call_us and round(win.call_us, 2), c.schedule)

    def rows(self) -> list[list]:
        return [[t.candidate.label(), "ok" if t.ok else "rejected", t.note,
                 "-" if t.us is None else f"{t.us:.1f}", "-" if t.call_us is None else f"{t.call_us:.1f}"]
                for t in self.trials]

    HEADERS = ("candidate", "check", "result", "kernel us (cold L2)", "call us (events)")


def _nvfuser_version() -> str:
    try:
        import nvfuser_direct

        return f", nvfuser_direct {nvfuser_direct.version()}"
    except ImportError:
        return ""


def search(fd: Any, inputs: Sequence[Any], refs: Sequence[torch.Tensor], candidates: Sequence[Candidate],
           backend: str, other: Realize | None = None, timer: Callable[[Callable[[], Any]], Timing] | None = None,
           log: Callable[[str], None] = lambda _: None, budget_s: float | None = None) -> list[Trial]:
    """Validate each candidate on ``backend`` (``other`` realizes the formulations the core does not know, see
    ``realize``); time the ones that pass with ``timer`` (none: validate only; on a GPU, ``measure``). Past
    ``budget_s`` seconds the remaining candidates are listed as not tried."""
    trials = []
    t0 = time.perf_counter()
    for cand in candidates:
        if budget_s is not None and trials and time.perf_counter() - t0 > budget_s:  # the first (defaults) always runs
            trials.append(Trial(cand, False, f"not tried: past the {budget_s:.0f} s budget"))
            continue
        started = time.perf_counter()
        try:
            runner = realize(fd, cand, other)
        except SegkitError as e:
            trials.append(Trial(cand, False, f"does not record: {e}", seconds=time.perf_counter() - started))
            continue
        ok, note = validate(runner, inputs, refs, backend)
        timing = timer(lambda r=runner: r.run(inputs, backend)) if ok and timer else None
        trials.append(Trial(cand, ok, note, timing and timing.kernel_us, timing and timing.call_us,
                            time.perf_counter() - started))
        log(f"  {cand.label()}: {note}" + (f", kernels {timing.kernel_us:.1f} us, call {timing.call_us:.1f} us"
                                            if timing else ""))
    return trials


def rewrites(fd: Any) -> list[str]:
    """The formulations a segkit pass makes of ``fd`` that the search tries beside the workload's own: REUSE where
    segkit.reuse_reductions changes it."""
    from segkit.reuse import reuse_reductions

    return [REUSE] if reuse_reductions(fd).changed else []


def tune_script(path: str, reference: bool = False, log: Callable[[str], None] = print,
                budget_s: float | None = None, shard_of: tuple[int, int] = (0, 1), fusion: str | None = None
                ) -> TuneResult:
    """Search scheduler options x bookend policy (x the reuse pass, where it rewrites) for a repro script (its
    interpreter result is the reference; ``fusion``: which fusion of a script that builds several)."""
    from pathlib import Path

    from segkit.repro import load_repro

    repro = load_repro(path, fusion=fusion)
    device, backend = ("cpu", "reference") if reference else ("cuda", "nvfuser")
    inputs = repro.make_inputs(device)
    refs = run_reference(repro.fd, inputs)
    cuts = [p for p in POLICIES if p == "none" or bookend(repro.fd, p).cuts]
    cands = shard(space(None, cut_policies=cuts, formulations=rewrites(repro.fd)), *shard_of)
    trials = search(repro.fd, inputs, refs, cands, backend, timer=None if reference else measure, log=log,
                    budget_s=budget_s)
    return TuneResult(Path(path).stem, "script", f"script {Path(path).name}", trials)
