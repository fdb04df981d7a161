"""More bad inputs across every ``segkit`` subcommand and the Python API (issue 36), as a new user gives
them: each gets one line naming what is wrong and a non-zero exit (2: refused before anything ran), never
a traceback, an "unexpected error", or a silently ignored option. tests/test_bad_inputs.py holds the
earlier ones; tests/test_data_loss.py the cases where something could be lost.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
import torch

import segkit
from segkit.tuning import TableEntry, TuningTable
from segkit_cli.main import main
from tests.bad_input_scripts import CUDA_STREAM, LOOPING_FUSION, MATMUL_OF_A_SCALAR, MISSPELLED_KEYWORD, SOFTMAX
from tests.conftest import ROOT

UNWRITABLE = "/proc/segkit_no_such_dir/out"  # nobody, root included, can create it


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    f = {"tmp": str(d), "adir": str(d / "adir")}
    (d / "adir").mkdir()

    def put(name, data):
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        f[name] = str(d / name)

    put("softmax.py", SOFTMAX)
    put("matmul_scalar.py", MATMUL_OF_A_SCALAR)
    put("misspelled.py", MISSPELLED_KEYWORD)
    put("empty.py", "")
    put("empty.json", "")
    put("a_file", "x")
    put("bin.py", bytes(range(256)) * 4)
    put("none.json", '{"entries": []}')
    put("list.json", "[1, 2]")
    put("bad_entry.json", '{"entries": [{"x": 1}]}')
    TuningTable([TableEntry("G", "rmsnorm_bwd", "nanogpt", "sig", us=1.0)]).save(d / "good.json")
    f["good.json"] = str(d / "good.json")
    os.symlink(d / "loop.py", d / "loop.py")  # a link to itself
    f["loop.py"] = str(d / "loop.py")
    camp = d / "camp"
    camp.mkdir()
    (camp / "index.json").write_text('{"target": "reference"}')
    f["camp"] = str(camp)
    (d / "badidx").mkdir()
    (d / "badidx" / "index.json").write_text("{nope")
    f["badidx"] = str(d / "badidx")
    return f


SPEC = "rmsnorm_fwd:nanogpt"
REF_FUZZ = ["--target", "reference", "--workers", "0", "--max-cases", "1", "--quiet"]

# (argv with {name} placeholders, exit code, words the one error line must hold)
CASES = [
    # reuse
    (["reuse", "{tmp}/nope.py"], 2, "no such file"),
    (["reuse", "{adir}"], 2, "is a directory"),
    (["reuse", "{softmax.py}", "--reps", "0"], 2, "argument --reps: '0': give a whole number > 0"),
    (["reuse", "{softmax.py}", "--reps", "-5"], 2, "argument --reps"),
    (["reuse", "{softmax.py}", "--reps", "nan"], 2, "'nan' is not a whole number"),
    (["reuse", "nosuch:cfg"], 2, "no fusion spec 'nosuch'"),
    (["reuse", "{empty.py}"], 1, "no fusion function"),
    (["reuse", "{bin.py}"], 2, "not UTF-8"),
    # report
    (["report", "{tmp}/nope.py"], 2, "no such file"),
    (["report", "{softmax.py}", "-o", "{adir}"], 2, "is a directory"),
    (["report", "{softmax.py}", "-o", UNWRITABLE], 2, "does not exist"),
    (["report", "{softmax.py}", "-o", ""], 2, "an empty output path"),
    (["report", "{softmax.py}", "-o", "{softmax.py}"], 2, "is the input"),
    (["report", "nosuch:cfg", "-o", "{tmp}/r.html"], 2, "no fusion spec 'nosuch'"),
    (["demo", "x"], 2, "unrecognized arguments: x"),
    # check, bookend, minimize
    (["check", "{softmax.py}", "--dtype-tol", "bf16=1e309"], 2, "finite number >= 0"),
    (["check", "{softmax.py}", "--dtype-tol", "fp8=1"], 2, "unknown floating dtype 'fp8'"),
    (["bookend", "{empty.py}"], 1, "no fusion function"),
    (["bookend", "{softmax.py}", "--plot", "{a_file}/x"], 2, "is not a directory"),
    (["bookend", "{softmax.py}", "--plot", "{adir}"], 2, "is a directory"),
    (["minimize", "{softmax.py}", "-o", "{softmax.py}"], 2, "is the input"),
    (["minimize", "{softmax.py}", "-o", "{tmp}/m.py", "--max-seconds", "inf"], 2, "finite number > 0"),
    (["minimize", "{softmax.py}", "-o", "{tmp}/m.py", "--max-seconds", "-1"], 2, "finite number > 0"),
    (["minimize", "{softmax.py}", "-o", "{tmp}/m.py", "--max-seconds", "1e400"], 2, "finite number > 0"),
    (["minimize", "{softmax.py}", "-o", UNWRITABLE], 2, "does not exist"),
    # segments
    (["segments", "{softmax.py}", "--reps", "nan"], 2, "not a whole number"),
    (["segments", "{softmax.py}", "--reps", "1.5"], 2, "not a whole number"),
    (["segments", "{softmax.py}", "--plot", UNWRITABLE], 2, "does not exist"),
    (["segments", "a:b:c"], 2, "no fusion spec 'a'"),
    (["segments", ":"], 2, "no such file"),
    (["segments", "rmsnorm_fwd:"], 2, "no such file"),
    # tune
    (["tune"], 2, "needs a target"),
    (["tune", "--merge", "{list.json}", "--out", "{tmp}/o.json"], 1, "is malformed"),
    (["tune", "--merge", "{bad_entry.json}", "--out", "{tmp}/o.json"], 1, "entry ?/?: unknown fields ['x'], missing"),
    (["tune", "--merge", "{good.json}", "--out", "{list.json}"], 1, "list.json is malformed"),
    (["tune", "--merge", "{good.json}", "--out", "{adir}"], 2, "is a directory"),
    (["tune", "--merge", "{good.json}", "--out", UNWRITABLE], 2, "does not exist"),
    (["tune", "--merge", "{good.json}", "--reference"], 2, "leave out --reference"),
    (["tune", SPEC, "--merge", "{good.json}"], 2, "leave out target"),
    (["tune", SPEC, "--reference", "--budget", "0"], 2, "argument --budget: '0'"),
    (["tune", SPEC, "--budget", "nan"], 2, "argument --budget: 'nan'"),
    (["tune", SPEC, "--reference", "--shard", "3/2"], 2, "I in 0..N-1"),
    (["tune", SPEC, "--shard", "0/0"], 2, "N > 0"),
    (["tune", SPEC, "--shard", "-1/2"], 2, "argument --shard"),
    (["tune", SPEC, "--reference", "--write"], 2, "--reference times nothing"),
    (["tune", SPEC, "--reference", "--out", "{tmp}/o.json"], 2, "--reference times nothing"),
    (["tune", SPEC, "--dtype", "fp8"], 2, "invalid choice: 'fp8'"),
    (["tune", "{softmax.py}", "--reference", "--dtype", "bf16"], 2, "--dtype applies to a fusions spec"),
    (["tune", "{softmax.py}", "--reference", "--full"], 2, "--full applies to a fusions spec"),
    (["tune", "fp8_amax:4096x4096", "--reference", "--amaxes", ""], 2, "--amaxes '': give output names"),
    (["tune", "fp8_amax:4096x4096", "--reference", "--amaxes", "row,"], 2, "give output names"),
    (["tune", SPEC, "--reference", "--amaxes", "row"], 2, "rmsnorm_fwd has none"),
    # fuzz
    (["fuzz", "--minutes", "0"], 2, "argument --minutes: '0'"),
    (["fuzz", "--minutes", "-1"], 2, "argument --minutes"),
    (["fuzz", "--minutes", "nan"], 2, "argument --minutes: 'nan'"),
    (["fuzz", "--minutes", "inf"], 2, "argument --minutes: 'inf'"),
    (["fuzz", "--max-cases", "0"], 2, "argument --max-cases: '0'"),
    (["fuzz", "--workers", "-1"], 2, "whole number >= 0"),
    (["fuzz", "--case-timeout", "0"], 2, "argument --case-timeout"),
    (["fuzz", "--minimize-seconds", "-1"], 2, "argument --minimize-seconds"),
    (["fuzz", "--max-ops", "0"], 2, "argument --max-ops"),
    (["fuzz", "--max-elements", "-5"], 2, "argument --max-elements"),
    (["fuzz", "--target", "bogus"], 2, "invalid choice: 'bogus'"),
    (["fuzz", "--seed", "abc"], 2, "argument --seed: 'abc' is not a whole number"),
    (["fuzz", "--replay", "{tmp}/nodir"], 2, "no such directory"),
    (["fuzz", "--replay", "{a_file}"], 2, "is a file; give a directory"),
    (["fuzz", "--replay", "{adir}", "--target", "reference", "--workers", "0"], 1, "cannot read the findings index"),
    (["fuzz", "--emit", "{tmp}/f001.py"], 2, "no such file"),
    (["fuzz", "--emit", "{adir}"], 2, "is a directory"),
    (["fuzz", "--emit", "{empty.py}"], 1, "no fusion function"),
    (["fuzz", "--replay", "{adir}", "--emit", "{softmax.py}"], 2, "not allowed with argument --replay"),
    (["fuzz", "-o", "{a_file}", *REF_FUZZ], 2, "exists and is a file"),
    (["fuzz", "-o", "{camp}", *REF_FUZZ], 2, "holds a campaign already"),
    (["fuzz", "-o", "{badidx}", *REF_FUZZ, "--resume"], 2, "cannot be read (JSONDecodeError"),
    (["fuzz", "-o", "{camp}", *REF_FUZZ, "--resume"], 2, "cannot be read (KeyError"),
    (["fuzz", "-o", "{tmp}/typo", *REF_FUZZ, "--resume"], 2, "holds no campaign to resume"),
    # trace, profile, paths the file system refuses
    (["trace", "show", "{empty.json}"], 2, "empty file: not a trace"),  # a bad argument: refused by the parser
    (["trace", "compare", "{none.json}"], 2, "required: b"),
    (["profile", "-o", UNWRITABLE, "--", "python", "-c", "1"], 1, "/proc/segkit_no_such_dir"),
    (["repro", "{loop.py}"], 2, "no such file"),
    (["repro", "{bin.py}"], 2, "not UTF-8"),
    (["repro", "x" * 5000 + ".py"], 2, "File name too long"),
    (["repro", "--"], 2, "required: script"),
    (["repro", "{matmul_scalar.py}"], 1, "fd.ops.matmul at "),  # the op, the script's line, the argument:
    (["repro", "{matmul_scalar.py}"], 1, "matmul_scalar.py:7: fd.add_output(fd.ops.matmul(T0, T1)): matmul's arg2 "
                                         "must be a tensor, got <c0: Double = 2.0>"),
    (["repro", "{misspelled.py}"], 1, "fd.ops.sum: got an unexpected keyword argument 'keepdimm': did you mean "
                                      "keepdim=?"),
    (["repro", "{misspelled.py}"], 1, "misspelled.py:7:"),
    (["bookend", "{softmax.py}", "--plot", "y" * 5000], 2, "File name too long"),
]


def _fill(arg: str, files: dict) -> str:
    return re.sub(r"\{([^{}]+)\}", lambda m: files[m.group(1)], arg)


def _ids(case):
    text = " ".join(case[0])
    return text if len(text) < 70 else text[:67] + "..."


@pytest.mark.parametrize("argv,code,words", CASES, ids=[_ids(c) for c in CASES])
def test_cli_refuses_with_one_line(files, capsys, argv, code, words):
    if argv[:2] == ["profile", "-o"] and os.geteuid() != 0:
        code, words = 2, "not writable"  # a user's own check refuses /proc earlier
    got = main([_fill(a, files) for a in argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert got == code, lines[0]
    assert words in lines[0] and lines[0].startswith("segkit") and "unexpected error" not in lines[0]


@pytest.mark.parametrize("env, words", [
    ({"SEGKIT_TUNING_TABLE": "{tmp}/nope.json"}, "nope.json: no such file"),
    ({"SEGKIT_TUNING_TABLE": "{empty.json}"}, "empty.json is empty"),
    ({"SEGKIT_TUNING_TABLE": "{adir}"}, "cannot be read"),
    ({"SEGKIT_TUNING_TABLE": "{list.json}"}, "is malformed"),
])
def test_a_tuning_table_named_in_the_environment_must_be_one(files, capsys, monkeypatch, env, words):
    import fusions.spec

    for k, v in env.items():
        monkeypatch.setenv(k, _fill(v, files))
    fusions.spec.tuning_table.cache_clear()
    try:
        got = main(["segments", SPEC])
    finally:
        monkeypatch.undo()
        fusions.spec.tuning_table.cache_clear()
    err = capsys.readouterr().err.strip().splitlines()
    assert got == 1 and len(err) == 1 and words in err[0] and "unexpected" not in err[0]


def _exp():
    with segkit.FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=segkit.DataType.Float)
        fd.add_output(fd.ops.exp(t))
    return fd


API = [
    (lambda fd, x: segkit.emit_repro(fd, style="bogus"), ValueError, "style must be"),
    (lambda fd, x: segkit.emit_repro("not a fusion"), TypeError, "got str"),
    (lambda fd, x: segkit.emit_repro(fd, [x], device=5), TypeError, "device must be a device name"),
    (lambda fd, x: segkit.run_reference(fd, [x, x]), segkit.InputMismatchError, "takes 1 inputs"),
    (lambda fd, x: segkit.reuse_reductions(42), TypeError, "got int"),
    (lambda fd, x: segkit.bookend(fd, "bogus"), ValueError, "policy must be one of"),
    (lambda fd, x: __import__("segkit.compare").compare.compare([1.0], [x]), TypeError, "reference is a float"),
    (lambda fd, x: TuningTable.load("/no/such/table.json", must_exist=True), ValueError, "no such file"),
    (lambda fd, x: __import__("segkit.fuzz").fuzz.fuzz("bogus", UNWRITABLE, max_cases=1), segkit.UsageError,
     "cannot create the findings directory"),
    (lambda fd, x: __import__("segkit.fuzz").fuzz.fuzz("reference", "", max_cases=1), segkit.UsageError,
     "an empty findings directory name"),
    (lambda fd, x: segkit.run_reference(fd, None), segkit.InputMismatchError, "inputs must be a list"),
    (lambda fd, x: segkit.run_reference(fd, [x.numpy()]), segkit.InputMismatchError,
     r"input 0 \(tv0: Float\[2, 3\]\): expected a tensor but got a numpy array \(shape \[2, 3\], dtype float32\): "
     r"pass torch.from_numpy"),
    (lambda fd, x: segkit.run_reference(fd, [x], max_tensor_bytes=-1), segkit.ResourceLimitError,
     "max_tensor_bytes=-1: give a positive"),
    (lambda fd, x: __import__("segkit.interp").interp.random_inputs(fd, device="bogus"), segkit.InputMismatchError,
     "device='bogus' is not a torch device"),
]


@pytest.mark.parametrize("script, words, within_s", [
    (LOOPING_FUSION, "ran longer than 10 s", 25.0),  # before: stopped after a minute
    (CUDA_STREAM, "torch.cuda.Stream: the script needs a GPU stream, and this machine has no GPU", None),
])
def test_a_script_is_stopped_or_refused_saying_why_without_a_gpu(tmp_path, script, words, within_s):
    """In a process that sees no GPU (CUDA_VISIBLE_DEVICES=""), as a user's laptop: a fusion function that never
    returns is stopped at the default time limit, a CUDA stream is refused as one (not blamed on the CUDA driver's
    version); one line naming the script."""
    path = tmp_path / "script.py"
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    env.pop("SEGKIT_SCRIPT_TIMEOUT", None)
    start = time.monotonic()
    got = subprocess.run([sys.executable, "-m", "segkit_cli", "repro", str(path)], env=env, capture_output=True,
                         text=True, timeout=120)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 1 and len(lines) == 1 and words in lines[0] and f"{path}:" in lines[0], got.stderr
    assert "driver" not in lines[0]
    if within_s is not None:
        assert time.monotonic() - start < within_s


@pytest.mark.parametrize("value", ["0", "-5", "nan", "lots"])
def test_the_tensor_budget_in_the_environment_must_be_a_positive_size(monkeypatch, value):
    monkeypatch.setenv("SEGKIT_MAX_TENSOR_BYTES", value)
    with pytest.raises(segkit.ResourceLimitError, match="SEGKIT_MAX_TENSOR_BYTES=.*give a positive size"):
        segkit.run_reference(_exp(), [torch.randn(2, 3)])


@pytest.mark.parametrize("call,exc,words", API, ids=[f"api{i}" for i in range(len(API))])
def test_api_refuses_with_one_line(call, exc, words):
    with pytest.raises(exc, match=words) as e:
        call(_exp(), torch.randn(2, 3))
    assert "\n" not in str(e.value).strip()

