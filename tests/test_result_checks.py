"""Results checked before they are printed (segkit.results): negative sizes and times, one input counted twice and
estimates the inputs rule out are refused; a fusion whose reference outputs have no finite value says so; comparing
two profiles by kernel plots kernels."""

from __future__ import annotations

import json

import pytest
import torch

from segkit import DataType, FusionDefinition, check_outputs, run_reference
from segkit.regions import analyze, cost_model
from segkit.results import ResultError, problems, validate
from segkit_cli.main import main as cli_main
from tests.conftest import DATA, H100_STEP


def _nonfinite_fusion(kind: str) -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        if kind == "log":  # log of a negative constant: NaN everywhere
            out = fd.ops.add(x, fd.ops.log(fd.define_scalar(-2.0, dtype=DataType.Double)))
        else:  # a full of 1e400: +Inf everywhere
            out = fd.ops.full(shape=[2, 4], fill_value=fd.define_scalar(1e400, dtype=DataType.Double),
                              dtype=DataType.Float)
        fd.add_output(out)
    return fd


@pytest.mark.parametrize("kind", ["log", "full"])
def test_outputs_with_no_finite_value_are_noted(kind):
    fd = _nonfinite_fusion(kind)
    inputs = [torch.ones(2, 4)]
    ref = run_reference(fd, inputs)
    assert not torch.isfinite(ref[0]).any()
    report = check_outputs(fd, inputs, [r.clone() for r in ref], label="another backend")
    assert report.ok  # NaN / Inf agree: the verdict is right, and the note says it checked no number
    assert any("every value is non-finite on the reference" in n for n in report.notes)
    assert "note: no output has a finite value" in str(report)
    assert any("non-finite" in n for n in report.to_dict()["notes"])


@pytest.mark.parametrize("dtype", [DataType.Float8_e4m3fn, DataType.Float8_e5m2])
def test_float8_outputs_are_judged_without_a_missing_torch_kernel(dtype):
    """torch has no isfinite for float8_e4m3fn: the note's check must not turn a float8 cast into an error (the GPU
    suite's cast samples failed so)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.cast(x, dtype=dtype))
    inputs = [torch.linspace(-3, 3, 8).reshape(2, 4)]
    report = check_outputs(fd, inputs, run_reference(fd, inputs))
    assert report.ok and report.notes == []


def test_finite_outputs_have_no_note():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(x))
    inputs = [torch.ones(2, 4)]
    assert check_outputs(fd, inputs, run_reference(fd, inputs)).notes == []


def test_repro_on_the_reference_notes_non_finite_outputs(tmp_path, capsys):
    script = tmp_path / "nan_repro.py"
    script.write_text(
        "import torch\nfrom nvfuser_direct import FusionDefinition, DataType\n\n"
        "with FusionDefinition() as fd:\n"
        "    x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)\n"
        "    fd.add_output(fd.ops.add(x, fd.ops.log(fd.define_scalar(-2.0, dtype=DataType.Double))))\n\n"
        "fd.execute([torch.ones(2, 4, device='cuda')])\n")
    cli_main(["repro", str(script)])
    assert "note: output 0: every value is non-finite on the reference" in capsys.readouterr().out


def test_compare_by_kernel_plots_kernels(tmp_path, capsys):
    """Two model-step profiles with no user range in common: the kernel table, then a plot of its kernels (before:
    the table, then 'share no range name: nothing to plot')."""
    a, b = (H100_STEP / "profiles" / f"llama3-8b-x1-{v}.json.gz" for v in ("compile", "segkit-auto"))
    out = tmp_path / "kernels.png"
    assert cli_main(["trace", "compare", str(a), str(b), "--by", "kernel", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    assert f"plot: {out}" in capsys.readouterr().out


LLAMA = [DATA / "thunder_traces" / f"litgpt_llama_tiny_cpu.{k}.py" for k in ("fwd", "bwd")]


def test_a_negative_size_in_a_trace_is_refused_not_counted(tmp_path, capsys):
    """Before: the cuts' bytes came out negative and the gains with them (exit 0)."""
    fwd = tmp_path / "fwd.py"
    fwd.write_text(LLAMA[0].read_text().replace("f32[2, 16, 64]", "f32[-2, 16, 64]"))
    assert cli_main(["regions", str(fwd), str(LLAMA[1]), "--gpu", "h200", "--format", "json"]) != 0
    err = capsys.readouterr().err
    assert "nbytes is -8192: a size, time or count cannot be negative" in err


def test_one_trace_given_twice_is_refused(capsys):
    assert cli_main(["regions", str(LLAMA[0]), str(LLAMA[0]), "--gpu", "h200"]) != 0
    assert "given twice" in capsys.readouterr().err


def test_a_negative_estimated_step_is_refused():
    sources = [(str(p), p.read_text()) for p in LLAMA]
    with pytest.raises(ResultError, match="estimated fused step -.* ms is negative"):
        analyze(sources, cost_model("h200"), step_ms=0.01)  # the cuts' gains alone are ~0.2 ms
    assert analyze(sources, cost_model("h200"), step_ms=10).fused_step_ms > 0


def test_a_kernel_of_negative_duration_is_refused_in_the_table(tmp_path, capsys):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": -5, "args": {}},
        {"ph": "X", "cat": "user_annotation", "name": "step", "ts": 0, "dur": 50}]}))
    assert cli_main(["trace", "show", str(p)]) != 0
    # refused where it is read, naming the file and the event (before, in the table built from it)
    assert f"{p}: traceEvents[0] dur: -5000 is negative" in capsys.readouterr().err


def test_validate_walks_dataclasses_dicts_and_lists():
    assert validate({"rows": [{"A us": 1.0, "name": "-3"}]}) is not None
    assert problems({"rows": [{"kernel_us_total": float("nan")}]}) == [
        "result['rows'][0]['kernel_us_total'] is nan: a size, time or count must be a finite number"]
    assert problems([{"B kernels": -1, "delta": -1}]) == ["result[0]['B kernels'] is -1: a size, time or count "
                                                          "cannot be negative"]
