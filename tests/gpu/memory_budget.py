"""One GPU's memory shared by the GPU suite's shards.

The gate runs the suite as 8 pytest processes on one GPU (``python -m sweep --per-gpu 8``), and the sweep puts each
shard's longest case first: on this suite those are also the largest in memory (the norm backward at 576000 x 384
with its float64 reference, 12-15 GiB each), so every shard reached its peak at the same moment, and an 80 GB H100
ran out of memory where a 141 GB H200 did not.

Every test is counted. Each process keeps one entry per GPU: what it still holds between tests (the caching
allocator's reserved memory after the test's cleanup: a cache of inputs, a leak) and, while a test runs, what that
test needs on top (``need_gib``: its measured peak, by the config its node id names, else ``DEFAULT_GIB``). A test
starts when every process's entries and its own fit in ``SHARE`` of the GPU's memory, or when no other process runs
a test (a test larger than the budget runs alone). A test that runs out of memory anyway (a need declared too small)
is run once more alone: ``alone`` waits until no other process runs a test, and no other starts one meanwhile. The
memory log says so (``oom_rerun_alone``), and the declaration is what to fix.

The entries are a small JSON file per GPU guarded by ``fcntl.flock``: the entry of a process that died is dropped
when it is found. ``SEGKIT_GPU_MEMORY_LOG`` (a JSON-lines path) records each test's measured need and what its
process held, so the declarations can be checked against the GPU's own numbers.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The share of a GPU's memory the tests' entries may fill; the rest is every process's CUDA context and the
#: allocator's slack.
SHARE = 0.85

#: GiB a test needs above what its process held at its start, by a pattern its node id matches (the largest of
#: those that match). From the per-test peaks of the H100 suite run of 9c7d9a6 (lab/runs/h100-2026-12-08-gate-
#: 9c7d9a6-suite), rounded up, and the four failed tests re-run alone there.
NEEDS: dict[str, float] = {
    r"sweep_65536x16384": 64.0,
    r"mixorder_576000x384": 15.0,
    r"test_two_stage_on_nvfuser": 15.0,
    r"test_tuned_backward_stays_tuned_under_bookend": 13.0,
    r"test_rope_backward_sliced_inputs_is_one_kernel": 13.0,
    r"test_litgpt_block_at_a_tuned_shape": 13.0,
    r"test_qkv_split_rope_real_size_is_right\[llama2_13b": 13.0,
    r"Llama-2-13b-hf_bs2": 14.0,
    r"Llama-3-70B_bs2": 14.0,
    r"Llama-2-70b-hf_bs1": 8.0,
    r"16384x8192": 14.0,
    r"8192x28672": 11.0,
    r"test_check_passes_the_multi_head_cases": 7.0,
    r"test_model_step_gpu|test_liger_thunder_gpu|test_trace_gpu": 12.0,
    r"sweep_65536x1024|sweep_4096x8192|sweep_4096x16384|sweep_16384x4096": 4.0,
}

#: What a test matching no pattern needs: most of the suite peaks under 1 GiB.
DEFAULT_GIB = 1.0

#: How long a test waits for room before it fails, naming what holds the memory.
WAIT_S = 900.0


def need_gib(nodeid: str) -> float:
    """The GiB a test declares: the largest of the patterns its node id matches, else DEFAULT_GIB."""
    return max((gib for pattern, gib in NEEDS.items() if re.search(pattern, nodeid)), default=DEFAULT_GIB)


@dataclass
class Entry:
    """One process's standing on one GPU."""

    held: float = 0.0  # GiB it holds between tests
    need: float = 0.0  # GiB its running test needs on top (0 when none runs)
    test: str = ""
    state: str = "idle"  # idle | waiting | running | waiting_alone | alone (waiting: since `since`)
    since: float = field(default_factory=time.time)

    def total(self) -> float:
        return self.held + (self.need if self.state in ("running", "alone") else 0.0)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[dict[str, Entry]]:
    """The entries of one GPU (pid -> Entry), read and written under an exclusive lock; those of processes that
    died are dropped."""
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                raw = json.loads(path.read_text() or "{}")
            except FileNotFoundError:
                raw = {}
            entries = {pid: Entry(**v) for pid, v in raw.items() if _pid_alive(int(pid))}
            yield entries
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({pid: vars(e) for pid, e in entries.items()}))
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def reservations_file(gpu_key: str) -> Path:
    """Where the entries of the GPU ``gpu_key`` (its UUID: shards pinned to one GPU share it) live."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in gpu_key)
    return Path(tempfile.gettempdir()) / f"segkit-gpu-memory-{safe}.json"


def _others(entries: dict[str, Entry], me: str, parent: int | None) -> dict[str, Entry]:
    """The other processes' entries; a fresh-process re-run's ``parent`` (which runs this same test in this
    process) counts with what it holds only, or the test would wait for itself."""
    others = {pid: e for pid, e in entries.items() if pid != me}
    if parent is not None and str(parent) in others:
        p = others[str(parent)]
        others[str(parent)] = Entry(held=p.held, test=p.test)
    return others


def _waiting_alone(others: dict[str, Entry]) -> bool:
    return any(e.state in ("waiting_alone", "alone") for e in others.values())


@dataclass
class Reservation:
    """A running test's place in the budget; ``waited_s``: how long it waited for room."""

    path: Path
    waited_s: float = 0.0


@contextlib.contextmanager
def reserved(need: float, held: float, budget_gib: float, path: Path, what: str, poll_s: float = 0.05,
             wait_s: float = WAIT_S, parent: int | None = None) -> Iterator[Reservation]:
    """Run the block as a test that needs ``need`` GiB on top of the ``held`` its process holds. Tests start in the
    order they asked: one that asked earlier and still waits keeps its room (a 64 GiB test is not starved by small
    ones). After the block, the process's entry keeps what ``release_held`` was last told."""
    me, start = str(os.getpid()), time.monotonic()
    with _locked(path) as entries:
        entries[me] = Entry(held=held, need=need, test=what, state="waiting")
        since = entries[me].since
    try:
        while True:
            with _locked(path) as entries:
                others = _others(entries, me, parent)
                earlier = [e for e in others.values() if e.state == "waiting" and e.since < since]
                load = sum(e.total() for e in others.values()) + sum(e.need for e in earlier) + held + need
                running = any(e.state in ("running", "alone") for e in others.values())
                # a fresh-process re-run continues its parent's running test: no test that waits to run alone
                # may hold it back (that one waits for the parent, which waits for this)
                held_back = _waiting_alone(others) and parent is None
                if not held_back and (load <= budget_gib or not (running or earlier)):
                    entries[me] = Entry(held=held, need=need, test=what, state="running")
                    break
            if time.monotonic() - start > wait_s:
                raise TimeoutError(f"{what}: waited {wait_s:.0f} s for {need:g} GiB of the GPU's {budget_gib:.0f} "
                                   f"GiB budget; held: {_describe(others)}")
            time.sleep(poll_s)
        res = Reservation(path, time.monotonic() - start)
        yield res
    finally:
        with _locked(path) as entries:
            mine = entries.get(me) or Entry()
            entries[me] = Entry(held=mine.held, test=what)


def release_held(path: Path, held: float) -> None:
    """Record what this process holds now (between tests)."""
    me = str(os.getpid())
    with _locked(path) as entries:
        e = entries.get(me) or Entry()
        e.held = held
        entries[me] = e


@contextlib.contextmanager
def alone(path: Path, what: str, poll_s: float = 0.05, wait_s: float = WAIT_S,
          parent: int | None = None) -> Iterator[float]:
    """Run the block while no other process runs a test (the first to ask goes first; no other starts one
    meanwhile); yields the seconds waited. Its own test's entry waits too, so two asking at once do not wait for
    each other."""
    me, start = str(os.getpid()), time.monotonic()
    with _locked(path) as entries:
        e = entries.get(me) or Entry(test=what)
        e.state, e.since = "waiting_alone", time.time()
        entries[me] = e
    while True:
        with _locked(path) as entries:
            others = _others(entries, me, parent)
            first = all(o.since >= entries[me].since for o in others.values() if o.state == "waiting_alone")
            if first and not any(o.state in ("running", "alone") for o in others.values()):
                entries[me].state = "alone"
                break
        if time.monotonic() - start > wait_s:
            raise TimeoutError(f"{what}: waited {wait_s:.0f} s to run alone on its GPU; held: {_describe(others)}")
        time.sleep(poll_s)
    try:
        yield time.monotonic() - start
    finally:
        with _locked(path) as entries:
            e = entries.get(me) or Entry(test=what)
            e.state = "running"
            entries[me] = e


def _describe(entries: dict[str, Entry]) -> str:
    return "; ".join(f"pid {pid} {e.state} {e.test or '-'}: holds {e.held:.1f} GiB, needs {e.need:.1f}"
                     for pid, e in entries.items()) or "nothing"


_OOM = re.compile(r"out of memory|CUDA_ERROR_OUT_OF_MEMORY|OutOfMemoryError", re.IGNORECASE)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` (torch's, nvFuser's or Thunder's, possibly wrapped) is the GPU running out of memory."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if type(exc).__name__ == "OutOfMemoryError" or _OOM.search(str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def log_peak(entry: dict) -> None:
    """Append one test's measured memory to ``$SEGKIT_GPU_MEMORY_LOG`` (when set)."""
    path = os.environ.get("SEGKIT_GPU_MEMORY_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")
