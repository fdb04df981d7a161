"""segkit.nvfuser.timing's CUPTI bookkeeping: torch.profiler and nvFuser's profiler cannot share CUPTI in one process
(measured on an H100: nvFuser's profiler after torch.profiler exits the process with
CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; torch.profiler after nvFuser's sees no kernel), so the second
one to ask must get an error that says so."""

from pathlib import Path

import pytest
import torch

from segkit.nvfuser import timing


def test_the_first_profiler_keeps_cupti_and_the_other_gets_a_clear_error(monkeypatch):
    monkeypatch.setattr(timing, "_cupti_owner", [])
    timing.claim_cupti("torch.profiler")
    timing.claim_cupti("torch.profiler")  # the owner asks again: fine
    with pytest.raises(RuntimeError, match="nvFuser's profiler cannot profile this call: torch.profiler took CUPTI"):
        timing.claim_cupti("nvFuser's profiler")


def test_nvfusers_profiler_first_refuses_torch_profiler(monkeypatch):
    monkeypatch.setattr(timing, "_cupti_owner", [])
    timing.claim_cupti("nvFuser's profiler")
    with pytest.raises(RuntimeError, match="torch.profiler cannot profile.*separate process"):
        timing.KernelTimer()()


def test_cuda_profiler_claims_cupti_only_when_it_records_cuda(monkeypatch):
    monkeypatch.setattr(timing, "_cupti_owner", [])
    timing.cuda_profiler([torch.profiler.ProfilerActivity.CPU])
    assert timing._cupti_owner == []
    timing.cuda_profiler()
    assert timing._cupti_owner == ["torch.profiler"]


def test_torch_profiler_starts_only_through_cuda_profiler():
    """A torch.profiler started elsewhere takes CUPTI without claiming it, and nvFuser's profiler later in the same
    process exits it (two GPU suite shards died that way, in the test after the attention test)."""
    ROOT = Path(__file__).resolve().parent.parent
    found = [f"{p.relative_to(ROOT)}:{i}" for folder in ("segkit", "segkit_cli", "fusions", "thunder_exec",
                                                         "benchmarks", "scripts", "tests")
             for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "test_timing.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if "profiler.profile(" in line]
    assert [f for f in found if not f.startswith("segkit/nvfuser/timing.py:")] == []
