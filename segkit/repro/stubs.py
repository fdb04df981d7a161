"""What a repro script gets for ``import nvfuser`` (and ``nvfuser_direct``, the pytorch fork's
``torch._C._nvfuser``) while segkit loads it: the names its scripts use from every era of the package, with
``FusionDefinition`` the recording one, and the standard names a pasted script uses without importing them."""

from __future__ import annotations

import ast
import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any, ClassVar

import torch

from segkit.dtypes import DataType, from_torch
from segkit.frontend import FusionDefinition
from segkit.ir import Value
from segkit.layout import compute_tensor_descriptor

#: What ``nvfuser.version()`` answers in a loaded script.
STUB_VERSION = "0.2.99+segkit"


class Ignored:
    """``fd.sched`` and the like: every attribute and call accepted and ignored (an empty iterable)."""

    def __getattr__(self, name: str) -> Ignored:
        if name.startswith("__"):
            raise AttributeError(name)
        return Ignored()

    def __call__(self, *args: Any, **kwargs: Any) -> Ignored:
        return Ignored()

    def __iter__(self):
        return iter(())


class LegacyFusion:
    """``torch._C._nvfuser.Fusion``: the pytorch fork's holder of a definition (``fs = Fusion(); with
    FusionDefinition(fs) as fd: ...; fs.execute(inputs)``)."""

    def __init__(self) -> None:
        self.fd: FusionDefinition | None = None

    def execute(self, inputs: Any, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        if self.fd is None:
            raise RuntimeError("this Fusion holds no definition (define it with `with FusionDefinition(fs) as fd:`)")
        return self.fd.execute(inputs)

    def __repr__(self) -> str:
        return repr(self.fd) if self.fd is not None else "Fusion()"

    def print_ir(self) -> None:
        print(repr(self))

    print_kernel = print_ir


class _AnyName(type):
    """An enum-like namespace of the legacy package (ParallelType, SchedulerType, ...) that a script only
    names, in schedules segkit does not run: every member exists."""

    def __getattr__(cls, name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return f"{cls.__name__}.{name}"


class _FusionCache:
    """``FusionCache.get()`` / ``.reset()`` / ``.num_fusions()``: the loader keeps no cache."""

    run: ClassVar[Any] = None  # the ScriptRun: its fusions are the cache

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


def stub_module(name: str, fd_class: type = FusionDefinition, run: Any = None) -> types.ModuleType:
    """The module a script gets for ``import nvfuser`` (and ``nvfuser_direct``, ``torch._C._nvfuser``): the
    names its scripts use from every era of the package."""
    mod = types.ModuleType(name)
    cache = type("FusionCache", (_FusionCache,), {"run": run})
    mod.__dict__.update(
        FusionDefinition=fd_class, DataType=DataType, Fusion=LegacyFusion, FusionCache=cache,
        Tensor=Value, Scalar=Value, Vector=list, ParallelType=_names("ParallelType"),
        SchedulerType=_names("SchedulerType"), MemoryType=_names("MemoryType"), DeviceMesh=Ignored,
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
def stubbed(fd_class: type = FusionDefinition, run: Any = None) -> Iterator[None]:
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


def pasted_names(tree: ast.Module, fd_class: type) -> dict[str, Any]:
    """The standard names a pasted script uses but never imports or binds (threads often leave the import
    lines out): ``torch``, ``FusionDefinition``, ``DataType``, ``Fusion`` and ``make_tensor``."""
    standard = {"torch": torch, "FusionDefinition": fd_class, "DataType": DataType, "Fusion": LegacyFusion,
                "make_tensor": torch.testing.make_tensor}
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return {n: v for n, v in standard.items() if n in used and n not in bound}
