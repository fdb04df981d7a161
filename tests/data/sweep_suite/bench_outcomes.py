"""Cases of every outcome for tests/test_sweep.py: what the merged record calls each (named bench_*.py so the main
suite does not collect it)."""

import pytest


def test_passes():
    assert True


@pytest.mark.xfail(strict=True, raises=ZeroDivisionError, reason="a known bug")
def test_expected_failure():
    1 / 0


@pytest.mark.xfail(reason="fixed since")
def test_unexpected_pass():
    assert True


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


def test_fails():
    assert False
