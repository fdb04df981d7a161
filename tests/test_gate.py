"""The GPU gate's judgement (benchmarks/gate.py) on rows in the results data's schema: ours past the tolerance are
re-run and fail only if the re-run is slower too; rivals are shown, never judged; a failed or unrun GPU test fails
the gate; a faster result moves no baseline; the headline selection holds every case the gate names."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
import torch

from benchmarks import gate, gate_log
from benchmarks.summarize import read_data

MACHINE = {"gpu": "NVIDIA H200", "driver": "580", "torch": "2.11", "nvfuser_direct": "0.2", "commit": "abc1234",
           "date": "2026-11-29"}


def _row(executor: str, us: float, shape: str = "Llama-2-13b-hf_bs2", run: str = "base") -> dict:
    return {"suite": "qkv_split_rope", "case": {"shape": shape, "dtype": "bfloat16", "mode": "forward"},
            "executor": executor, "metrics": {"us": us}, "gpu": "NVIDIA H200", "commit": "abc1234",
            "date": "2026-11-29", "run": run, "source": "headline.json", "machine": MACHINE}


def _baseline(*rows: dict) -> dict:
    return {gate.key(r): r for r in rows}


def test_ours_past_the_tolerance_is_rerun_and_fails_only_if_slower_again():
    base = _baseline(_row("segkit", 100.0), _row("thunder+segkit_ex", 100.0), _row("torch.compile", 100.0))
    now = [_row("segkit", 104.0, run="g"), _row("thunder+segkit_ex", 102.9, run="g"),
           _row("torch.compile", 150.0, run="g")]
    judged = gate.judge(now, base)
    assert [j["verdict"] for j in judged] == ["slower", "ok", "slower"]
    assert [j["executor"] for j in gate.failures(judged)] == ["segkit"]  # the rival's 1.5x is shown only
    cleared = gate.judge(now, base, {gate.key(_row("segkit", 0)): _row("segkit", 101.0, run="g")})
    assert cleared[0]["verdict"] == "ok on re-run" and not gate.failures(cleared)
    again = gate.judge(now, base, {gate.key(_row("segkit", 0)): _row("segkit", 103.5, run="g")})
    assert again[0]["verdict"] == "slower, re-run slower too" and gate.failures(again)


def test_a_difference_within_the_new_measurements_own_spread_is_no_verdict():
    """A kernel of a few us: 3% is less than the spread of its own 20 rounds (the gate of e21bbbf failed fp8 amax at
    2.607 us against 2.513, IQR 0.24 us, re-run 2.623); past the IQR it is slower, and a large kernel's 3% rule is
    unchanged by its small IQR."""
    def row(us: float, iqr: float, shape: str = "seed") -> dict:
        return {**_row("segkit", us, shape=shape, run="g"), "metrics": {"us": us, "us_iqr": iqr}}

    base = _baseline(_row("segkit", 2.513, shape="seed"), _row("segkit", 100.0, shape="big"))
    judged = gate.judge([row(2.607, 0.239), row(104.0, 1.2, "big")], base)
    assert [j["verdict"] for j in judged] == ["ok, within its spread", "slower"] and not gate.failures(judged[:1])
    assert gate.judge([row(2.8, 0.239)], base)[0]["verdict"] == "slower"
    assert gate.judge([_row("segkit", 2.607, shape="seed", run="g")], base)[0]["verdict"] == "slower"  # no spread


def test_kernel_rows_carry_their_rounds_iqr(tmp_path):
    """benchmarks.summarize keeps the pytest-benchmark IQR (seconds) as the row's us_iqr, what the gate's rule reads."""
    from benchmarks.summarize import data_rows

    doc = {"machine_info": {"segkit": {**MACHINE}}, "benchmarks": [
        {"name": "test_fp8_amax[seed]", "params": {"executor": "segkit", "shape": "seed"},
         "extra_info": {"kernel_us_median": 2.6}, "stats": {"min": 2.4e-6, "max": 3.2e-6, "iqr": 2.39e-7}}]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    (r,) = data_rows(path, "g", "abc1234")
    assert r["metrics"]["us_iqr"] == pytest.approx(0.239) and gate.spread(r) == pytest.approx(0.239)


def test_a_faster_result_is_reported_and_an_unmeasured_one_of_ours_fails():
    base = _baseline(_row("segkit", 100.0), _row("segkit:fp32", 90.0))
    now = [_row("segkit", 80.0, run="g"), {**_row("segkit:fp32", 1.0, run="g"), "metrics": {"us": None}}]
    judged = gate.judge(now, base)
    assert [j["verdict"] for j in judged] == ["faster", "not measured"]
    assert [j["executor"] for j in gate.failures(judged)] == ["segkit:fp32"]


def test_a_failed_or_unrun_gpu_test_fails_the_gate(tmp_path):
    def tests(outcomes: dict, not_run: dict, complete: bool) -> dict:
        path = tmp_path / "gpu_tests.json"
        path.write_text(json.dumps({"sweep": {"outcomes": {k: {"outcome": v} for k, v in outcomes.items()},
                                              "not_run": not_run, "complete": complete, "counts": {},
                                              "timing": {"0.0": {"wall_s": 300.0}}}}))
        return gate.tests_summary(path)

    judged = gate.judge([_row("segkit", 100.0, run="g")], _baseline(_row("segkit", 100.0)))
    assert gate.verdict(tests({"a": "passed", "b": "xfailed"}, {}, True), judged)[0]
    ok, why = gate.verdict(tests({"a": "passed", "b": "failed"}, {}, True), judged)
    assert not ok and why == ["1 GPU test(s) failed: b"]
    ok, why = gate.verdict(tests({"a": "passed"}, {"c": "time limit"}, False), judged)
    assert not ok and why == ["1 GPU test(s) not run"]
    ok, why = gate.verdict(tests({}, {}, True), judged)
    assert not ok and why == ["the GPU suite ran no test"]


def test_a_gate_that_judged_nothing_fails(tmp_path, monkeypatch, capsys):
    """A benchmark run with no rows, and a run none of whose cases of ours has a baseline on its GPU, judged
    nothing: the record says fail, naming why (a run with no rows once printed PASS with 0 benchmarks judged)."""
    tests = tmp_path / "gpu_tests.json"
    tests.write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True, "outcomes": {"t": "passed"}}}))
    empty = tmp_path / "headline.json"
    empty.write_text(json.dumps({"benchmarks": [], "machine_info": {"machine": MACHINE}}))
    monkeypatch.setattr(gate, "load_baseline", lambda path=None: _baseline(_row("segkit", 100.0)))
    out = tmp_path / "record.json"
    assert gate.main(["record", "--tests", str(tests), "--bench", str(empty), "--commit", "c", "-o", str(out)]) == 1
    record = json.loads(out.read_text())
    assert record["gate"] == "fail" and record["why"] == ["the benchmark run has no rows: nothing was measured"]
    assert "gate: FAIL" in capsys.readouterr().out
    # rows, but this GPU has no baseline: nothing of ours judged
    other_gpu = {**_row("segkit", 100.0), "gpu": "NVIDIA H100 80GB HBM3"}
    monkeypatch.setattr(gate, "load_baseline", lambda path=None: _baseline(other_gpu))
    judged = gate.judge([_row("segkit", 100.0, run="g")], gate.load_baseline())
    ok, why = gate.verdict(gate.tests_summary(tests), judged)
    assert not ok and why == [f"no case of ours was judged against a baseline (GPU {MACHINE['gpu']}): promote a "
                              "baseline for it first"]


def test_land_refuses_a_record_already_landed(tmp_path, monkeypatch, capsys):
    """``land`` of the same record twice once appended it again (the same gate three times in gate.jsonl) and said
    its rows were added; the second is refused, naming the line that holds it, and writes nothing."""
    log, results = tmp_path / "gate.jsonl", tmp_path / "results.jsonl"
    log.write_text("")
    results.write_text("")
    monkeypatch.setattr(gate, "GATE_LOG", log)
    monkeypatch.setattr(gate, "RESULTS", results)
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"gate": "pass", "commit": "abc1234", "tests_commit": "abc1234",
                                  "gpu": MACHINE["gpu"], "run_at": "2026-12-07T10:00:00+00:00", "rerun_at": None,
                                  "machine": MACHINE, "rows": [_row("segkit", 100.0, run="gate-abc1234")]}))
    assert gate.main(["land", str(record)]) == 0
    landed_once, rows_once = log.read_text(), results.read_text()
    assert len(landed_once.splitlines()) == 1 and len(rows_once.splitlines()) >= 1
    capsys.readouterr()
    assert gate.main(["land", str(record)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already landed as line 1 of gate.jsonl" in err, err
    assert (log.read_text(), results.read_text()) == (landed_once, rows_once)
    # another run of the same commit on the same GPU is another gate
    other = json.loads(record.read_text()) | {"run_at": "2026-12-07T11:00:00+00:00"}
    record.write_text(json.dumps(other))
    assert gate.main(["land", str(record)]) == 0 and len(log.read_text().splitlines()) == 2


def test_land_keeps_the_verdict_counts_and_comparison_but_not_the_per_test_log(tmp_path, monkeypatch):
    """The gate log holds what a record's verdict rests on (why, counts, the failing and not-run ids, every
    comparison of the benchmarks, as a table by case) and not the per-test outcome log, which stays in the run's
    files: a landed record gives back its comparison field for field and the same verdict, "ran no test" included;
    its rows go to the results data, gzipped as the committed one is."""
    log, results = tmp_path / "gate.jsonl", tmp_path / "results.jsonl.gz"
    monkeypatch.setattr(gate, "GATE_LOG", log)
    monkeypatch.setattr(gate, "RESULTS", results)
    tests = tmp_path / "gpu_tests.json"
    tests.write_text(json.dumps({"sweep": {"counts": {"passed": 2, "failed": 1}, "complete": True,
                                           "outcomes": {"a": "passed", "b": "passed", "c": "failed"}}}))
    judged = gate.judge([_row("segkit", 100.0, run="g"), _row("eager", 300.0, run="g"),
                         _row("segkit", 50.0, shape="Llama-3-70B_bs2", run="g")],
                        _baseline(_row("segkit", 100.0), _row("eager", 290.0)))
    summary = gate.tests_summary(tests)
    ok, why = gate.verdict(summary, judged)
    record = {"gate": "pass" if ok else "fail", "why": why, "commit": "abc1234", "tests_commit": "abc1234",
              "gpu": MACHINE["gpu"], "run_at": "2026-12-07T10:00:00+00:00", "rerun_at": None, "machine": MACHINE,
              "tests": summary, "benchmarks": judged, "rows": [_row("segkit", 100.0, run="gate-abc1234")]}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    assert gate.main(["land", str(path)]) == 0
    assert [r["run"] for r in read_data(results)] == ["gate-abc1234"] and results.read_bytes()[:2] == b"\x1f\x8b"
    (line,) = log.read_text().splitlines()
    kept = json.loads(line)
    assert "outcomes" not in kept["tests"] and kept["tests"]["failed"] == ["c"] and kept["why"] == why
    assert len(kept["benchmarks"]["cases"]) == 2  # two cases: the 13b one with both executors, the 70B one
    assert gate_log.entries(kept) == judged
    assert gate.verdict(kept["tests"], gate_log.entries(kept)) == (ok, why)
    nothing = {**summary, "counts": {"not run": 3}, "outcomes": {}}
    assert "the GPU suite ran no test" in gate.verdict(gate_log.trimmed({"tests": nothing})["tests"], judged)[1]


def test_the_committed_gate_log_keeps_no_per_test_log_and_reads_back():
    """Every landed record in benchmarks/data/gate.jsonl is in the log's form (no per-test outcomes), its
    comparison reads back as flat entries with a verdict each, and its verdict and why follow from what it keeps."""
    lines = gate.GATE_LOG.read_text().splitlines()
    assert lines
    for n, text in enumerate(lines, 1):
        record = json.loads(text)
        assert "outcomes" not in record["tests"] and "counts" in record["tests"], f"line {n}"
        assert gate_log.line(record) == text + "\n", f"line {n} is not in the log's form"
        flat = gate_log.entries(record)
        assert flat and all(e["verdict"] and e["executor"] for e in flat), f"line {n}"
        ok, why = gate.verdict(record["tests"], flat)  # the verdict reads the same from what the log keeps
        assert (("pass" if ok else "fail"), why) == (record["gate"], record["why"]), f"line {n}"


def test_promote_is_the_only_step_that_moves_a_baseline(tmp_path, monkeypatch):
    from benchmarks.summarize import _lines

    results, baseline = tmp_path / "results.jsonl", tmp_path / "baseline.jsonl"
    results.write_text("".join(_lines([_row("segkit", 100.0, run="r1"), _row("segkit", 90.0, run="r2")], set())))
    monkeypatch.setattr(gate, "RESULTS", results)
    monkeypatch.setattr(gate, "BASELINE", baseline)
    monkeypatch.setattr(gate, "load_baseline", lambda path=baseline: {gate.key(r): r for r in
                                                                     gate.read_data(path)})
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "r1"]) == 0
    assert [gate.value(r) for r in gate.read_data(baseline)] == [100.0]
    assert gate.main(["promote", "--gpu", "NVIDIA H200"]) == 0  # the latest row of each case
    assert [gate.value(r) for r in gate.read_data(baseline)] == [90.0]
    assert gate.main(["promote", "--gpu", "NVIDIA H100 80GB HBM3"]) == 2  # nothing measured there: refused


def test_promote_faster_moves_only_what_a_change_sped_up(tmp_path, monkeypatch, capsys):
    """A run that sped one case up: ``--faster`` moves that case of ours, not its rival's nor the run's other cases
    within their noise (1.5% slower here), so a baseline does not drift slower one gate at a time."""
    from benchmarks.summarize import _lines

    results, baseline = tmp_path / "results.jsonl", tmp_path / "baseline.jsonl"
    old = [_row("segkit", 100.0, run="r1"), _row("segkit", 100.0, "Llama-3-70B_bs2", run="r1"),
           _row("thunder", 100.0, "Llama-3-70B_bs2", run="r1")]
    new = [_row("segkit", 101.5, run="r2"), _row("segkit", 80.0, "Llama-3-70B_bs2", run="r2"),
           _row("thunder", 70.0, "Llama-3-70B_bs2", run="r2")]
    baseline.write_text("".join(_lines(old, set())))
    results.write_text("".join(_lines([*old, *new], set())))
    monkeypatch.setattr(gate, "RESULTS", results)
    monkeypatch.setattr(gate, "BASELINE", baseline)
    monkeypatch.setattr(gate, "load_baseline", lambda path=baseline: {gate.key(r): r for r in
                                                                     gate.read_data(path)})
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "r2", "--faster"]) == 0
    assert sorted((r["executor"], r["case"]["shape"], gate.value(r)) for r in gate.read_data(baseline)) == [
        ("segkit", "Llama-2-13b-hf_bs2", 100.0), ("segkit", "Llama-3-70B_bs2", 80.0), ("thunder", "Llama-3-70B_bs2", 100.0)]
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "r2", "--faster"]) == 2  # nothing faster now
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "r2", "--suite", "fp8_amax"]) == 2  # none of it
    assert "faster than their baseline" in capsys.readouterr().err
    other = {**_row("segkit", 5.0), "suite": "fp8_amax"}  # another suite's baseline row
    baseline.write_text("".join(_lines([*gate.read_data(baseline), other], set())))
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--suite", "qkv_split_rope"]) == 0  # one suite, latest rows
    kept = {(r["suite"], r["case"]["shape"], r["executor"]): gate.value(r) for r in gate.read_data(baseline)}
    assert kept[("fp8_amax", "Llama-2-13b-hf_bs2", "segkit")] == 5.0  # one suite's rows never stand for the GPU's
    assert kept[("qkv_split_rope", "Llama-2-13b-hf_bs2", "segkit")] == 101.5 and len(kept) == 4


@pytest.mark.parametrize("needle, at_least", [
    ("test_norm_fwd[rmsnorm-mixorder_576000x384-bfloat16-segkit]", 1),
    ("test_norm_bwd[layernorm-mixorder_576000x384-bfloat16-segkit]", 1),
    ("test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward-segkit]", 1),
    ("test_qkv_split_rope[Llama-3-70B_bs2-bfloat16-backward-segkit]", 1),
    ("test_fp8_amax[seed_12x34x56-bfloat16", 2), ("test_fp8_amax[16384x8192-bfloat16", 2),
    ("test_fp8_amax[8192x28672-bfloat16", 2)])
def test_the_headline_selection_holds_every_case_the_gate_names(needle, at_least, collected_headline):
    assert sum(needle in line for line in collected_headline) >= at_least, needle


@pytest.fixture(scope="module")
def collected_headline() -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "benchmarks", "--collect-only", "-q", "-p",
                          "no:cacheprovider", "-k", gate.HEADLINE_K], capture_output=True, text=True, timeout=300,
                         cwd=gate.ROOT)
    lines = [line for line in out.stdout.splitlines() if "::" in line]
    assert lines, out.stdout[-2000:] + out.stderr[-2000:]
    assert not any("inference" in line or "float32" in line for line in lines)
    return lines


def test_a_baseline_case_the_run_lacks_fails_if_ours_and_is_shown_with_its_reason_if_a_rivals(tmp_path, monkeypatch):
    """A benchmark that fails its validation reports no result: the gate sees the hole in the run against the
    baseline, and the harness's log line gives the reason (the stock-Thunder case of the first green gate run)."""
    from types import SimpleNamespace

    from benchmarks import harness

    base = _baseline(_row("segkit", 100.0), _row("thunder", 90.0), _row("segkit", 50.0, shape="Llama-3-70B_bs2"))
    log = tmp_path / "headline.jsonl"
    monkeypatch.setenv("SEGKIT_BENCH_LOG", str(log))
    monkeypatch.setattr(harness, "machine_block", lambda copy_gbs=None: MACHINE)
    params = {"shape": "Llama-2-13b-hf_bs2", "dtype": "torch.bfloat16", "mode": "forward", "executor": "thunder"}
    bench = SimpleNamespace(name="test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward-thunder]", params=params,
                            extra_info={})
    wrong = harness.Prepared(lambda: torch.full((4,), 2.0))  # the rival's answer: 2 where the reference says 1
    # a rival's wrong result is no failure of the benchmark run (its exit status): an xfail with the reason
    with pytest.raises(pytest.xfail.Exception, match="rival thunder: wrong result, not benchmarked"):
        harness.run(bench, wrong, (torch.ones(4, dtype=torch.float64),), ("k",), nbytes=64, copy_gbs=1.0)
    ours = SimpleNamespace(name=bench.name.replace("-thunder]", "-segkit]"), params={**params, "executor": "segkit"},
                           extra_info={})
    with pytest.raises(pytest.fail.Exception, match="wrong result, not benchmarked"):  # ours still fails the run
        harness.run(ours, wrong, (torch.ones(4, dtype=torch.float64),), ("k",), nbytes=64, copy_gbs=1.0)
    log.write_text(log.read_text().splitlines()[0] + "\n")  # the rival's line alone, as below
    judged = gate.judge([_row("segkit", 101.0, run="g")], base, errors=gate.bench_errors(log))
    verdicts = {(j["executor"], j["case"]["shape"]): (j["verdict"], (j.get("error") or "")[:41]) for j in judged}
    assert verdicts == {("segkit", "Llama-2-13b-hf_bs2"): ("ok", ""),
                        ("thunder", "Llama-2-13b-hf_bs2"): ("missing", "wrong result, not benchmarked: k output 0"),
                        ("segkit", "Llama-3-70B_bs2"): ("missing", "")}
    assert [(j["executor"], j["case"]["shape"]) for j in gate.failures(judged)] == [("segkit", "Llama-3-70B_bs2")]
    unmeasured = gate.judge([_row("segkit", 101.0, run="g")], _baseline(_row("segkit", 100.0)),
                            errors=gate.bench_errors(log))  # a case that never had a baseline still shows its error
    assert [(j["executor"], j["verdict"]) for j in unmeasured] == [("segkit", "ok"), ("thunder", "missing")]
    assert "missing: wrong result" in gate.table(judged)
    # another GPU's baseline is not this run's hole
    other = {**_row("segkit", 1.0, shape="x"), "gpu": "NVIDIA H100 80GB HBM3"}
    assert not gate.failures(gate.judge([_row("segkit", 100.0, run="g")], _baseline(_row("segkit", 100.0), other)))


def test_a_record_says_when_its_run_and_its_re_run_were_measured(tmp_path, monkeypatch):
    """A re-run in a fresh lease (the gate's own re-run shares the run's lease and its drift) clears a case like
    the gate's own re-run; the record carries both files' times, so the evidence says which it was. A run kept
    gzipped (as the lab keeps its runs) reads as it was written."""
    def bench_file(path, us: float, at: str):
        path.write_text(json.dumps({"datetime": at, "benchmarks": [{
            "name": "test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward-segkit]",
            "fullname": "benchmarks/test_qkv_split_rope.py::test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward"
                        "-segkit]",
            "params": {"shape": "Llama-2-13b-hf_bs2", "dtype": "bfloat16", "mode": "forward", "executor": "segkit"},
            "stats": {"min": us * 1e-6, "max": us * 1e-6},
            "extra_info": {"kernel_us_median": us}}], "machine_info": {"machine": MACHINE}}))
        return path

    monkeypatch.setattr(gate, "load_baseline", lambda path=None: _baseline(_row("segkit", 100.0)))
    tests = tmp_path / "gpu_tests.json"
    tests.write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True, "outcomes": {"t": "passed"}}}))
    run = bench_file(tmp_path / "headline.json", 110.0, "2026-11-29T10:37:15+00:00")
    fresh = bench_file(tmp_path / "rerun.json", 100.5, "2026-11-29T10:40:33+00:00")
    fresh = fresh.with_suffix(".json.gz")  # as the lab keeps a run: gzipped
    fresh.write_bytes(gzip.compress((tmp_path / "rerun.json").read_bytes()))
    out = tmp_path / "record.json"
    assert gate.main(["record", "--tests", str(tests), "--bench", str(run), "--commit", "abc1234", "-o",
                      str(out)]) == 1
    assert gate.main(["record", "--tests", str(tests), "--bench", str(run), "--rerun", str(fresh), "--commit",
                      "abc1234", "-o", str(out)]) == 0
    record = json.loads(out.read_text())
    assert (record["gate"], record["date"], record["run_at"], record["rerun_at"]) == (
        "pass", "2026-11-29", "2026-11-29T10:37:15+00:00", "2026-11-29T10:40:33+00:00")
    assert [(b["verdict"], b["rerun"]) for b in record["benchmarks"]] == [("ok on re-run", 100.5)]


def test_promote_moves_no_case_of_ours_to_a_slower_time_unless_told_why(tmp_path, monkeypatch, capsys):
    """thunder+segkit_ex's norm backward went from 341.9 us to 1309.9 (the default fuse mode) before the gate
    existed, and its first baseline took the slow time: the gate then called 1341.2 "ok". promote now refuses a
    slower time for a case of ours (a rival's moves), names it, and takes it only with a reason; a run's rows of
    one executor restore a case from its last good run."""
    from benchmarks.summarize import _lines

    good, bad = _row("thunder+segkit_ex", 341.9, run="good"), _row("thunder+segkit_ex", 1309.9, run="bad")
    results, baseline = tmp_path / "results.jsonl", tmp_path / "baseline.jsonl"
    results.write_text("".join(_lines([good, _row("thunder", 700.0, run="good"), bad,
                                       _row("thunder", 690.0, run="bad"), _row("segkit", 340.0, run="bad")], set())))
    baseline.write_text("".join(_lines([good, _row("thunder", 700.0, run="good")], set())))
    monkeypatch.setattr(gate, "RESULTS", results)
    monkeypatch.setattr(gate, "BASELINE", baseline)
    monkeypatch.setattr(gate, "load_baseline", lambda path=baseline: {gate.key(r): r for r in
                                                                     gate.read_data(path)})
    times = lambda: {r["executor"]: gate.value(r) for r in gate.read_data(baseline)}  # noqa: E731
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "bad"]) == 2
    assert "thunder+segkit_ex: 1309.9 against 341.9 (3.83x, run bad)" in capsys.readouterr().err
    assert times() == {"thunder+segkit_ex": 341.9, "thunder": 700.0}  # unchanged
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "bad", "--executor", "thunder"]) == 0
    assert times() == {"thunder+segkit_ex": 341.9, "thunder": 690.0}  # a rival's faster or slower time moves
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--accept-slower", "the fused default, issue 54"]) == 0
    assert times() == {"thunder+segkit_ex": 1309.9, "thunder": 690.0, "segkit": 340.0}
    assert gate.main(["promote", "--gpu", "NVIDIA H200", "--run", "good", "--executor", "thunder+segkit_ex"]) == 0
    assert times()["thunder+segkit_ex"] == 341.9  # restored from the last good run: faster, no reason needed


def test_a_file_that_is_not_what_a_command_reads_is_one_line_naming_it(tmp_path, capsys):
    """``record --rerun`` given the re-run's id list instead of its JSON, an empty file, a JSON list, a missing
    file, a JSON object that is no gate record: exit 2 and one line naming the file and what it should be."""
    ids, listed, empty = tmp_path / "rerun.txt", tmp_path / "list.json", tmp_path / "empty.json"
    ids.write_text("benchmarks/test_norm_bwd.py::test_norm_bwd[x]\n")
    listed.write_text("[1, 2]")
    empty.write_text("")
    tests, bench = tmp_path / "gpu_tests.json", tmp_path / "headline.json"
    tests.write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True}}))
    bench.write_text(json.dumps({"benchmarks": [], "machine_info": {"machine": MACHINE}}))
    cases = [(["record", "--tests", str(tests), "--bench", str(bench), "--rerun", str(ids), "--commit", "c", "-o",
               str(tmp_path / "r")], f"{ids}: not JSON (want a pytest-benchmark JSON run)"),
             (["record", "--tests", str(tests), "--bench", str(ids), "--commit", "c", "-o", str(tmp_path / "r")],
              f"{ids}: not JSON (want a pytest-benchmark JSON run)"),
             (["record", "--tests", str(empty), "--bench", str(bench), "--commit", "c", "-o", str(tmp_path / "r")],
              f"{empty}: not JSON (want the GPU suite's merged results"),
             (["record", "--tests", str(listed), "--bench", str(bench), "--commit", "c", "-o", str(tmp_path / "r")],
              f"{listed}: a JSON list, not an object"),
             (["land", str(tmp_path / "missing.json")], "argument RECORD.json: no such file: "),
             (["land", str(tests)], f"{tests}: a JSON object without a gate record's rows and machine")]
    for argv, said in cases:
        assert gate.main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, (argv, err)
    assert not (tmp_path / "r").exists()


def test_the_step_past_the_tolerance_is_flagged_for_a_re_run_that_can_clear_it(tmp_path, monkeypatch):
    """The step drifts with the lease like a kernel case: compare flags it for gate.sh to re-run, and record
    judges it on its re-run (--rerun-step): within the tolerance it passes ("ok on re-run"), slower again fails."""
    from sweep.machine import KEY

    def step_file(name: str, ms: float) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps({KEY: MACHINE, "run": {}, "rows": [
            {"case": "llama3-8b-x1", "label": "Llama-3-8B x1 T=4096", "variant": "segkit-auto", "ms": ms}]}))
        return path

    base_row = gate.run_rows(None, step_file("base.json", 9.61), "base", "abc1234")[0][0]
    monkeypatch.setattr(gate, "load_baseline", lambda path=None: _baseline(base_row))
    bench = tmp_path / "headline.json"
    bench.write_text(json.dumps({"benchmarks": [], "machine_info": {"machine": MACHINE}}))
    tests = tmp_path / "gpu_tests.json"
    tests.write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True, "outcomes": {"t": "passed"}}}))
    slow, flag = step_file("step.json", 9.97), tmp_path / "rerun-step.txt"
    assert gate.main(["compare", str(bench), str(slow), "--rerun-ids", str(tmp_path / "ids.txt"),
                      "--rerun-step", str(flag)]) == 0
    assert flag.read_text() == "step\n"
    gate.main(["compare", str(bench), str(step_file("fine.json", 9.70)), "--rerun-ids", str(tmp_path / "ids.txt"),
               "--rerun-step", str(flag)])
    assert flag.read_text() == ""
    record = ["record", "--tests", str(tests), "--bench", str(bench), "--step", str(slow), "--commit", "c", "-o",
              str(tmp_path / "record.json")]
    assert gate.main(record) == 1
    assert gate.main([*record, "--rerun-step", str(step_file("again.json", 9.70))]) == 0
    (step,) = json.loads((tmp_path / "record.json").read_text())["benchmarks"]
    assert (step["verdict"], step["rerun"]) == ("ok on re-run", 9.7)
    assert gate.main([*record, "--rerun-step", str(step_file("again2.json", 9.95))]) == 1


@pytest.mark.parametrize("cmd", ["headline-k", "compare", "record", "land", "promote"])
def test_every_command_prints_its_help(cmd, capsys):
    """argparse %-formats help strings: a bare "3% faster" once made ``promote --help`` a TypeError."""
    assert gate.main([cmd, "--help"]) == 0 and "usage:" in capsys.readouterr().out
