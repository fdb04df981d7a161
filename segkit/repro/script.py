"""Run a repro script the way Python would, against segkit's recording frontend, with nothing touching CUDA.

The whole module runs (constants, helpers, ``with FusionDefinition() as fd:`` blocks, FusionDefinition
subclasses, ``if __name__ == "__main__":``), with:

* ``nvfuser``, ``nvfuser_direct`` and the pytorch fork's ``torch._C._nvfuser`` importing as stubs
  (segkit.repro.stubs) whose ``FusionDefinition`` records into segkit's IR and registers every definition the
  script makes, in order;
* CUDA requests served on the CPU (segkit.repro.device);
* ``fd.execute(inputs)`` recording its inputs and answering with the reference interpreter's outputs (on the
  meta device, shapes only, for inputs beyond ``EXECUTE_BYTES``: loading stays cheap), so the code after it
  runs as it would on a GPU; the torch random state forked (loading leaves the caller's alone).

When the module itself defines no fusion, its top-level ``test*()`` functions run, then (the oldest script
style: a fusion function and an ``inputs`` list) each fusion function ``def f(fd)`` no other one calls.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import sys
import types
import unittest
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from segkit.dtypes import from_torch
from segkit.errors import InputMismatchError, error_summary
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.ir import Value
from segkit.printing import emit_repro
from segkit.repro.device import CpuForCuda
from segkit.repro.stubs import Ignored, LegacyFusion

#: The script's execute runs the reference for real on inputs up to this many bytes, on meta beyond.
EXECUTE_BYTES = 8 * 2**20


@dataclass
class RecordedFusion:
    """One FusionDefinition the script built: where, under which name, and what its first execute got."""

    fd: FusionDefinition
    created_line: int
    created_in: str  # the script function that made it ("<module>", or "" when the loader made it)
    variable: str = ""  # `with FusionDefinition() as NAME` / `NAME = FusionDefinition()`
    defined_in: str = ""  # the script function that recorded its first op
    name: str = ""
    inputs: list[Any] | None = None  # the objects passed to its first execute
    execute_line: int = 0
    execute_at_module: bool = False
    refused: str = ""  # where and why its execute failed (a script may catch it: nvFuser refusing is its point)

    def base_name(self, top_level: set[str]) -> str:
        if type(self.fd).__name__ != "FusionDefinition":  # a subclass with definition(self)
            return type(self.fd).__name__
        if self.defined_in in top_level and self.defined_in != self.created_in:  # with ... as fd: f(fd)
            return self.defined_in
        if self.created_in and self.created_in != "<module>":
            return self.created_in
        return self.variable or "fusion"


@dataclass
class ScriptRun:
    """The state of one script run: its file, the fusions it built and the outputs already computed."""

    path: str
    tree: ast.Module
    devices: CpuForCuda = field(default_factory=CpuForCuda)
    fusions: list[RecordedFusion] = field(default_factory=list)
    executed: bool = False  # some fusion ran: code after that point only looks at its results
    _outputs: dict[tuple[Any, ...], tuple[list[Any], list[Any]]] = field(default_factory=dict)

    def script_frame(self) -> types.FrameType | None:
        """The innermost frame running the script's own code."""
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename != self.path:
            f = f.f_back
        return f

    def record(self, fd: FusionDefinition) -> RecordedFusion:
        f = self.script_frame()
        line = f.f_lineno if f is not None else 0
        rec = RecordedFusion(fd, line, f.f_code.co_name if f is not None else "", _target_at(self.tree, line))
        self.fusions.append(rec)
        return rec

    def find(self, fd: FusionDefinition) -> RecordedFusion | None:
        return next((r for r in self.fusions if r.fd is fd), None)

    def defined(self, fd: FusionDefinition) -> None:
        rec = self.find(fd)
        if rec is not None and not rec.defined_in:
            f = self.script_frame()
            if f is not None:
                rec.defined_in = f.f_code.co_name

    def execute(self, fd: FusionDefinition, inputs: Any) -> list[Any]:
        rec = self.find(fd)
        f = self.script_frame()
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        try:
            if isinstance(fd, ScriptFusionDefinition):
                fd.run_schedules()
            for i, x in enumerate(inputs):
                if isinstance(x, torch.Tensor) and x.ndim > 0 and not self.devices.is_device(x):
                    raise RuntimeError(f"fd.execute: input {i} is a CPU tensor of shape {list(x.shape)}: nvFuser "
                                       "takes CPU tensors only as 0-dim scalars (make it on 'cuda' or call .cuda())")
            # a benchmark loop on the same, unchanged inputs runs the reference once (_version: in-place writes)
            key = (id(fd), *((id(x), getattr(x, "_version", 0)) for x in inputs))
            if key not in self._outputs:
                self._outputs[key] = (inputs, self.devices.mark(self._reference(fd, inputs)))
        except Exception as e:
            if rec is not None and not rec.refused:
                rec.refused = f"{self.path}:{f.f_lineno if f is not None else 0}: {error_summary(e)}"
            raise
        if rec is not None and rec.inputs is None:
            rec.inputs = inputs
            rec.execute_line = f.f_lineno if f is not None else 0
            rec.execute_at_module = f is not None and f.f_code.co_name == "<module>"
        self.executed = True
        return list(self._outputs[key][1])

    @staticmethod
    def _reference(fd: FusionDefinition, inputs: list[Any]) -> list[Any]:
        """The outputs the script's code gets from execute: the reference's, on meta (shapes only) beyond
        ``EXECUTE_BYTES``. Where the reference cannot compute them (an op torch refuses on these values, or on
        meta), placeholders: the fusion and its inputs are what loading keeps, and running it later says why."""
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if any(x.device.type != "cpu" for x in tensors) \
                or sum(x.untyped_storage().nbytes() for x in tensors) > EXECUTE_BYTES:
            inputs = [torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
                      if isinstance(x, torch.Tensor) else x for x in inputs]
        try:
            return run_reference(fd, inputs)
        except InputMismatchError:
            raise
        except Exception:
            return [Ignored() for _ in fd.fusion.outputs]


def _target_at(tree: ast.Module, line: int) -> str:
    """The name a FusionDefinition made on ``line`` is bound to (``with ... as NAME`` or ``NAME = ...``)."""
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) != line:
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name):
                    return item.optional_vars.id
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return ""


class ScriptFusionDefinition(FusionDefinition):
    """The stub's FusionDefinition: records like segkit's and tells the run about itself. Accepts the
    legacy constructor arguments (``id``, ``max_length``, a pytorch-fork ``Fusion`` holder) and methods."""

    run: ClassVar[ScriptRun]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.run.record(self)
        holder = args[0] if args else kwargs.get("fusion")
        if isinstance(holder, LegacyFusion):
            holder.fd = self

    @property
    def fusion(self):
        self.run.defined(self)
        return super().fusion

    def from_pytorch(self, tensor: torch.Tensor, static_sizes: bool = False) -> Value:
        """As nvFuser: a CPU tensor of rank > 0 is refused, a 0-dim one is a CPU scalar input."""
        if isinstance(tensor, torch.Tensor) and not self.run.devices.is_device(tensor):
            if tensor.ndim:
                raise ValueError("CPU non-scalar tensor is not supported!")  # nvFuser's words
            return self.define_tensor(sizes=[], strides=[], dtype=from_torch(tensor.dtype), is_cpu=True)
        if isinstance(tensor, torch.Tensor):  # a device tensor: its layout, without the CPU it lives on here
            tensor = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device="meta")
        return super().from_pytorch(tensor, static_sizes)

    def execute(self, inputs: Any, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        return self.run.execute(self, inputs)  # an empty fusion gives no outputs (nvFuser refuses it; segkit loads it)

    # -- a subclass's schedule(): run as nvFuser runs it, after the definition, its scheduling calls ignored
    _scheduling: str = ""  # the schedule method running: the definition is complete
    _scheduled: bool = False

    @property
    def sched(self) -> Ignored:
        return Ignored()

    def run_schedules(self) -> None:
        """Call ``multidevice_schedule()`` / ``schedule()`` once, as nvFuser's execute does, so that one defining
        an op fails as it does there; their scheduling calls change no value, and errors from nvFuser's
        scheduling API, which segkit does not model, are not the fusion's."""
        if self._scheduled:
            return
        self._scheduled = True
        self.fusion  # the definition first
        for name in ("multidevice_schedule", "schedule"):
            method = getattr(self, name, None)
            if not callable(method):
                continue
            self._scheduling = name
            try:
                method()
            except CompletedDefinitionError:
                raise
            except Exception:
                pass
            finally:
                self._scheduling = ""

    def _completed(self) -> None:
        if self._scheduling:
            raise CompletedDefinitionError(f"{self._scheduling}() defines an op: Attempting to add to a completed "
                                           "definition!")  # nvFuser's words, after which method did it

    def _record(self, opdef, args, kwargs):
        self._completed()
        return super()._record(opdef, args, kwargs)

    def define_tensor(self, *args: Any, **kwargs: Any) -> Value:
        self._completed()
        return super().define_tensor(*args, **kwargs)

    def define_scalar(self, *args: Any, **kwargs: Any) -> Value:
        self._completed()
        return super().define_scalar(*args, **kwargs)

    define_constant = define_scalar

    def add_output(self, *args: Any, **kwargs: Any) -> None:
        self._completed()
        return super().add_output(*args, **kwargs)

    # what the legacy frontend offers besides definitions: answered without a GPU
    def last_repro_script(self) -> str:
        rec = self.run.find(self)
        return emit_repro(self, rec.inputs if rec is not None and rec.inputs is not None else None)

    def fusion_ir(self) -> str:
        return repr(self)

    def last_cuda_code(self, *args: Any, **kwargs: Any) -> str:
        return ""

    cuda_code_for = last_scheduled_fusion_ir = scheduled_fusion_ir_for = last_cuda_code

    def id(self) -> int:
        rec = self.run.find(self)
        return self.run.fusions.index(rec) if rec is not None else 0

    def debug_output(self) -> None:
        return None

    def validate_with_auto_inferred_outputs(self, outputs: Any, inputs: Any, *args: Any, **kwargs: Any) -> None:
        """nvFuser checks its outputs against torch's run of the definition: segkit's outputs are that run."""
        return None


class CompletedDefinitionError(RuntimeError):
    """An op defined in ``schedule()``, after the definition is complete (nvFuser refuses it the same way)."""


@contextlib.contextmanager
def script_process(path: str) -> Iterator[None]:
    """``sys.argv`` as the script would see it; its printing (results, timings) kept out of segkit's output."""
    argv = sys.argv
    sys.argv = [path]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        sys.argv = argv


def new_run(path: str, tree: ast.Module) -> tuple[ScriptRun, type]:
    """A run of the script at ``path`` and the FusionDefinition class its stubs hand out."""
    run = ScriptRun(path, tree)
    return run, type("FusionDefinition", (ScriptFusionDefinition,), {"run": run, "__module__": "nvfuser"})


class TestHarness:
    """What nvFuser's test functions get as ``self`` (``NVFuserTest``) or as the ``nvfuser_direct_test``
    fixture: ``exec_nvfuser`` builds the fusion in a ``with`` block and executes it, as nvFuser's does; the
    assertions are unittest's, with tensors compared by ``torch.testing.assert_close``."""

    # nvFuser's test_repro.py draws make_tensor inputs in this range ("smaller range ... for validate")
    LOW_VAL: ClassVar[int] = -2
    HIGH_VAL: ClassVar[int] = 2

    def __init__(self, fd_class: type) -> None:
        self.fd_class = fd_class
        self.checks = unittest.TestCase()

    def exec_nvfuser(self, fusion_func: Callable[[Any], None], inputs: list[Any], *args: Any, **kwargs: Any):
        with self.fd_class() as fd:
            fusion_func(fd)
        return fd.execute(inputs), fd

    def assertEqual(self, a: Any, b: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            torch.testing.assert_close(a, b, equal_nan=True, check_dtype=False)
        else:
            self.checks.assertEqual(a, b)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("assert"):
            return getattr(self.checks, name)
        raise AttributeError(f"segkit's stand-in for nvFuser's test class has no {name!r} (it offers exec_nvfuser "
                             "and the assert methods)")


def test_calls(tree: ast.Module, namespace: dict[str, Any], harness: TestHarness) -> list[Callable[[], Any]]:
    """Top-level ``test*`` functions, in source order, ready to call: a first parameter that is not
    parametrized (``self``, a fixture such as ``nvfuser_direct_test``) gets ``harness``; parametrized ones
    their first value (``@pytest.mark.parametrize``); functions needing anything else are left out."""
    calls = []
    for node in tree.body:
        fn = namespace.get(node.name) if isinstance(node, ast.FunctionDef) and node.name.startswith("test") else None
        if not callable(fn):
            continue
        params = {}
        for mark in getattr(fn, "pytestmark", []):
            if getattr(mark, "name", "") == "parametrize" and len(mark.args) >= 2 and len(mark.args[1]):
                names = [s.strip() for s in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
                first = mark.args[1][0]
                first = getattr(first, "values", first)  # pytest.param(...)
                params.update(zip(names, first if len(names) > 1 else [first]))
        required = [a.arg for a in node.args.args[:len(node.args.args) - len(node.args.defaults)]]
        if required and required[0] not in params:
            params[required[0]] = harness
        if all(a in params for a in required):
            calls.append(functools.partial(fn, **{a: params[a] for a in required}))
    return calls


def fusion_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Top-level functions taking one required argument, ``fd`` (or one annotated FusionDefinition), that no
    other such function calls (those are helpers of the fusion, not fusions)."""
    def takes_fd(node: ast.FunctionDef) -> bool:
        args = node.args.args
        if not args or len(args) - len(node.args.defaults) != 1:
            return False
        ann = ast.unparse(args[0].annotation) if args[0].annotation is not None else ""
        return args[0].arg == "fd" or ann.endswith("FusionDefinition")

    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and takes_fd(n)]
    called = {c.func.id for n in found for c in ast.walk(n)
              if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id != n.name}
    return [n for n in found if n.name not in called]


def name_fusions(fusions: list[RecordedFusion], tree: ast.Module) -> None:
    """Give each fusion a unique name: the top-level function that defines it, the FusionDefinition subclass,
    the function that builds it, or the variable it is bound to; then ``NAME@LINE`` where two share one, then
    ``#k``."""
    top_level = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bases = [r.base_name(top_level) for r in fusions]
    for r, base in zip(fusions, bases):
        r.name = base if bases.count(base) == 1 else f"{base}@{r.created_line}"
    names = [r.name for r in fusions]
    for i, r in enumerate(fusions):
        if names.count(names[i]) > 1:
            r.name = f"{names[i]}#{names[:i + 1].count(names[i])}"


