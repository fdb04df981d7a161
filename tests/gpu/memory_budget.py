"""One GPU's memory shared by the GPU suite's shards.

The gate runs the suite as 8 pytest processes on one GPU (``python -m sweep --per-gpu 8``), and the sweep puts each
shard's longest case first: on this suite those are also the largest in memory (the norm backward at 576000 x 384
with its float64 reference, about 12-14 GiB each), so every shard reached its peak at the same moment. An 80 GB H100
ran out of memory where a 141 GB H200 did not. A test that needs much memory declares it here (``NEEDS``: GiB by
the config its node id names), and waits until the declared tests running on the same GPU, in every process, leave
room for it in ``SHARE`` of the GPU's memory; the rest of the memory is the undeclared tests' and the processes'
own. A declared test alone on its GPU always runs (one larger than the budget waits for the others to finish).

The reservations are a small JSON file per GPU guarded by ``fcntl.flock``: a reservation of a process that died is
dropped when it is found. ``SEGKIT_GPU_MEMORY_LOG`` (a JSON-lines path) records each test's measured peak, so the
declarations can be checked against the GPU's own numbers.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: The declared tests' share of a GPU's memory; the rest is for the undeclared tests of the other shards (a few GiB
#: each) and every process's CUDA context.
SHARE = 0.6

#: GiB a test needs at its peak, by a config its node id names: the inputs, the float64 reference and the outputs.
#: Upper bounds: the references' peak memory measured on the CPU (the norm backward at 576000 x 384, the RoPE
#: backward at Llama-3-70B bs2), rounded up, and for the other configs scaled from those by element count; the
#: memory log checks them on the GPU.
NEEDS: dict[str, float] = {
    "mixorder_576000x384": 14.0,
    "sweep_65536x16384": 64.0,
    "Llama-3-70B_bs2": 8.0,
    "Llama-2-70b-hf_bs1": 6.0,
    "8192x28672": 8.0,
    "16384x8192": 6.0,
}

#: How long a test waits for room before it fails, naming what holds the memory.
WAIT_S = 900.0


def need_gib(nodeid: str) -> float:
    """The GiB a test declares (the largest of the configs its node id names), 0 for none."""
    return max((gib for config, gib in NEEDS.items() if config in nodeid), default=0.0)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[dict[str, list]]:
    """The reservations of one GPU (pid -> [GiB, node id]), read and written under an exclusive lock; those of
    processes that died are dropped."""
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                held = json.loads(path.read_text() or "{}")
            except FileNotFoundError:
                held = {}
            held = {pid: v for pid, v in held.items() if _pid_alive(int(pid))}
            yield held
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(held))
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def reservations_file(gpu_key: str) -> Path:
    """Where the reservations of the GPU ``gpu_key`` (its UUID: shards pinned to one GPU share it) live."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in gpu_key)
    return Path(tempfile.gettempdir()) / f"segkit-gpu-memory-{safe}.json"


@contextlib.contextmanager
def reserved(gib: float, budget_gib: float, path: Path, what: str, poll_s: float = 0.05,
             wait_s: float = WAIT_S, parent: int | None = None) -> Iterator[float]:
    """Hold ``gib`` of the GPU's declared-test budget while the block runs; yields the seconds waited for it.
    ``parent``: the process that runs this test in this one (a fresh-process re-run) and may hold its reservation
    already: not counted, or the test would wait for itself."""
    me, start = str(os.getpid()), time.monotonic()
    mine = {me, str(parent)}
    while True:
        with _locked(path) as held:
            others = {pid: v for pid, v in held.items() if pid not in mine}
            if not others or sum(v[0] for v in others.values()) + gib <= budget_gib:
                held[me] = [gib, what]
                break
        if time.monotonic() - start > wait_s:
            raise TimeoutError(f"{what}: waited {wait_s:.0f} s for {gib:g} GiB of the GPU's {budget_gib:.0f} GiB "
                               f"budget; held: {held}")
        time.sleep(poll_s)
    try:
        yield time.monotonic() - start
    finally:
        with _locked(path) as held:
            held.pop(me, None)


def log_peak(entry: dict) -> None:
    """Append one test's measured memory to ``$SEGKIT_GPU_MEMORY_LOG`` (when set)."""
    path = os.environ.get("SEGKIT_GPU_MEMORY_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")
