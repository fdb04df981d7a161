"""Why does the same nvFuser kernel time shorter under Thunder than as a bare fd.execute? (forward suite,
lab/runs/h200-2026-11-23-final/write_flush_norm_fwd_*.json: thunder+segkit_ex, which runs segkit's
own y-only fusion, beat bare segkit on 34 of 36 cases, by up to 7%.) The benchmark timer's round was: flush
L2 (a 512 MiB zero_), start the CUPTI profiler, call. Thunder spends ~70 us more host time before its
launch. This times one fusion under variants of that round: a host wait before the call, a read-only flush
(L2 left holding clean lines), both, and the harness's flush as it is now (write, then read it back).

    python lab/explore/timer_bias.py
"""
import time

import torch

from lab.explore.common import build, norm_case
from benchmarks.harness import flush_l2, kernel_us

_read_buffer = None
_write_buffer = None


def write_flush() -> None:
    """The harness's flush before 2026-11-23: overwrite 512 MiB, nothing else."""
    global _write_buffer
    if _write_buffer is None:
        _write_buffer = torch.empty(128 * 1024 * 1024, dtype=torch.float32, device="cuda")
    _write_buffer.zero_()


def read_flush() -> None:
    """Evict L2 by reading 512 MiB: what stays in L2 afterwards is clean."""
    global _read_buffer
    if _read_buffer is None:
        _read_buffer = torch.ones(128 * 1024 * 1024, dtype=torch.float32, device="cuda")
    _read_buffer.sum()


def spin(us: float) -> None:
    end = time.perf_counter() + us * 1e-6
    while time.perf_counter() < end:
        pass


ROUNDS = {
    "zero_ flush (old harness)": (write_flush, 0),
    "zero_ flush, 100 us wait": (write_flush, 100),
    "zero_ flush, 500 us wait": (write_flush, 500),
    "read flush": (read_flush, 0),
    "zero_ then read flush": (lambda: (write_flush(), read_flush()), 0),
    "read flush, 100 us wait": (read_flush, 100),
    "harness.flush_l2 (now)": (flush_l2, 0),
}


def main() -> None:
    for kind, direction, shape in (("layernorm", "fwd", "nanogpt"), ("rmsnorm", "fwd", "sweep_4096x4096"),
                                   ("rmsnorm", "fwd", "sweep_65536x4096"), ("rmsnorm", "bwd", "sweep_4096x8192")):
        spec, cfg, inputs, floor = norm_case(kind, direction, shape)
        fd = build(spec, cfg, keep=[0] if direction == "fwd" else None)
        for name, (flush, wait) in ROUNDS.items():
            # the wait runs inside the timed window, between the profiler's start and the launch
            us = [kernel_us(lambda: (spin(wait), fd.execute(inputs)), flush=flush) for _ in range(2)]
            print(f"RES {kind:9s} {direction} {shape:18s} {name:26s} " + " ".join(f"{u:8.2f}" for u in us) +
                  f" us  floor {floor:7.2f} us", flush=True)


if __name__ == "__main__":
    main()
