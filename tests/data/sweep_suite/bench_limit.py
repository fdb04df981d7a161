"""A suite for tests/test_sweep.py's time-limit and killed-shard cases: one quick benchmark, then a case that
overruns the sweep's deadline (SWEEP_TINY_OVERRUN=sleep: until just past it; =sleep_long: a minute, until
SIGINT; =hang: ignoring SIGINT, until killed), then two cases that start after the deadline. Named bench_*.py so the main suite does not collect it."""

import os
import signal
import time


def test_a_quick(benchmark):
    assert benchmark.pedantic(sorted, args=([3, 1, 2],), rounds=3, iterations=1) == [1, 2, 3]


def test_b_overrun():
    deadline = float(os.environ["SEGKIT_SWEEP_DEADLINE"])
    mode = os.environ.get("SWEEP_TINY_OVERRUN", "sleep")
    if mode == "hang":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if mode in ("hang", "sleep_long"):
        time.sleep(60)
    time.sleep(max(0.0, deadline - time.time()) + 0.3)


def test_c_late():
    assert True


def test_d_late():
    assert True
