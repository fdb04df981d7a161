"""A suite with a case whose process dies (os.abort, as a native library's abort ends a GPU test shard), for
tests/test_sweep.py: the cases after it must still run. Named bench_*.py so the main suite does not collect it."""

import os

import pytest


@pytest.mark.parametrize("n", range(3))
def test_before(n):
    assert n >= 0


def test_dies():
    os.abort()


@pytest.mark.parametrize("n", range(4))
def test_after(benchmark, n):
    assert benchmark.pedantic(sum, args=(range(n),), rounds=2, iterations=1) == n * (n - 1) // 2
