"""tests/gpu/memory_budget.py, the GPU suite's shards sharing one GPU's memory, with real processes and real file
locks: declared tests never hold more than the budget at once (the H100's four out-of-memory failures were 8 shards
at their peaks together), they do run side by side where the budget has room, a reservation of a dead process is
dropped, and a test declares what its config needs."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time

import pytest

from tests.gpu import memory_budget


def _hold(path: str, gib: float, budget: float, hold_s: float, barrier, out: str) -> None:
    barrier.wait()
    with memory_budget.reserved(gib, budget, memory_budget.Path(path), f"worker {os.getpid()}", poll_s=0.01):
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


def test_a_test_alone_runs_even_past_the_budget_and_a_dead_processs_reservation_is_dropped(tmp_path):
    path = tmp_path / "gpu.json"
    dead = mp.get_context("spawn").Process(target=time.sleep, args=(0,))
    dead.start()
    dead.join()
    path.write_text(json.dumps({str(dead.pid): [40.0, "a test of a shard that crashed"]}))
    with memory_budget.reserved(64.0, 47.0, path, "big", wait_s=5.0) as waited:
        assert waited < 5.0
        assert json.loads(path.read_text()) == {str(os.getpid()): [64.0, "big"]}
    assert json.loads(path.read_text()) == {}


def test_a_test_that_finds_no_room_in_time_fails_naming_what_holds_it(tmp_path):
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): [40.0, "tests/gpu/x.py::other"]}))
    with pytest.raises(TimeoutError, match=r"waited 0 s for 14 GiB of the GPU's 47 GiB budget; held: .*other"):
        with memory_budget.reserved(14.0, 47.0, path, "mine", wait_s=0.2):
            pass


@pytest.mark.parametrize("nodeid, gib", [
    ("tests/gpu/test_perf_gpu.py::test_rows_schedule_on_nvfuser_is_right_and_deterministic"
     "[mixorder_576000x384-sched0-rmsnorm_bwd]", 14.0),
    ("tests/gpu/test_rope_bwd_slices_gpu.py::test_variant_matches_the_float64_reference"
     "[Llama-3-70B_bs2-slices_halves-bgt]", 8.0),
    ("tests/gpu/test_perf_gpu.py::test_rows_schedule_on_nvfuser_is_right_and_deterministic"
     "[nanogpt-sched3-rmsnorm_bwd]", 0.0),
])
def test_a_test_declares_what_its_config_needs(nodeid, gib):
    assert memory_budget.need_gib(nodeid) == gib


def test_a_fresh_process_rerun_does_not_wait_for_its_parents_reservation(tmp_path):
    """A test re-run in its own process (a CUPTI conflict) while the parent still holds its reservation: the
    child counts the parent's as its own, or a test larger than half the budget would wait for itself."""
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({str(os.getppid()): [40.0, "the same test, in the parent"]}))
    with memory_budget.reserved(40.0, 47.0, path, "child", wait_s=1.0, parent=os.getppid()) as waited:
        assert waited < 1.0
