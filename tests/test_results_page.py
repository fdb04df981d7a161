"""The results page: benchmarks/RESULTS.md and README.md's table are what ``python -m benchmarks.report`` makes of
benchmarks/data/results.jsonl.gz (CI fails on drift), and the data's rows keep their provenance."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from benchmarks import report, summarize
from segkit.files import read_text
from tests.conftest import ROOT


def _report(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.report", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _copy(tmp_path, readme: str | None = None):
    """The data and the page (and a README: the repository's, or ``readme``) under tmp_path."""
    for rel in (report.DATA, report.RESULTS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    (tmp_path / report.README).write_text(readme if readme is not None else (ROOT / report.README).read_text())
    return tmp_path


def test_the_committed_page_and_readme_table_match_the_data():
    proc = _report("--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    texts = report.generate(ROOT)
    assert (ROOT / report.RESULTS).read_text() == texts[report.RESULTS]
    if texts[report.README] is None:  # README.md without the markers: the page alone is checked, and it says so
        assert "README.md has no" in proc.stdout
    else:
        assert (ROOT / report.README).read_text() == texts[report.README]


def test_every_row_has_provenance_and_each_suite_and_gpu_its_rows():
    rows = summarize.read_data(ROOT / report.DATA)
    assert rows and all(r["run"] and "/" not in r["run"] for r in rows)
    have = {(r["suite"], r["gpu"]) for r in rows}
    for gpu in ("NVIDIA H200", "NVIDIA H100 80GB HBM3"):
        for suite in ("norm_fwd", "norm_bwd", "qkv_split_rope", "fp8_amax", "model_step"):
            assert (suite, gpu) in have
    page = (ROOT / report.RESULTS).read_text()
    assert "python -m benchmarks.report" in page.splitlines()[2]
    for r in report.current(rows):
        assert r["run"] in page


def test_a_changed_row_makes_the_check_fail_naming_the_page(tmp_path):
    root = _copy(tmp_path)
    data = root / report.DATA
    lines = read_text(data).splitlines()
    i = next(i for i, line in enumerate(lines) if '"suite":"norm_bwd"' in line and '"executor":"segkit"' in line)
    row = json.loads(lines[i])
    row["metrics"]["us"] = row["metrics"]["us"] * 2 + 1
    lines[i] = json.dumps(row, separators=(",", ":"))
    summarize.add_lines(data, [line + "\n" for line in lines], replace=True)
    proc = _report("--check", "--root", str(root))
    assert proc.returncode == 1 and "benchmarks/RESULTS.md differs from what benchmarks/data/results.jsonl.gz gives" \
        in proc.stderr
    assert _report("--root", str(root)).returncode == 0  # regenerating fixes it
    assert _report("--check", "--root", str(root)).returncode == 0


def test_the_readme_table_is_spliced_between_the_markers_and_checked(tmp_path):
    readme = f"# segkit\n\nintro\n\n{report.BEGIN}\nstale\n{report.END}\n\nafter\n"
    root = _copy(tmp_path, readme)
    proc = _report("--check", "--root", str(root))
    assert proc.returncode == 1 and "README.md differs" in proc.stderr
    assert _report("--root", str(root)).returncode == 0
    text = (root / report.README).read_text()
    assert text.startswith("# segkit\n\nintro\n\n") and text.endswith(f"{report.END}\n\nafter\n")
    table = text.split(report.BEGIN)[1].split(report.END)[0]
    assert "| H200 " in table and "RMSNorm fwd 576000x384" in table and "training step" in table
    assert _report("--check", "--root", str(root)).returncode == 0


def _bench_json(tmp_path, name="run"):
    block = {"gpu": "NVIDIA H200", "gpu_count": 1, "driver": "580.1", "torch": "2.11.0", "date": "2026-12-01",
             "commit": "abc1234", "copy_gbs": 4000.0}
    doc = {"machine_info": {"machine": block}, "commit_info": {"id": "f" * 40}, "benchmarks": [
        {"name": f"test_norm_fwd[rmsnorm-a-bfloat16-{ex}]", "stats": {"min": 9e-6, "max": 1.1e-5},
         "params": {"kind": "rmsnorm", "shape": "a", "dtype": "UNSERIALIZABLE[torch.bfloat16]", "executor": ex},
         "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": 80.0, "kernels": 1.0, "bytes": 1000}}
        for ex, us in (("segkit", 10.0), ("torch.compile", 12.5))]}
    path = tmp_path / "runs" / name / "norm_fwd.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    return path


def test_append_adds_a_run_once(tmp_path):
    run, data = _bench_json(tmp_path, "h200-2026-12-01"), tmp_path / "results.jsonl"
    cmd = [sys.executable, "-m", "benchmarks.summarize", str(run), "--append", str(data), "--run", "h200-2026-12-01"]
    first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "2 rows appended, 0 already there" in first.stdout
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "0 rows appended, 2 already there" in again.stdout
    rows = summarize.read_data(data)
    assert len(rows) == 2 and len(data.read_text().splitlines()) == 3  # one machine line, two rows
    seg = rows[0]
    assert seg["suite"] == "norm_fwd" and seg["case"] == {"kind": "rmsnorm", "shape": "a", "dtype": "bfloat16"}
    assert (seg["run"], seg["source"], seg["gpu"], seg["commit"], seg["date"]) == (
        "h200-2026-12-01", "norm_fwd.json", "NVIDIA H200", "abc1234", "2026-12-01")
    assert seg["machine"]["driver"] == "580.1" and seg["metrics"] == {
        "us": 10, "pct_copy_bw": 80, "bytes": 1000, "kernels": 1, "us_min": 9, "us_max": 11}
    assert report.readme_table(rows).count("| H200 ") == 0  # no headline case in this run: no row
    assert "1.25x" in report.results_md(rows)


def test_the_gzipped_data_takes_appends_and_the_same_data_is_the_same_bytes(tmp_path):
    """The results data is kept gzipped (benchmarks/data/results.jsonl.gz): an append there keeps every earlier
    line and adds the run's, the file stays gzip, and two files holding the same lines are the same bytes (no time
    stamp in the gzip header: a commit that adds nothing changes nothing)."""
    first, second = _bench_json(tmp_path, "h200-2026-12-01"), _bench_json(tmp_path, "h200-2026-12-03")
    data, twin = tmp_path / "a" / "results.jsonl.gz", tmp_path / "b" / "results.jsonl.gz"
    for path in (data, twin):
        summarize.append([first], path, "h200-2026-12-01")
    assert data.read_bytes() == twin.read_bytes() and data.read_bytes()[:2] == b"\x1f\x8b"
    assert summarize.append([second], data, "h200-2026-12-03") == (2, 0)
    rows = summarize.read_data(data)
    assert [r["run"] for r in rows] == ["h200-2026-12-01"] * 2 + ["h200-2026-12-03"] * 2
    assert read_text(data).startswith(read_text(twin))  # the earlier lines as they were
    assert summarize.append([second], data, "h200-2026-12-03") == (0, 2)


def test_the_commit_given_wins_over_the_files_own(tmp_path):
    """A GPU host's copy of the tree can carry a stale git directory: ``--commit`` names what was measured."""
    run, data = _bench_json(tmp_path, "h200-2026-12-02"), tmp_path / "results.jsonl"
    summarize.append([run], data, "h200-2026-12-02", commit="def5678")
    assert {r["commit"] for r in summarize.read_data(data)} == {"def5678"}
    other = tmp_path / "other.jsonl"
    summarize.append([run], other, "h200-2026-12-02")
    assert {r["commit"] for r in summarize.read_data(other)} == {"abc1234"}  # the machine block's, when none given


@pytest.mark.parametrize("field", ["commit", "run", "machine.driver"])
def test_a_row_without_provenance_is_refused_naming_the_field(tmp_path, field):
    run, data = _bench_json(tmp_path), tmp_path / "results.jsonl"
    summarize.append([run], data, "h200-2026-12-01")
    lines = [json.loads(line) for line in data.read_text().splitlines()]
    if field == "machine.driver":
        del lines[0]["machine"]["driver"]
    else:
        del lines[1][field]
    data.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(summarize.MissingProvenance, match=f"has no '{field}'"):
        summarize.read_data(data)
    root = tmp_path / "repo"
    (root / report.DATA).parent.mkdir(parents=True)
    shutil.copy(data, root / report.DATA)
    proc = _report("--check", "--root", str(root))
    assert proc.returncode == 1 and f"has no '{field}'" in proc.stderr
    # nor does append take a run whose file names no commit and no machine block
    doc = json.loads(run.read_text())
    doc["machine_info"] = {}
    doc.pop("commit_info")
    run.write_text(json.dumps(doc))
    with pytest.raises(summarize.MissingProvenance, match="has no 'gpu'"):
        summarize.append([run], tmp_path / "other.jsonl", "x")
    assert not (tmp_path / "other.jsonl").exists()


def test_a_run_of_one_executor_alone_supersedes_no_comparison():
    """The gate measures the step's segkit variant alone: the page keeps the last side-by-side run of that case (its
    ratios), and shows a lone run only where no run compared the case."""
    def row(run: str, executor: str, ms: float, model: str = "llama3-8b-x1") -> dict:
        return {"suite": "model_step", "gpu": "NVIDIA H200", "case": {"model": model}, "executor": executor,
                "metrics": {"ms": ms}, "run": run, "source": f"{run}/step.json"}

    rows = [row("table", "segkit-auto", 9.8), row("table", "compile", 9.6), row("gate", "segkit-auto", 9.6),
            row("gate", "segkit-auto", 5.0, model="pythia-1b-x2")]
    picked = {(r["case"]["model"], r["run"], r["executor"]) for r in report.current(rows)}
    assert picked == {("llama3-8b-x1", "table", "segkit-auto"), ("llama3-8b-x1", "table", "compile"),
                      ("pythia-1b-x2", "gate", "segkit-auto")}
    later = rows + [row("table2", "segkit-auto", 9.7), row("table2", "thunder", 10.9)]
    assert {r["run"] for r in report.current(later) if r["case"]["model"] == "llama3-8b-x1"} == {"table2"}


def test_the_step_breakdown_table_shows_profiled_rows_and_their_memory_bound_against_compiles():
    """Rows with a breakdown (a profiled step) get a row each in "where each profiled step's time goes", with their
    memory-bound time over torch.compile's of the same run; rows without one are left out, and a page with none
    has no such table."""
    def row(executor: str, breakdown: dict | None) -> dict:
        return {"suite": "model_step", "gpu": "NVIDIA H200", "case": {"model": "llama3-8b-x1", "label": "Llama"},
                "executor": executor, "metrics": {"ms": 9.5, "breakdown": breakdown}, "run": "r", "source": "r/s.json",
                "commit": "c", "date": "d", "machine": {"gpu": "NVIDIA H200", "driver": "x"}}

    full = {"attention": 1012.4, "gemm": 6772.5, "nvfuser_memory_bound": 701.9, "other_memory_bound": 3.9,
            "memory_bound": 705.8, "idle": 207.4, "lead_in": 494.4, "step": 9192.4}
    page = report.results_md([row("segkit-auto", full), row("compile", {**full, "memory_bound": 670.2}),
                              row("thunder", None)])
    table = page.split("Where each profiled step's time goes", 1)[1]
    lines = [ln for ln in table.splitlines() if ln.startswith("| Llama")]
    assert len(lines) == 2 and all("thunder" not in ln for ln in lines)
    segkit = next(ln for ln in lines if "segkit-auto" in ln)
    assert "| 705.8 " in segkit and "| 1.053 " in segkit and "| 494.4 " in segkit
    assert "Where each profiled step" not in report.results_md([row("thunder", None)])


def test_steps_timed_back_to_back_are_labelled_and_never_the_headline():
    """A run of 5 steps back to back is another measurement of the same model: its rows say so in the step table, and
    the README's headline step stays the each-step-alone run in whichever order the data holds them."""
    def row(run: str, executor: str, ms: float, k: int = 1) -> dict:
        case = {"model": "llama3-8b-x1", "label": "Llama", **({"back_to_back": k} if k > 1 else {})}
        return {"suite": "model_step", "gpu": "NVIDIA H200", "case": case, "executor": executor,
                "metrics": {"ms": ms}, "run": run, "source": f"{run}/s.json", "commit": "c", "date": "d",
                "machine": {"gpu": "NVIDIA H200", "driver": "x"}}

    rows = [row("alone", "segkit-auto", 9.5), row("alone", "compile", 9.6),
            row("b2b", "segkit-auto", 9.8, k=5), row("b2b", "compile", 9.7, k=5)]
    step_lines = [ln for ln in report.results_md(rows).splitlines() if ln.startswith("| Llama")]
    assert sum("Llama, 5 steps back to back " in ln for ln in step_lines) == 2
    assert sum(ln.startswith("| Llama ") for ln in step_lines) == 2
    for order in (rows, rows[::-1]):  # whichever run the data holds first
        headline = next(ln for ln in report.readme_table(order).splitlines() if "training step" in ln)
        assert "9.50 ms" in headline and "1.01x" in headline
