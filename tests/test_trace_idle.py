"""``segkit trace idle`` on CPU: the gaps between kernels and which the host caused, on hand-made kernels (two
streams overlapping, an unknown launch) and on the committed H100 profiles of the Llama-3-8B step, where the
Thunder and segkit_ex profiles share a host stall after the first fusion, spent inside that fusion's launch call
(the profiler's activity buffer request), which torch.compile's profile does not have there."""

from __future__ import annotations

import pytest

from segkit.trace.idle import gaps, idle_tables, lead_in_ns, longest_call
from segkit.trace.model import Kernel, Range, Trace
from segkit_cli.main import main
from tests.conftest import DATA

PROFILES = DATA / "step_h100_mean_sin" / "profiles"


def _k(name, start_us, dur_us, launch_us=None):
    return Kernel(name, int(start_us * 1e3), int(dur_us * 1e3), launch_ns=None if launch_us is None else
                  int(launch_us * 1e3))


def test_overlapping_streams_leave_no_gap_and_the_launch_decides_who_waited():
    trace = Trace("t", "torch", [
        _k("a", 0, 10, launch_us=-5), _k("b", 5, 20, launch_us=-4),    # b overlaps a on another stream
        _k("c", 40, 5, launch_us=30),                                  # launched 5 us after the GPU idled: host
        _k("d", 60, 5, launch_us=20),                                  # launched long before: the device's own
        _k("e", 70, 1)], [], [])                                       # launch unknown
    found = [(g.after.name, g.before.name, g.idle_ns // 1000, g.host_bound, g.host_lag_ns) for g in gaps(trace)]
    assert found == [("b", "c", 15, True, 5000), ("c", "d", 15, False, -25000), ("d", "e", 5, False, None)]
    summary = idle_tables(trace, min_us=0)["summary"][0]
    assert (summary["span us"], summary["idle us"], summary["host-bound idle us"]) == (71.0, 35.0, 15.0)
    assert [r["host-bound"] for r in idle_tables(trace, min_us=0)["gaps"]] == ["yes", "no", "?"]


@pytest.mark.parametrize("variant, stalls", [("segkit-auto", True), ("thunder", True), ("compile", False)])
def test_the_llama_step_profiles_show_thunders_host_stall_after_the_first_fusion(variant, stalls):
    from segkit.trace import load

    trace = load(PROFILES / f"llama3-8b-x1-{variant}.json.gz")
    first = gaps(trace)[0]
    assert first.host_bound and first.before.key.startswith("nvjet")  # waiting to launch the qkv GEMM
    assert (first.idle_ns > 500_000) == stalls, first.idle_ns
    if stalls:  # the host was inside the first launch: the profiler's activity buffer request, not Thunder's Python
        call = longest_call(trace, first)
        assert call.name.startswith("cuLaunchKernel") and call.end_ns - call.start_ns > 0.8 * first.idle_ns
    summary = idle_tables(trace)["summary"][0]
    busy = sum(k.duration_ns for k in trace.kernels) / 1e3  # one stream: busy time is the kernels' sum
    assert summary["busy us"] == pytest.approx(busy, abs=0.2)
    assert summary["idle us"] == pytest.approx(summary["span us"] - busy, abs=0.2)


def test_cli_prints_the_summary_and_the_long_gaps(capsys):
    assert main(["trace", "idle", str(PROFILES / "llama3-8b-x1-segkit-auto.json.gz"), "--min-us", "50",
                 "--format", "json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert len(doc["gaps"]) == 2 and all(r["idle us"] >= 50 for r in doc["gaps"])


def test_the_lead_in_runs_from_the_last_step_range_to_its_first_kernel():
    kernels = [_k("warm", 0, 10), _k("a", 130, 10, launch_us=125), _k("b", 140, 10)]
    steps = [Range("step", 0, 100_000), Range("step", 100_000, 200_000)]  # the kept step is the last one
    trace = Trace("t", "torch", kernels, steps, [])
    assert lead_in_ns(trace, "step") == 30_000
    assert idle_tables(trace, min_us=0)["summary"][0]["lead-in us ('step' to first kernel)"] == 30.0
    assert lead_in_ns(trace, "other") is None and "lead-in" not in " ".join(idle_tables(trace, step="x")["summary"][0])


def test_the_step_tables_profile_records_the_step_range(tmp_path, monkeypatch):
    """benchmarks.model_measure.profile on a CPU step: the chrome trace holds the step range the lead-in needs."""
    import torch

    from benchmarks import model_measure
    from segkit.nvfuser import timing
    from segkit.trace import load

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)  # no GPU here; the profiler records CPU ops
    monkeypatch.setattr(timing, "_cupti_owner", [])
    x = torch.randn(64, 64, requires_grad=True)
    path = tmp_path / "p.json"
    model_measure.profile(lambda: (x @ x).sum().backward(), path)
    assert len(load(path).ranges_named("step")) == model_measure.PROFILED_STEPS  # the warm-up step not kept


def test_the_step_tables_timed_steps_are_step_ranges_and_nothing_else_is(tmp_path, monkeypatch):
    """benchmarks.model_measure.time_steps: every timed step in its own ``step`` range (NVTX and torch.profiler),
    the warm-up steps in none, so ``segkit profile -- python benchmarks/model_step.py`` gives ``segkit trace
    breakdown`` the timed steps alone (it once had no range, and the whole process read as "1 step(s)")."""
    import torch

    from benchmarks import model_measure
    from segkit import trace
    from segkit.nvfuser import timing

    monkeypatch.setattr(timing, "_cupti_owner", [])
    x = torch.randn(64, 64, requires_grad=True)
    with trace.capture() as cap:
        model_measure.time_steps(lambda: (x @ x).sum().backward(), iters=3, warmup=2, cuda=False, steps=2)
    got = cap.trace.ranges_named("step")
    assert len(got) == 3 * 2  # 3 timings of 2 back-to-back steps, each its own range; the 2 warm-up steps in none
    assert all(r.end_ns > r.start_ns for r in got)
