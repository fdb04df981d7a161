"""Bad inputs, as a new user would give them, against the CLI and the Python API (issue 19).

Every case gets a clear one-line error naming what is wrong (exit 2 for a usage error, 1 for a failure)
or the right result; never a traceback, a hang or an allocation the machine cannot make. The readers
(nsys SQLite, chrome JSON, repro scripts) are fuzzed with random corruption: nothing but segkit's own
errors may escape. The CLI runs in-process (``main([...])``) except where the process itself matters.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit import DataType, FusionDefinition
from segkit_cli.main import main
from segkit.compare import compare, diff
from segkit.errors import ReproError, ResourceLimitError, SegkitError
from segkit.repro import load_repro
from segkit.trace import load
from segkit.trace.chrome import load_chrome
from segkit.trace.nsys import load_sqlite
from segkit.trace.report import show
from tests.cli_run import cli as _cli, one_line as _one_line
from tests.bad_input_scripts import LOG_ZERO, SOFTMAX
from tests.conftest import DATA, ROOT

NSYS = DATA / "traces" / "workload_nsys.sqlite"
TORCH = DATA / "traces" / "workload_torch.json.gz"
INF, NAN = float("inf"), float("nan")

def _body(line: str) -> str:
    """A script whose fusion function has ``line`` (indented) before its output."""
    return SOFTMAX.replace("    fd.add_output(T7)\n", f"    {line}\n    fd.add_output(T7)\n")


@pytest.fixture
def files(tmp_path):
    """Named bad (and good) inputs on disk."""
    f = {}

    def put(name, data):
        p = tmp_path / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        f[name] = str(p)

    put("softmax.py", SOFTMAX)
    put("softmax_noext", SOFTMAX)
    put("softmax.txt", SOFTMAX)
    put("log_zero.py", LOG_ZERO)
    put("latin1.py", SOFTMAX.replace("import torch", "# caf\xe9\nimport torch").encode("latin-1"))
    put("nul.py", b"import torch\x00\n")
    put("empty.py", "")
    put("no_fusion.py", "import torch\nx = 1\n")
    put("no_outputs.py", SOFTMAX.replace("    fd.add_output(T7)\n", ""))
    put("syntax.py", SOFTMAX.replace("def nvfuser_fusion_id0", "def nvfuser_fusion_id0(:"))
    put("bad_import.py", SOFTMAX.replace("import torch\n", "import torch\nimport no_such_module_xyz\n", 1))
    put("unknown_op.py", _body("T8 = fd.ops.frobnicate(T0)"))
    put("raises.py", _body("raise RuntimeError('boom')"))
    put("exits.py", _body("import sys; sys.exit(3)"))
    put("loops.py", _body("while True: pass"))
    put("recursion.py", "def f(fd):\n    f(fd)\n")
    put("huge.py", SOFTMAX.replace("shape=[8, 16]", "shape=[1000000, 1000000]")
        .replace("shape=[8, 1]", "shape=[1000000, 1]").replace("(8, 16)", "(1000000, 1000000)"))
    put("bad_inputs_expr.py", SOFTMAX.replace("torch.randn((8, 16),", "torch.randn(n,"))
    put("wrong_input_shape.py", SOFTMAX.replace("torch.randn((8, 16),", "torch.randn((8, 17),"))
    put("negative_shape.py", SOFTMAX.replace("torch.randn((8, 16),", "torch.randn((8, -16),"))
    put("as_strided_arity.py", SOFTMAX.replace("torch.randn((8, 16), dtype=torch.float32, device='cuda:0')",
                                               "torch.randn(128, dtype=torch.float32).as_strided((8, 16))"))
    put("bad_dtype_kw.py", SOFTMAX.replace("dtype=torch.float32", "dtype='float32'"))
    put("max_cast.py", SOFTMAX.replace("T1 = fd.ops.max(T0, dims=[1], keepdim=False, dtype=DataType.Null)",
                                       "T1 = fd.ops.max(T0, dims=[1], keepdim=False, dtype=DataType.Half)"))
    put("report.sqlite", NSYS.read_bytes())
    put("trace.json.gz", TORCH.read_bytes())
    put("trace.json", gzip.decompress(TORCH.read_bytes()))
    put("garbage.sqlite", b"this is not a database" * 50)
    put("truncated.sqlite", NSYS.read_bytes()[:5000])
    put("truncated.json.gz", TORCH.read_bytes()[:500])
    put("not_json.json", "{not json")
    put("wrong_types.json", json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1}]}))
    put("args_list.json", json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                                                       "args": [1, 2]}]}))
    put("grid_text.json", json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                                                       "args": {"grid": "big"}}]}))
    put("name_number.json", json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": 5, "ts": 1, "dur": 1}]}))
    put("no_kernels.json", json.dumps({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "r", "ts": 1,
                                                        "dur": 5}]}))
    put("report.txt", "hello")
    put("a_file", "x")
    (tmp_path / "adir").mkdir()
    f["adir"] = str(tmp_path / "adir")
    f["missing_dir_out"] = str(tmp_path / "nope" / "out.py")
    f["tmp"] = str(tmp_path)
    return f


# (argv with {name} placeholders for files, exit code, words the error must hold)
CLI_ERRORS = [
    # usage: the command line itself
    ([], 2, "required: command"),
    (["bogus"], 2, "invalid choice: 'bogus'"),
    (["repro"], 2, "required: script"),
    (["repro", "{softmax.py}", "extra"], 2, "unrecognized arguments: extra"),
    (["--nope", "demo"], 2, "unrecognized arguments"),
    (["trace"], 2, "required: trace_cmd"),
    # script paths
    (["repro", "{tmp}/softmx.py"], 2, "no such file"),
    (["repro", "{tmp}/sofmax.py"], 2, "did you mean"),
    (["repro", "{adir}"], 2, "is a directory"),
    (["repro", "{report.sqlite}"], 2, "SQLite database"),
    (["repro", "{trace.json.gz}"], 2, "gzip-compressed"),
    (["repro", "{latin1.py}"], 2, "not UTF-8"),
    (["repro", "{nul.py}"], 2, "NUL bytes"),
    (["repro", ""], 2, "empty path"),
    (["bookend", "{tmp}/typo.py"], 2, "no such file"),
    (["bookend", "{report.sqlite}"], 2, "SQLite database"),
    (["check", "{tmp}/typo.py"], 2, "no such file"),
    (["check", "{adir}"], 2, "is a directory"),
    (["check", "{report.sqlite}"], 2, "SQLite database"),
    (["minimize", "{tmp}/typo.py", "-o", "{tmp}/m.py"], 2, "no such file"),
    (["minimize", "{report.sqlite}", "-o", "{tmp}/m.py"], 2, "SQLite database"),
    # script contents (failures)
    (["repro", "{empty.py}"], 1, "no fusion function"),
    (["repro", "{no_fusion.py}"], 1, "no fusion function"),
    (["repro", "{no_outputs.py}"], 1, "no outputs"),
    (["repro", "{syntax.py}"], 1, "syntax error"),
    (["repro", "{bad_import.py}"], 1, "no_such_module_xyz"),
    (["repro", "{unknown_op.py}"], 1, "frobnicate"),
    (["repro", "{raises.py}"], 1, "boom"),
    (["repro", "{exits.py}"], 1, "SystemExit"),
    (["repro", "{recursion.py}"], 1, "RecursionError"),
    (["repro", "{huge.py}"], 1, "budget"),
    (["repro", "{bad_inputs_expr.py}"], 1, "NameError: name 'n' is not defined"),
    (["repro", "{wrong_input_shape.py}"], 1, "inputs do not match"),
    (["repro", "{negative_shape.py}"], 1, "negative dimension -16"),
    (["repro", "{as_strided_arity.py}"], 1, "as_strided() missing 1 required positional arguments"),
    (["repro", "{bad_dtype_kw.py}"], 1, "randn() received an invalid combination of arguments"),
    (["repro", "{max_cast.py}"], 1, "takes no dtype other than DataType.Null"),
    (["bookend", "{no_outputs.py}"], 1, "no outputs"),
    # --ops
    (["bookend", "{softmax.py}", "--ops", ""], 2, "leave --ops out"),
    (["bookend", "{softmax.py}", "--ops", ","], 2, "leave --ops out"),
    (["bookend", "{softmax.py}", "--ops", "slice,,squeeze"], 2, "empty op name"),
    (["bookend", "{softmax.py}", "--ops", "slcie"], 2, "did you mean 'slice'"),
    (["bookend", "{softmax.py}", "--ops", "exp"], 2, "'exp' is not a meta op"),
    (["bookend", "{softmax.py}", "--policy", "all"], 2, "invalid choice: 'all'"),
    (["bookend", "{softmax.py}", "--realize", "gpu"], 2, "invalid choice: 'gpu'"),
    # check / minimize arguments (validated before nvFuser is needed)
    (["check", "{softmax.py}", "--dtype-tol", "bf16=abc"], 2, "'abc' is not a number"),
    (["check", "{softmax.py}", "--dtype-tol", "bf16=-1"], 2, ">= 0"),
    (["check", "{softmax.py}", "--dtype-tol", "bf16=nan"], 2, ">= 0"),
    (["check", "{softmax.py}", "--dtype-tol", "bf16=inf"], 2, ">= 0"),
    (["check", "{softmax.py}", "--dtype-tol", "bf16"], 2, "DTYPE=TOL"),
    (["check", "{softmax.py}", "--dtype-tol", "=1e-2"], 2, "DTYPE=TOL"),
    (["check", "{softmax.py}", "--dtype-tol", "bfloat17=1e-2"], 2, "unknown floating dtype"),
    (["check", "{softmax.py}", "--dtype-tol", "int32=1"], 2, "unknown floating dtype"),
    (["check", "{softmax.py}", "--policy", "none"], 2, "invalid choice"),
    (["minimize", "{softmax.py}"], 2, "required: -o"),
    (["minimize", "{softmax.py}", "-o", "{missing_dir_out}"], 2, "does not exist"),
    (["minimize", "{softmax.py}", "-o", "{adir}"], 2, "is a directory"),
    (["minimize", "{softmax.py}", "-o", "{a_file}/x.py"], 2, "is not a directory"),
    (["minimize", "{softmax.py}", "-o", "{tmp}/m.py", "--max-seconds", "0"], 2, "a finite number > 0"),
    (["minimize", "{softmax.py}", "-o", "{tmp}/m.py", "--max-seconds", "soon"], 2, "is not a finite number"),
    # profile
    (["profile", "-o", "{a_file}", "--", "python", "-c", "1"], 2, "is a file"),
    (["profile", "-o", "{a_file}/sub", "--", "python", "-c", "1"], 2, "is a file, not a directory"),
    (["profile", "-o", "{tmp}/run"], 2, "after --"),
    (["profile", "--nsys", "--torch", "-o", "{tmp}/run"], 2, "not allowed with"),
    # segments / report
    (["segments", "{tmp}/typo.py"], 2, "no such file"),
    (["segments", "nope"], 2, "no such file"),
    (["segments", "nosuchspec:cfg"], 2, "no fusion spec 'nosuchspec'"),
    (["segments", "layernorm_fwd:nonesuch"], 2, "has no config 'nonesuch'"),
    (["tune", "rmsnorm_bwd:Llama-2-7b", "--reference"], 2, "rmsnorm_bwd has no config 'Llama-2-7b'; known: nanogpt"),
    (["tune", "nosuchspec:cfg", "--reference"], 2, "no fusion spec 'nosuchspec'"),
    (["tune", "fp8_amax:4096x4096", "--amaxes", "row,bogus", "--reference"], 2, "distinct names out of"),
    (["segments", "{softmax.py}", "--reps", "0"], 2, "whole number > 0"),
    (["segments", "{softmax.py}", "--emit-dir", "{a_file}"], 2, "is a file"),
    (["segments", "{report.sqlite}"], 2, "SQLite database"),
    (["report", "{softmax.py}", "-o", "{missing_dir_out}"], 2, "does not exist"),
    (["report", "{adir}"], 2, "is a directory"),
    (["bookend", "{softmax.py}", "--plot", "{tmp}/nodir/stem"], 2, "does not exist"),
    # traces
    (["trace", "show", "{tmp}/missing.sqlite"], 2, "no such file"),
    (["trace", "show", "{adir}"], 2, "is a directory"),
    (["trace", "show", "{report.txt}"], 2, "unknown trace type"),
    (["trace", "show", "{garbage.sqlite}"], 2, "garbage.sqlite: named .sqlite but its bytes are none"),
    (["trace", "show", "{truncated.sqlite}"], 1, "truncated.sqlite"),
    (["trace", "show", "{truncated.json.gz}"], 1, "damaged or truncated gzip"),
    (["trace", "show", "{not_json.json}"], 1, "not readable JSON"),
    (["trace", "show", "{wrong_types.json}"], 1, "traceEvents[0] ts"),
    (["trace", "show", "{args_list.json}"], 1, "'args' must be an object"),
    (["trace", "show", "{grid_text.json}"], 1, "grid"),
    (["trace", "show", "{name_number.json}"], 1, "name: expected a string"),
    (["trace", "show", "{report.sqlite}", "--range", "nope"], 2, "no range named 'nope'"),
    (["trace", "show", "{report.sqlite}", "--format", "xml"], 2, "invalid choice: 'xml'"),
    (["trace", "show", "{report.sqlite}", "--format", "csv", "--table", "nope"], 2, "no such table"),
    (["trace", "show", "{report.sqlite}", "--csv-dir", "{tmp}/csv"], 2, "--csv-dir goes with --format csv"),
    (["trace", "show", "{report.sqlite}", "--format", "csv", "--csv-dir", "{a_file}"], 2, "is a file"),
    (["trace", "compare", "{report.sqlite}", "{report.sqlite}", "--range", "typo"], 2, "no range named 'typo'"),
    (["trace", "compare", "{report.sqlite}", "{report.sqlite}", "--plot", "{tmp}/noext"], 2, "ending in .png"),
    (["trace", "compare", "{report.sqlite}", "{report.sqlite}", "--plot", "{tmp}/nodir/x.png"], 2, "does not exist"),
    (["trace", "compare", "{report.sqlite}", "{report.sqlite}", "--plot", "{adir}"], 2, "is a directory"),
    (["trace", "compare", "{report.sqlite}", "{no_kernels.json}", "--plot", "{tmp}/x.png"], 1, "share no range"),
    (["trace", "compare", "{report.sqlite}", "{tmp}/missing.json"], 2, "no such file"),
    (["trace", "compare", "{report.sqlite}", "{report.sqlite}", "--by", "thread"], 2, "invalid choice"),
]


@pytest.mark.parametrize("argv,code,words", CLI_ERRORS, ids=[" ".join(c[0])[:60] or "<none>" for c in CLI_ERRORS])
def test_cli_refuses_with_one_line(files, capsys, argv, code, words):
    got, out, err = _cli(capsys, [re.sub(r"\{([^{}]+)\}", lambda m: files[m.group(1)], a) for a in argv])
    line = _one_line(err)
    assert got == code, line
    assert words in line and line.startswith("segkit")


@pytest.mark.parametrize("command", [["repro"], ["bookend"], ["check"]])
def test_a_script_without_py_suffix_loads(files, capsys, command):
    if command == ["check"] and not segkit.nvfuser_available():
        got, _, err = _cli(capsys, ["check", files["softmax_noext"]])
        assert got == 1 and "needs a CUDA device" in _one_line(err)  # got past the path: only nvFuser is missing
        return
    got, out, err = _cli(capsys, [*command, files["softmax_noext"]])
    assert got == 0 and err == "" and "max(" in out
    assert main(["repro", files["softmax.txt"]]) == 0


def test_legacy_reductions_with_dtype_null_record_and_run():
    repro = load_repro(SOFTMAX)
    names = [op.name for op in repro.fd.fusion.ops]
    assert names[0] == "max" and "sum" in names
    x = repro.make_inputs("cpu")[0]
    (y,) = segkit.run_reference(repro.fd, [x])
    torch.testing.assert_close(y, torch.softmax(x, dim=1))
    # the printed script loads again (dtype=DataType.Null survives the round trip)
    again = load_repro(segkit.emit_repro(repro.fd, [x]))
    torch.testing.assert_close(segkit.run_reference(again.fd, [x])[0], y)


def test_padded_ops_are_accepted(files, capsys):
    got, out, _ = _cli(capsys, ["bookend", files["softmax.py"], "--ops", " broadcast_in_dim , permute "])
    assert got == 0 and "ops ['broadcast_in_dim', 'permute']" in out


def test_debug_prints_the_traceback(files, capsys):
    assert main(["--debug", "repro", files["raises.py"]]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(["repro", files["raises.py"], "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("segkit: error:")


def test_an_unexpected_error_is_one_line_that_says_so(files, capsys, monkeypatch):
    import segkit_cli.targets as targets

    monkeypatch.setattr(targets, "load_script", lambda path, fusion=None: {}["boom"])
    got, _, err = _cli(capsys, ["repro", files["softmax.py"]])
    assert got == 1 and "KeyError" in _one_line(err) and "--debug" in err


# --------------------------------------------------------------------------- non-finite values
def _zeros_case():
    repro = load_repro(LOG_ZERO)
    return repro.fd, repro.make_inputs("cpu")


def test_compare_semantics_for_inf_and_nan():
    a = torch.tensor([1.0, INF, -INF, NAN, 2.0])
    same = diff(0, a, a.clone())
    assert same.ok and same.rel_err == 0.0
    assert (same.ref_nonfinite.nan, same.ref_nonfinite.posinf, same.ref_nonfinite.neginf) == (1, 1, 1)
    assert "1 nan, 1 +inf, 1 -inf" in str(same) and "same places" in str(same)
    for i, value, words in [(3, 0.5, "reference nan, output 0.5"), (1, -INF, "reference inf, output -inf"),
                            (0, NAN, "reference 1.0, output nan"), (4, INF, "reference 2.0, output inf")]:
        b = a.clone()
        b[i] = value
        d = diff(0, a, b)
        assert not d.ok and d.worst == (i,) and d.nonfinite_mismatches == 1 and words in str(d)
    b = a.clone()
    b[0] += 1e-3
    assert not diff(0, a, b).ok and "rel err" in str(diff(0, a, b))  # finite positions still count


def test_compare_names_the_first_differing_position_in_2d():
    a = torch.zeros(3, 4)
    b = a.clone()
    b[2, 1] = NAN
    b[2, 3] = NAN
    d = diff(0, a, b)
    assert not d.ok and d.worst == (2, 1) and "2 position(s), first [2, 1]" in str(d)


def test_compare_shape_mismatch_and_scalars():
    assert "shape mismatch, reference [2, 3], output [3, 2]" in str(diff(0, torch.zeros(2, 3), torch.zeros(3, 2)))
    assert diff(0, torch.tensor(NAN), torch.tensor(NAN)).ok
    assert not diff(0, torch.tensor(INF), torch.tensor(NAN)).ok
    assert diff(0, torch.tensor([INF], dtype=torch.bfloat16), torch.tensor([INF], dtype=torch.bfloat16)).ok
    with pytest.raises(ValueError, match="2 reference outputs but 1"):
        compare([torch.zeros(1), torch.zeros(1)], [torch.zeros(1)])


def test_check_outputs_with_inf_and_nan():
    fd, inputs = _zeros_case()
    refs = segkit.run_reference(fd, inputs)
    assert torch.isneginf(refs[0]).all() and torch.isnan(refs[1]).all()
    report = segkit.check_outputs(fd, inputs, [r.clone() for r in refs])
    assert report.ok, str(report)
    assert "32 -inf" in str(report) and "32 nan" in str(report)
    wrong = [refs[0].clone(), refs[1].clone()]
    wrong[1][2, 5] = 0.0
    bad = segkit.check_outputs(fd, inputs, wrong)
    assert not bad.ok and bad.worst.index == 1 and "first [2, 5]" in str(bad)


def test_check_hook_with_inf_and_nan():
    from segkit.verdicts import ResultVerdicts

    fd, inputs = _zeros_case()
    refs = segkit.run_reference(fd, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ResultVerdicts().outputs("sig", "test backend", lambda: fd, inputs, lambda: [r.clone() for r in refs])
    assert torch.isneginf(got[0]).all()

    def moved_nan():
        outs = [r.clone() for r in refs]
        outs[1][0, 0] = 1.0
        return outs

    with pytest.warns(UserWarning, match=r"NaN/Inf differ at 1 position\(s\), first \[0, 0\]"):
        got = ResultVerdicts().outputs("sig", "test backend", lambda: fd, inputs, moved_nan)
    assert torch.isnan(got[1]).all()  # the reference's answer came back


def test_bookend_of_log_zero_is_not_a_mismatch(files, capsys):
    for realize in ("segment_set", "host"):
        got, out, err = _cli(capsys, ["bookend", files["log_zero.py"], "--realize", realize])
        assert got == 0, out + err
        assert "(cpu): ok" in out and "32 -inf" in out and "MISMATCH" not in out


def test_minimize_predicate_through_compare():
    from segkit.minimize import minimize, size_of

    fd, inputs = _zeros_case()
    refs = segkit.run_reference(fd, inputs)
    # a backend identical to the reference (Inf and NaN included) gives nothing to minimize
    assert segkit.check_outputs(fd, inputs, [r.clone() for r in refs]).ok

    def mismatches(c) -> bool:  # a backend that turns NaN into 0: only the 0/0 output should remain
        xs = segkit.random_inputs(c) if not c.fusion.inputs or c.fusion.inputs[0].shape != (4, 8) else inputs
        xs = [torch.zeros_like(x) for x in xs]
        outs = [torch.nan_to_num(o, nan=0.0, posinf=INF, neginf=-INF) for o in segkit.run_reference(c, xs)]
        return not segkit.check_outputs(c, xs, outs).ok

    assert mismatches(fd)
    res = minimize(fd, mismatches, log=lambda s: None)
    assert mismatches(res.fd) and size_of(res.fd) < size_of(fd)
    assert [op.name for op in res.fd.fusion.ops] == ["div"]


# --------------------------------------------------------------------------- resources
def test_memory_budget_refuses_huge_inputs_and_intermediates(monkeypatch):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[10**6, 10**6], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t))
    with pytest.raises(ResourceLimitError, match=r"needs 3\.6 TiB, beyond .* budget of 16\.0 GiB"):
        segkit.random_inputs(fd)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[1000], contiguity=[True], dtype=DataType.Float)
        b = fd.ops.broadcast_in_dim(t, shape=[1000, 1000], broadcast_dims=[1])  # a view: allowed
        fd.add_output(fd.ops.exp(b))  # 4 MB: beyond a 1 MB budget
    x = segkit.random_inputs(fd)
    with pytest.raises(ResourceLimitError, match=r"exp result .* \[1000, 1000\].*3\.8 MiB.*1\.0 MiB"):
        segkit.run_reference(fd, x, max_tensor_bytes=2**20)
    monkeypatch.setenv("SEGKIT_MAX_TENSOR_BYTES", "1M")
    with pytest.raises(ResourceLimitError, match="1.0 MiB"):
        segkit.run_reference(fd, x)
    monkeypatch.setenv("SEGKIT_MAX_TENSOR_BYTES", "8M")
    assert segkit.run_reference(fd, x)[0].shape == (1000, 1000)
    monkeypatch.setenv("SEGKIT_MAX_TENSOR_BYTES", "lots")
    with pytest.raises(ResourceLimitError, match="SEGKIT_MAX_TENSOR_BYTES='lots'"):
        segkit.run_reference(fd, x)


def test_memory_budget_through_a_repro_script(files):
    repro = load_repro(files["huge.py"])  # loading (recording) is fine: nothing is allocated
    with pytest.raises(ResourceLimitError, match=r"input of shape \[1000000, 1000000\]"):
        repro.make_inputs("cpu")


def test_an_endless_fusion_function_times_out(files, monkeypatch):
    load_repro(files["softmax.py"])  # everything recording needs is imported before the clock runs
    with pytest.raises(ResourceLimitError, match=r"loops.py: nvfuser_fusion_id0\(fd\) ran longer than 1 s"):
        load_repro(files["loops.py"], timeout=1)
    with pytest.raises(ResourceLimitError, match="ran longer"):  # a script catching Exception cannot swallow it
        load_repro(_body("while True:\n        try:\n            pass\n        except Exception:\n            pass"),
                   timeout=0.5)
    monkeypatch.setenv("SEGKIT_SCRIPT_TIMEOUT", "0.5")
    assert main(["repro", files["loops.py"]]) == 1
    monkeypatch.setenv("SEGKIT_SCRIPT_TIMEOUT", "soon")
    with pytest.raises(ReproError, match="SEGKIT_SCRIPT_TIMEOUT='soon'"):
        load_repro(files["softmax.py"])


# --------------------------------------------------------------------------- the API
API_REPRO_ERRORS = [
    ("/no/such/script.py", "cannot read"),
    ("no_such_script_without_suffix", "cannot read"),
    ("x = (", "cannot read"),  # one line: a path
    ("x = 1\ny = (", "syntax error"),
    ("import torch\n\n", "no fusion function"),
    ("def f(fd):\n    fd.ops.frobnicate()\n", "frobnicate"),
    ("def f(fd):\n    1 / 0\n", "ZeroDivisionError"),
    # the script runs as Python would: an input expression that Python refuses is refused with Python's reason
    ("def f(fd):\n    pass\ninputs = [torch.randn(2)]\n", ":3: inputs do not match .* takes 0 inputs"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.randn(n)]\n", ":4: NameError: name 'n' is not defined"),
    ("def f(fd):\n    pass\ninputs = [object()]\n", ":3: an input is a object, not a tensor or a number"),
    ("def f(fd):\n    pass\ninputs = ['a']\n", ":3: an input is a str, not a tensor or a number"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.randn()]\n", ":4: TypeError: randn"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.randn((2, 'a'))]\n", ":4: TypeError: randn"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.randn(4).as_strided((2, 2))]\n", ":4: TypeError: as_strided"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.randn(4).as_strided((2, 2), (1,))]\n", ":4: RuntimeError: mismatch"),
    ("import torch\ndef f(fd):\n    pass\ninputs = [torch.zeros((2,), dtype=torch.float32)]\n", ":4: inputs do not match"),
]


@pytest.mark.parametrize("source,words", API_REPRO_ERRORS)
def test_load_repro_errors(source, words):
    with pytest.raises(SegkitError, match=words):
        load_repro(source)


def test_load_repro_reads_paths_of_any_name(files):
    for name in ("softmax.py", "softmax_noext", "softmax.txt"):
        assert len(load_repro(files[name]).fd.fusion.ops) == 7
        assert len(load_repro(Path(files[name])).fd.fusion.ops) == 7
    for name, words in [("adir", "is a directory"), ("report.sqlite", "SQLite"), ("latin1.py", "not UTF-8"),
                        ("trace.json.gz", "gzip")]:
        with pytest.raises(ReproError, match=words):
            load_repro(files[name])


def test_public_names_still_resolve():
    for name in segkit.__all__:
        assert getattr(segkit, name) is not None
    import importlib

    importlib.import_module("segkit.bookend")  # binding the submodule must not replace the function
    importlib.import_module("segkit.check")

    assert callable(segkit.check) and callable(segkit.bookend) and segkit.check.__name__ == "check"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        segkit.nope  # noqa: B018


# --------------------------------------------------------------------------- output formats
def test_json_is_one_document_of_tables(capsys, files):
    for argv in (["trace", "show", files["report.sqlite"], "--format", "json"],
                 ["trace", "compare", files["report.sqlite"], files["trace.json.gz"], "--by", "kernel", "--format", "json"]):
        code, out, _ = _cli(capsys, argv)
        doc = json.loads(out)
        assert code == 0 and isinstance(doc, dict)
        assert all(isinstance(rows, list) and all(isinstance(r, dict) for r in rows) for rows in doc.values())
    assert doc["ranges"] and doc["kernels"] and {r["range"] for r in doc["kernels"]} <= {r["range"] for r in doc["ranges"]}


def test_csv_is_one_table_or_a_directory(capsys, files, tmp_path):
    code, out, _ = _cli(capsys, ["trace", "show", files["report.sqlite"], "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows and set(rows[0]) >= {"start_us", "duration_us", "name"}
    code, out, _ = _cli(capsys, ["trace", "show", files["report.sqlite"], "--format", "csv", "--table", "ranges"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows and "range" in rows[0] and "start_us" not in rows[0]
    code, out, _ = _cli(capsys, ["trace", "compare", files["report.sqlite"], files["report.sqlite"], "--by", "kernel",
                                 "--format", "csv", "--csv-dir", str(tmp_path / "tables")])
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert code == 0 and written == [".segkit-output", "kernels.csv", "notes.csv", "ranges.csv"]
    kernels = list(csv.DictReader((tmp_path / "tables" / "kernels.csv").open()))
    assert kernels and all(r["B/A"] == "1.0" for r in kernels)


def test_a_trace_without_kernels_says_so(capsys, files):
    code, out, _ = _cli(capsys, ["trace", "show", files["no_kernels.json"]])
    assert code == 0 and "0 kernels" in out and "(kernels: none)" in out and "note: no kernel events" in out


def test_plot_writes_the_file_it_names(capsys, files, tmp_path):
    out = tmp_path / "cmp.svg"
    code, text, _ = _cli(capsys, ["trace", "compare", files["report.sqlite"], files["report.sqlite"], "--plot", str(out)])
    assert code == 0 and out.exists() and out.stat().st_size > 0 and f"plot: {out}" in text


def test_broken_pipe_in_process(files, monkeypatch):
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["trace", "show", files["report.sqlite"], "--all-ranges"]) == 141


# --------------------------------------------------------------------------- the process
def _segkit(*args, **kw):
    return subprocess.run([sys.executable, "-c", "import sys; from segkit_cli.main import main; sys.exit(main())", *args],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, **kw)


def test_piping_into_head_ends_quietly(tmp_path):
    rows = [(1000 * i, 1000 * i + 500, 7, i, 8, 1, 1, 128, 1, 1, 32, 0, 0, 1, 1) for i in range(3000)]
    big = _small_nsys(tmp_path / "big.sqlite", kernel_rows=rows)  # ~600 kB of JSON: more than a pipe holds
    cmd = (f"{sys.executable} -c 'import sys; from segkit_cli.main import main; sys.exit(main())' "
           f"trace show {big} --format json | head -c 20")
    proc = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True)
    assert len(proc.stdout) == 20 and proc.stderr == ""


def test_help_and_usage_errors_do_not_import_torch():
    probe = ("import sys\nfrom segkit_cli.main import main\ncodes = [main(['--help']), main(['repro', '--help']), "
             "main(['bogus'])]\nprint(codes, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True)
    assert proc.stdout.strip().splitlines()[-1] == "[0, 0, 2] False", proc.stdout + proc.stderr
    help_text = _segkit("repro", "--help", capture_output=True, text=True).stdout
    assert "run as Python code" in help_text


# --------------------------------------------------------------------------- fuzzing the readers
_FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _small_nsys(path: Path, kernel_rows=None, nvtx_rows=None) -> Path:
    """A small nsys-like SQLite export (the tables and columns segkit reads)."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE StringIds (id INTEGER, value TEXT)")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, streamId, correlationId, gridX, gridY, gridZ, "
                "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, shortName, "
                "demangledName)")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId, nameId, globalTid)")
    con.execute("CREATE TABLE NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "kern_a"), (2, "cudaLaunchKernel"), (3, "segkit")])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kernel_rows or [
        (1000 + 100 * i, 1050 + 100 * i, 7, i, 8, 1, 1, 128, 1, 1, 32, 0, 0, 1, 1) for i in range(4)])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?)",
                    [(990 + 100 * i, 995 + 100 * i, i, 2, 5) for i in range(4)])
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?)", nvtx_rows or [
        (0, None, 75, "segkit", None, 5, 9), (900, 1500, 59, "step", None, 5, 9)])
    con.commit()
    path.write_bytes(con.serialize())
    con.close()
    return path


def _must_read_or_refuse(reader, path: Path) -> None:
    try:
        t = reader(path)
    except SegkitError:
        return
    for fmt in ("table", "json", "csv", "markdown"):
        show(t, None, fmt, all_ranges=True)


def test_small_nsys_fixture_reads(tmp_path):
    t = load_sqlite(_small_nsys(tmp_path / "r.sqlite"))
    assert len(t.kernels) == 4 and t.ranges_named("step")[0].kernels and t.user_range_names() == ["step"]


@_FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=30),
       cut=st.one_of(st.none(), st.integers(0, 2**16)))
def test_fuzz_corrupted_nsys_sqlite(tmp_path, flips, cut):
    good = _small_nsys(tmp_path / "good.sqlite") if not (tmp_path / "good.sqlite").exists() else tmp_path / "good.sqlite"
    data = bytearray(good.read_bytes())
    for pos, byte in flips:
        data[pos % len(data)] = byte
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(bytes(data[:cut] if cut is not None else data))
    _must_read_or_refuse(load_sqlite, bad)


_FIELD = st.one_of(st.none(), st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=8), st.binary(max_size=8))


@_FUZZ
@given(rows=st.lists(st.tuples(*[_FIELD] * 15), min_size=1, max_size=4),
       nvtx=st.lists(st.tuples(*[_FIELD] * 7), min_size=1, max_size=4))
def test_fuzz_nsys_fields_of_any_type(tmp_path, rows, nvtx):
    path = tmp_path / "typed.sqlite"
    path.unlink(missing_ok=True)
    _must_read_or_refuse(load_sqlite, _small_nsys(path, rows, nvtx))


_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
                     lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                     max_leaves=12)
_EVENT = st.fixed_dictionaries({"ph": st.sampled_from(["X", "B", 1]), "ts": _JSON | st.floats(0, 1e6),
                                "dur": _JSON | st.floats(0, 1e3)},
                               optional={"cat": st.sampled_from(["kernel", "cuda_runtime", "user_annotation", "cpu_op"]) | _JSON,
                                         "name": st.text(max_size=10) | _JSON, "args": _JSON | st.fixed_dictionaries(
                                             {}, optional={"grid": _JSON, "block": _JSON, "correlation": _JSON,
                                                           "stream": _JSON, "registers per thread": _JSON}),
                                         "tid": _JSON})


@_FUZZ
@given(doc=st.one_of(_JSON, st.fixed_dictionaries({"traceEvents": st.lists(_EVENT, max_size=6)},
                                                  optional={"deviceProperties": _JSON})))
def test_fuzz_chrome_events_of_any_shape(tmp_path, doc):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    _must_read_or_refuse(load_chrome, path)


@_FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 255)), min_size=1, max_size=8),
       gz=st.booleans())
def test_fuzz_corrupted_chrome_bytes(tmp_path, flips, gz):
    data = bytearray(TORCH.read_bytes() if gz else gzip.decompress(TORCH.read_bytes()))
    for pos, byte in flips:
        data[pos % len(data)] = byte
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(bytes(data))
    _must_read_or_refuse(load, path)


_TOKENS = ["(", ")", "[", "]", ",", ":", "=", "-1", "0", "10**9", "T0", "fd.ops.", "dims=", "DataType.Null",
           "keepdim=True", "\n", "    ", "#", "'", "None", "torch.", "inputs", "def ", "\xe9", "\x00", "lambda"]


@settings(max_examples=80, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, len(SOFTMAX)), st.integers(0, 6), st.sampled_from(_TOKENS)),
                      min_size=1, max_size=4))
def test_fuzz_repro_scripts(edits):
    text = SOFTMAX
    for pos, drop, token in edits:
        text = text[:pos] + token + text[pos + drop:]
    try:
        repro = load_repro(text + "\n", timeout=5)
        xs = repro.make_inputs("cpu")
        segkit.run_reference(repro.fd, xs, max_tensor_bytes=2**26)
    except SegkitError:
        pass


# nvFuser's definition-time rules that the H100 fuzz campaign hit (issue 22; its error triage is in the lab):
# segkit refuses them when the op is recorded. "e" marks an expanded (stride-0) dim.
def _tensor(fd, shape, expanded=(), dtype=DataType.Float):
    return fd.define_tensor(shape=shape, contiguity=[None if d in expanded else True for d in range(len(shape))],
                            dtype=dtype)


@pytest.mark.parametrize("build, words", [
    (lambda fd: fd.ops.linear(_tensor(fd, [5, 2]), _tensor(fd, [3, 2], expanded={1})),  # f024
     r"linear: K should be broadcast in both arg1 and arg2, or neither \(nvFuser's rule\): arg1 .* dim 1 is not a "
     r"broadcast, arg2 .*\[3, 2e\] dim 1 is an expanded broadcast \(size 2, stride 0\)"),
    (lambda fd: fd.ops.matmul(_tensor(fd, [7, 4, 17], expanded={2}), _tensor(fd, [17, 3])),  # f026
     r"matmul: K should be broadcast in both arg1 and arg2, or neither .*arg1 .*\[7, 4, 17e\] dim 2 is an expanded "
     r"broadcast .*arg2 .*dim 0 is not a broadcast"),
    (lambda fd: fd.ops.matmul(_tensor(fd, [4, 1]), _tensor(fd, [-1, 3])),
     r"matmul: K should be broadcast .*arg1 .*dim 1 is a broadcast, arg2 .*dim 0 is not a broadcast"),
    (lambda fd: fd.ops.grouped_mm(_tensor(fd, [4, 8], expanded={1}), _tensor(fd, [8, 5]),
                                  _tensor(fd, [2], dtype=DataType.Int32)),
     r"grouped_mm: K should be broadcast in both mat1 and mat2, or neither"),
    (lambda fd: fd.ops.cumprod(_tensor(fd, [3, 1, 3], expanded={2}), dim=2),  # f023
     r"cumprod along dim 2 of .*\[3, 1b, 3e\]: that dim is an expanded broadcast \(size 3, stride 0\), and nvFuser "
     r"refuses it: \"Closed-form scan of expanded dimension is not yet implemented\""),
    (lambda fd: fd.ops.cummax(_tensor(fd, [4, 5], expanded={0}), dim=-2),
     r"cummax along dim 0 of .*\[4e, 5\]: that dim is an expanded broadcast"),
])
def test_nvfuser_definition_rules_refused_at_record_time(build, words):
    """One line naming the op, the argument, the offending dim and the user's line (this file)."""
    with FusionDefinition() as fd:
        with pytest.raises(segkit.FusionDefinitionError, match=words) as e:
            build(fd)
    msg = str(e.value)
    assert "\n" not in msg and re.search(r"fd\.ops\.\w+ at .*test_bad_inputs\.py:\d+: ", msg)


def test_k_broadcast_in_both_or_neither_and_scans_beside_expanded_dims_record_and_run():
    """The allowed neighbours of the refused cases above still record, and compute what torch does."""
    with FusionDefinition() as fd:
        a, w = _tensor(fd, [5, 2], expanded={1}), _tensor(fd, [3, 2], expanded={1})  # K expanded in both
        x, y = _tensor(fd, [4, 3, 6]), fd.define_tensor(shape=[6, 1], contiguity=[True, None])  # K in neither
        s = _tensor(fd, [3, 4], expanded={0})
        for out in (fd.ops.linear(a, w), fd.ops.matmul(x, y), fd.ops.cumsum(s, dim=1)):
            fd.add_output(out)
    g = torch.Generator().manual_seed(0)
    ta = torch.randn(5, 1, generator=g).expand(5, 2)
    tw = torch.randn(3, 1, generator=g).expand(3, 2)
    tx, ty = torch.randn(4, 3, 6, generator=g), torch.randn(6, 1, generator=g)
    ts = torch.randn(1, 4, generator=g).expand(3, 4)
    lin, mm, cs = segkit.run_reference(fd, [ta, tw, tx, ty, ts])
    torch.testing.assert_close(lin, 2 * ta[:, :1] * tw[:, 0])  # K = 2 equal terms
    torch.testing.assert_close(mm, tx @ ty)
    torch.testing.assert_close(cs, ts.cumsum(1))
