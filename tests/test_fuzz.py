"""The fuzz loop without a GPU: generated fusions round-trip and run; a bug planted in one op's reference,
used as the backend under test, is found, minimized, deduplicated, replayed and written standalone."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import runpy
from unittest import mock

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit import ops as catalogue
from segkit_cli.main import main as cli_main
from segkit.dtypes import DataType
from segkit.fuzz import Target, cases, fuzz, replay, run_case, target
from segkit.fuzz.gen import _Builder
from segkit.interp import run_reference
from segkit.repro.load import _Stubbed

_REAL_RESHAPE = catalogue.CATALOGUE["reshape"]


def _reshape_drops_expanded(a, ctx):
    """The planted bug (nvFuser's class): a reshape that merges a stride-0 dim gets its first element wrong."""
    x, out = a["arg"], _REAL_RESHAPE.run(a, ctx)
    if out.ndim < x.ndim and any(st == 0 and n > 1 for st, n in zip(x.stride(), x.shape)):
        out = out.contiguous().clone()
        flat = out.view(-1)
        flat[0] = ~flat[0] if out.dtype == torch.bool else flat[0] + 1
    return out


@contextlib.contextmanager
def planted():
    with mock.patch.dict(catalogue.CATALOGUE, {"reshape": dataclasses.replace(_REAL_RESHAPE, run=_reshape_drops_expanded)}):
        yield


def _planted_run(fd, inputs):
    with planted():
        return run_reference(fd, inputs)


PLANTED = Target("planted", "cpu", _planted_run)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.data(), st.sampled_from(["matmul", "linear"]), st.booleans())
def test_generator_gives_the_weight_a_stride0_k_exactly_when_x_has_one(data, name, k_expanded):
    """nvFuser refuses K broadcast on one side only (fuzz findings f024, f026); a scan along an expanded dim
    is refused too (f023): the generator emits neither, and still emits both ops on such inputs."""
    b = _Builder(data.draw, 4096)
    x = b.new_input([3, 5], DataType.Float, expand={0: True, 1: k_expanded})
    assert x.expanded == (True, k_expanded)
    out = b._gemm(name)
    op = out.definition
    w = next(v for v in b.fd.fusion.inputs if v is not x)
    assert op.name == name and w.expanded[0 if name == "matmul" else 1] == k_expanded
    scanned = b.scan()
    if scanned is not None:
        assert not scanned.definition.inputs[0].expanded[scanned.definition.args["dim"]]


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(cases(max_ops=8, max_elements=2048))
def test_generated_cases_round_trip_and_run(case):
    repro = segkit.load_repro(case.script)
    a, b = repro.fd.fusion, case.fd.fusion
    assert [op.name for op in a.ops] == [op.name for op in b.ops]
    def spec(v):
        return v.describe().split(":")[1], v.contiguity, v.stride_order

    assert sorted(map(str, map(spec, a.inputs))) == sorted(map(str, map(spec, b.inputs)))
    assert [spec(o) for op in a.ops for o in op.outputs] == [spec(o) for op in b.ops for o in op.outputs]
    inputs = repro.make_inputs("cpu")
    assert [x.stride() for x in inputs if isinstance(x, torch.Tensor)] == \
           [x.stride() for x in case.inputs if isinstance(x, torch.Tensor)]  # layouts survive the script
    outs = run_reference(repro.fd, inputs)
    for v, out in zip(case.fd.fusion.outputs, outs):
        assert out.ndim == v.ndim and all(s in (-1, n) for s, n in zip(v.shape, out.shape)), v.describe()
        assert out.dtype == v.dtype.torch, v.describe()


def test_reference_target_finds_nothing_under_every_realization(tmp_path):
    """The generator's cases are right by the reference's own standard, bookended or not (no false positives)."""
    s = fuzz(target("reference"), tmp_path, max_cases=25, seed=3, progress=False, log=lambda m: None)
    assert s.cases == 25 and s.statuses == {"ok": 25} and not s.findings
    assert len(s.coverage.ops) >= 8 and s.coverage.pairs


def test_planted_bug_is_found_minimized_replayed_and_written_standalone(tmp_path, capsys):
    s = fuzz(PLANTED, tmp_path, max_cases=100, seed=4, realizations=["plain"], minimize_seconds=10,
             progress=False, log=lambda m: None)
    assert s.findings, "the planted reshape bug was not found"
    f = max(s.findings, key=lambda x: x.hits)
    assert f.kind == "mismatch" and "reshape" in f.signature and f.ops_after <= 3
    assert any(x.steps for x in s.findings) and all(x.ops_after <= x.ops_before for x in s.findings)  # minimized
    assert len({x.signature for x in s.findings}) == len(s.findings)  # deduplicated ...
    assert sum(x.hits for x in s.findings) > len(s.findings)  # ... and repeats were counted, not written again
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["cases"] == 100 and f.signature in [x["signature"] for x in index["findings"]]
    assert "# Signature: " + f.signature in (tmp_path / f.file).read_text()

    repro = segkit.load_repro(tmp_path / f.file)  # the written repro still shows it, and only on the buggy side
    inputs = repro.make_inputs("cpu")
    assert run_case(PLANTED, repro.fd, inputs).status == "failed"
    assert run_case(target("reference"), repro.fd, inputs).status == "ok"

    assert [r.reproduces for r in replay(tmp_path, PLANTED)] == [True] * len(s.findings)
    assert cli_main(["fuzz", "--replay", str(tmp_path), "--target", "reference", "--workers", "0"]) == 0
    assert "no longer (ok)" in capsys.readouterr().out
    assert cli_main(["fuzz", "--emit", str(tmp_path / f.file)]) == 0
    emitted = capsys.readouterr().out
    assert emitted.startswith(f"# segkit fuzz finding {f.id}") and "EXPECTED = " in emitted

    script = tmp_path / f.file.replace(".py", "_upstream.py")
    text = script.read_text().replace("DEVICE = 'cuda:0'", "DEVICE = 'cpu'")
    script.write_text(text)
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import math", "import sys", "import torch", "from nvfuser_direct import FusionDefinition, DataType"]

    def run_standalone() -> int:
        out = io.StringIO()
        with _Stubbed(), contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
            runpy.run_path(str(script))  # nvfuser_direct stubbed by the recording frontend: runs the interpreter
        run_standalone.out = out.getvalue()
        return e.value.code

    with planted():
        assert run_standalone() == 1 and "MISMATCH output" in run_standalone.out
    assert run_standalone() == 0 and "matches" in run_standalone.out


def test_replay_of_a_directory_without_findings_names_the_problem(tmp_path, capsys):
    assert cli_main(["fuzz", "--replay", str(tmp_path), "--target", "reference"]) == 1
    assert "index.json" in capsys.readouterr().err


def test_resumed_campaign_carries_over_and_goes_on(tmp_path):
    first = fuzz(PLANTED, tmp_path, max_cases=10, seed=2, realizations=["plain"], minimize_seconds=5,
                 progress=False, log=lambda m: None)
    (tmp_path / "f009_error.py").write_text("# a repro an earlier run left, named by no finding\n")
    again = fuzz(PLANTED, tmp_path, max_cases=10, seed=2, realizations=["plain"], minimize_seconds=5, resume=True,
                 progress=False, log=lambda m: None)
    assert again.cases == 20 and again.next_batch > first.next_batch and again.seconds > first.seconds
    named = {n for f in again.findings for n in (f.file, f.file.replace(".py", "_upstream.py"))}
    assert {p.name for p in tmp_path.glob("f*.py")} == named  # no repro left behind that no finding names
    assert sum(again.coverage.ops.values()) > sum(first.coverage.ops.values())
    with pytest.raises(segkit.SegkitError, match="same --target and --seed"):
        fuzz(PLANTED, tmp_path, max_cases=1, seed=3, resume=True, progress=False, log=lambda m: None)


def test_worker_pool_survives_a_crash_and_a_timeout():
    """Cases run in spawned workers; one that kills its worker is a "crash", one that overruns a "timeout",
    and the pool goes on with fresh workers."""
    from segkit.fuzz.workers import Task, WorkerPool

    script = segkit.emit_repro(*_tiny())
    pool = WorkerPool("reference", workers=1, timeout=60)
    try:
        assert pool.run_one(Task(script)).status == "ok"
        assert pool.run_one(Task(script, ("no such realization",))).status == "crash"  # the worker raised and died
        assert pool.run_one(Task(script)).status == "ok"  # on a fresh worker
        pool.timeout = 0.0
        assert pool.run_one(Task(script)).status == "timeout"
    finally:
        pool.close()


def _tiny():
    with segkit.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 3], contiguity=[True, True])
        fd.add_output(fd.ops.exp(x))
    return fd, [torch.randn(4, 3)]


_EXPANDED_MERGE = '''import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, 4, -1], contiguity=[True, True, None, False], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.reshape(tv0, new_shape=[6, 4, 5])
    tv2 = fd.ops.reshape(tv1, new_shape=[24, 5])
    tv3 = fd.ops.reshape(tv2, new_shape=[120])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(59, dtype=torch.float32, device='cuda:0').as_strided((3, 2, 4, 5), (20, 10, 0, 2)),
]
fd.execute(inputs)
'''

_REAL_SEGMENT_SET = catalogue.CATALOGUE["segment_set"]


def _segment_set_of_expanded(a, ctx):
    """A planted bug that only a bookend realization reaches: segment_set of a tensor read through a stride-0
    dim gets its first element wrong (plain fusions have no segment_set)."""
    out = _REAL_SEGMENT_SET.run(a, ctx).contiguous().clone()
    out.view(-1)[0] += 1
    return out


@pytest.mark.parametrize("realization", ["inputs+outputs/segment_set", "outputs/host", "plain"])
def test_standalone_script_runs_what_the_realization_ran(tmp_path, realization):
    """A finding under a bookend realization is written standalone as the fusion nvFuser ran there (the
    segment_sets written out, or the host plan's core on as_strided views), so the script alone shows it."""
    from segkit.fuzz.campaign import Finding
    from segkit.fuzz.triage import emit_standalone

    path = tmp_path / "case.py"
    path.write_text(_EXPANDED_MERGE)
    f = Finding("f001", "mismatch", realization, "mismatch:reshape>reshape>reshape", "", file="case.py")
    script = tmp_path / "standalone.py"
    script.write_text(emit_standalone(segkit.load_repro(path), f).replace("DEVICE = 'cuda:0'", "DEVICE = 'cpu'"))

    def run() -> tuple[int, str]:
        out = io.StringIO()
        with _Stubbed(), contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
            runpy.run_path(str(script))
        return e.value.code, out.getvalue()

    assert run() == (0, "nvFuser matches the expected values\n")
    text = script.read_text()
    assert ("fd.ops.segment_set(" in text) == (realization == "inputs+outputs/segment_set")
    assert (".as_strided(" in text.split("outputs = fd.execute")[0].split("_gen =")[1].split("inputs = [", 1)[1]) \
        == (realization == "outputs/host")
    planted_segment_set = {"segment_set": dataclasses.replace(_REAL_SEGMENT_SET, run=_segment_set_of_expanded)}
    with mock.patch.dict(catalogue.CATALOGUE, planted_segment_set):
        code, out = run()
    assert (code, "MISMATCH output" in out) == ((1, True) if realization.endswith("segment_set") else (0, False))


def test_an_nvfuser_assert_finding_keeps_what_failed_and_dedups_across_formats():
    """nvFuser's internal asserts say what failed on their second line: a finding keeps it, and the same assert
    written either way (a raw first line from an older campaign, or the summary) is one finding on replay."""
    from segkit.fuzz.targets import error_key

    raw = ("Error from segmentation group 0:  INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/expr_evaluator.cpp:156, "
           "please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. ")

    def failing(fd, inputs):
        raise RuntimeError(raw + "\nExpected 3 == 4 . Cannot bind tv2 to a different extent")

    res = run_case(Target("asserts", "cpu", failing), segkit.load_repro(_EXPANDED_MERGE).fd,
                   segkit.load_repro(_EXPANDED_MERGE).make_inputs("cpu"))
    detail = res.failures[0].detail
    assert detail == ("RuntimeError: Error from segmentation group 0: INTERNAL ASSERT at expr_evaluator.cpp:156: "
                      "Expected 3 == 4 . Cannot bind tv2 to a different extent")
    assert error_key(detail) == error_key("RuntimeError: " + raw)
    assert error_key(detail) != error_key(detail.replace("expr_evaluator.cpp", "executor.cpp"))


def test_standalone_script_of_a_script_with_plain_tensor_inputs(tmp_path):
    """A repro that builds its inputs with torch.randn / torch.full (as nvFuser's issue reports do), not
    as_strided, is written standalone with the same input values: the script agrees with the reference."""
    from segkit.fuzz.triage import emit_standalone

    source = _EXPANDED_MERGE.replace(
        "inputs = [\n    torch.randn(59, dtype=torch.float32, device='cuda:0').as_strided((3, 2, 4, 5), (20, 10, 0, 2)),\n]",
        "x = torch.randn(3, 2, 4, 5, dtype=torch.float32, device='cuda:0')\nfd.execute([x])")
    source = source.replace("contiguity=[True, True, None, False]", "contiguity=[True, True, True, True]")
    scale = "    tv4 = fd.ops.mul(tv3, tv9)\n    fd.add_output(tv4)\n"
    source = source.replace("    fd.add_output(tv3)\n", "    tv9 = fd.define_tensor(shape=[120], contiguity=[True], dtype=DataType.Float, is_cpu=False)\n" + scale)
    source = source.replace("fd.execute([x])", "fd.execute([x, torch.full((120,), 0.5, dtype=torch.float32, device='cuda:0')])")
    repro = segkit.load_repro(source)
    assert [r.kind for r in repro.recipes] == ["make_tensor", "factory"]
    script = tmp_path / "standalone.py"
    script.write_text(emit_standalone(repro).replace("DEVICE = 'cuda:0'", "DEVICE = 'cpu'"))
    out = io.StringIO()
    with _Stubbed(), contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        runpy.run_path(str(script))
    assert (e.value.code, out.getvalue()) == (0, "nvFuser matches the expected values\n")
