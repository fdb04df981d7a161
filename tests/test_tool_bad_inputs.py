"""Bad inputs to the tools beside ``segkit`` (issue 76 items 3 and 5), each once a traceback, a silent wrong
answer or an error that named nothing: now one line naming the file, line, argument or value and what to do, with
exit 2 for a usage error (refused when parsed, before any work) and 1 for a file that is not what the tool reads.
"""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks import cut_evidence, gate, report, summarize
from sweep import launch
from tests.test_tool_data_loss import MACHINE, bench_run, sweep_tests


def _one_line(capsys, code: int, want: int, *words: str) -> str:
    err = capsys.readouterr().err.strip()
    assert code == want and len(err.splitlines()) == 1 and "Traceback" not in err, (code, err)
    assert all(w in err for w in words), err
    return err


@pytest.mark.parametrize("argv, words", [
    (["--per-gpu", "0"], ("argument --per-gpu", "'0'", "> 0")),  # once ZeroDivisionError
    (["--time-limit", "nan"], ("argument --time-limit", "'nan'")),  # once accepted, NaN in the record
    (["--time-limit", "-5"], ("argument --time-limit",)),
    (["--grace", "inf", "--time-limit", "5"], ("argument --grace",)),
    (["--each", "echo {shard}", "-o", "{tmp}/out.json"], ("--each", "leave out -o")),  # once ignored -o
    (["--gpu-name", "NVIDIA H200", "-o", "{tmp}/o.json"], ("--gpu-name goes with --write-durations",)),
], ids=["per-gpu-0", "time-limit-nan", "time-limit-negative", "grace-inf", "each-with-o", "gpu-name-alone"])
def test_sweep_refuses_a_bad_option_before_running_anything(tmp_path, capsys, argv, words):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    _one_line(capsys, launch.main(["--devices", "0", *argv]), 2, *words)
    assert not list(tmp_path.iterdir())  # nothing ran, nothing written


def test_sweep_write_durations_refuses_an_impossible_duration(tmp_path, monkeypatch, capsys):
    from sweep import plan

    monkeypatch.setattr(plan, "DURATIONS_DIR", tmp_path)
    merged = tmp_path / "m.json"
    merged.write_text(json.dumps({"machine": MACHINE, "sweep": {"pytest_args": ["t.py"], "durations": {"t.py::a": -3}}}))
    _one_line(capsys, launch.main(["--write-durations", str(merged)]), 2, "t.py::a", "-3", "not a duration")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_summarize_names_a_file_that_is_a_json_array(tmp_path, capsys):
    """Once an AttributeError traceback."""
    listed = tmp_path / "run.json"
    listed.write_text("[1, 2]")
    _one_line(capsys, summarize.main([str(listed), str(tmp_path / "out")]), 1, str(listed), "a JSON list")
    assert not (tmp_path / "out").exists()


def test_summarize_names_an_impossible_time(tmp_path, capsys):
    run = bench_run(tmp_path / "run.json", us=float("-3"))
    _one_line(capsys, summarize.main([str(run), str(tmp_path / "out")]), 1, str(run), "kernel_us_median is -3")


def _results(root, lines: list[str], readme: str | None = None):
    data = root / "benchmarks" / "data" / "results.jsonl.gz"
    data.parent.mkdir(parents=True)
    data.write_bytes(gzip.compress("".join(f"{line}\n" for line in lines).encode()))
    if readme is not None:
        (root / "README.md").write_text(readme)
    return data


def _row(**metrics) -> str:
    return json.dumps({"suite": "norm_fwd", "case": {"shape": "s"}, "executor": "segkit", "metrics": metrics,
                       "gpu": MACHINE["gpu"], "commit": "c", "date": "d", "run": "r", "source": "s.json",
                       "machine": MACHINE})


def test_report_check_names_a_row_without_its_time(tmp_path, capsys):
    """A kernel row without metrics.us was a KeyError traceback."""
    _results(tmp_path, [_row(pct_copy_bw=50.0)])
    _one_line(capsys, report.main(["--check", "--root", str(tmp_path)]), 1, "results.jsonl.gz",
              "has no metrics.us", "norm_fwd")


def test_report_names_a_conflict_marker_with_its_file_and_line(tmp_path, capsys):
    """Once "Expecting value: line 1 column 1", naming neither the file nor the line."""
    _results(tmp_path, [_row(us=1.0), "<<<<<<< HEAD", _row(us=2.0)])
    _one_line(capsys, report.main(["--check", "--root", str(tmp_path)]), 1, "results.jsonl.gz:2",
              "merge conflict marker", "resolve the conflict")


@pytest.mark.parametrize("value", ["-1.0", "NaN", "Infinity"])
def test_report_refuses_an_impossible_value_naming_the_file_and_line(tmp_path, capsys, value):
    _results(tmp_path, [_row(us=1.0), _row(us=1.0).replace('"us": 1.0', f'"us": {value}')])
    _one_line(capsys, report.main(["--check", "--root", str(tmp_path)]), 1, "results.jsonl.gz:2", "metrics.us",
              "finite number >= 0")


def test_report_names_table_markers_out_of_order(tmp_path, capsys):
    """Once "not enough values to unpack"."""
    _results(tmp_path, [_row(us=1.0)], readme=f"# x\n{report.END}\ntable\n{report.BEGIN}\n")
    _one_line(capsys, report.main(["--check", "--root", str(tmp_path)]), 1, "README.md", "out of order",
              "line 2", "line 4")


def test_gate_record_into_a_missing_folder_fails_before_the_work(tmp_path, capsys):
    """``record -o NO_SUCH_DIR/r.json`` once failed after all the work."""
    run, tests = bench_run(tmp_path / "headline.json"), sweep_tests(tmp_path / "gpu_tests.json")
    _one_line(capsys, gate.main(["record", "--tests", str(tests), "--bench", str(run), "--commit", "c", "-o",
                                 str(tmp_path / "nosuch" / "r.json")]), 2, "argument -o/--out", "does not exist")


def test_a_gate_record_given_for_a_step_table_is_named(tmp_path, capsys):
    """The step table's reader (``--merge``, and the lab's step bars, ``python -m lab.campaigns.step_bars``, which
    reads through it) given a gate record: once a TypeError traceback."""
    from benchmarks.model_step import main

    record = tmp_path / "record.json"
    record.write_text(json.dumps({"gate": "pass", "machine": MACHINE, "rows": [json.loads(_row(us=1.0))]}))
    _one_line(capsys, main(["--merge", str(record), "--json", str(tmp_path / "m.json")]), 1, str(record),
              "a gate record")


def test_cut_evidence_names_a_missing_folder_and_a_truncated_file(tmp_path, capsys):
    """Once tracebacks (FileNotFoundError, EOFError)."""
    _one_line(capsys, cut_evidence.main([str(tmp_path / "nosuch"), "--spec", "rope_bwd", "--fused", "a",
                                         "--opaque", "b"]), 2, "argument RUN", "no such file or directory")
    cut = tmp_path / "model_step.json.gz"
    cut.write_bytes(gzip.compress(b'{"rows": []}')[:12])
    _one_line(capsys, cut_evidence.main([str(cut), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b"]), 1,
              str(cut), "truncated or corrupt gzip")
    empty = tmp_path / "run"
    empty.mkdir()
    _one_line(capsys, cut_evidence.main([str(empty), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b"]), 1,
              "no model_step.json")
