"""Results in one format (issue 38 item 4): every writer of results puts the machine block in its file, and
benchmarks.summarize reads each format, prints the block, and refuses runs of different GPUs in one column."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from benchmarks import summarize
from sweep.machine import FIELDS, KEY, block_of, machine_block
from tests.conftest import ROOT


def _assert_block(block: dict, copy_gbs=None) -> None:
    assert list(block) == list(FIELDS)
    assert block["torch"] == torch.__version__.split("+")[0] or block["torch"] == torch.__version__
    assert block["copy_gbs"] == copy_gbs
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", block["date"])
    if not torch.cuda.is_available():
        assert block["gpu"] is None and block["gpu_count"] is None and block["driver"] is None
    assert socket.gethostname() not in json.dumps(block)


def test_machine_block_names_versions_and_no_host():
    import transformers

    block = machine_block(1234.56)
    _assert_block(block, 1234.6)
    assert block["transformers"] == transformers.__version__
    assert block["python"] == ".".join(map(str, sys.version_info[:3]))
    assert machine_block({"0": 10.04, "1": 20.0})["copy_gbs"] == {"0": 10.0, "1": 20.0}


def test_pytest_benchmark_machine_info_gets_the_block_and_loses_the_hostname():
    from benchmarks import conftest

    info = {"node": socket.gethostname(), "python_version": "3"}
    conftest.pytest_benchmark_update_machine_info(None, info)
    assert "node" not in info and info["python_version"] == "3"
    _assert_block(block_of({"machine_info": info}))


def test_each_bench_log_line_carries_the_block(tmp_path, monkeypatch):
    from benchmarks.harness import _log

    monkeypatch.setenv("SEGKIT_BENCH_LOG", str(tmp_path / "norm_bench.jsonl"))
    bench = SimpleNamespace(name="test_norm_bwd[rmsnorm-a-bfloat16-segkit]",
                            params={"kind": "rmsnorm", "shape": "a", "dtype": torch.bfloat16, "executor": "segkit"},
                            extra_info={"kernel_us_median": 10.0, "copy_gbs": 3000.0})
    _log(bench)
    _log(bench)
    lines = [json.loads(line) for line in (tmp_path / "norm_bench.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    for line in lines:
        _assert_block(line[KEY], 3000.0)
    assert lines[0]["params"]["dtype"] == "torch.bfloat16"


def test_a_results_json_with_norm_bwd_records_is_read_with_its_block(tmp_path):
    """A ``results.json`` as the GPU drivers write it (top-level machine block, ``norm_bwd`` records)."""
    line = {"name": "test_norm_bwd[rmsnorm-mixorder_576000x384-bfloat16-segkit]",
            "params": {"kind": "rmsnorm", "shape": "mixorder_576000x384", "dtype": "torch.bfloat16",
                       "executor": "segkit"},
            "extra_info": {"kernel_us_median": 475.1, "kernels": 2.0, "pct_of_copy_bw": 93.6, "copy_gbs": 2988.3,
                           "two_stage_chunk": None}}
    other = {**line, "name": line["name"].replace("segkit]", "compile]"),
             "params": {**line["params"], "executor": "torch.compile"},
             "extra_info": {**line["extra_info"], "kernel_us_median": 483.0}}
    out = tmp_path / "results.json"
    out.write_text(json.dumps({KEY: machine_block(2988.3), "norm_bwd": [line, other]}, default=str))
    doc = json.loads(out.read_text())
    _assert_block(doc[KEY], 2988.3)
    machine, rows = summarize.load(out)
    assert machine == doc[KEY]
    assert summarize.summarize(rows)["test_norm_bwd"]["speedups"]["torch.compile"] == [pytest.approx(483.0 / 475.1)]


def _bench(shape, executor, us):
    return {"name": f"test_norm_fwd[rmsnorm-{shape}-bfloat16-{executor}]",
            "params": {"kind": "rmsnorm", "shape": shape, "dtype": "UNSERIALIZABLE[torch.bfloat16]",
                       "executor": executor},
            "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": 80.0, "kernels": 1}}


def _block(gpu: str, copy_gbs=4000.0) -> dict:
    return {**{k: None for k in FIELDS}, "gpu": gpu, "gpu_count": 1, "driver": "580.1", "copy_gbs": copy_gbs}


def _write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_summarize_reads_every_format_and_prints_the_block(tmp_path):
    pb = _write(tmp_path / "a" / "run.json", {"machine_info": {KEY: _block("NVIDIA H200")},
                                               "benchmarks": [_bench("x", "segkit", 10.0), _bench("x", "eager", 20.0)]})
    swept = _write(tmp_path / "b" / "merged.json", {"machine_info": {}, KEY: _block("NVIDIA H200", {"0": 4100.0}),
                                                     "benchmarks": [_bench("y", "segkit", 5.0), _bench("y", "eager", 20.0)],
                                                     "sweep": {}})
    lines = _write(tmp_path / "c" / "norm_bench.jsonl", "\n".join(json.dumps({**b, KEY: _block("NVIDIA H200")}) for b in
                                                                   (_bench("z", "segkit", 4.0), _bench("z", "eager", 4.0))))
    machine, rows = summarize.load_runs([pb, swept, lines])
    s = summarize.summarize(rows)["test_norm_fwd"]
    assert sorted(s["speedups"]["eager"]) == [1.0, 2.0, 4.0]
    assert machine["gpu"] == "NVIDIA H200" and machine["copy_gbs"] == "4000 / 0: 4100 / 4000 GB/s (per run)"
    md = summarize.write(machine, summarize.summarize(rows), tmp_path / "out").read_text()
    head = md.split("## test_norm_fwd")[0]
    assert "| gpu " in head and "NVIDIA H200" in head and "580.1" in head


def test_a_file_without_block_is_an_unknown_machine_named_by_its_folder(tmp_path):
    old = _write(tmp_path / "h100-2026-11-26" / "norm_bench.jsonl", json.dumps(_bench("x", "segkit", 1.0)))
    machine, rows = summarize.load_runs([old])
    assert len(rows) == 1 and machine["gpu"] is None
    md = summarize.write(machine, summarize.summarize(rows), tmp_path / "out").read_text()
    assert "Machine: unknown machine (no machine block; folder h100-2026-11-26)" in md
    # a legacy pytest-benchmark file named its GPU at the top of machine_info: that is still read
    legacy = _write(tmp_path / "old" / "run.json", {"machine_info": {"gpu": "NVIDIA H100 80GB HBM3",
                                                                     "quack-kernels": "not installed"},
                                                    "benchmarks": [_bench("x", "segkit", 1.0)]})
    machine, _ = summarize.load_runs([legacy, old])
    assert machine["gpu"] == "NVIDIA H100 80GB HBM3" and machine["quack-kernels"] is None
    assert "h100-2026-11-26" in machine["unknown"] and "not checked" in machine["unknown"]


def test_runs_on_different_gpus_are_refused(tmp_path):
    h200 = _write(tmp_path / "a.json", {"machine_info": {KEY: _block("NVIDIA H200")}, "benchmarks": []})
    h100 = _write(tmp_path / "b.json", {KEY: _block("NVIDIA H100 80GB HBM3"), "norm_bwd": []})
    with pytest.raises(summarize.MixedMachines, match="different GPUs.*H200.*H100"):
        summarize.load_runs([h200, h100])
    mixed = _write(tmp_path / "m.jsonl", "\n".join(json.dumps({**_bench("x", e, 1.0), KEY: _block(g)})
                                                   for e, g in (("segkit", "NVIDIA H200"), ("eager", "NVIDIA H100"))))
    with pytest.raises(summarize.MixedMachines, match="its lines were measured on different GPUs"):
        summarize.load_runs([mixed])
    proc = subprocess.run([sys.executable, "-m", "benchmarks.summarize", str(h200), str(h100), str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "summarize: error: runs on different GPUs" in proc.stderr


def test_the_commit_is_marked_where_the_tree_differs_from_it(tmp_path, monkeypatch):
    """A GPU host's copy of the tree ran under a stale git directory, and the step table named that older commit for
    code it did not hold: HEAD is named as is only while the tracked files match it; SEGKIT_COMMIT wins."""
    from sweep import machine

    monkeypatch.delenv(machine.COMMIT_ENV, raising=False)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "a.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short=9", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert machine._commit(tmp_path) == head
    (tmp_path / "b.py").write_text("untracked\n")  # an untracked file is no change to the code that ran
    assert machine._commit(tmp_path) == head
    (tmp_path / "a.py").write_text("x = 2\n")
    assert machine._commit(tmp_path) == f"{head}+modified"
    monkeypatch.setenv(machine.COMMIT_ENV, "abc1234")
    assert machine._commit(tmp_path) == "abc1234"
    assert machine._commit(tmp_path / "nowhere") == "abc1234"
    monkeypatch.delenv(machine.COMMIT_ENV)
    assert machine._commit(tmp_path / "nowhere") is None
