"""segkit.compare.diff on the GPU (both tensors there) gives the verdict the CPU gives for the same values."""

from __future__ import annotations

import pytest
import torch

from segkit import compare

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("chunk", [compare.CHUNK, 1000])
def test_gpu_and_cpu_comparisons_agree(monkeypatch, chunk):
    monkeypatch.setattr(compare, "CHUNK", chunk)
    g = torch.Generator(device="cuda").manual_seed(0)
    ref = torch.randn(512, 1031, device="cuda", dtype=torch.float64, generator=g)
    got = ref.to(torch.bfloat16)
    got[7, 9] = float("nan")
    ref[300, 1] = got[300, 1] = float("inf")
    for r, o in ((ref, got), (ref, got.nan_to_num(nan=0.0)), (ref.t(), got.t())):
        assert repr(compare.diff(0, r, o)) == repr(compare.diff(0, r.cpu(), o.cpu()))
