"""Nothing lost, nothing mis-reported (issue 36): every output path is checked before a long run, ``tune
--merge`` never rewrites the table from nothing, a campaign directory is locked while in use, workers' errors
reach the user as one line, a campaign runs at least one case, and an interrupted campaign keeps what it found.

The CLI runs in-process (``main([...])``); a second process is started only where two processes are the case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import segkit
from segkit.compare import compare
from segkit.fuzz.campaign import fuzz
from segkit.fuzz.outdir import LOCK, claim
from segkit.fuzz.targets import Target
from segkit.interp import run_reference
from segkit.tuning import TableEntry, TuningTable
from segkit_cli.main import main
from tests.cli_run import cli as _cli, one_line as _line
from tests.conftest import ROOT

UNWRITABLE = "/proc/segkit_no_such_dir/out"  # a directory nobody (root included) can create






# --------------------------------------------------------------------------- tune --merge / --out
@pytest.fixture
def committed(tmp_path, monkeypatch):
    """A committed tuning table (a copy, standing in for fusions/tunings.json) and its bytes."""
    import fusions.spec

    path = tmp_path / "tunings.json"
    TuningTable([TableEntry("GPU A", "rmsnorm_bwd", "nanogpt", "sig", us=10.0)]).save(path)
    monkeypatch.setattr(fusions.spec, "TABLE_PATH", path)
    return path, path.read_bytes()


@pytest.mark.parametrize("make, code, words", [
    (None, 2, "argument --merge: no such file"),
    ("", 1, "is empty"),
    ('{"entries": []}', 1, "holds no entries: nothing to merge"),
    ('{"entries": [', 1, "is malformed"),
    ("[1, 2]", 1, "is malformed"),
], ids=["missing", "empty", "no-entries", "truncated", "not-a-table"])
def test_tune_merge_never_rewrites_the_table_from_nothing(committed, tmp_path, capsys, make, code, words):
    path, before = committed
    given = tmp_path / "tune_run.json"
    if make is not None:
        given.write_text(make)
    got, _, err = _cli(capsys, ["tune", "--merge", given])
    assert got == code and words in _line(err)
    assert path.read_bytes() == before  # untouched


def test_tune_merge_of_a_glob_that_matched_nothing_says_so(committed, capsys):
    path, before = committed
    got, _, err = _cli(capsys, ["tune", "--merge", "tune_*.json"])  # what the shell passes when nothing matches
    assert got == 2 and "a shell pattern that matched no file?" in _line(err)
    assert path.read_bytes() == before


def test_tune_merge_with_one_good_and_one_empty_table_writes_nothing(committed, tmp_path, capsys):
    path, before = committed
    good = tmp_path / "good.json"
    TuningTable([TableEntry("GPU B", "rmsnorm_bwd", "nanogpt", "sig", us=5.0)]).save(good)
    (tmp_path / "bad.json").write_text("")
    got, _, err = _cli(capsys, ["tune", "--merge", good, tmp_path / "bad.json"])
    assert got == 1 and "bad.json is empty" in _line(err) and path.read_bytes() == before
    assert _cli(capsys, ["tune", "--merge", good])[0] == 0  # the good one alone merges
    assert TuningTable.load(path).gpus() == ["GPU A", "GPU B"]


@pytest.mark.parametrize("out, words", [(UNWRITABLE + "/t.json", "does not exist"), ("{dir}", "is a directory")])
def test_tune_out_is_checked_before_the_search(tmp_path, capsys, out, words):
    got, _, err = _cli(capsys, ["tune", "rmsnorm_bwd:nanogpt", "--out", out.format(dir=tmp_path)])
    assert got == 2 and "argument --out" in _line(err) and words in err


# --------------------------------------------------------------------------- fuzz output directory
def _campaign(out, **kw):
    return ["fuzz", "-o", out, "--target", "reference", "--workers", "0", "--quiet", *kw.get("extra", [])]


@pytest.mark.parametrize("where, code, words", [
    ("file", 2, "exists and is a file"),
    ("unwritable", 1, "cannot create the findings directory"),
    ("index-is-dir", 2, "index.json is a directory"),
])
def test_fuzz_refuses_an_output_it_cannot_write_before_running(tmp_path, capsys, where, code, words):
    if where == "file":
        out = tmp_path / "findings"
        out.write_text("my notes")
    elif where == "unwritable":
        out = UNWRITABLE
    else:
        out = tmp_path / "findings"
        (out / "index.json").mkdir(parents=True)
    got, stdout, err = _cli(capsys, [*_campaign(out), "--max-cases", "3"])
    assert got in (code, 2) and words in _line(err)
    assert "cases" not in stdout  # refused before any case ran
    if where == "file":
        assert (tmp_path / "findings").read_text() == "my notes"


def test_fuzz_does_not_overwrite_a_campaign_without_resume(tmp_path, capsys):
    out = tmp_path / "findings"
    assert _cli(capsys, [*_campaign(out), "--max-cases", "2"])[0] == 0
    index = (out / "index.json").read_text()
    got, _, err = _cli(capsys, [*_campaign(out), "--max-cases", "2", "--seed", "7"])
    assert got == 2 and "holds a campaign already" in _line(err) and "--resume" in err
    assert (out / "index.json").read_text() == index
    assert _cli(capsys, [*_campaign(out), "--max-cases", "2", "--resume"])[0] == 0  # continuing it is fine
    assert json.loads((out / "index.json").read_text())["cases"] == 4
    assert not (out / LOCK).exists()  # given back at the end


def test_a_second_campaign_on_the_same_directory_is_refused_naming_the_holder(tmp_path, capsys):
    out = tmp_path / "findings"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from segkit.fuzz.outdir import claim
        lock = claim({str(out)!r})
        print("held", flush=True)
        sys.stdin.read()
        lock.release()
        """)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        got, _, err = _cli(capsys, [*_campaign(out), "--max-cases", "1"])
        assert got == 1 and f"in use by another campaign (pid {holder.pid}" in _line(err)
        assert not (out / "index.json").exists()
    finally:
        holder.communicate("", timeout=30)
    assert _cli(capsys, [*_campaign(out), "--max-cases", "1"])[0] == 0  # the holder ended: the directory is free


def test_the_lock_of_a_dead_campaign_is_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "findings"
    out.mkdir()
    (out / LOCK).write_text(f"{dead.pid}\n")  # what a killed campaign leaves behind
    logs = []
    s = fuzz("reference", out, max_cases=1, progress=False, log=logs.append)
    assert s.cases == 1 and any(f"took over the lock of campaign pid {dead.pid}" in m for m in logs)
    assert not (out / LOCK).exists()


def test_the_lock_is_held_within_one_process_too(tmp_path):
    lock = claim(tmp_path)
    try:
        with pytest.raises(segkit.SegkitError, match=f"in use by another campaign \\(pid {os.getpid()}"):
            fuzz("reference", tmp_path, max_cases=1, progress=False, log=lambda m: None)
        assert (tmp_path / LOCK).read_text().strip() == str(os.getpid())
    finally:
        lock.release()


# --------------------------------------------------------------------------- fuzz runs
@pytest.mark.skipif(segkit.nvfuser_available(), reason="the nvfuser target starts here")
def test_workers_that_cannot_start_give_one_line(tmp_path, capfd):
    code = main(["fuzz", "-o", str(tmp_path / "f"), "--max-cases", "1", "--workers", "2", "--quiet"])
    out, err = capfd.readouterr()
    assert code == 1 and "fuzz target 'nvfuser' needs a CUDA device" in _line(err)


def test_a_tiny_budget_still_runs_a_case(tmp_path):
    s = fuzz("reference", tmp_path, minutes=1e-4, progress=False, log=lambda m: None)
    assert s.cases >= 1 and json.loads((tmp_path / "index.json").read_text())["cases"] == s.cases


@pytest.mark.parametrize("limit, words", [
    (dict(minutes=0), "minutes=0: give a number > 0"), (dict(minutes=float("nan")), "minutes=nan"),
    (dict(max_cases=0), "max_cases=0"), (dict(max_cases=1, workers=-1), "workers=-1: give a number >= 0"),
    (dict(max_cases=1, case_timeout=float("inf")), "case_timeout=inf"), (dict(max_cases=1.5), "a whole number"),
    (dict(), "give minutes or max_cases"),
])
def test_fuzz_api_refuses_bad_limits_by_name(tmp_path, limit, words):
    with pytest.raises(segkit.UsageError, match=words.replace("(", r"\(")):
        fuzz("reference", tmp_path, progress=False, **limit)
    assert not any(tmp_path.iterdir())  # refused before the directory was touched


def test_an_interrupted_campaign_keeps_what_it_ran(tmp_path, capsys):
    calls = []

    def run(fd, inputs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt  # Ctrl-C while the fourth case runs
        return run_reference(fd, inputs)

    with pytest.raises(KeyboardInterrupt):
        fuzz(Target("interrupted", "cpu", run), tmp_path, max_cases=50, realizations=["plain"], progress=False,
             log=lambda m: None)
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["cases"] == 3 and (tmp_path / "summary.md").exists()
    assert not (tmp_path / LOCK).exists()


# --------------------------------------------------------------------------- segments, emit_repro, compare
@pytest.mark.skipif(segkit.nvfuser_available(), reason="--emit-dir runs on this machine")
def test_segments_emit_dir_is_refused_without_nvfuser(tmp_path, capsys):
    from tests.bad_input_scripts import SOFTMAX

    script = tmp_path / "s.py"
    script.write_text(SOFTMAX)
    got, out, err = _cli(capsys, ["segments", script, "--emit-dir", tmp_path / "repros"])
    assert got == 1 and "--emit-dir writes one repro per segment" in _line(err) and out == ""
    assert not (tmp_path / "repros").exists()
    assert _cli(capsys, ["segments", script])[0] == 0  # without it, what is known on CPU


def _exp_fusion():
    with segkit.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=segkit.DataType.Float)
        fd.add_output(fd.ops.exp(t))
    return fd


@pytest.mark.parametrize("inputs, words", [
    ([1, 2, 3], "takes 1 inputs .*got 3"),
    ([5], "input 0 .*expected a tensor but got scalar 5"),
    ([torch.zeros(3, 2)], "dim 0 must be 2, got shape \\[3, 2\\]"),
    ([torch.zeros(2, 3, dtype=torch.float16)], "expected dtype torch.float32"),
    (torch.zeros(2, 3), "inputs= must be a list"),
])
def test_emit_repro_refuses_inputs_that_do_not_fit(inputs, words):
    with pytest.raises(segkit.InputMismatchError, match="emit_repro: .*" + words):
        segkit.emit_repro(_exp_fusion(), inputs=inputs)


def test_emit_repro_of_fitting_inputs_loads_and_runs():
    fd, x = _exp_fusion(), torch.randn(2, 3)
    again = segkit.load_repro(segkit.emit_repro(fd, inputs=[x]))
    torch.testing.assert_close(run_reference(again.fd, [x])[0], x.exp())


def test_compare_fails_a_dtype_difference_without_a_label():
    x = torch.randn(4, 5)
    d = compare([x], [x.to(torch.bfloat16)])[0]
    assert not d.ok and "dtype differs: output BFloat16 vs reference Float" in str(d)
    assert not compare([x.to(torch.int32)], [x.to(torch.int64)])[0].ok
    assert not compare([x.double()], [x.to(torch.int64)])[0].ok  # a float64 reference judges floating outputs only
    assert compare([x.double()], [x.to(torch.bfloat16)])[0].ok  # a float64 reference: compared within tolerance
    assert not compare([x.double()], [(x + 1).to(torch.bfloat16)])[0].ok
    assert not compare([x], [x.reshape(5, 4)])[0].ok
    with pytest.raises(TypeError, match="lists of tensors"):
        compare(x, x)
