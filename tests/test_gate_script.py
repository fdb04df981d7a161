"""The GPU gate's own command lines, as scripts/gpu/gate.sh writes them (read from the script, so a change there
is tested here), keep working through the command-line layer (issue 76): its sweep into a fresh ``mktemp -d``
workdir, on CPU over one GPU test file (every case skipped: ``-m gpu`` without a GPU), and ``record`` then ``land``
end to end on small fixtures."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

from benchmarks import gate
from benchmarks.summarize import read_data
from tests.conftest import ROOT
from tests.test_tool_data_loss import MACHINE, bench_run

GATE_SH = ROOT / "scripts" / "gpu" / "gate.sh"
SMALL_GPU_FILE = "tests/gpu/test_compare_gpu.py"


def _command(program: str) -> list[str]:
    """gate.sh's command line that runs ``program`` (its continuation lines joined), as words."""
    text = GATE_SH.read_text().replace("\\\n", " ")
    line = next(ln for ln in text.splitlines()
                if not ln.lstrip().startswith("#") and re.search(rf"python {re.escape(program)}\b", ln))
    line = line[line.index(f"python {program}"):].split(" > ")[0]
    return shlex.split(line, posix=True)


def _fill(words: list[str], values: dict[str, str]) -> list[str]:
    out = []
    for w in words:
        for name, value in values.items():
            w = w.replace(name, value)
        out.append(w)
    return out


def test_the_gates_sweep_command_line_runs_into_a_fresh_mktemp_workdir(tmp_path):
    words = _command("-m sweep")
    assert words[:3] == ["python", "-m", "sweep"] and "--workdir" in words and "-o" in words
    work = tempfile.mkdtemp(dir=tmp_path)  # what gate.sh's $(mktemp -d) gives: new and empty
    out = tmp_path / "gate" / "gpu_tests.json"
    out.parent.mkdir()
    argv = _fill(words, {"${GATE_PER_GPU:-8}": "8", "${GATE_SUITE_S:-560}": "560", "${GATE_WORKDIR:-$(mktemp -d)}":
                         work, "$DIR": str(out.parent)})
    assert argv[-1] == "tests", argv
    argv[-1] = SMALL_GPU_FILE  # one small GPU test file, not the whole suite
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0", "PYTHONPATH": str(ROOT)}
    for again in range(2):  # a second gate run writes over its own record
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, (again, proc.stdout[-2000:], proc.stderr[-2000:])
        merged = json.loads(out.read_text())
        sweep = merged["sweep"]
        assert sweep["complete"] and sweep["counts"] and set(sweep["counts"]) == {"skipped"}, sweep["counts"]
        assert all(str(k).startswith(SMALL_GPU_FILE) for k in sweep["outcomes"])
    assert gate.tests_summary(out)["complete"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_gates_record_and_land_run_end_to_end(tmp_path, monkeypatch, capsys):
    words = _command("-m benchmarks.gate record")
    d = tmp_path / "gate"
    d.mkdir()
    (d / "gpu_tests.json").write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True,
                                                            "outcomes": {"t": "passed"}}}))
    bench_run(d / "headline.json", us=101.0)
    argv = [w for w in _fill(words, {"$DIR": str(d), "$COMMIT": "abc1234"}) if w != "${RERUN[@]}"]
    step = argv.index("--step")
    del argv[step:step + 2]  # this fixture has no step table (the flag is optional)
    base = {"suite": "qkv_split_rope", "case": {"shape": "Llama-2-13b-hf_bs2", "dtype": "bfloat16",
                                                "mode": "forward"}, "executor": "segkit", "metrics": {"us": 100.0},
            "gpu": MACHINE["gpu"], "commit": "abc1234", "date": "2026-11-29", "run": "base",
            "source": "headline.json", "machine": MACHINE}
    monkeypatch.setattr(gate, "load_baseline", lambda path=None: {gate.key(base): base})
    assert gate.main(argv[3:]) == 0, capsys.readouterr()
    record = json.loads((d / "record.json").read_text())
    assert record["gate"] == "pass" and [b["verdict"] for b in record["benchmarks"]] == ["ok"]
    assert gate.main(argv[3:]) == 0  # again: its own record, written over
    log, results = tmp_path / "gate.jsonl", tmp_path / "results.jsonl.gz"
    monkeypatch.setattr(gate, "GATE_LOG", log)
    monkeypatch.setattr(gate, "RESULTS", results)
    assert gate.main(["land", str(d / "record.json")]) == 0
    assert len(log.read_text().splitlines()) == 1
    rows = read_data(results)
    assert [(r["executor"], r["metrics"]["us"], r["run"]) for r in rows] == [("segkit", 101.0, "gate-abc1234")]
    assert gate.main(["land", str(d / "record.json")]) == 2  # landed already: refused, nothing written
    assert len(log.read_text().splitlines()) == 1 and len(read_data(results)) == 1


def test_the_gates_step_and_compare_command_lines_parse_and_pass_the_contracts(tmp_path):
    """The step table's command line (``$STEP_ARGS`` from ``benchmarks.gate.STEP``) and compare's, as gate.sh
    writes them, parse and pass the contracts: run again over the last run's files (its own), nothing refused."""
    from benchmarks.model_step import build_parser as step_parser
    from segkit.cli import contracts

    d = tmp_path / "gate"
    d.mkdir()
    bench_run(d / "headline.json")
    (d / "step.json").write_text(json.dumps({"machine": MACHINE, "run": {}, "rows": []}))
    (d / "step.md").write_text("GPU: NVIDIA H200 (driver 580)\n")
    (d / "rerun.txt").write_text("")
    step_args = " ".join(f"--{k} {v}" for k, v in gate.STEP.items())
    words = _fill(_command("benchmarks/model_step.py"), {"$STEP_ARGS": step_args, "$DIR": str(d)})
    words = [x for w in words for x in (w.split() if w == step_args else [w])]
    parser = step_parser()
    args = parser.parse_args(words[2:])
    assert args.json == d / "step.json" and contracts.check(parser, args) == []
    words = _fill(_command("-m benchmarks.gate compare"), {"$DIR": str(d)})
    parser = gate.build_parser()
    args = parser.parse_args(words[3:])
    _, leaf = contracts.chosen(parser, args)
    assert args.rerun_ids == d / "rerun.txt" and contracts.check(leaf, args) == []
