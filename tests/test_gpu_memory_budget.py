"""tests/gpu/memory_budget.py, the GPU suite's shards sharing one GPU's memory, with real processes and real file
locks: tests never hold more than the budget at once (the H100's four out-of-memory failures were 8 shards at their
peaks together), they do run side by side where the budget has room, what a process holds between tests counts, a
test re-run alone waits for the running ones and holds back new ones, the entry of a dead process is dropped, and a
test declares what its config needs."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time

import pytest

from tests.gpu import memory_budget


def _hold(path: str, gib: float, budget: float, hold_s: float, barrier, out: str) -> None:
    barrier.wait()
    with memory_budget.reserved(gib, 0.0, budget, memory_budget.Path(path), f"worker {os.getpid()}", poll_s=0.01):
        start = time.monotonic()
        time.sleep(hold_s)
        end = time.monotonic()
    with open(out, "a") as f:
        f.write(json.dumps([start, end, gib]) + "\n")


def _intervals(tmp_path, n: int, gib: float, budget: float) -> list[tuple[float, float, float]]:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n), tmp_path / f"out-{budget}.jsonl"
    path = tmp_path / f"gpu-{budget}.json"
    procs = [ctx.Process(target=_hold, args=(str(path), gib, budget, 0.4, barrier, str(out))) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return [tuple(json.loads(line)) for line in out.read_text().splitlines()]


def _most_at_once(intervals) -> float:
    """The largest sum of GiB held at one moment."""
    events = sorted([(s, g) for s, _, g in intervals] + [(e, -g) for _, e, g in intervals], key=lambda x: (x[0], x[1]))
    held = most = 0.0
    for _, g in events:
        held += g
        most = max(most, held)
    return most


def test_declared_tests_never_hold_more_than_the_budget_together(tmp_path):
    got = _intervals(tmp_path, 4, gib=6.0, budget=13.0)  # two at a time fit, three do not
    assert len(got) == 4
    assert _most_at_once(got) <= 13.0


def test_declared_tests_run_side_by_side_where_the_budget_has_room(tmp_path):
    got = _intervals(tmp_path, 4, gib=6.0, budget=100.0)
    assert _most_at_once(got) >= 12.0  # the check above can see an overlap


def _entry(**kw) -> dict:
    return vars(memory_budget.Entry(**kw))


def test_a_test_alone_runs_even_past_the_budget_and_a_dead_processs_entry_is_dropped(tmp_path):
    path = tmp_path / "gpu.json"
    dead = mp.get_context("spawn").Process(target=time.sleep, args=(0,))
    dead.start()
    dead.join()
    path.write_text(json.dumps({str(dead.pid): _entry(held=40.0, need=10.0, state="running",
                                                      test="a test of a shard that crashed")}))
    with memory_budget.reserved(64.0, 0.0, 47.0, path, "big", wait_s=5.0) as res:
        assert res.waited_s < 5.0
        (pid, entry), = json.loads(path.read_text()).items()
        assert pid == str(os.getpid()) and entry["need"] == 64.0 and entry["state"] == "running"
        memory_budget.release_held(path, 2.5)
    (entry,) = json.loads(path.read_text()).values()
    assert (entry["held"], entry["state"]) == (2.5, "idle")  # what the process keeps between tests still counts


def test_a_test_that_finds_no_room_in_time_fails_naming_what_holds_it(tmp_path):
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): _entry(held=30.0, need=10.0, state="running",
                                                          test="tests/gpu/x.py::other")}))
    with pytest.raises(TimeoutError, match=r"waited 0 s for 14 GiB of the GPU's 47 GiB budget; held: "
                                           r"pid \d+ running tests/gpu/x.py::other: holds 30.0 GiB, needs 10.0"):
        with memory_budget.reserved(14.0, 0.0, 47.0, path, "mine", wait_s=0.2):
            pass


def test_what_a_running_process_holds_between_tests_counts_against_the_budget(tmp_path):
    """A shard that keeps 40 GiB from an earlier test (an input cache, a leak) takes it from the others, though
    its running test needs little (the H100 run of 9c7d9a6: 41 small tests peaked at 40 GiB)."""
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): _entry(held=40.0, need=0.5, state="running", test="small")}))
    with pytest.raises(TimeoutError):
        with memory_budget.reserved(10.0, 0.0, 47.0, path, "mine", wait_s=0.2):
            pass
    with memory_budget.reserved(6.0, 0.0, 47.0, path, "fits", wait_s=0.2) as res:
        assert res.waited_s < 0.2


def test_a_test_starts_when_no_other_runs_one_though_idle_holders_leave_no_room(tmp_path):
    """Processes between tests hold memory only waiting can't free; a test that waited for them would wait for
    ever."""
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): _entry(held=40.0, state="idle", test="earlier")}))
    with memory_budget.reserved(30.0, 0.0, 47.0, path, "mine", wait_s=1.0) as res:
        assert res.waited_s < 1.0


def _run_then_log(path: str, gib: float, hold_s: float, out: str, delay_s: float) -> None:
    time.sleep(delay_s)
    with memory_budget.reserved(gib, 0.0, 100.0, memory_budget.Path(path), f"worker {os.getpid()}", poll_s=0.01):
        start = time.monotonic()
        time.sleep(hold_s)
    with open(out, "a") as f:
        f.write(json.dumps(["test", start, time.monotonic()]) + "\n")


def test_a_rerun_alone_waits_for_running_tests_and_no_test_starts_beside_it(tmp_path):
    path, out = tmp_path / "gpu.json", tmp_path / "out.jsonl"
    ctx = mp.get_context("spawn")
    first = ctx.Process(target=_run_then_log, args=(str(path), 1.0, 0.6, str(out), 0.0))
    first.start()
    while not path.exists() or not json.loads(path.read_text() or "{}"):  # the first test runs
        time.sleep(0.01)
    later = ctx.Process(target=_run_then_log, args=(str(path), 1.0, 0.1, str(out), 0.2))
    later.start()
    with memory_budget.reserved(1.0, 0.0, 100.0, path, "mine"):
        with memory_budget.alone(path, "mine", poll_s=0.01) as waited:
            start = time.monotonic()
            time.sleep(0.5)
            end = time.monotonic()
    for p in (first, later):
        p.join(30)
        assert p.exitcode == 0
    (_, s1, e1), (_, s2, e2) = sorted(json.loads(line) for line in out.read_text().splitlines())
    assert waited > 0.2 and start >= e1  # it waited for the running test to end
    assert s2 >= end  # the test that asked meanwhile started after it, not beside it


@pytest.mark.parametrize("exc, oom", [
    (type("OutOfMemoryError", (RuntimeError,), {})("CUDA error"), True),
    (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), True),
    (AssertionError("case failed: nvFuser: CUDA_ERROR_OUT_OF_MEMORY at alloc"), True),
    (ValueError("shape mismatch: (4, 8) vs (8, 4)"), False),
])
def test_out_of_memory_is_told_from_other_failures(exc, oom):
    assert memory_budget.is_out_of_memory(exc) is oom
    try:
        raise RuntimeError("the compile failed") from exc
    except RuntimeError as wrapped:
        assert memory_budget.is_out_of_memory(wrapped) is oom


@pytest.mark.parametrize("nodeid, gib", [
    ("tests/gpu/test_perf_gpu.py::test_rows_schedule_on_nvfuser_is_right_and_deterministic"
     "[mixorder_576000x384-sched0-rmsnorm_bwd]", 15.0),
    ("tests/gpu/test_perf_gpu.py::test_two_stage_on_nvfuser_is_right_and_deterministic[layernorm_bwd]", 15.0),
    ("tests/gpu/test_rope_bwd_slices_gpu.py::test_variant_matches_the_float64_reference"
     "[Llama-3-70B_bs2-slices_halves-bgt]", 14.0),
    ("tests/gpu/test_perf_gpu.py::test_rows_schedule_on_nvfuser_is_right_and_deterministic"
     "[nanogpt-sched3-rmsnorm_bwd]", memory_budget.DEFAULT_GIB),
])
def test_a_test_declares_what_its_config_needs(nodeid, gib):
    assert memory_budget.need_gib(nodeid) == gib


def test_a_fresh_process_rerun_does_not_wait_for_its_parents_reservation(tmp_path):
    """A test re-run in its own process (a CUPTI conflict) while the parent still holds its reservation: the
    child counts the parent's as its own, or a test larger than half the budget would wait for itself."""
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): _entry(held=2.0, need=40.0, state="running",
                                                          test="the same test, in the parent")}))
    with memory_budget.reserved(40.0, 0.0, 47.0, path, "child", wait_s=1.0, parent=os.getppid()) as res:
        assert res.waited_s < 1.0


def test_a_large_test_that_asked_first_is_not_starved_by_small_ones(tmp_path):
    """The 64 GiB norm backward waits for room while small tests of the other shards keep starting: they must
    wait behind it once it asks, or it waits until it times out."""
    path = tmp_path / "gpu.json"
    big_since = time.time() - 1.0
    path.write_text(json.dumps({
        str(os.getppid()): _entry(held=0.5, need=64.0, state="waiting", test="big", since=big_since)}))
    with pytest.raises(TimeoutError):  # 1 + 64 + 0.5 past 47: the small test waits behind the big one
        with memory_budget.reserved(1.0, 0.0, 47.0, path, "small", wait_s=0.2):
            pass
    assert json.loads(path.read_text())[str(os.getpid())]["state"] == "idle"  # gave up its place


def test_a_fresh_process_rerun_is_not_held_back_by_a_test_waiting_to_run_alone(tmp_path):
    """The waiting test waits for the parent's running test, which waits for this re-run: held back, it would
    wait for ever."""
    path, ctx = tmp_path / "gpu.json", mp.get_context("spawn")
    waiting = ctx.Process(target=time.sleep, args=(30,))
    waiting.start()
    try:
        path.write_text(json.dumps({
            str(os.getppid()): _entry(held=1.0, need=4.0, state="running", test="the parent's test"),
            str(waiting.pid): _entry(held=1.0, state="waiting_alone", test="out of memory, again alone")}))
        with memory_budget.reserved(4.0, 0.0, 47.0, path, "child", wait_s=1.0, parent=os.getppid()) as res:
            assert res.waited_s < 1.0
        with pytest.raises(TimeoutError):  # a test of no parent's is held back
            with memory_budget.reserved(4.0, 0.0, 47.0, path, "other", wait_s=0.2):
                pass
    finally:
        waiting.kill()
