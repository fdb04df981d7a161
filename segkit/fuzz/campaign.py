"""The fuzz loop: generate cases, run them on the target and the reference, minimize and keep what differs.

Cases come from :func:`segkit.fuzz.gen.cases` in seeded hypothesis batches (so
a campaign is reproducible from its seed). Each case runs as written and under
one bookend realization (rotating through policies x realizations). A case the
target gets wrong (mismatch), refuses (error), dies on (crash) or overruns
(timeout) is minimized with :func:`segkit.minimize.minimize` against the same
target and realization, then deduplicated by the minimized fusion's op
signature and written to the findings directory as a repro script with a
header, a standalone upstream script, and an entry in ``index.json``.

Minimizing first makes symbolic (-1) input sizes static, so sizes can be
halved; a failure that needs the symbolic sizes (nvFuser concretizes dynamic
shapes at run time) is then minimized with its sizes as recorded. The time
left for minimizing is shared among the failures still to minimize; a finding
left unminimized says why in its header.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from segkit.errors import SegkitError, UsageError
from segkit.frontend import FusionDefinition
from segkit.fuzz.findings import INDEX, Finding
from segkit.fuzz.gen import Case, cases, generated_ops, strided_inputs
from segkit.files import write_text_atomic
from segkit.fuzz.outdir import claim
from segkit.fuzz.targets import REALIZATIONS, CaseResult, Target, Verdict, error_key
from segkit.fuzz.triage import emit_standalone
from segkit.fuzz.workers import InProcess, Task, WorkerPool, executor
from segkit.minimize import MinimizeResult, is_symbolic, minimize_as_recorded_if_needed
from segkit.ops import CATALOGUE
from segkit.printing import emit_repro
from segkit.repro import load_repro

PRIORITY = ["mismatch", "crash", "error", "timeout"]  # the order failures are minimized in
MIN_MINIMIZE_SECONDS = 10.0  # less is not worth a minimization (a check compiles a fusion)


def case_stream(seed: int, batch: int = 50, first_batch: int = 0, **gen_kwargs) -> Iterator[tuple[str, Case]]:
    """Distinct generated cases, forever, as (id "batch.example", case); deterministic for a seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed

    seen: set[str] = set()
    for b in itertools.count(first_batch):
        got: list[Case] = []

        @hyp_seed(seed * 1_000_003 + b)
        @settings(max_examples=batch, database=None, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(cases(**gen_kwargs))
        def collect(case: Case) -> None:
            got.append(case)

        collect()
        for i, case in enumerate(got):
            if case.script not in seen:
                seen.add(case.script)
                yield f"{b}.{i}", case


@dataclass
class Coverage:
    """Which ops and (producer, consumer) op pairs the generated cases contained, and how often."""

    ops: Counter = field(default_factory=Counter)
    pairs: Counter = field(default_factory=Counter)

    def add(self, case: Case) -> None:
        self.ops.update(set(case.ops))
        self.pairs.update(case.pairs())

    def missing(self) -> list[str]:
        return sorted(generated_ops() - set(self.ops))


@dataclass
class Summary:
    target: str
    seed: int
    env: dict
    cases: int = 0
    seconds: float = 0.0  # the whole campaign
    run_seconds: float = 0.0  # generating and running cases (minimizing comes after)
    invalid: int = 0
    statuses: Counter = field(default_factory=Counter)
    coverage: Coverage = field(default_factory=Coverage)
    findings: list[Finding] = field(default_factory=list)
    invalid_examples: list[str] = field(default_factory=list)
    next_batch: int = 0  # where a resumed campaign goes on generating

    @property
    def rate(self) -> float:
        """Cases per minute while generating and running them."""
        return self.cases / (self.run_seconds / 60) if self.run_seconds else 0.0

    def describe_env(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.env.items()) or f"target {self.target}"

    def markdown(self) -> str:
        from tabulate import tabulate

        env = self.describe_env()
        cov = self.coverage
        reachable = generated_ops()
        lines = [f"# segkit fuzz: target {self.target}, seed {self.seed}", "", f"Environment: {env}", "",
                 f"* campaign: {self.seconds / 60:.1f} min; cases: {self.cases} run in {self.run_seconds / 60:.1f} min "
                 f"({self.rate:.1f} cases/min), then minimizing",
                 "* outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
                 f"* op coverage: {len(set(cov.ops) & reachable)} of the {len(reachable)} catalogue ops the generator "
                 f"emits; {len(cov.pairs)} distinct producer->consumer op pairs",
                 f"* ops never hit: {', '.join(cov.missing()) or 'none'}",
                 f"* catalogue ops the generator does not emit: {len(set(CATALOGUE) - reachable)}"
                 f" ({', '.join(sorted(set(CATALOGUE) - reachable))})",
                 f"* findings: {len(self.findings)} distinct (hits: {sum(f.hits for f in self.findings)})", ""]
        if self.findings:
            rows = [[f.id, f.kind, f.realization, f.signature, f"{f.rel_err:.3g}" if f.kind == "mismatch" else "",
                     f.hits, f"{f.ops_before} -> {f.ops_after}", f.file] for f in self.findings]
            lines += ["## Findings", "", tabulate(rows, headers=["id", "kind", "realization", "signature", "rel err",
                                                               "hits", "ops", "file"], tablefmt="github"), ""]
            lines += [f"* {f.id}: {f.detail}" + (f" ({f.note})" if f.note else "") for f in self.findings] + [""]
        top = [[op, n] for op, n in cov.ops.most_common()]
        lines += ["## Ops hit (cases containing each op)", "", tabulate(top, headers=["op", "cases"], tablefmt="github"), ""]
        if self.invalid_examples:
            lines += ["## Cases the reference could not run (generator problems)", ""]
            lines += [f"* {d}" for d in self.invalid_examples] + [""]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"target": self.target, "seed": self.seed, "env": self.env, "cases": self.cases,
                "seconds": self.seconds, "run_seconds": self.run_seconds, "cases_per_minute": self.rate, "statuses": dict(self.statuses),
                "ops": dict(self.coverage.ops), "op_pairs": {f"{a}>{b}": n for (a, b), n in self.coverage.pairs.items()},
                "next_batch": self.next_batch, "invalid_examples": self.invalid_examples,
                "ops_never_hit": self.coverage.missing(), "findings": [asdict(f) for f in self.findings]}


def load_summary(out: Path, env: dict) -> Summary:
    """The state a campaign saved in ``out`` (to resume it)."""
    d = json.loads((out / INDEX).read_text())
    pairs = Counter({tuple(k.split(">")): n for k, n in d["op_pairs"].items()})
    s = Summary(d["target"], d["seed"], env, cases=d["cases"], seconds=d["seconds"], run_seconds=d["run_seconds"],
                invalid=d["statuses"].get("invalid", 0), statuses=Counter(d["statuses"]),
                coverage=Coverage(Counter(d["ops"]), pairs),
                findings=[Finding.from_json(f) for f in d["findings"]],
                invalid_examples=d.get("invalid_examples", []), next_batch=d.get("next_batch", 0))
    return s


class Progress:
    """A status line while a campaign runs: rich's live display on a terminal, a line every ``every`` s otherwise."""

    def __init__(self, every: float = 15.0, enabled: bool = True) -> None:
        self.every, self.enabled, self.last = every, enabled, 0.0
        self.live = None
        if enabled and sys.stdout.isatty():
            try:
                from rich.live import Live

                self.live = Live(refresh_per_second=4)
                self.live.start()
            except ImportError:
                pass

    def update(self, s: Summary, note: str = "") -> None:
        if not self.enabled:
            return
        line = (f"[fuzz {s.seconds / 60:4.1f} min] {s.cases} cases ({s.rate:.0f}/min), "
                f"{len(s.findings)} findings ({sum(f.hits for f in s.findings)} hits), "
                f"{len(s.coverage.ops)} ops, {len(s.coverage.pairs)} op pairs" + (f" | {note}" if note else ""))
        if self.live is not None:
            from rich.text import Text

            self.live.update(Text(line))
        elif note or time.perf_counter() - self.last >= self.every:
            self.last = time.perf_counter()
            print(line, flush=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def _no_step(m: MinimizeResult, budget: float) -> str:
    if m.seconds >= budget:
        return f"its {budget:.0f} s ran out before a smaller fusion reproduced it ({m.checks} checks)"
    return f"no smaller fusion reproduced it ({m.checks} checks)"


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def pending_minimizations(failures: list[tuple[str, Case, CaseResult, tuple[str, ...]]], findings: list[Finding]) -> int:
    """How many of ``failures`` will likely need a minimization: their distinct (kind, error text with numbers
    and names blanked), less those that repeat a finding's (a repeated failure is counted, not minimized)."""
    seen = {(f.kind, error_key(f.detail)) for f in findings}
    keys = {(v.status, error_key(v.detail)) for v in (_first_failure(res) for _, _, res, _ in failures)}
    return max(1, len(keys - seen))


def _first_failure(res: CaseResult) -> Verdict:
    if res.status in ("crash", "timeout"):
        return Verdict("any", res.status, res.detail)
    fails = res.failures
    return next((v for v in fails if v.status == "mismatch"), fails[0])


#: Set (e.g. by a SIGTERM handler) to end a running campaign early: it stops generating, cancels what
#: runs, skips minimizing and saves what it has.
STOP = threading.Event()


class Campaign:
    """State of one campaign: the executor, what was found, where it goes."""

    def __init__(self, ex: InProcess | WorkerPool, out: Path, seed: int, realizations: list[str],
                 minimize_seconds: float, log: Callable[[str], None]) -> None:
        self.ex, self.out, self.seed, self.log = ex, out, seed, log
        self.realizations = realizations
        self.minimize_seconds = minimize_seconds
        self.summary = Summary(ex.name, seed, dict(ex.env))

    def realizations_for(self, n: int) -> tuple[str, ...]:
        bookend = [r for r in self.realizations if r != "plain"]
        plain = ("plain",) if "plain" in self.realizations else ()
        return plain + ((bookend[n % len(bookend)],) if bookend else ())

    def known(self, case: Case, v: Verdict) -> Finding | None:
        """An existing finding this failure most likely repeats (checked before paying for a minimization)."""
        for f in self.summary.findings:
            if f.kind != v.status:
                continue
            if v.status in ("error", "crash", "timeout") and f.realization in (v.realization, "any") \
                    and error_key(f.detail) == error_key(v.detail):
                return f
            if v.status == "mismatch" and f.ops_after >= 2 and _is_subsequence(f.signature.split(":", 1)[1].split(">"), case.ops):
                return f
        return None

    def reproduces(self, v: Verdict, ran: tuple[str, ...]) -> Callable[..., bool]:
        """Predicate for the minimizer: the candidate fails the same way under the same realization."""
        reals = ran if v.realization == "any" else (v.realization,)

        def pred(fd: FusionDefinition, shapes: list | None = None) -> bool:
            res = self.ex.run_one(Task(emit_repro(fd, strided_inputs(fd, shapes=shapes)), reals))
            if v.status in ("crash", "timeout"):
                return res.status == v.status
            got = [x for x in res.verdicts if x.status == v.status]
            return bool(got) and (v.status != "error" or error_key(got[0].detail) == error_key(v.detail))

        return pred

    def handle(self, cid: str, case: Case, res: CaseResult, ran: tuple[str, ...], deadline: float,
               pending: int = 1) -> None:
        """Minimize a failing case (``ran``: the realizations it ran under) unless it repeats a finding; it gets
        an equal share of the time left before ``deadline`` with the ``pending`` failures still to minimize
        (this one included), at most ``minimize_seconds``."""
        v = _first_failure(res)
        dup = self.known(case, v)
        if dup is not None:
            dup.hits += 1
            return
        m, note = self.minimize_case(cid, case, v, ran, max(0.0, deadline - time.perf_counter()), max(1, pending))
        fd = m.fd
        inputs = case.inputs if fd is case.fd else strided_inputs(fd, shapes=m.shapes)
        ops = [op.name for op in fd.fusion.ops]
        final = v
        if fd is not case.fd:  # the minimized fusion's own verdict, for the header
            res2 = self.ex.run_one(Task(emit_repro(fd, inputs), (v.realization,) if v.realization != "any" else ran))
            final = next((x for x in res2.verdicts if x.status == v.status), v)
        signature = f"{v.status}:{'>'.join(ops)}"
        same = next((f for f in self.summary.findings if f.signature == signature), None)
        if same is not None:
            same.hits += 1
            return
        n = len(self.summary.findings) + 1
        f = Finding(f"f{n:03d}", v.status, v.realization, signature, final.detail, final.rel_err, final.tol,
                    final.output, list(final.worst), cid, len(case.ops), len(ops), m.seconds, m.checks, m.steps,
                    file=f"f{n:03d}_{v.status}.py", original=case.script, note=note)
        self.summary.findings.append(f)
        self.write_finding(f, fd, inputs)
        self.log(f"finding {f.id}: {signature} ({f.detail[:100]})" + (f"; {note}" if note else ""))

    def minimize_case(self, cid: str, case: Case, v: Verdict, ran: tuple[str, ...], left: float, pending: int
                      ) -> tuple[MinimizeResult, str]:
        """The minimized case (its fusion is ``case.fd`` when it was not minimized) and a note for its header:
        how it was minimized when not as usual, or why it was not. Static sizes are tried first (they can be
        halved); when the failure does not show with them, the fusion is minimized with its symbolic sizes."""
        unminimized = MinimizeResult(case.fd, start_size=(len(case.ops), 0))
        if v.status == "timeout":
            return unminimized, "not minimized: timeouts are not (each check could take the whole case timeout)"
        budget = min(self.minimize_seconds, max(left / pending, MIN_MINIMIZE_SECONDS))
        if left < MIN_MINIMIZE_SECONDS:
            why = (f"not minimized: {left:.0f} s of the campaign's minimizing time was left, for {pending} "
                   f"failure(s) still to minimize")
            self.log(f"case {cid}: {v.status} under {v.realization}: {why}")
            return unminimized, why
        share = f" in {left:.0f} s" if left != float("inf") else ""
        self.log(f"case {cid}: {v.status} under {v.realization} ({v.detail[:120]}); minimizing ({budget:.0f} s max, "
                 f"{pending} failure(s) to minimize{share})")
        t0, quiet, reproduces, checks = time.perf_counter(), (lambda s: None), self.reproduces(v, ran), Counter()

        def pred(*args) -> bool:
            checks["runs"] += 1
            return reproduces(*args)

        try:
            m = minimize_as_recorded_if_needed(case.fd, case.inputs, pred, max_seconds=budget, log=quiet)
        except SegkitError as e:
            sizes = ", with static sizes or symbolic ones" if is_symbolic(case.fd) else ""
            self.log(f"case {cid}: not minimized{sizes} ({e})")
        else:
            if m.shapes is None:
                return m, "" if m.steps else _no_step(m, budget)
            self.log(f"case {cid}: minimized with its sizes kept symbolic (with static sizes it does not fail)")
            m.checks = checks["runs"]
            m.seconds = time.perf_counter() - t0
            return m, ("sizes kept symbolic: with static sizes the failure does not show"
                       + ("" if m.steps else f"; {_no_step(m, budget)}"))
        unminimized.checks, unminimized.seconds = checks["runs"], time.perf_counter() - t0
        return unminimized, "not minimized: the failure did not show when the case was run again"

    def header(self, f: Finding) -> list[str]:
        env = self.summary.describe_env()
        return [f"# segkit fuzz finding {f.id}: {f.kind} under realization {f.realization}",
                f"# Found by `segkit fuzz --seed {self.seed}` (target {self.summary.target}), case {f.case}; minimized "
                f"from {f.ops_before} to {f.ops_after} ops in {f.minimize_seconds:.0f} s ({f.minimize_checks} checks).",
                f"# On {env}:",
                f"#   {f.detail}",
                f"# Signature: {f.signature}",
                f"# Steps: {'; '.join(f.steps) or 'none'}",
                *([f"# Note: {f.note}"] if f.note else []),
                "# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE"]

    def write_finding(self, f: Finding, fd: FusionDefinition, inputs: list) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        text = "\n".join(self.header(f)) + "\n" + emit_repro(fd, inputs)
        (self.out / f.file).write_text(text)
        (self.out / f.file.replace(".py", "_upstream.py")).write_text(emit_standalone(load_repro(text), f))
        self.save()

    def save(self) -> None:
        """Write the index and summary, and drop repro files no finding names (the directory is what the index says)."""
        self.out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.out / INDEX, json.dumps(self.summary.to_json(), indent=1, default=str))
        write_text_atomic(self.out / "summary.md", self.summary.markdown())
        named = {n for f in self.summary.findings for n in (f.file, f.file.replace(".py", "_upstream.py"))}
        for stale in self.out.glob("f[0-9][0-9][0-9]_*.py"):  # only names a finding gets: fNNN_<kind>[_upstream].py
            if stale.name not in named and stale.stem.split("_", 1)[1].removesuffix("_upstream") in PRIORITY:
                stale.unlink()


def fuzz(target: Target | str, out: str | Path, *, minutes: float | None = None, max_cases: int | None = None,
         seed: int = 0, workers: int = 0, case_timeout: float = 60.0, minimize_seconds: float = 90.0,
         minimize_share: float = 0.3, realizations: list[str] | None = None, max_ops: int = 10,
         max_elements: int = 4096, resume: bool = False, progress: bool = True,
         log: Callable[[str], None] = print) -> Summary:
    """Run a campaign for ``minutes`` or ``max_cases`` cases, then minimize what failed.

    ``target``: a :class:`Target` (runs in this process) or a name ("nvfuser", "reference"; run in
    ``workers`` spawned processes when ``workers`` > 0, each case bounded by ``case_timeout`` seconds).
    With ``minutes``, cases run until the time left is what minimizing the failures needs (at most
    ``minimize_share`` of the campaign; each minimization at most ``minimize_seconds``; a failure that
    repeats a finding is counted, not minimized). ``resume``: continue the campaign saved in ``out``
    (same seed): its counts, coverage and findings carry over and generation goes on where it stopped.
    At least one case runs, whatever the budget (the clock starts once the workers are up).

    Before anything runs, ``out`` is checked (a directory this process can write, its index and summary
    writable) and locked for the campaign (:mod:`segkit.fuzz.outdir`); a directory that holds a campaign
    already is refused unless ``resume``. Bad limits are refused (UsageError) by name.
    """
    check_limits(minutes=minutes, max_cases=max_cases, workers=workers, case_timeout=case_timeout,
                 minimize_seconds=minimize_seconds, minimize_share=minimize_share, max_ops=max_ops,
                 max_elements=max_elements)
    if not str(out).strip():  # Path("") would be the working directory
        raise UsageError("fuzz: an empty findings directory name")
    out = Path(out)
    created = not out.exists()
    lock = claim(out)  # before any long run: a directory that cannot take the findings is refused now
    try:
        if (out / INDEX).exists() and not resume:
            raise UsageError(f"fuzz: {out} holds a campaign already ({INDEX}): continue it with --resume, or give "
                             "another -o")
        if resume and not (out / INDEX).exists():  # a mistyped -o would start a new campaign elsewhere
            raise UsageError(f"fuzz --resume: {out} holds no campaign to resume (no {INDEX})")
        if lock.taken_over:
            log(f"fuzz: took over the lock of campaign pid {lock.taken_over} (no longer running) in {out}")
        return _fuzz(target, out, minutes, max_cases, seed, workers, case_timeout, minimize_seconds, minimize_share,
                     realizations, max_ops, max_elements, resume, progress, log)
    finally:
        lock.release()
        if created and not (out / INDEX).exists():  # stopped before the campaign began: leave no folder behind
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty


def check_limits(**limits: float | None) -> None:
    """Refuse (UsageError naming the argument) a campaign limit that cannot work: a budget that is not a positive
    finite number, a count below one, a negative worker count. ``minutes`` or ``max_cases`` must be given."""
    if limits.get("minutes") is None and limits.get("max_cases") is None:
        raise UsageError("fuzz: give minutes or max_cases")
    floor = {"workers": 0, "minimize_seconds": 0}  # 0 workers: in this process; 0 s: no minimizing
    for name, value in limits.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise UsageError(f"fuzz: {name}={value!r}: give a finite number")
        low = floor.get(name)
        if (low is not None and value < low) or (low is None and value <= 0):
            raise UsageError(f"fuzz: {name}={value!r}: give a number {'>= 0' if low is not None else '> 0'}")
        if name in ("max_cases", "workers", "max_ops", "max_elements") and value != int(value):
            raise UsageError(f"fuzz: {name}={value!r}: give a whole number")
    if limits.get("minimize_share", 0) >= 1:
        raise UsageError(f"fuzz: minimize_share={limits['minimize_share']!r}: give a fraction below 1")


def _fuzz(target, out: Path, minutes, max_cases, seed, workers, case_timeout, minimize_seconds, minimize_share,
          realizations, max_ops, max_elements, resume, progress, log) -> Summary:
    ex = executor(target, workers, case_timeout)
    try:
        return _run(ex, out, minutes, max_cases, seed, minimize_seconds, minimize_share, realizations, max_ops,
                    max_elements, resume, progress, log)
    finally:
        ex.close()  # also on a Ctrl-C: no worker outlives the campaign


def _run(ex, out: Path, minutes, max_cases, seed, minimize_seconds, minimize_share, realizations, max_ops,
         max_elements, resume, progress, log) -> Summary:
    start = time.perf_counter()  # the budget counts from here: starting the workers is not fuzzing
    deadline = start + (minutes * 60 if minutes is not None else float("inf"))
    reserve = minutes * 60 * minimize_share if minutes is not None else 0.0
    camp = Campaign(ex, out, seed, realizations or list(REALIZATIONS), minimize_seconds, log)
    if resume:
        try:
            camp.summary = load_summary(out, camp.summary.env)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"fuzz --resume: {out / INDEX} cannot be read ({type(e).__name__}: {e}); "
                             "give another -o") from None
        if camp.summary.seed != seed or camp.summary.target != ex.name:
            raise UsageError(f"{out} holds a campaign of target {camp.summary.target} with seed "
                              f"{camp.summary.seed}: resume it with the same --target and --seed")
    s = camp.summary
    base, base_run = s.seconds, s.run_seconds
    bar = Progress(enabled=progress)
    stream = case_stream(seed, first_batch=s.next_batch, max_ops=max_ops, max_elements=max_elements)
    todo: dict[str, Case] = {}
    failures: list[tuple[str, Case, CaseResult, tuple[str, ...]]] = []

    def tasks() -> Iterator[Task]:
        for i, (cid, case) in enumerate(stream):
            # stop early enough to minimize what failed so far (at most minimize_share of the campaign); the
            # first case runs whatever the budget (a campaign that ran nothing would say nothing)
            out_of_time = i > 0 and time.perf_counter() >= deadline - min(reserve, len(failures) * minimize_seconds)
            if out_of_time or (max_cases is not None and i >= max_cases) or STOP.is_set():
                return
            todo[cid] = case
            s.next_batch = int(cid.split(".")[0]) + 1
            yield Task(case.script, camp.realizations_for(i), tag=cid)

    ex.deadline = float("inf")  # the first case is never cancelled by the clock (see tasks)
    camp.save()  # from here on the directory holds a campaign that --resume continues, however it is stopped
    saved = time.perf_counter()
    try:
        for task, res in ex.map(tasks()):
            case = todo.pop(task.tag)
            ex.deadline = 0.0 if STOP.is_set() else deadline  # then: cancel what still runs
            if res.status == "cancelled":
                continue
            if time.perf_counter() - saved > 30:  # what a killed campaign leaves behind
                saved = time.perf_counter()
                camp.save()
            s.cases += 1
            s.coverage.add(case)
            s.statuses[res.status] += 1
            if res.status == "invalid":
                s.invalid += 1
                if len(s.invalid_examples) < 5:
                    s.invalid_examples.append(f"case {task.tag}: {res.detail[:200]}")
            elif res.status != "ok":
                failures.append((task.tag, case, res, task.realizations))
            s.run_seconds = base_run + time.perf_counter() - start
            s.seconds = base + time.perf_counter() - start
            new_failure = res.status not in ("ok", "invalid") and len(failures) <= 20
            bar.update(s, f"case {task.tag}: {_first_failure(res).status}" if new_failure else "")
        failures.sort(key=lambda f: PRIORITY.index(_first_failure(f[2]).status))  # wrong results first
        for i, (cid, case, res, ran) in enumerate(failures):
            camp.handle(cid, case, res, ran, time.perf_counter() if STOP.is_set() else deadline,
                        pending_minimizations(failures[i:], s.findings))
            s.seconds = base + time.perf_counter() - start
            bar.update(s)
    finally:
        bar.close()
        s.seconds = base + time.perf_counter() - start
        camp.save()
    return s
