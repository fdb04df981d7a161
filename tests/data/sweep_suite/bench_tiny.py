"""A tiny pytest-benchmark suite for tests/test_sweep.py: sharded over fake devices, merged, compared with
an unsharded run. Named bench_*.py so the main suite does not collect it."""

import pytest

from sweep import plugin as sweep_plugin


@pytest.mark.parametrize("n", [10, 100, 1000, 5000])
@pytest.mark.parametrize("kind", ["sum", "sorted"])
def test_tiny(benchmark, kind, n):
    data = list(range(n, 0, -1))
    fn = sum if kind == "sum" else sorted
    sweep_plugin.timing_starts()  # as benchmarks/harness.py does: what came before is this case's preparation
    result = benchmark.pedantic(fn, args=(data,), rounds=3, iterations=1)
    assert (result == n * (n + 1) // 2) if kind == "sum" else (result[0] == 1)


def test_plain_case_without_benchmark():
    assert sorted([3, 1, 2]) == [1, 2, 3]


def test_plain_second_case():
    assert max([3, 1, 2]) == 3
