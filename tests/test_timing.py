"""segkit.timing's CUPTI bookkeeping: torch.profiler and nvFuser's profiler cannot share CUPTI in one process
(measured on an H100: nvFuser's profiler after torch.profiler exits the process with
CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; torch.profiler after nvFuser's sees no kernel), so the second
one to ask must get an error that says so."""

import pytest

from segkit import timing


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
