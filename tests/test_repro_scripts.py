"""Repro scripts load the way Python runs them: module-level code, constants and helpers, `with` blocks,
FusionDefinition subclasses, fusions built in test functions or main(), several fusions per script, every era's
imports, inputs as nvFuser's printer and make_tensor write them, and no CUDA. Each loaded fusion runs on the
reference interpreter and is compared with the same math written in torch."""

from __future__ import annotations

import math
import sys

import pytest
import torch

import segkit
from segkit.errors import ReproError, SegkitError


def _run(repro):
    inputs = repro.make_inputs("cpu")
    return inputs, segkit.run_reference(repro.fd, inputs)


# nvFuser's README (2025) style: the fusion recorded in a module-level `with` block, executed on 'cuda' tensors.
README = """
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    c0 = fd.define_scalar(3.0)
    t2 = fd.ops.add(t0, t1)
    t3 = fd.ops.mul(t2, c0)
    t4 = fd.ops.sum(t3, [-1], False, DataType.Float)
    fd.add_output(t4)

input1 = torch.randn(2, 1, 8, device='cuda')
input2 = torch.randn(2, 4, 8, device='cuda')
nvf_out = fd.execute([input1, input2])[0]
print(nvf_out)
"""


def test_module_level_with_block(capsys):
    repro = segkit.load_repro(README)
    (a, b), (out,) = _run(repro)
    assert repro.name == "fd" and repro.names == ("fd",) and repro.notes == ()
    torch.testing.assert_close(out, ((a + b) * 3.0).sum(-1))
    assert capsys.readouterr().out == ""  # the script's own printing is not segkit's output


CONSTANTS = """
import torch
from nvfuser import FusionDefinition, DataType

M, N = 4, 6
SCALE = 0.5

def scaled(fd, t):
    return fd.ops.mul(t, SCALE)

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    t0 = fd.define_tensor(shape=[M, N], contiguity=[True, True], dtype=DataType.Float)
    sizes = fd.define_vector([M * N])
    fd.add_output(fd.ops.reshape(scaled(fd, fd.ops.exp(t0)), sizes))
"""


@pytest.mark.parametrize("tail, name", [
    ("with FusionDefinition() as fd:\n    nvfuser_fusion_id0(fd)\nx = torch.randn(M, N, device='cuda:0')\n"
     "fd.execute([x])\n", "nvfuser_fusion_id0"),
    ("inputs = [torch.randn((M, N), dtype=torch.float32, device='cuda:0')]\n", "nvfuser_fusion_id0"),  # never called
])
def test_module_constants_and_helpers_are_defined(tail, name):
    repro = segkit.load_repro(CONSTANTS + tail)
    (x,), (out,) = _run(repro)
    assert repro.name == name and x.shape == (4, 6)
    torch.testing.assert_close(out, (torch.exp(x) * 0.5).reshape(24))


IN_FUNCTIONS = """
import torch
from nvfuser import FusionDefinition, DataType

def {func}({params}):
    x = torch.randn(3, 5, device='cuda')
    y = torch.randn(5, device='cuda')
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(y)
        fd.add_output(fd.ops.sub(t0, fd.ops.broadcast(t1, [True, False])))
    out = fd.execute([x, y])[0]
    assert torch.allclose(out, x - y)
{call}
"""


@pytest.mark.parametrize("func, params, call", [
    ("test_sub", "", ""),  # pytest style: the loader calls module-level test functions
    ("main", "", "if __name__ == '__main__':\n    main()"),
    ("helper", "scale=1.0", "helper()"),
])
def test_fusion_built_inside_a_function(func, params, call):
    repro = segkit.load_repro(IN_FUNCTIONS.format(func=func, params=params, call=call))
    (x, y), (out,) = _run(repro)
    assert repro.name == func and repro.notes == ()  # the script's own assert passed on the reference's outputs
    torch.testing.assert_close(out, x - y)


# nvFuser's own tests, as developers paste them (a method of NVFuserTest moved out of its class).
NVFUSER_TEST = """
import pytest
import torch
from nvfuser import FusionCache, FusionDefinition, DataType, version, compute_contiguity
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_prod(self, dtype):
    inputs = [torch.testing.make_tensor((2, 4, 8), device='cuda', dtype=dtype, low=self.LOW_VAL, high=self.HIGH_VAL)]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.ops.prod(t0, 1, False, DataType.Float)
        fd.add_output(t1)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
    self.assertEqual(nvf_out[0], torch.prod(inputs[0], 1, False, dtype=torch.float32))
"""


def test_nvfuser_test_function_gets_a_test_harness():
    repro = segkit.load_repro(NVFUSER_TEST)
    (x,), (out,) = _run(repro)
    assert repro.name == "test_prod" and repro.notes == ()
    assert x.dtype == torch.float32 and x.min() >= -2 and x.max() <= 2  # the first parametrized dtype, its range
    torch.testing.assert_close(out, torch.prod(x, 1))


# Inputs as nvFuser's printer writes bool and integer tensors, expanded tensors, make_tensor with a range,
# and a tensor built by module-level code.
PRINTER_INPUTS = """
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[None, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T4 = fd.ops.where(T0, T1, fd.ops.cast(T2, DataType.Float))
    fd.add_output(fd.ops.add(T4, T3))

with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

ramp = torch.arange(12, dtype=torch.float32, device='cuda:0').reshape(2, 6) / 4
inputs = [
    torch.randint(0, 2, (12,), dtype=torch.bool, device='cuda:0').as_strided((2, 6), (6, 1)),
    torch.randn(6, dtype=torch.float32, device='cuda:0').expand(2, 6),
    torch.testing.make_tensor((2, 6), dtype=torch.int64, device='cuda:0', low=0, high=3),
    ramp,
]
fd.execute(inputs)
"""


def test_printer_style_inputs_keep_their_layout_and_values():
    repro = segkit.load_repro(PRINTER_INPUTS)
    (b, x, i, ramp), (out,) = _run(repro)
    assert b.dtype == torch.bool and b.stride() == (6, 1) and x.stride() == (0, 1) and i.dtype == torch.int64
    assert 0 <= i.min() and i.max() < 3  # make_tensor's range kept (an index input stays in range)
    assert torch.equal(ramp, torch.arange(12.0).reshape(2, 6) / 4)  # module-level code's values
    torch.testing.assert_close(out, torch.where(b, x, i.float()) + ramp)
    again = segkit.load_repro(PRINTER_INPUTS).make_inputs("cpu")
    assert all(torch.equal(p, q) for p, q in zip(again, (b, x, i, ramp)))  # loading is deterministic


def test_as_strided_of_a_shaped_base_has_the_whole_storage():
    # the shape from the issue: `torch.randn((216, 20480), ...).as_strided((216, 20480), (20480, 1))`
    script = """
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    fd.add_output(fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float))

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [torch.randn((216, 20480), dtype=torch.float32, device='cuda:0').as_strided((216, 20480), (20480, 1))]
fd.execute(inputs)
"""
    repro = segkit.load_repro(script)
    assert repro.recipes[0].kind == "randn_strided" and repro.recipes[0].storage == 216 * 20480
    (x,), (out,) = _run(repro)
    torch.testing.assert_close(out, x.sum(1))
    (x1,) = repro.make_inputs("cpu", seed=1)
    assert not torch.equal(x, x1)  # inputs written as literal expressions are drawn per seed


SCHEDULED = """
import torch
from nvfuser import FusionDefinition, DataType, ParallelType, SchedulerType

def apply_schedule(fd):  # the first def taking fd: a schedule helper, not the fusion
    fd.sched.parallelize(fd.sched.tensors[0], 0, ParallelType.grid_x)

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.relu(T0))

class Scheduled(FusionDefinition):
    def definition(self):
        self.t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        self.add_output(self.ops.tanh(self.t0))

    def schedule(self):
        apply_schedule(self)

x = torch.randn(4, 4, device='cuda')
{tail}
"""


@pytest.mark.parametrize("tail, name, math_", [
    ("with FusionDefinition() as fd:\n    nvfuser_fusion_id0(fd)\nfd.execute([x])", "nvfuser_fusion_id0", torch.relu),
    ("fn = Scheduled()\nout = fn.execute([x])", "Scheduled", torch.tanh),
])
def test_schedule_functions_are_not_taken_for_the_fusion(tail, name, math_):
    repro = segkit.load_repro(SCHEDULED.format(tail=tail))
    (x,), (out,) = _run(repro)
    assert repro.name == name
    torch.testing.assert_close(out, math_(x))


SEVERAL = """
import torch
from nvfuser_direct import FusionDefinition, DataType

def add_fusion(fd):
    a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.add(a, a))

def mul_fusion(fd):
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.mul(a, b))

with FusionDefinition() as fd1:
    add_fusion(fd1)
with FusionDefinition() as fd2:
    mul_fusion(fd2)
fd1.execute([torch.randn(5, device='cuda')])
fd2.execute([torch.randn(2, 3, device='cuda'), torch.randn(2, 3, device='cuda')])
"""


def test_several_fusions_are_listed_and_chosen_by_name():
    with pytest.raises(ReproError, match=r"builds 2 fusions: add_fusion \(line 14\), mul_fusion \(line 16\); "
                                         r"choose one with --fusion NAME"):
        segkit.load_repro(SEVERAL)
    repro = segkit.load_repro(SEVERAL, fusion="mul_fusion")
    (a, b), (out,) = _run(repro)  # the inputs of its own execute
    assert repro.names == ("add_fusion", "mul_fusion") and a.shape == (2, 3)
    torch.testing.assert_close(out, a * b)
    (x,), (y,) = _run(segkit.load_repro(SEVERAL, fusion="add_fusion"))
    torch.testing.assert_close(y, x + x)
    with pytest.raises(ReproError, match=r"no fusion named 'div_fusion'; the script builds add_fusion \(line 14\), "
                                         r"mul_fusion \(line 16\)"):
        segkit.load_repro(SEVERAL, fusion="div_fusion")


@pytest.mark.parametrize("imports", [
    "from torch._C._nvfuser import Fusion, FusionDefinition, DataType",
    "import torch._C._nvfuser as nvf\n"
    "Fusion, FusionDefinition, DataType = nvf.Fusion, nvf.FusionDefinition, nvf.DataType",
    "",  # pasted without its import lines: segkit supplies the standard names, and says so
])
def test_pytorch_fork_era_fusion_object(imports):
    script = f"""
import torch
{imports}

fs = Fusion()
with FusionDefinition(fs) as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    t1 = fd.ops.cast(t0, DataType.Float)
    fd.add_output(fd.ops.mul(t1, fd.define_constant(2.0)))
fs.print_ir()
out = fs.execute([torch.randn(3, 4, dtype=torch.half, device='cuda')])
"""
    had = "torch._C._nvfuser" in sys.modules, hasattr(torch._C, "_nvfuser")
    repro = segkit.load_repro(script)
    (x,), (out,) = _run(repro)
    torch.testing.assert_close(out, x.float() * 2)
    assert ("torch._C._nvfuser" in sys.modules, hasattr(torch._C, "_nvfuser")) == had  # the stub is gone again
    assert repro.notes == (() if imports else ("<repro>: the script uses FusionDefinition, DataType, Fusion without "
                                               "importing it; segkit supplied the standard import(s)",))


def test_cuda_calls_need_no_cuda_and_leave_torch_alone():
    script = README.replace("nvf_out = fd.execute([input1, input2])[0]", """
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(200):  # a benchmark loop: the reference runs once for the same inputs
    nvf_out = fd.execute([input1.cuda(), input2.to('cuda')])[0]
end.record()
torch.cuda.synchronize()
print(start.elapsed_time(end), torch.cuda.get_device_name(0))
""")
    state, synchronize = torch.get_rng_state(), torch.cuda.synchronize
    repro = segkit.load_repro(script, timeout=20)
    assert torch.equal(torch.get_rng_state(), state) and torch.cuda.synchronize is synchronize
    assert not torch.cuda.is_available()  # restored (this machine has no GPU)
    (a, b), (out,) = _run(repro)
    torch.testing.assert_close(out, ((a + b) * 3.0).sum(-1))


def test_a_large_tensor_is_recorded_not_allocated():
    script = README.replace("input2 = torch.randn(2, 4, 8, device='cuda')",
                            "input2 = torch.randn(2, 10**7, 8, device='cuda')")
    repro = segkit.load_repro(script)  # 640 MB of float32: made on the meta device, the execute too
    assert [r.kind for r in repro.recipes] == ["make_tensor", "randn_strided"]
    assert repro.recipes[1].shape == (2, 10**7, 8)


def test_an_error_after_the_fusion_ran_is_a_note_before_it_an_error():
    tail = "assert nvf_out.sum().item() == 12345.0, 'wrong'\n"
    repro = segkit.load_repro(README + tail)
    assert repro.notes == ("<repro>:18: the script stopped after running its fusion(s) (AssertionError: wrong); "
                           "segkit keeps the fusions built before that line",)
    with pytest.raises(ReproError, match=r"^<repro>:14: NameError: name 'undefined_size' is not defined$"):
        segkit.load_repro(README.replace("torch.randn(2, 1, 8,", "torch.randn(2, 1, undefined_size,"))
    with pytest.raises(ReproError, match=r"^<repro>:16: inputs do not match the definition: input 1 "):
        segkit.load_repro(README.replace("torch.randn(2, 4, 8,", "torch.randn(2, 4,"))


@pytest.mark.parametrize("path", ["", "   "])
def test_empty_path_is_named(path):
    with pytest.raises(ReproError, match="^an empty path: give a repro script's path or its text$"):
        segkit.load_repro(path)


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "-inf", "soon"])
def test_script_timeout_must_be_a_positive_number(value, monkeypatch):
    monkeypatch.setenv("SEGKIT_SCRIPT_TIMEOUT", value)
    with pytest.raises(ReproError, match=rf"^SEGKIT_SCRIPT_TIMEOUT='{value}' is not a positive number of seconds$"):
        segkit.load_repro(README)


@pytest.mark.parametrize("timeout", [0, -1.0, math.nan])
def test_timeout_argument_must_be_positive(timeout):
    with pytest.raises(ReproError, match=r"^timeout=.* is not a positive number of seconds$"):
        segkit.load_repro(README, timeout=timeout)
    assert segkit.load_repro(README, timeout=math.inf).name == "fd"  # inf: no limit


def test_a_script_that_builds_nothing_says_so():
    with pytest.raises(SegkitError, match="builds no fusion"):
        segkit.load_repro("import torch\nx = torch.randn(2, device='cuda')\n")


def test_cli_fusion_option(tmp_path, capsys):
    from segkit_cli.main import main

    script = tmp_path / "two.py"
    script.write_text(SEVERAL)
    assert main(["repro", str(script)]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "add_fusion (line 14), mul_fusion (line 16)" in err
    assert main(["repro", str(script), "--fusion", "mul_fusion"]) == 0
    out = capsys.readouterr().out
    assert "mul(" in out and "reference interpreter (cpu): (2, 3) torch.float32" in out
    assert main(["segments", str(script), "--fusion", "add_fusion"]) == 0
    assert main(["segments", "layernorm:bogus", "--fusion", "x"]) == 2
    assert "--fusion x: picks a fusion of a repro script" in capsys.readouterr().err


# nvFuser's test_def_op_in_schedule (tests/python/test_python_frontend.py): defining an op in schedule() is
# refused by nvFuser's execute; the test catches the error, so the script itself runs to its end.
DEF_OP_IN_SCHEDULE = """
import torch
from nvfuser import FusionDefinition, DataType

inputs = [torch.randn(4, 4, device="cuda")]

class SchedError(FusionDefinition):
    def definition(self):
        self.t0 = self.from_pytorch(inputs[0])
        self.t1 = self.ops.tanh(self.t0)
        self.add_output(self.t1)

    def schedule(self):
        self.t2 = self.ops.relu(self.t1)

try:
    fd = SchedError()
    _ = fd.execute(inputs)
except RuntimeError as e:
    assert "Attempting to add to a completed definition!" in str(e)
"""


def test_schedule_that_defines_an_op_is_refused_as_nvfuser_does():
    with pytest.raises(ReproError, match=r"^<repro>:18: CompletedDefinitionError: schedule\(\) defines an op: "
                                         r"Attempting to add to a completed definition! \(fusion SchedError; the "
                                         r"script catches this error itself"):
        segkit.load_repro(DEF_OP_IN_SCHEDULE)
    fixed = segkit.load_repro(DEF_OP_IN_SCHEDULE.replace("self.t2 = self.ops.relu(self.t1)", "self.sched.split(0, 2)"))
    (x,), (out,) = _run(fixed)
    torch.testing.assert_close(out, torch.tanh(x))


def test_cpu_tensors_are_refused_as_nvfuser_does():
    cpu = README.replace("input2 = torch.randn(2, 4, 8, device='cuda')", "input2 = torch.randn(2, 4, 8)")
    with pytest.raises(ReproError, match=r"^<repro>:16: RuntimeError: fd.execute: input 1 is a CPU tensor of shape "
                                         r"\[2, 4, 8\]: nvFuser takes CPU tensors only as 0-dim scalars"):
        segkit.load_repro(cpu)
    moved = segkit.load_repro(cpu.replace("[input1, input2]", "[input1, input2.cuda()]"))
    (a, b), (out,) = _run(moved)
    torch.testing.assert_close(out, ((a + b) * 3.0).sum(-1))
    scalar = segkit.load_repro(README.replace("c0 = fd.define_scalar(3.0)", "c0 = fd.from_pytorch(torch.tensor(3.0))")
                               .replace("[input1, input2]", "[input1, input2, torch.tensor(3.0)]"))
    assert scalar.fd.fusion.inputs[2].is_cpu  # a 0-dim CPU tensor is nvFuser's CPU scalar input
    cuda_scalar = segkit.load_repro(README.replace("c0 = fd.define_scalar(3.0)",
                                                   "c0 = fd.from_pytorch(torch.tensor(3.0, device='cuda'))")
                                    .replace("[input1, input2]", "[input1, input2, torch.tensor(3.0, device='cuda')]"))
    assert not cuda_scalar.fd.fusion.inputs[2].is_cpu  # ... and a 0-dim CUDA tensor is not


def test_a_reference_failure_inside_the_scripts_execute_does_not_stop_loading():
    # integer division by zero: nvFuser returns a value, the reference refuses it when the fusion is run,
    # not while the script that builds it is loaded
    script = (README.replace("t2 = fd.ops.add(t0, t1)", "t2 = fd.ops.div(t0, t1)")
              .replace("dtype=DataType.Float)", "dtype=DataType.Int)")
              .replace("torch.randn(2, 1, 8, device='cuda')", "torch.ones(2, 1, 8, dtype=torch.int64, device='cuda')")
              .replace("torch.randn(2, 4, 8, device='cuda')", "torch.zeros(2, 4, 8, dtype=torch.int64, device='cuda')"))
    repro = segkit.load_repro(script)
    assert repro.notes == () and [r.dtype for r in repro.recipes] == [torch.int64, torch.int64]


@pytest.mark.parametrize("check", [
    "with pytest.raises(RuntimeError):\n    fd.execute([input1, input2])",
    "import unittest\nwith unittest.TestCase().assertRaises(RuntimeError):\n    fd.execute([input1, input2])",
])
def test_a_script_expecting_nvfuser_to_refuse_is_not_loaded_as_if_it_ran(check):
    script = README.replace("nvf_out = fd.execute([input1, input2])[0]", "import pytest\n" + check)
    with pytest.raises(ReproError, match=r"the script expects nvFuser to refuse its fusion \(.*(DID NOT RAISE|not "
                                         r"raised).*segkit's reference runs it"):
        segkit.load_repro(script)


def test_a_cpu_scalar_input_stays_on_the_cpu_whatever_the_device():
    """nvFuser's test_cpu_add: a 0-dim CPU tensor beside a CUDA one; the rebuilt inputs keep it a CPU scalar (nvFuser
    refuses it on the device), the other input goes where asked."""
    from pathlib import Path

    repro = segkit.load_repro(Path(__file__).parent / "data" / "pasted_repros" / "fuser_2025_08_cpu_add.py")
    cpu, other = repro.make_inputs("meta")
    assert (cpu.device.type, cpu.dim()) == ("cpu", 0) and other.device.type == "meta"
