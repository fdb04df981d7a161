"""sweep on CPU: a small pytest-benchmark suite sharded over fake devices merges into the same case
set as an unsharded run, every case says which device ran it, and balancing uses the last run's durations; under
--time-limit a sweep ends with what finished and names what did not run, even when a shard has to be killed, and
--resume finishes it in a later run with exactly the cases not yet run."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import summarize
from sweep import resume as sweep_resume
from sweep.launch import INCOMPLETE, main
from sweep.plan import SweepError, balance, collect, resolve_devices
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> str:
    """The tiny suite copied outside the project, so its pytest runs load no project conftest (no torch)."""
    path = tmp_path_factory.mktemp("suite") / "bench_tiny.py"
    path.write_text((ROOT / "tests" / "data" / "sweep_suite" / "bench_tiny.py").read_text())
    return str(path)


# Margins of the time-limit runs, which must hold on a loaded machine (2 cores shared by several pytest sessions):
# the shard's start-up and the quick case fit before the limit (about a second when loaded), and pytest ends its
# session within the grace after SIGINT (about a second idle, a few when loaded).
LIMIT_S = 6
SIGINT_GRACE_S = 8


@pytest.fixture(scope="module")
def limit_suite(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("limit") / "bench_limit.py"
    path.write_text((ROOT / "tests" / "data" / "sweep_suite" / "bench_limit.py").read_text())
    return str(path)


@pytest.fixture(scope="module")
def limit_cases(limit_suite) -> list[str]:
    return collect([limit_suite])


@pytest.fixture
def collected_before_launch(monkeypatch, limit_suite, limit_cases) -> None:
    """The launcher's collection answered from one made before the run: the time limit counts from launch, and
    the collecting pytest process alone takes up to ~10 s on a loaded machine, which would leave the limit run
    out before the quick case starts (what these tests check happens after collection)."""
    def collect_once(pytest_args: list[str]) -> list[str]:
        assert pytest_args == [limit_suite]
        return list(limit_cases)

    monkeypatch.setattr("sweep.plan.collect", collect_once)


def _unsharded(tmp_path, suite) -> set[str]:
    out = tmp_path / "single.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", suite,
                           f"--benchmark-json={out}"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]
    return {b["fullname"] for b in json.loads(out.read_text())["benchmarks"]}


@pytest.fixture(scope="module")
def swept(tmp_path_factory, suite):
    tmp = tmp_path_factory.mktemp("sweep")
    merged = tmp / "merged.json"
    assert main(["--devices", "0,1,2", "-o", str(merged), "--", suite]) == 0
    return tmp, json.loads(merged.read_text())


def test_merged_cases_equal_an_unsharded_run_with_each_device_recorded(swept, suite, tmp_path):
    tmp, doc = swept
    names = [b["fullname"] for b in doc["benchmarks"]]
    assert len(names) == len(set(names)) == 8
    assert set(names) == _unsharded(tmp_path, suite)
    devices = {b["extra_info"]["sweep_device"] for b in doc["benchmarks"]}
    assert devices == {"0", "1", "2"}  # 10 cases (8 benchmarks + 2 plain) over 3 shards: every shard ran some
    assert all(b["extra_info"]["sweep_duration_s"] > 0 for b in doc["benchmarks"])
    assert doc["sweep"]["devices"] == ["0", "1", "2"] and sum(doc["sweep"]["cases"].values()) == 10
    assert all(s["exit_code"] == 0 for s in doc["sweep"]["shards"])
    assert "test_plain_case_without_benchmark" in " ".join(doc["sweep"]["durations"])
    assert doc["sweep"]["counts"] == {"passed": 10}


def test_a_test_run_without_benchmarks_merges_outcomes(suite, tmp_path):
    out = tmp_path / "tests.json"
    assert main(["--devices", "0,1", "-o", str(out), "--", suite, "-k", "plain"]) == 0
    doc = json.loads(out.read_text())
    assert doc["sweep"]["counts"] == {"passed": 2} and doc["benchmarks"] == []
    assert {o["device"] for o in doc["sweep"]["outcomes"].values()} == {"0", "1"}


def test_merged_json_reads_with_summarize_and_pytest_benchmark_compare(swept):
    tmp, doc = swept
    _, rows = summarize.load(tmp / "merged.json")  # rows need kernel_us_median: the tiny suite has none
    assert rows == []
    proc = subprocess.run([str(Path(sys.executable).parent / "pytest-benchmark"), "compare", str(tmp / "merged.json")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("test_tiny[") == 8


def test_balance_uses_last_durations_longest_first():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 1.0}
    shards = balance(["a", "b", "c", "d", "new"], durations, ["0", "1"])
    # new counts as the median known duration (5.5): a | b, new | c onto the lighter | d
    assert [s.cases for s in shards] == [["a", "c"], ["b", "new", "d"]]
    assert shards[0].expected_s == 15.0 and shards[1].expected_s == 12.5


def test_several_shards_per_gpu_are_labelled_and_pinned_to_their_gpu(suite, tmp_path):
    """--per-gpu 2 over two devices: four shards, each case's record names its shard ("device.slot"), the shards
    of one device are pinned to that device, and the record lists each GPU once."""
    out = tmp_path / "tests.json"
    assert main(["--devices", "0,1", "--per-gpu", "2", "--workdir", str(tmp_path / "w"), "-o", str(out),
                 "--", suite, "-k", "plain or sum"]) == 0
    doc = json.loads(out.read_text())
    labels = {o["device"] for o in doc["sweep"]["outcomes"].values()}
    assert labels == {"0.0", "1.0", "0.1", "1.1"} and doc["sweep"]["devices"] == ["0", "1"]
    assert set(doc["sweep"]["timing"]) == labels and doc["sweep"]["launcher"]["shards_per_gpu"] == 2
    assert {b["extra_info"]["sweep_device"] for b in doc["benchmarks"]} <= labels


def test_per_gpu_each_commands_are_pinned_to_their_gpu(tmp_path):
    cmd = (f"{sys.executable} -c \"import os; open(r'{tmp_path}/out{{shard}}-{{device}}-{{n}}-' "
           f"+ os.environ['CUDA_VISIBLE_DEVICES'], 'w')\"")
    assert main(["--devices", "3,7", "--per-gpu", "2", "--each", cmd, "--workdir", str(tmp_path / "w")]) == 0
    assert sorted(p.name for p in tmp_path.glob("out*")) == ["out0-3-4-3", "out1-7-4-7", "out2-3-4-3", "out3-7-4-7"]


def test_merged_outcomes_use_pytests_words(tmp_path):
    """An expected failure is "xfailed", not "skipped" (pytest reports it as skipped): a GPU suite's table must not
    count a strict xfail on a known nvFuser bug as a skipped test."""
    suite = tmp_path / "bench_outcomes.py"
    suite.write_text((ROOT / "tests" / "data" / "sweep_suite" / "bench_outcomes.py").read_text())
    out = tmp_path / "outcomes.json"
    assert main(["--devices", "0,1", "-o", str(out), "--", str(suite)]) == 1  # one case fails
    outcomes = {k.split("::")[1]: v["outcome"] for k, v in json.loads(out.read_text())["sweep"]["outcomes"].items()}
    assert outcomes == {"test_passes": "passed", "test_expected_failure": "xfailed", "test_unexpected_pass": "xpassed",
                        "test_skipped": "skipped", "test_fails": "failed"}


def test_per_gpu_shards_take_one_gpu_each_before_any_takes_a_second():
    shards = balance(["a", "b", "c", "d"], {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, ["5", "6"], per_gpu=2)
    assert [(s.device, s.label, s.cases) for s in shards] == [("5", "5.0", ["a"]), ("6", "6.0", ["b"]),
                                                              ("5", "5.1", ["c"]), ("6", "6.1", ["d"])]
    with pytest.raises(SweepError, match="--per-gpu 0"):
        balance(["a"], {}, ["0"], per_gpu=0)


def test_balancing_by_a_previous_sweep_reads_its_durations(swept, suite, tmp_path):
    tmp, doc = swept
    rerun = tmp_path / "rerun.json"
    assert main(["--devices", "x,y", "-o", str(rerun), "--durations", str(tmp / "merged.json"), "--", suite]) == 0
    assert {b["extra_info"]["sweep_device"] for b in json.loads(rerun.read_text())["benchmarks"]} == {"x", "y"}


def test_each_runs_one_command_per_device(tmp_path):
    cmd = f"{sys.executable} -c \"open(r'{tmp_path}/out{{shard}}-{{device}}-{{n}}', 'w')\""
    assert main(["--devices", "3,7", "--each", cmd, "--workdir", str(tmp_path / "w")]) == 0
    assert sorted(p.name for p in tmp_path.glob("out*")) == ["out0-3-2", "out1-7-2"]


def test_submitit_local_executor_runs_the_shards(tmp_path, suite):
    pytest.importorskip("submitit")
    merged = tmp_path / "m.json"
    assert main(["--devices", "0,1", "--backend", "submitit", "--submitit-cluster", "local", "-o", str(merged),
                 "--", suite, "-k", "sum"]) == 0
    doc = json.loads(merged.read_text())
    assert {b["extra_info"]["sweep_device"] for b in doc["benchmarks"]} == {"0", "1"}
    assert len(doc["benchmarks"]) == 4


@pytest.mark.parametrize("argv, message", [
    (["--devices", "0,,1", "-o", "x.json", "--", "SUITE"], "distinct, non-empty"),
    (["--devices", "0", "--", "SUITE"], "-o/--output is required"),
    (["--devices", "0", "-o", "x.json", "--", "SUITE", "-k", "nothing_matches_this"], "collected no case"),
    (["--devices", "0", "--each", "echo {bogus}"], "only {shard}, {device} and {n}"),
    (["--devices", "0", "-o", "x.json", "--resume", "."], "no sweep there (no sweep.json)"),
    (["--devices", "0", "--each", "echo", "--resume", "."], "an --each run has none to continue"),
    (["--devices", "0", "-o", "x.json", "--resume", ".", "--workdir", "w"], "give --resume or --workdir, not both"),
])
def test_bad_arguments_are_one_line_errors(argv, message, capsys, tmp_path, monkeypatch, suite):
    monkeypatch.chdir(tmp_path)
    assert main([suite if a == "SUITE" else a for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_gpus_count_beyond_the_visible_ones_is_refused(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert resolve_devices("all", None) == ["0", "1"]
    assert resolve_devices("1", None) == ["0"]
    with pytest.raises(SweepError, match="only 2 GPU"):
        resolve_devices("4", None)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(SweepError, match="no GPU is visible"):
        resolve_devices("all", None)


def _by_name(mapping: dict) -> dict:
    """Node ids of the limit suite by test name (the ids hold the suite's temporary path)."""
    return {k.rsplit("::", 1)[1]: v for k, v in mapping.items()}


def test_cases_past_the_time_limit_are_skipped_and_named_and_the_rest_merged(limit_suite, collected_before_launch,
                                                                             tmp_path, capsys):
    out = tmp_path / "limit.json"
    # test_b_overrun sleeps until just past the deadline; c and d would start after it
    assert main(["--devices", "0", "--time-limit", str(LIMIT_S), "--grace", "20", "-o", str(out), "--",
                 limit_suite]) == 3
    sweep = json.loads(out.read_text())["sweep"]
    assert sweep["complete"] is False and sweep["counts"] == {"passed": 2, "not run": 2}
    not_run = _by_name(sweep["not_run"]["0"])
    assert set(not_run) == {"test_c_late", "test_d_late"}
    assert all(f"time limit ({LIMIT_S} s)" in why for why in not_run.values())
    assert set(_by_name(sweep["durations"])) == {"test_a_quick", "test_b_overrun"}
    assert _by_name(sweep["durations"])["test_b_overrun"] >= 0.3
    # pytest ended on its own: no signal, and pytest-benchmark wrote its JSON (the quick case's record merged)
    shard = sweep["shards"][0]
    assert shard["exit_code"] == 0 and not shard["interrupted"] and shard["benchmark_json"] == "written"
    assert [b["name"] for b in json.loads(out.read_text())["benchmarks"]] == ["test_a_quick"]
    assert "sweep incomplete" in capsys.readouterr().err


@pytest.mark.parametrize("overrun, grace, killed", [("sleep_long", SIGINT_GRACE_S, False), ("hang", 0.5, True)])
def test_a_shard_stopped_mid_case_still_reports_the_cases_it_finished(limit_suite, collected_before_launch, tmp_path,
                                                                      monkeypatch, overrun, grace, killed):
    """sleep_long honours SIGINT (pytest ends its session within the grace: pytest-benchmark's JSON survives);
    hang ignores it and is killed after the grace (only the plugin's per-case report survives)."""
    monkeypatch.setenv("SWEEP_TINY_OVERRUN", overrun)
    out = tmp_path / "stopped.json"
    assert main(["--devices", "0", "--time-limit", str(LIMIT_S), "--grace", str(grace), "-o", str(out), "--",
                 limit_suite]) == 3
    doc = json.loads(out.read_text())
    sweep = doc["sweep"]
    shard = sweep["shards"][0]
    assert shard["interrupted"] and shard["killed"] is killed
    assert _by_name(sweep["outcomes"]) == {"test_a_quick": {"outcome": "passed", "device": "0"}}
    assert set(_by_name(sweep["durations"])) == {"test_a_quick"}
    not_run = _by_name(sweep["not_run"]["0"])
    assert set(not_run) == {"test_b_overrun", "test_c_late", "test_d_late"}
    assert all(("killed" if killed else "interrupted (SIGINT)") in why and "the time limit" in why
               for why in not_run.values())
    if killed:
        assert shard["benchmark_json"].startswith("missing") and doc["benchmarks"] == []
    else:
        assert shard["benchmark_json"] == "written" and [b["name"] for b in doc["benchmarks"]] == ["test_a_quick"]


def test_each_shard_says_where_its_time_went(swept):
    _, doc = swept
    sweep = doc["sweep"]
    assert set(sweep["timing"]) == {"0", "1", "2"}
    for device, t in sweep["timing"].items():
        ran = {k: v for k, v in sweep["durations"].items() if sweep["outcomes"][k]["device"] == device}
        assert t["cases_run"] == len(ran) == sweep["cases"][device]
        assert t["cases_s"] == pytest.approx(sum(ran.values()), abs=1e-3)
        assert 0 < t["startup_s"] <= t["collected_at_s"] <= t["to_first_case_s"] < t["wall_s"]
        assert t["cases_s"] <= t["wall_s"] - t["to_first_case_s"]
        assert t["other_s"] == pytest.approx(t["wall_s"] - t["to_first_case_s"] - t["cases_s"], abs=2e-3)
        assert t["other_s"] >= 0
    launcher = sweep["launcher"]
    assert 0 < launcher["collect_s"] < launcher["wall_s"]
    assert launcher["wall_s"] >= max(t["wall_s"] for t in sweep["timing"].values())
    assert sweep["complete"] is True and sweep["not_run"] == {}


def test_without_durations_the_estimate_is_unknown_not_invented():
    shards = balance(["a", "b", "c"], {}, ["0", "1"])
    assert all("unknown" in s.estimate() and " s" not in s.estimate().replace("s (", "(") for s in shards)
    mixed = balance(["a", "b", "c"], {"a": 4.0}, ["0"])
    assert mixed[0].estimate() == "4 s measured last time for 1 case(s), 2 never timed"


def test_a_cut_sweep_resumed_runs_every_case_once_and_merges_all_runs(limit_suite, collected_before_launch, tmp_path,
                                                                      monkeypatch, capsys):
    work = tmp_path / "w"
    assert main(["--devices", "0", "--time-limit", str(LIMIT_S), "--grace", "20", "--workdir", str(work),
                 "-o", str(work / "first.json"), "--", limit_suite]) == 3
    assert set(_by_name(json.loads((work / "first.json").read_text())["sweep"]["not_run"]["0"])) == {
        "test_c_late", "test_d_late"}

    def no_collection(pytest_args):
        raise AssertionError("a resumed sweep runs the cases its workdir names, without collecting again")

    monkeypatch.setattr("sweep.plan.collect", no_collection)
    out = tmp_path / "all.json"
    assert main(["--devices", "0,1", "--resume", str(work), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    sweep = doc["sweep"]
    assert sweep["complete"] is True and sweep["not_run"] == {} and sweep["counts"] == {"passed": 4}
    everything = {"test_a_quick", "test_b_overrun", "test_c_late", "test_d_late"}
    assert set(_by_name(sweep["outcomes"])) == set(_by_name(sweep["durations"])) == everything
    # every case ran exactly once over the two runs: the shards' own reports, run 1 in the workdir, run 2 in run2/
    reports = [work / "shard0.report.json", *sorted((work / "run2").glob("shard*.report.json"))]
    ran = [set(_by_name(json.loads(p.read_text())["outcomes"])) for p in reports]
    assert ran[0] == {"test_a_quick", "test_b_overrun"}
    assert ran[1:] == [{"test_c_late"}, {"test_d_late"}]  # two shards: one case each (equal weight)
    assert [(r["folder"], r["devices"], r["cases_run"], r["not_run"]) for r in sweep["runs"]] == [
        (".", ["0"], 2, 2), ("run2", ["0", "1"], 2, 0)]
    assert sweep["runs"][0]["wall_s"] >= LIMIT_S and sweep["runs"][0]["time_limit_s"] == LIMIT_S
    assert _by_name(sweep["outcomes"])["test_d_late"]["device"] == "1"
    assert [b["name"] for b in doc["benchmarks"]] == ["test_a_quick"]  # the first run's record, kept
    assert json.loads((work / "sweep.json").read_text()) == doc

    capsys.readouterr()
    assert main(["--devices", "0", "--resume", str(work), "-o", str(tmp_path / "again.json")]) == 0
    assert "is complete (4 case(s) over 2 run(s)): nothing to resume" in capsys.readouterr().out
    assert not (tmp_path / "again.json").exists() and not (work / "run3").exists()
    assert main(["--devices", "0", "--resume", str(work), "-o", str(out), "--", limit_suite, "-k", "quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"ran pytest with {limit_suite}, this run gives {limit_suite} -k quick" in err


def test_a_case_that_ran_in_both_runs_keeps_the_latest():
    def doc(outcome, mean, not_run):
        return {"benchmarks": [{"fullname": "s.py::x", "stats": {"mean": mean}}], "machine_info": {"node": "h"},
                "sweep": {"devices": ["0"], "outcomes": {"s.py::x": {"outcome": outcome, "device": "0"}},
                          "durations": {"s.py::x": mean}, "not_run": not_run, "launcher": {"wall_s": 1.0}}}

    first = sweep_resume.combine(None, doc("failed", 2.0, {"0": {"s.py::y": "time limit"}}), ".")
    both = sweep_resume.combine(first, doc("passed", 1.0, {}), "run2")
    assert [b["stats"]["mean"] for b in both["benchmarks"]] == [1.0]
    assert both["sweep"]["outcomes"]["s.py::x"]["outcome"] == "passed" and both["sweep"]["counts"] == {"passed": 1}
    assert [r["cases_run"] for r in both["sweep"]["runs"]] == [1, 1]


def test_untimed_cases_of_a_resumed_sweep_weigh_as_its_median_case():
    shards = balance(["p", "q", "r"], {"done1": 2.0, "done2": 4.0, "done3": 9.0}, ["0", "1"])
    assert [len(s.cases) for s in shards] == [2, 1] and shards[0].expected_s == 8.0


def test_a_resumed_case_gone_from_the_suite_is_named_not_run(suite, tmp_path):
    """The sweep's record (as a cut first run leaves it) names a case the suite no longer has: the resumed run runs
    the rest and says that one was not collected, instead of blaming a crash."""
    first, second = collect([suite, "-k", "plain"])
    gone = second.replace("test_plain_second_case", "test_renamed_since")
    record = {"benchmarks": [], "machine_info": {}, "sweep": {
        "pytest_args": [suite, "-k", "plain"], "outcomes": {first: {"outcome": "passed", "device": "0"}},
        "durations": {}, "runs": [{"folder": ".", "cases_run": 1}],
        "not_run": {"0": {gone: "time limit", second: "time limit"}}}}
    (tmp_path / "sweep.json").write_text(json.dumps(record))
    assert main(["--devices", "0", "--resume", str(tmp_path), "-o", str(tmp_path / "out.json")]) == 3
    sweep = json.loads((tmp_path / "out.json").read_text())["sweep"]
    assert sweep["counts"] == {"passed": 2, "not run": 1} and sweep["shards"][0]["exit_code"] == 0
    assert "not collected in this shard" in sweep["not_run"]["0"][gone] and list(sweep["not_run"]["0"]) == [gone]


# --------------------------------------------------------------------------- issue 38/39: machine block, compile
# budget and caches, warm-up, committed durations, the one-GPU estimate, scripts/gpu/sweep.sh
def test_the_merged_record_carries_the_machine_block_and_compile_time_per_shard(swept):
    from sweep.machine import FIELDS

    tmp, doc = swept
    block = doc["machine"]
    assert list(block) == list(FIELDS) and block["gpu"] is None and block["copy_gbs"] is None  # CPU: no GPU
    assert "node" not in json.dumps(block)
    for device, t in doc["sweep"]["timing"].items():
        benchmarks = [b for b in doc["benchmarks"] if b["extra_info"]["sweep_device"] == device]
        # each tiny benchmark calls timing_starts(): its preparation is counted, a plain test's is not
        assert t["compiled_cases"] == len(benchmarks)
        if benchmarks:
            assert 0 <= t["compile_s"] <= t["cases_s"]
    launcher = doc["sweep"]["launcher"]
    assert launcher["compile_threads"] == max(1, (os.cpu_count() or 1) // 3)
    assert launcher["compile_cache"] == str(tmp / "merged.shards" / "compile-cache")
    assert [r["commit"] for r in doc["sweep"]["runs"]] == [block["commit"]]


def test_each_shard_gets_a_compile_thread_budget_and_the_shared_cache():
    from sweep.jobs import compile_env

    env = compile_env(4, Path("/w/compile-cache"))
    assert env == {"TORCHINDUCTOR_COMPILE_THREADS": "4", "OMP_NUM_THREADS": "4",
                   "TORCHINDUCTOR_CACHE_DIR": "/w/compile-cache/inductor", "TRITON_CACHE_DIR": "/w/compile-cache/triton"}
    assert compile_env(2, None) == {"TORCHINDUCTOR_COMPILE_THREADS": "2", "OMP_NUM_THREADS": "2"}


def test_warmup_runs_the_shortest_cases_first_and_counts_nothing(suite, tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["--devices", "0", "--warmup", "1", "--compile-threads", "1", "--workdir", str(tmp_path / "w"),
                 "-o", str(out), "--", suite, "-k", "sum"]) == 0
    doc = json.loads(out.read_text())
    assert doc["sweep"]["counts"] == {"passed": 4} and len(doc["benchmarks"]) == 4
    assert doc["sweep"]["launcher"]["warmup_s"] > 0 and doc["sweep"]["launcher"]["compile_threads"] == 1
    warm = json.loads((tmp_path / "w" / "warmup.report.json").read_text())
    assert len(warm["outcomes"]) == 1 and "warm-up: 1 case(s) on device 0" in capsys.readouterr().out


def test_committed_durations_are_picked_by_suite_and_gpu(tmp_path, monkeypatch):
    from sweep import plan as sweep

    assert sweep.suite_key(["benchmarks/test_norm_bwd.py", "-k", "bfloat16"]) == "test_norm_bwd"
    assert sweep.suite_key(["-m", "gpu", "-p", "no:cacheprovider", "-rfE", "tests"]) == "tests"
    assert sweep.gpu_key("NVIDIA H100 80GB HBM3") == "h100" and sweep.gpu_key(None) is None
    norm = sweep.default_durations(["benchmarks/test_norm_bwd.py", "-k", "bfloat16"], "NVIDIA H200")
    assert norm == ROOT / "benchmarks" / "durations" / "test_norm_bwd-h200.json"
    committed = json.loads(norm.read_text())
    assert committed["cases"] == len(committed["durations"]) == 270 and committed["gpu"] == "NVIDIA H200"
    assert all(k.startswith("benchmarks/test_norm_bwd.py::test_norm_bwd[") and "bfloat16" in k
               for k in committed["durations"])
    assert sweep.load_durations([norm]) == committed["durations"]
    # another GPU: the suite's file of a GPU it has (relative durations balance better than counts); no file: None
    assert sweep.default_durations(["benchmarks/test_norm_bwd.py"], "NVIDIA H100 80GB HBM3").name == \
        "test_norm_bwd-h100.json"
    assert sweep.default_durations(["benchmarks/test_norm_bwd.py"], "NVIDIA A100-SXM4-80GB").name in \
        {"test_norm_bwd-h100.json", "test_norm_bwd-h200.json"}
    assert sweep.default_durations(["benchmarks/test_fp8_amax.py"], "NVIDIA H200") is None
    assert sweep.default_durations(["-m", "gpu", "tests"], "NVIDIA H200").name == "tests-h200.json"
    # written back from a merged sweep (here: into a temporary folder)
    monkeypatch.setattr(sweep, "DURATIONS_DIR", tmp_path)
    merged = ROOT / "tests" / "data" / "sweep_h200x4_norm_bwd" / "norm_bwd_bf16.json"
    path, said = sweep.write_durations(merged, [], None)
    assert "270 added and 0 replaced" in said and "0 kept" in said, said
    written = json.loads(path.read_text())
    assert path == tmp_path / "test_norm_bwd-h200.json" and written["from"] == str(merged.relative_to(ROOT))
    assert {**written, "from": None} == {**committed, "from": None}  # the committed file came from this sweep
    (tmp_path / "bare.json").write_text(json.dumps({"sweep": {"durations": {"t.py::a": 1.0}}}))
    with pytest.raises(SweepError, match="does not name its pytest arguments"):
        sweep.write_durations(tmp_path / "bare.json", [], "NVIDIA H200")
    with pytest.raises(SweepError, match="give --gpu-name"):
        sweep.write_durations(tmp_path / "bare.json", ["t.py"], None)
    # the lab keeps its runs gzipped: read as they are; bytes of neither kind are one line naming the file
    packed = tmp_path / "norm_bwd_bf16.json.gz"
    packed.write_bytes(gzip.compress(merged.read_bytes()))
    assert sweep.load_durations([packed]) == committed["durations"]
    assert json.loads(sweep.write_durations(packed, [], None)[0].read_text())["durations"] == committed["durations"]
    (tmp_path / "cut.json.gz").write_bytes(packed.read_bytes()[:40])
    with pytest.raises(SweepError, match=r"cut.json.gz: truncated or corrupt gzip data") as got:
        sweep.write_durations(tmp_path / "cut.json.gz", [], None)
    (tmp_path / "binary.json").write_bytes(b"{\"sweep\": \xff\xfe}")
    with pytest.raises(SweepError, match=r"binary.json: not UTF-8 text \(byte 0xff at offset 10\)"):
        sweep.load_durations([tmp_path / "binary.json"])
    message = str(got.value)
    assert "\\x" not in message and "\n" not in message  # one line, no dump of the file's bytes


def test_the_one_gpu_estimate_of_the_committed_4_gpu_sweep():
    from sweep.estimate import estimate, estimate_report

    merged = ROOT / "tests" / "data" / "sweep_h200x4_norm_bwd" / "norm_bwd_bf16.json"
    sweep = json.loads(merged.read_text())["sweep"]
    e = estimate(merged)
    timing = sorted(sweep["timing"].values(), key=lambda t: t["to_first_case_s"])
    firsts = sorted(t["to_first_case_s"] for t in timing)
    tails = sorted(t["other_s"] for t in timing)
    startup = sweep["launcher"]["collect_s"] + (firsts[1] + firsts[2]) / 2 + (tails[1] + tails[2]) / 2
    assert e.devices == 4 and e.cases == 270 and not e.complete and e.wall_s == sweep["launcher"]["wall_s"]
    assert e.one_gpu_s == pytest.approx(sum(sweep["durations"].values()) + startup)
    report = estimate_report(merged)
    assert "COMPUTED (not measured)" in report and f"ratio 4-GPU wall / 1-GPU time = {e.wall_s / e.one_gpu_s:.3f}" in report
    assert "optimistic" in report and "no contention factor" in report


def test_the_contention_factor_comes_from_a_one_gpu_sweep_of_the_same_cases(tmp_path):
    from sweep.estimate import EstimateError, estimate

    def sweep(durations, devices):
        timing = {d: {"to_first_case_s": 2.0, "other_s": 1.0} for d in devices}
        return {"sweep": {"durations": durations, "devices": devices, "timing": timing, "complete": True,
                          "launcher": {"wall_s": 30.0, "collect_s": 3.0}}}

    (tmp_path / "n.json").write_text(json.dumps(sweep({"a": 20.0, "b": 30.0, "c": 10.0}, ["0", "1"])))
    (tmp_path / "one.json").write_text(json.dumps(sweep({"a": 10.0, "b": 15.0, "z": 1.0}, ["0"])))
    e = estimate(tmp_path / "n.json", tmp_path / "one.json")
    assert e.one_gpu_s == 66.0 and e.contention == 2.0 and e.contention_cases == 2
    assert e.one_gpu_bound_s == 36.0
    (tmp_path / "none.json").write_text(json.dumps(sweep({"q": 1.0}, ["0"])))
    with pytest.raises(EstimateError, match="no case in common"):
        estimate(tmp_path / "n.json", tmp_path / "none.json")
    assert main(["--estimate-one-gpu", str(ROOT / "pyproject.toml")]) == 2


def test_a_resumed_sweep_refuses_another_gpu_model():
    record = {"machine": {"gpu": "NVIDIA H200"}, "sweep": {"pytest_args": ["x.py"], "not_run": {"0": {"x.py::a": ""}}}}
    resume = sweep_resume.Resume(record, ["x.py"], ["x.py::a"], {}, 2)
    sweep_resume.check_same_gpu(resume, "NVIDIA H200")
    sweep_resume.check_same_gpu(resume, None)  # no GPU seen (a dry run): nothing to compare
    with pytest.raises(sweep_resume.ResumeRefused, match="ran on NVIDIA H200, this run's devices are NVIDIA H100"):
        sweep_resume.check_same_gpu(resume, "NVIDIA H100")


def test_sweep_sh_resumes_until_the_suite_is_complete(suite, tmp_path):
    """scripts/gpu/sweep.sh on CPU (no nvidia-smi, no .gpu): the workdir holds a cut sweep (one case run, one not);
    the script resumes it, finishes it, and leaves the merged record, the workdir archive and a summary."""
    first, second = collect([suite, "-k", "plain"])
    work = tmp_path / "w"
    work.mkdir()
    (work / "sweep.json").write_text(json.dumps({"benchmarks": [], "machine_info": {}, "sweep": {
        "pytest_args": [suite, "-k", "plain"], "outcomes": {first: {"outcome": "passed", "device": "0"}},
        "durations": {first: 0.1}, "runs": [{"folder": ".", "cases_run": 1, "wall_s": 5.0, "devices": ["0"],
                                               "not_run": 1}],
        "not_run": {"0": {second: "time limit"}}}}))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "OUT": str(tmp_path / "out"), "CUDA_VISIBLE_DEVICES": "0,1", "SWEEP_WORK": str(work),
           "SWEEP_BUDGET_S": "300", "SWEEP_GRACE_S": "5"}
    proc = subprocess.run(["bash", "scripts/gpu/sweep.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "=== resuming the sweep in" in proc.stdout and "sweep exit 0" in proc.stdout
    assert proc.stdout.count("=== resuming") == 1  # complete after one run: the loop ends
    doc = json.loads((tmp_path / "out" / "sweep" / "merged.json").read_text())
    assert doc["sweep"]["complete"] and doc["sweep"]["counts"] == {"passed": 2} and len(doc["sweep"]["runs"]) == 2
    assert "whole sweep: {'passed': 2}, complete: True" in proc.stdout
    assert (tmp_path / "out" / "sweep" / "workdir.tgz").stat().st_size > 0


def test_a_shard_that_dies_mid_case_runs_the_rest_and_names_the_crash(tmp_path):
    """One device, a case that aborts its process: the shard starts again with the cases after it, the merged
    record holds every other case's outcome and benchmark, the dead one as 'crashed', and the exit code says a
    case failed. With --respawns 0 the cases after it are not run, with the crash named as the reason."""
    suite = tmp_path / "bench_crash.py"
    suite.write_text((ROOT / "tests" / "data" / "sweep_suite" / "bench_crash.py").read_text())
    merged = tmp_path / "merged.json"
    assert main(["--devices", "0", "-o", str(merged), "--workdir", str(tmp_path / "w"), "--", str(suite)]) == 1
    sweep = json.loads(merged.read_text())["sweep"]
    outcomes = {k.split("::")[1]: v["outcome"] for k, v in sweep["outcomes"].items()}
    assert outcomes == {**{f"test_before[{n}]": "passed" for n in range(3)}, "test_dies": "crashed",
                        **{f"test_after[{n}]": "passed" for n in range(4)}}
    assert sweep["complete"] and sweep["counts"] == {"passed": 7, "crashed": 1}
    assert [r["crashed"].split("::")[1] for r in sweep["timing"]["0"]["crashes"]] == ["test_dies"]
    assert len(json.loads(merged.read_text())["benchmarks"]) == 4  # the respawned process's records merged

    once = tmp_path / "once.json"
    assert main(["--devices", "0", "--respawns", "0", "-o", str(once), "--workdir", str(tmp_path / "w0"), "--",
                 str(suite)]) == INCOMPLETE
    sweep = json.loads(once.read_text())["sweep"]
    assert [k.split("::")[1] for k, v in sweep["outcomes"].items() if v["outcome"] == "crashed"] == ["test_dies"]
    assert sorted(k.split("::")[1] for k in sweep["not_run"]["0"]) == [f"test_after[{n}]" for n in range(4)]
    assert all("crashed" in why for why in sweep["not_run"]["0"].values())
