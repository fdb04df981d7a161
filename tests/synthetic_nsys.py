"""Synthetic nsys SQLite profiles of any size, in the schema of the recorded export (tests/data/traces): the
recorded file is copied, its event tables emptied and refilled, so the reader sees nsys's own tables and columns.

Each thread runs steps (NVTX push/pop, eventType 59) holding layers, each layer launching kernels (a runtime call
inside the layer, its kernel later on the GPU); some start/end ranges (eventType 60) overlap the steps across
threads, and some kernels have no launch call (placed by their GPU start).
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from tests.conftest import DATA

RECORDED = DATA / "traces" / "workload_nsys.sqlite"
TIDS = (281482643898825, 281482643898900)


def write_profile(path: Path, n_ranges: int, n_kernels: int, seed: int = 0, layers: int = 9) -> Path:
    """A profile at ``path`` with about ``n_ranges`` NVTX ranges and exactly ``n_kernels`` kernels."""
    rng = random.Random(seed)
    shutil.copy(RECORDED, path)
    con = sqlite3.connect(path)
    for table in ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        con.execute(f"DELETE FROM {table}")
    names = ["step", "cudaLaunchKernel"] + [f"layer{i}" for i in range(layers)] + [f"kern{i}" for i in range(50)]
    sid = {n: i + 1 for i, n in enumerate(names)}
    con.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)", [(i, n) for n, i in sid.items()])
    steps = max(1, n_ranges // (layers + 1))
    per_layer = max(1, n_kernels // (steps * layers))
    nvtx, runtime, kernels = [], [], []
    t, gpu_t, corr = 1_000_000, 1_000_000, 0
    for s in range(steps):
        tid = TIDS[s % len(TIDS)]
        step_start = t
        for layer in range(layers):
            layer_start = t = t + rng.randint(1, 50)
            for _ in range(per_layer):
                if len(kernels) >= n_kernels:
                    break
                corr += 1
                launch = t = t + rng.randint(1, 30)
                t += rng.randint(1, 20)
                gpu_t = max(gpu_t, launch) + rng.randint(0, 400)
                dur = rng.randint(1, 300)
                name = sid[f"kern{rng.randrange(50)}"]
                orphan = rng.random() < 0.05  # no launch call: placed by its GPU start
                if not orphan:
                    runtime.append((launch, t, 1, tid, corr, sid["cudaLaunchKernel"], 0))
                kernels.append((gpu_t, gpu_t + dur, 0, 1, 7, corr, name, name, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0,
                                corr))
                gpu_t += dur
            t += rng.randint(1, 50)
            nvtx.append((layer_start, t, 59, None, tid, sid[f"layer{layer}"], None))
        t += rng.randint(1, 50)
        nvtx.append((step_start, t, 59, None, tid, sid["step"], None))
        if rng.random() < 0.1:  # a start/end range overlapping steps, on no thread in particular
            nvtx.append((step_start + rng.randint(0, 500), t + rng.randint(0, 5000), 60, "window", None, None, None))
    while len(kernels) < n_kernels:  # the remainder, after the last step
        gpu_t += 10
        kernels.append((gpu_t, gpu_t + 5, 0, 1, 7, None, sid["kern0"], sid["kern0"], 32, 1, 1, 1, 128, 1, 1, 0, 0, 0,
                        0, len(kernels)))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", nvtx)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                    "returnValue) VALUES (?, ?, ?, ?, ?, ?, ?)", runtime)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                    "demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                    "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", kernels)
    con.commit()
    con.execute("VACUUM")
    con.close()
    return path
