"""segkit.compare.diff scans in chunks (on the GPU where both tensors are): any chunk size gives the verdict of
one chunk, with the first position of the worst error, NaN / Inf mismatches and counts across chunk edges."""

from __future__ import annotations

import pytest
import torch

from segkit import compare


def _cases() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    ref = torch.randn(6, 7, dtype=torch.float64)
    close = ref.to(torch.bfloat16)
    tie = close.clone()
    tie.view(-1)[[5, 30]] += 1.0  # two equal worst errors, in different chunks: the first one is reported
    tie_ref = close.to(torch.float64)
    nan_ref, nan_got = ref.clone(), close.clone()
    nan_ref.view(-1)[[3, 40]] = float("nan")
    nan_got.view(-1)[[3, 40]] = float("nan")  # same places: fine
    nan_ref.view(-1)[11] = float("inf")
    nan_got.view(-1)[11] = float("inf")
    bad = close.clone()
    bad.view(-1)[[17, 33]] = float("nan")  # NaN where the reference has a number: first at 17
    return {"close": (ref, close), "tie": (tie_ref, tie), "same non-finite": (nan_ref, nan_got),
            "nan mismatch": (ref, bad), "transposed": (ref.t(), close.t())}


@pytest.mark.parametrize("name", list(_cases()))
@pytest.mark.parametrize("chunk", [1, 5, 13, 42])
def test_any_chunk_size_gives_the_one_chunk_verdict(monkeypatch, name, chunk):
    ref, got = _cases()[name]
    whole = compare.diff(0, ref, got)
    monkeypatch.setattr(compare, "CHUNK", chunk)
    assert repr(compare.diff(0, ref, got)) == repr(whole)  # repr: a NaN field is equal to itself there


def test_the_tie_and_the_mismatch_report_their_first_position(monkeypatch):
    monkeypatch.setattr(compare, "CHUNK", 13)
    cases = _cases()
    tie = compare.diff(0, *cases["tie"])
    assert tie.worst == (0, 5) and tie.max_abs == 1.0
    bad = compare.diff(0, *cases["nan mismatch"])
    assert not bad.ok and bad.nonfinite_mismatches == 2 and bad.worst == (2, 3)
    same = compare.diff(0, *cases["same non-finite"])
    assert same.ok and same.ref_nonfinite == compare.NonFinite(nan=2, posinf=1)
