"""Run a repro script the way Python would, against segkit's recording frontend, with nothing touching CUDA.

The whole module runs (constants, helpers, ``with FusionDefinition() as fd:`` blocks, FusionDefinition
subclasses, ``if __name__ == "__main__":``), with:

* ``nvfuser``, ``nvfuser_direct`` and the pytorch fork's ``torch._C._nvfuser`` importing as stubs whose
  ``FusionDefinition`` records into segkit's IR and registers every definition the script makes, in order;
* tensors the script makes for a CUDA device made on the CPU instead (real values: an index tensor stays in
  range), or on the meta device when one is beyond ``REAL_TENSOR_BYTES`` (its layout kept, nothing allocated);
  ``torch.cuda``'s device queries answer as for one device and its synchronization calls do nothing;
* ``fd.execute(inputs)`` recording its inputs and answering with the reference interpreter's outputs, so the
  code after it runs as it would on a GPU; the torch random state forked (loading leaves the caller's alone).

When the module itself defines no fusion, its top-level ``test*()`` functions run, then (the oldest script
style: a fusion function and an ``inputs`` list) each fusion function ``def f(fd)`` no other one calls.
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch.overrides import TorchFunctionMode

from segkit.dtypes import DataType, from_torch
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.ir import Value
from segkit.layout import compute_tensor_descriptor

#: A tensor the script makes for a CUDA device beyond this many bytes is made on the meta device.
REAL_TENSOR_BYTES = 256 * 2**20
#: What ``nvfuser.version()`` answers in a loaded script.
STUB_VERSION = "0.2.99+segkit"


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

    def base_name(self) -> str:
        if type(self.fd).__name__ != "FusionDefinition":  # a subclass with definition(self)
            return type(self.fd).__name__
        if self.defined_in and self.defined_in not in ("<module>", self.created_in):
            return self.defined_in
        if self.created_in and self.created_in != "<module>":
            return self.created_in
        return self.variable or "fusion"


@dataclass
class ScriptRun:
    """The state of one script run: its file, the fusions it built and the outputs already computed."""

    path: str
    tree: ast.Module
    fusions: list[RecordedFusion] = field(default_factory=list)
    executed: bool = False  # some fusion ran: code after that point only looks at its results
    _outputs: dict[tuple[int, ...], tuple[list[Any], list[Any]]] = field(default_factory=dict)

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
        if rec is not None and rec.inputs is None:
            f = self.script_frame()
            rec.inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            rec.execute_line = f.f_lineno if f is not None else 0
            rec.execute_at_module = f is not None and f.f_code.co_name == "<module>"
        key = (id(fd), *(id(x) for x in inputs))  # a benchmark loop on the same inputs runs the reference once
        if key not in self._outputs:
            self._outputs[key] = (list(inputs), run_reference(fd, inputs))
        self.executed = True
        return list(self._outputs[key][1])


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

    def execute(self, inputs: Any, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        return self.run.execute(self, inputs)  # an empty fusion gives no outputs (nvFuser refuses it; segkit loads it)

    # what the legacy frontend offers besides definitions: answered without a GPU
    def last_repro_script(self) -> str:
        from segkit.printing import emit_repro

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


class LegacyFusion:
    """``torch._C._nvfuser.Fusion``: the pytorch fork's holder of a definition (``fs = Fusion(); with
    FusionDefinition(fs) as fd: ...; fs.execute(inputs)``)."""

    def __init__(self) -> None:
        self.fd: ScriptFusionDefinition | None = None

    def execute(self, inputs: Any, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        if self.fd is None:
            raise RuntimeError("this Fusion holds no definition (define it with `with FusionDefinition(fs) as fd:`)")
        return self.fd.execute(inputs)

    def __repr__(self) -> str:
        return repr(self.fd) if self.fd is not None else "Fusion()"


class _AnyName(type):
    """An enum-like namespace of the legacy package (ParallelType, SchedulerType, ...) that a script only
    names, in schedules segkit does not run: every member exists."""

    def __getattr__(cls, name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return f"{cls.__name__}.{name}"


class _FusionCache:
    """``FusionCache.get()`` / ``.reset()`` / ``.num_fusions()``: the loader keeps no cache."""

    run: ClassVar[ScriptRun | None] = None

    @classmethod
    def get(cls, *args: Any, **kwargs: Any) -> _FusionCache:
        return cls()

    @classmethod
    def reset(cls, *args: Any, **kwargs: Any) -> None:
        return None

    def num_fusions(self) -> int:
        return len(self.run.fusions) if self.run is not None else 0


def _compute_contiguity(sizes, strides) -> list[bool | None]:
    return compute_tensor_descriptor(list(sizes), list(strides))[0]


def _names(name: str) -> type:
    return _AnyName(name, (), {})


def stub_module(name: str, fd_class: type = FusionDefinition, run: ScriptRun | None = None) -> types.ModuleType:
    """The module a script gets for ``import nvfuser`` (and ``nvfuser_direct``, ``torch._C._nvfuser``): the
    names its scripts use from every era of the package."""
    mod = types.ModuleType(name)
    cache = type("FusionCache", (_FusionCache,), {"run": run})
    mod.__dict__.update(
        FusionDefinition=fd_class, DataType=DataType, Fusion=LegacyFusion, FusionCache=cache,
        Tensor=Value, Scalar=Value, Vector=list, ParallelType=_names("ParallelType"),
        SchedulerType=_names("SchedulerType"), MemoryType=_names("MemoryType"),
        LoadStoreOpType=_names("LoadStoreOpType"), CommunicatorBackend=_names("CommunicatorBackend"),
        compute_contiguity=_compute_contiguity, compute_tensor_descriptor=compute_tensor_descriptor,
        version=lambda: STUB_VERSION, __version__=STUB_VERSION,
        enable_automatic_serialization=lambda: None, disable_automatic_serialization=lambda: None,
    )
    utils = types.ModuleType(f"{name}.pytorch_utils")
    utils.torch_dtype_to_nvfuser_dtype = from_torch
    mod.pytorch_utils = utils
    return mod


_STUBBED = ("nvfuser", "nvfuser_direct", "torch._C._nvfuser")


@contextlib.contextmanager
def stubbed(fd_class: type = FusionDefinition, run: ScriptRun | None = None) -> Iterator[None]:
    """``nvfuser``, ``nvfuser_direct`` and ``torch._C._nvfuser`` import as stubs for the block; restored after."""
    saved = {n: sys.modules.get(n) for n in _STUBBED}
    saved.update({f"{n}.pytorch_utils": sys.modules.get(f"{n}.pytorch_utils") for n in _STUBBED})
    had_attr = hasattr(torch._C, "_nvfuser")
    try:
        for n in _STUBBED:
            sys.modules[n] = stub_module(n, fd_class, run)
            sys.modules[f"{n}.pytorch_utils"] = sys.modules[n].pytorch_utils
        if not had_attr:
            torch._C._nvfuser = sys.modules["torch._C._nvfuser"]
        yield
    finally:
        if not had_attr and hasattr(torch._C, "_nvfuser"):
            del torch._C._nvfuser
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _is_cuda(device: Any) -> bool:
    if isinstance(device, int) and not isinstance(device, bool):
        return True  # torch reads a bare int as a CUDA ordinal
    return isinstance(device, (str, torch.device)) and str(device).startswith("cuda")


class _CpuForCuda(TorchFunctionMode):
    """Tensors asked of a CUDA device are made on the CPU (or on meta, beyond ``REAL_TENSOR_BYTES``);
    ``.cuda()`` and ``.to('cuda')`` leave a tensor where it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("cuda", "pin_memory"):
            return args[0]
        if name == "to":
            args = tuple(a for a in args if not _is_cuda(a))
            if _is_cuda(kwargs.get("device")):
                del kwargs["device"]
            return func(*args, **kwargs)
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = "meta"
            try:
                made = func(*args, **kwargs)
            except Exception:  # torch's CPU error for bad arguments says more than the meta one
                made = None
            if not isinstance(made, torch.Tensor) or made.untyped_storage().nbytes() <= REAL_TENSOR_BYTES:
                kwargs["device"] = "cpu"
                made = func(*args, **kwargs)
            return made
        return func(*args, **kwargs)


class _Event:
    """``torch.cuda.Event``: timing a loaded script measures nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def record(self, *args: Any) -> None:
        return None

    synchronize = wait = record

    def elapsed_time(self, other: Any) -> float:
        return 0.0


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


_CUDA_ANSWERS: dict[str, Callable[..., Any]] = {
    "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
    "get_device_name": lambda *a: "segkit reference (cpu)", "get_device_capability": lambda *a: (9, 0),
    "synchronize": _nothing, "empty_cache": _nothing, "set_device": _nothing, "manual_seed": _nothing,
    "manual_seed_all": _nothing, "reset_peak_memory_stats": _nothing, "max_memory_allocated": lambda *a: 0,
    "memory_allocated": lambda *a: 0, "Event": _Event,
}


@contextlib.contextmanager
def no_cuda() -> Iterator[None]:
    """The block's CUDA requests served on the CPU; torch.cuda and the torch random state restored after."""
    saved = {n: getattr(torch.cuda, n) for n in _CUDA_ANSWERS}
    try:
        for n, answer in _CUDA_ANSWERS.items():
            setattr(torch.cuda, n, answer)
        with torch.random.fork_rng(devices=[]), _CpuForCuda():
            torch.manual_seed(0)
            yield
    finally:
        for n, f in saved.items():
            setattr(torch.cuda, n, f)


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


def test_functions(tree: ast.Module) -> list[str]:
    """Top-level ``test*`` functions that take no required argument (pytest style), in source order."""
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
            and len(n.args.args) == len(n.args.defaults) and not n.args.kwonlyargs]


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


def name_fusions(fusions: list[RecordedFusion]) -> None:
    """Give each fusion a unique name: its own, then ``NAME@LINE`` where two share one, then ``#k``."""
    bases = [r.base_name() for r in fusions]
    for r, base in zip(fusions, bases):
        r.name = base if bases.count(base) == 1 else f"{base}@{r.created_line}"
    names = [r.name for r in fusions]
    for i, r in enumerate(fusions):
        if names.count(names[i]) > 1:
            r.name = f"{names[i]}#{names[:i + 1].count(names[i])}"
