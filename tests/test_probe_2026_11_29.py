"""The bad inputs of the 2026-11-29 probe (issue 53) that segkit handled wrong, held by mechanism: limits in the
environment are checked with the arguments, an option declared to go with another is refused alone, a command
that needs nvFuser names a bad target before the missing GPU, and the trace and regions functions check their
arguments (``segkit.args.checked``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

import segkit
from segkit.errors import ArgumentError
from segkit_cli.main import build_parser
from segkit_cli.contracts import leaf_parsers
from tests.bad_input_scripts import SOFTMAX
from tests.cli_run import cli, one_line

DATA = Path(__file__).parent / "data"
TORCH_TRACE = DATA / "traces" / "workload_torch.json.gz"
STEP_PROFILE = DATA / "step_h100" / "profiles" / "llama3-8b-x1-segkit-auto.json.gz"
FWD_TRACE = DATA / "thunder_traces" / "litgpt_llama_tiny_cpu.fwd.py"

WRONG_SHAPE = """\
from nvfuser_direct import FusionDefinition, DataType
import torch

with FusionDefinition() as fd:
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.neg(t))
fd.execute([torch.randn(3, 5, device="cuda")])
"""


@pytest.mark.parametrize(("var", "value"), [("SEGKIT_SCRIPT_TIMEOUT", "nan"), ("SEGKIT_SCRIPT_TIMEOUT", "-4"),
                                            ("SEGKIT_SCRIPT_TIMEOUT", "inf"), ("SEGKIT_MAX_TENSOR_BYTES", "lots"),
                                            ("SEGKIT_MAX_TENSOR_BYTES", "0")])
def test_a_limit_in_the_environment_that_is_not_one_is_a_usage_error(capsys, tmp_path, monkeypatch, var, value):
    script = tmp_path / "softmax.py"
    script.write_text(SOFTMAX)
    monkeypatch.setenv(var, value)
    code, out, err = cli(capsys, ["repro", script])
    assert code == 2 and one_line(err).startswith(f"segkit: error: {var}={value!r}"), err
    assert out == ""  # refused before the script ran


def test_a_good_limit_in_the_environment_is_taken(capsys, tmp_path, monkeypatch):
    script = tmp_path / "softmax.py"
    script.write_text(SOFTMAX)
    monkeypatch.setenv("SEGKIT_SCRIPT_TIMEOUT", "30")
    monkeypatch.setenv("SEGKIT_MAX_TENSOR_BYTES", "1G")
    code, _, err = cli(capsys, ["repro", script])
    assert code == 0, err


@pytest.mark.parametrize(("argv", "code", "words"), [
    (["check", "rmsnorm_fwd:nosuchconfig"], 2, "has no config 'nosuchconfig'"),
    (["check", "nosuch:cfg"], 2, "no fusion spec 'nosuch'"),
    (["check", "rmsnorm_fwd:nanogpt", "--fusion", "x"], 2, "--fusion x: picks a fusion of a repro script"),
    (["check", "{shape}"], 1, "shape"),
    (["minimize", "{shape}", "-o", "{tmp}/min.py"], 1, "shape"),
    (["minimize", "{empty}", "-o", "{tmp}/min.py"], 1, "no fusion"),
])
def test_a_command_that_needs_nvfuser_names_a_bad_target_first(capsys, tmp_path, argv, code, words):
    (tmp_path / "shape.py").write_text(WRONG_SHAPE)
    (tmp_path / "empty.py").write_text("")
    names = {"{shape}": str(tmp_path / "shape.py"), "{empty}": str(tmp_path / "empty.py"), "{tmp}": str(tmp_path)}
    argv = [a.replace("{tmp}", str(tmp_path)) if "{tmp}" in a else names.get(a, a) for a in argv]
    got, _, err = cli(capsys, argv)
    line = one_line(err)
    assert got == code and words in line and "CUDA device" not in line, err


@pytest.mark.parametrize("argv", [
    ["trace", "show", TORCH_TRACE, "--table", "kernels"],
    ["trace", "show", TORCH_TRACE, "--table", "kernels", "--format", "json"],
    ["trace", "idle", TORCH_TRACE, "--table", "gaps"],
    ["trace", "compare", TORCH_TRACE, TORCH_TRACE, "--table", "kernels", "--format", "markdown"],
    ["trace", "breakdown", STEP_PROFILE, "--table", "breakdown"],
])
def test_table_goes_with_format_csv(capsys, argv):
    code, out, err = cli(capsys, argv)
    assert code == 2 and "--table goes with --format csv" in one_line(err) and out == ""


def test_table_with_format_csv_prints_that_table(capsys):
    code, out, _ = cli(capsys, ["trace", "show", TORCH_TRACE, "--table", "kernels", "--format", "csv"])
    assert code == 0 and out.startswith("start_us,")


def test_declared_option_pairs_name_options_of_their_command():
    """Each ``goes_with`` names two options of the command that declares it (a typo would never fire)."""
    declared = 0
    for words, parser in leaf_parsers(build_parser()).items():
        flags = {s for a in parser._actions for s in a.option_strings}
        for option, other, _ in parser.needs:
            assert {option, other} <= flags, (words, option, other)
            declared += 1
    assert declared >= 9  # --table and --csv-dir on four trace views, --fusion on fuzz


def test_an_unknown_gpu_names_the_gpu_option(capsys):
    code, _, err = cli(capsys, ["regions", FWD_TRACE, "--gpu", "a100x"])
    assert code == 2 and one_line(err).startswith("segkit: error: --gpu 'a100x': no copy bandwidth known")


def test_amaxes_on_a_spec_without_them_is_a_usage_error(capsys):
    code, _, err = cli(capsys, ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--amaxes", "x,y"])
    assert code == 2 and "--amaxes picks fp8_amax's outputs" in one_line(err)


def test_resuming_a_campaign_with_another_seed_is_a_usage_error(capsys, tmp_path):
    pytest.importorskip("hypothesis")
    camp = tmp_path / "camp"
    run = ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "--quiet", "-o", camp]
    assert cli(capsys, run)[0] == 0
    before = {p.name: p.read_bytes() for p in camp.iterdir()}
    code, _, err = cli(capsys, [*run, "--resume", "--seed", "7"])
    assert code == 2 and "resume it with the same --target and --seed" in one_line(err)
    assert {p.name: p.read_bytes() for p in camp.iterdir()} == before


# ---------------------------------------------------------------------------------------------- Python API

def _fusion():
    with segkit.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=segkit.DataType.Float)
        fd.add_output(fd.ops.exp(x))
    return fd


@pytest.fixture(scope="module")
def torch_trace():
    from segkit import trace

    return trace.load(TORCH_TRACE)


@pytest.mark.parametrize("tol", [{torch.float32: math.nan}, {torch.float32: -1.0}, {torch.float32: math.inf},
                                 {"float32": 1e-3}])
def test_check_refuses_a_tolerance_that_is_not_one(tol):
    with pytest.raises(ArgumentError, match=r"check\(\): tol must be a dict from dtype to a finite number >= 0"):
        segkit.check(_fusion(), [torch.randn(2, 3)], tol=tol)


def test_check_outputs_refuses_a_nan_tolerance():
    x = torch.randn(2, 3)
    with pytest.raises(ArgumentError, match=r"tol must be"):
        segkit.check_outputs(_fusion(), [x], [x.exp()], tol={torch.float32: math.nan})


@pytest.mark.parametrize(("call", "arg"), [
    (lambda t: __import__("segkit.trace.idle").trace.idle.idle_tables(t, min_us=-1), "min_us"),
    (lambda t: __import__("segkit.trace.idle").trace.idle.idle_tables(t, min_us=math.nan), "min_us"),
    (lambda t: __import__("segkit.trace.idle").trace.idle.idle_tables(t, top=0), "top"),
    (lambda t: __import__("segkit.trace.idle").trace.idle.gaps(str(TORCH_TRACE)), "trace"),
    (lambda t: __import__("segkit.trace.breakdown").trace.breakdown.breakdown_tables([]), "traces"),
    (lambda t: __import__("segkit.trace.breakdown").trace.breakdown.breakdown_tables(str(TORCH_TRACE)), "traces"),
    (lambda t: __import__("segkit.trace.breakdown").trace.breakdown.per_step(None), "trace"),
    (lambda t: __import__("segkit.regions").regions.parse_trace(None), "source"),
    (lambda t: __import__("segkit.regions").regions.cost_model("h100", math.nan), "bandwidth_tbs"),
    (lambda t: __import__("segkit.regions").regions.cost_model("h100", 0), "bandwidth_tbs"),
    (lambda t: __import__("segkit.regions").regions.analyze(
        [("fwd", FWD_TRACE.read_text())], __import__("segkit.regions").regions.cost_model("h100"), step_ms=-1),
     "step_ms"),
])
def test_trace_and_regions_functions_name_a_bad_argument(torch_trace, call, arg):
    with pytest.raises(ArgumentError, match=rf"\b{arg} must be"):
        call(torch_trace)


def test_trace_and_regions_functions_take_good_arguments(torch_trace):
    from segkit.regions import analyze, cost_model
    from segkit.trace.breakdown import breakdown_tables
    from segkit.trace.idle import idle_tables

    assert idle_tables(torch_trace, min_us=0, top=3)["gaps"]
    assert breakdown_tables([("a", torch_trace)], whole=True)
    assert analyze([("fwd", FWD_TRACE.read_text())], cost_model("a100", 2.0), step_ms=10.0).cuts


def test_a_range_needs_a_name():
    from segkit import trace

    with pytest.raises(ArgumentError, match=r"range\(\): name must be a non-empty name"):
        with trace.range("  "):
            pass


# ---------------------------------------------------------------------------------------------- profile --torch

@pytest.mark.parametrize(("program", "words"), [
    (["-u", "x.py"], "python's option -u is not taken here"),
    (["{tmp}/nope.py"], "no such script"),
    (["-c"], "give the program to run"),
])
def test_profile_torch_refuses_a_program_it_cannot_run_before_running(capsys, tmp_path, program, words):
    import sys

    program = [p.replace("{tmp}", str(tmp_path)) for p in program]
    code, _, err = cli(capsys, ["profile", "--torch", "-o", tmp_path / "prof", "--", sys.executable, *program])
    assert code == 2 and words in one_line(err) and not (tmp_path / "prof").exists()


def test_profile_torch_runs_python_c(tmp_path):
    """``python -c CODE`` is run as python runs it (it was taken for a script named "-c")."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "segkit_cli", "profile", "--torch", "-o", str(tmp_path / "prof"),
                           "--", sys.executable, "-c", "import sys; print('ran', sys.argv)"],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode == 0 and "ran ['-c']" in proc.stdout, proc.stderr[-2000:]
    assert (tmp_path / "prof" / "trace.json").exists()
