"""Where cases run: in this process, or in worker processes that may crash or hang without taking the
campaign with them.

Both executors take :class:`Task` s (a repro script and the realizations to run) and give back
``(task, CaseResult)`` pairs. Workers are spawned (never forked: CUDA), each builds its target by name,
and a worker that dies is reported as a "crash" and one that overruns ``timeout`` is killed and reported
as a "timeout"; both are replaced.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from segkit.errors import SegkitError, error_summary
from segkit.interrupts import children_ignore_sigint
from segkit.fuzz.targets import CaseResult, Target, run_script, target


@dataclass
class Task:
    """One run of a case: its script, the realizations to try, per-dtype tolerance overrides."""

    script: str
    realizations: tuple[str, ...] = ("plain",)
    tol: dict | None = None
    tag: Any = None  # the caller's bookkeeping (returned untouched)


def _run(t: Target, task: Task) -> CaseResult:
    start = time.perf_counter()
    try:
        res = run_script(t, task.script, task.realizations, task.tol)
    except SegkitError as e:  # the script does not load: a generator (or minimizer) problem, not the target's
        res = CaseResult(status="invalid", detail=f"{type(e).__name__}: {e}")
    res.seconds = time.perf_counter() - start
    return res


class InProcess:
    """Run tasks one by one in this process (CPU targets, tests)."""

    def __init__(self, t: Target) -> None:
        self.target, self.name = t, t.name
        self.env = t.describe()
        self.deadline = float("inf")  # unused: a task in this process cannot be stopped

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, CaseResult]]:
        for task in tasks:
            yield task, _run(self.target, task)

    def run_one(self, task: Task) -> CaseResult:
        return _run(self.target, task)

    def close(self) -> None:
        pass


def _worker_main(conn, target_name: str) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):  # the campaign stops its workers itself, after saving
        signal.signal(sig, signal.SIG_IGN)  # SIGINT: ignored since the start (children_ignore_sigint)
    try:
        _serve(conn, target_name)
    except (EOFError, OSError):  # the campaign went away (killed, interrupted): end quietly
        pass


def _serve(conn, target_name: str) -> None:
    try:  # errors go back to the campaign as one line, never as a traceback on the user's terminal
        t = target(target_name)
    except Exception as e:
        conn.send(("error", str(e) if isinstance(e, SegkitError) else error_summary(e)))
        return
    conn.send(("ready", t.describe()))
    while True:
        task = conn.recv()
        if task is None:
            return
        try:
            res = _run(t, task)
        except Exception as e:  # a bug outside the target's own run: reported as this case's crash
            res = CaseResult(status="crash", detail=f"in the worker: {error_summary(e)}")
        conn.send(("done", res))


class _Worker:
    def __init__(self, target_name: str, start_timeout: float) -> None:
        ctx = mp.get_context("spawn")
        self.target_name, self.start_timeout = target_name, start_timeout
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, target_name), daemon=True)
        try:
            # the worker begins with SIGINT ignored: a Ctrl-C reaches the whole process group, and a worker still
            # importing would print its own traceback; the campaign stops its workers itself
            with children_ignore_sigint():
                self.proc.start()
        except BaseException:  # a Ctrl-C held during the start is raised here: no worker is left behind
            self.kill()
            raise
        finally:
            child.close()
        self.task: Task | None = None
        self.started = 0.0
        self.env: dict = {}

    def ready(self) -> _Worker:
        """Wait until the worker has built its target (workers start in parallel, then are awaited)."""
        if not self.conn.poll(self.start_timeout):
            self.kill()
            raise SegkitError(f"fuzz worker for target {self.target_name!r} did not start in {self.start_timeout:.0f} s")
        try:
            kind, payload = self.conn.recv()
        except EOFError:
            self.proc.join(5)
            raise SegkitError(f"fuzz worker for target {self.target_name!r} died while starting "
                              f"(exit code {self.proc.exitcode})") from None
        if kind == "error":
            self.kill()
            raise SegkitError(payload)
        self.env = payload
        return self

    def send(self, task: Task) -> None:
        self.task, self.started = task, time.perf_counter()
        self.conn.send(task)

    def kill(self) -> None:
        if self.proc.pid is not None:  # started
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        self.conn.close()

    def ask_to_stop(self) -> None:
        """An idle worker ends on this; one still running a case is killed by ``kill``."""
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError, ValueError):
            pass

    def close(self, wait: float = 10.0) -> None:
        self.ask_to_stop()
        self.proc.join(wait)
        self.kill()


class WorkerPool:
    """``workers`` spawned processes running the named target; per-task ``timeout`` in seconds. A worker
    that crashed or was killed is replaced when the next task needs it."""

    def __init__(self, target_name: str, workers: int = 1, timeout: float = 60.0, start_timeout: float = 300.0) -> None:
        self.target_name, self.timeout, self.start_timeout = target_name, timeout, start_timeout
        self.name = target_name
        self.deadline = float("inf")  # tasks still running then are cancelled (killed, not judged)
        started: list[_Worker] = []
        try:
            for _ in range(max(1, workers)):
                started.append(_Worker(target_name, start_timeout))
            self.workers: list[_Worker | None] = [w.ready() for w in started]
        except BaseException:  # one error for the campaign (or a Ctrl-C), and no worker left behind
            for w in started:
                w.kill()
            raise
        self.env = self.workers[0].env

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, CaseResult]]:
        """Results as they come (not in task order); do not call ``map`` again before this one is exhausted."""
        pending = iter(tasks)  # drawn lazily: a caller's generator may stop on its own clock
        more = True
        while more or any(w is not None and w.task is not None for w in self.workers):
            for i, w in enumerate(self.workers):
                if (w is None or w.task is None) and more:
                    task = next(pending, None)
                    if task is None:
                        more = False
                        break
                    if w is not None and not w.proc.is_alive():
                        self._drop(w)
                        w = None
                    if w is None:
                        w = self.workers[i] = _Worker(self.target_name, self.start_timeout)  # closed with the pool
                        w.ready()
                    w.send(task)
            busy = [w for w in self.workers if w is not None and w.task is not None]
            ready = wait([w.conn for w in busy], timeout=min(0.5, self.timeout))
            now = time.perf_counter()
            for w in busy:
                task = w.task
                if w.conn in ready:
                    try:
                        _, res = w.conn.recv()
                    except (EOFError, OSError):
                        w.proc.join(5)
                        res = CaseResult(status="crash", detail=f"worker died (exit code {w.proc.exitcode})",
                                         seconds=now - w.started)
                        self._drop(w)
                    else:
                        w.task = None
                    yield task, res
                elif now - w.started > self.timeout:
                    self._drop(w)
                    yield task, CaseResult(status="timeout", detail=f"no result in {self.timeout:.0f} s",
                                           seconds=now - w.started)
                elif now > self.deadline:
                    self._drop(w)
                    yield task, CaseResult(status="cancelled", detail="the campaign's time ran out")

    def _drop(self, w: _Worker) -> None:
        w.kill()
        self.workers[self.workers.index(w)] = None

    def run_one(self, task: Task) -> CaseResult:
        return next(iter(self.map([task])))[1]

    def close(self) -> None:
        """Stop every worker: idle ones end when asked, one still running a case (the campaign was interrupted)
        is killed after a few seconds shared by all."""
        live = [w for w in self.workers if w is not None]
        for w in live:
            w.ask_to_stop()
        deadline = time.monotonic() + 5.0
        for w in live:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()


def executor(t: Target | str, workers: int = 0, timeout: float = 60.0) -> InProcess | WorkerPool:
    """In-process for a Target object or ``workers=0``; else a pool of spawned workers running the named target."""
    if isinstance(t, Target):
        return InProcess(t)
    return InProcess(target(t)) if workers == 0 else WorkerPool(t, workers, timeout)

