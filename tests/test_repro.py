"""Repro scripts: load without a GPU, emit runnable scripts, round trips are stable, bad scripts say why."""

from __future__ import annotations

import pytest
import torch

import fusions
import segkit
from segkit.errors import ReproError, UnsupportedOpError
from tests.conftest import THUNDER_FIXTURES


def _spec_fusions():
    for name in fusions.names():
        spec = fusions.get(name)
        cfg = next(c for c in spec.configs if c.endswith("_tiny"))
        yield f"{name}:{cfg}", spec.build(cfg), list(spec.make_inputs(cfg).values())


def _all_fusions():
    for path in THUNDER_FIXTURES:
        r = segkit.load_repro(path)
        yield path.name, r.fd, r.make_inputs()
    yield from _spec_fusions()


@pytest.mark.parametrize("name, fd, inputs", list(_all_fusions()), ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("style", ["direct", "legacy"])
def test_round_trip_is_stable_and_equal(name, fd, inputs, style):
    first = segkit.emit_repro(fd, inputs, style=style)
    loaded = segkit.load_repro(first)
    assert segkit.emit_repro(loaded.fd, inputs, style=style) == first
    assert [op.name for op in loaded.fd.fusion.ops] == [op.name for op in fd.fusion.ops]
    # the loaded script rebuilds inputs of the same layout and computes the same thing
    rebuilt = loaded.make_inputs()
    assert [(t.shape, t.stride(), t.dtype) for t in rebuilt] == [(t.shape, t.stride(), t.dtype) for t in inputs]
    for a, b in zip(segkit.run_reference(fd, inputs), segkit.run_reference(loaded.fd, inputs)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_make_inputs_follow_as_strided(shared_example):
    repro = segkit.load_repro(shared_example)
    x, w, b = repro.make_inputs("cpu")
    assert x.shape == (16, 128, 1600) and x.stride() == (204800, 1600, 1) and x.dtype == torch.bfloat16
    assert w.shape == (1600,) and b.dtype == torch.bfloat16
    assert not torch.equal(x.float(), repro.make_inputs("cpu", seed=1)[0].float())


def test_make_inputs_reads_non_contiguous_strides():
    src = segkit.emit_repro(fusions.get("fp8_amax").build("4096x4096_tiny"), [torch.randn(48, 80).bfloat16()])
    src = src.replace("as_strided((48, 80), (80, 1))", "as_strided((48, 80), (1, 48))")  # as a user edits it
    assert "as_strided((48, 80), (1, 48))" in src  # (emit_repro itself refuses inputs that contradict the definition)
    with pytest.raises(ReproError, match="allocation order"):
        segkit.load_repro(src)  # the definition says row-major: the script's inputs contradict it


HEADER = "import torch\nfrom nvfuser_direct import FusionDefinition, DataType\n"
BODY = (
    "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
    "    tv0 = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)\n"
    "    tv1 = fd.ops.{op}(tv0)\n"
    "    fd.add_output(tv1)\n"
)


@pytest.mark.parametrize("source, error, match", [
    (HEADER + "def nvfuser_fusion(fd : FusionDefinition) -> None\n    pass\n", ReproError, r":3: syntax error"),
    (HEADER + "x = 1\n", ReproError, r"no fusion function"),
    (HEADER + BODY.format(op="bogus"), UnsupportedOpError, r"fd.ops.bogus .*<repro>:5"),
    (HEADER + BODY.format(op="neg") + "inputs = [torch.randn(5, dtype=torch.float32, device='cuda:0').as_strided((5,), (1,))]\n",
     ReproError, r"<repro>:7: inputs do not match .*expected rank 2"),
    (HEADER + BODY.format(op="neg") + "inputs = [make()]\n", ReproError, r"<repro>:7: NameError: name 'make' is not defined"),
    (HEADER + BODY.format(op="neg").replace("tv1 = fd.ops.neg(tv0)", "tv1 = fd.ops.neg(undefined)"),
     ReproError, r"<repro>:5: NameError"),
])
def test_bad_scripts_name_line_and_reason(source, error, match):
    with pytest.raises(error, match=match):
        segkit.load_repro(source)


def test_missing_file_is_a_repro_error(tmp_path):
    with pytest.raises(ReproError, match="cannot read"):
        segkit.load_repro(tmp_path / "nope.py")


_ISSUE_STYLE = """
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id3(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.add(T0, fd.ops.broadcast(fd.ops.cast(T1, DataType.Float), [True, False]))
    fd.add_output(T2)

with FusionDefinition() as fd:
    nvfuser_fusion_id3(fd)

rows = 6
width = 3 * 16
a = torch.randn(rows, width, dtype=torch.float, device='cuda:0')
b = torch.randn(width, dtype=torch.bfloat16, device='cuda:0')

out = fd.execute([a, b])[0]
"""


def test_inputs_passed_to_execute_by_name_as_issue_reports_write_them():
    """nvFuser's issue reports rarely write ``inputs = [...]``: tensors are named, sized by module-level
    constants, and handed to ``fd.execute([...])``. The loader reads that list without running the script."""
    repro = segkit.load_repro(_ISSUE_STYLE)
    a, b = repro.make_inputs()
    assert (a.shape, a.dtype, b.shape, b.dtype) == ((6, 48), torch.float32, (48,), torch.bfloat16)
    (out,) = segkit.run_reference(repro.fd, [a, b])
    assert torch.equal(out, a + b.float())


def test_a_script_without_inputs_says_where_segkit_looks():
    repro = segkit.load_repro(_ISSUE_STYLE.replace("out = fd.execute([a, b])[0]", ""))
    with pytest.raises(ReproError, match=r"found no inputs for the fusion's 2 input\(s\) \(tv0: Float\[\?, \?\], "
                                         r"tv1: BFloat16\[\?\]\): segkit reads a module-level `inputs = \[...\]` or "
                                         r"the list passed to `fd.execute\(...\)`"):
        repro.make_inputs()
