"""Repro scripts: load them without a GPU (printing a fusion back as a script is segkit.printing).

A repro script (nvFuser's ``fd.last_repro_script()``, Thunder's
``nv_save_fake_inputs``, or a hand-written one in the legacy ``nvfuser``
spelling) is a fusion function, a ``with FusionDefinition() as fd:`` block and
an ``inputs = [...]`` list. ``load_repro`` runs the fusion function against the
recording frontend and reads the inputs list from the syntax tree, so nothing
touches CUDA; ``Repro.make_inputs`` rebuilds those tensors on any device.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import math
import os
import signal
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.errors import FusionDefinitionError, InputMismatchError, ReproError, ResourceLimitError, UnsupportedOpError
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion, check_allocation, check_inputs


@dataclass
class InputRecipe:
    """One entry of a script's ``inputs`` list, rebuilt on demand."""

    kind: str  # "randn_strided" | "make_tensor" | "scalar" | "factory"
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] | None = None
    dtype: torch.dtype = torch.float32
    storage: int = 0
    value: Any = None
    factory: str = ""

    def make(self, device: str, gen: torch.Generator) -> Any:
        if self.kind == "scalar":
            return self.value
        check_allocation(self.storage if self.kind == "randn_strided" else math.prod(self.shape), self.dtype,
                         f"input of shape {list(self.shape)}", device)
        if self.kind == "factory":
            if self.factory in ("zeros", "ones"):
                return getattr(torch, self.factory)(self.shape, dtype=self.dtype, device=device)
            if self.factory == "full":
                return torch.full(self.shape, self.value, dtype=self.dtype, device=device)
        n = self.storage if self.kind == "randn_strided" else math.prod(self.shape)
        if self.dtype.is_floating_point:
            base = torch.randn(n, generator=gen, dtype=torch.float32).to(self.dtype)
        elif self.dtype == torch.bool:
            base = torch.randint(0, 2, (n,), generator=gen).bool()
        else:
            base = torch.randint(-8, 9, (n,), generator=gen).to(self.dtype)
        base = base.to(device)
        if self.kind == "randn_strided":
            return base.as_strided(self.shape, self.strides)
        return base.reshape(self.shape)


@dataclass
class Repro:
    """A loaded repro script: the recorded fusion and how to rebuild its inputs."""

    fd: FusionDefinition
    recipes: list[InputRecipe] = field(default_factory=list)
    source: str = ""
    path: str = "<string>"

    @property
    def fusion(self) -> FusionDefinition:
        return self.fd

    def make_inputs(self, device: str = "cpu", seed: int = 0) -> list[Any]:
        """The script's inputs (same shapes, strides, dtypes) on ``device``; random values."""
        wanted = as_fusion(self.fd).inputs
        if wanted and not self.recipes:
            raise ReproError(f"{self.path}: found no inputs for the fusion's {len(wanted)} input(s) "
                             f"({', '.join(v.describe() for v in wanted)}): segkit reads a module-level "
                             "`inputs = [...]` or the list passed to `fd.execute(...)`")
        gen = torch.Generator().manual_seed(seed)
        return [r.make(device, gen) for r in self.recipes]


def _module_stub(name: str):
    import types

    mod = types.ModuleType(name)
    mod.FusionDefinition = FusionDefinition
    mod.DataType = DataType
    return mod


class _Stubbed:
    """Make ``nvfuser``/``nvfuser_direct`` imports inside the script resolve to segkit's frontend."""

    _NAMES = ("nvfuser", "nvfuser_direct")

    def __enter__(self):
        import sys

        self.saved = {n: sys.modules.get(n) for n in self._NAMES}
        for n in self._NAMES:
            sys.modules[n] = _module_stub(n)

    def __exit__(self, *exc):
        import sys

        for n, m in self.saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _fusion_function(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.args.args:
            first = node.args.args[0]
            ann = ast.unparse(first.annotation) if first.annotation is not None else ""
            if first.arg == "fd" or ann.endswith("FusionDefinition"):
                return node
    return None


_DTYPE_NAMES = {name: getattr(torch, name) for name in dir(torch) if isinstance(getattr(torch, name, None), torch.dtype)}


class _InputParser:
    """Reads the script's input entries from the syntax tree, never running them. ``names``: the script's
    module-level ``name = expression`` bindings, so an entry or a size may be a name (``x = torch.randn(n, 4)``
    with ``n = 2 * 64``, then ``fd.execute([x])``)."""

    def __init__(self, path: str, names: dict[str, ast.AST] | None = None) -> None:
        self.path = path
        self.names = names or {}

    def bound(self, node: ast.AST) -> ast.AST:
        """``node``, or what a module-level name in it is bound to (followed through name = name chains)."""
        seen: set[str] = set()
        while isinstance(node, ast.Name) and node.id in self.names and node.id not in seen:
            seen.add(node.id)
            node = self.names[node.id]
        return node

    def fail(self, node: ast.AST, why: str) -> ReproError:
        return ReproError(f"{self.path}:{node.lineno}: {why}: {ast.unparse(node)[:120]}")

    def number(self, node: ast.AST) -> Any:
        """A number written as a literal, ``float('nan')``, ``-float('inf')``, ``complex(a, b)``, ``1+2j``, a
        product (``9 * 16``) or a module-level name bound to one."""
        node = self.bound(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, complex)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            x = self.number(node.operand)
            return -x if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.number(node.left), self.number(node.right)
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("float", "complex", "int"):
            args = [ast.literal_eval(a) if isinstance(a, ast.Constant) and isinstance(a.value, str) else self.number(a)
                    for a in node.args]
            return {"float": float, "complex": complex, "int": int}[node.func.id](*args)
        raise self.fail(node, "not a number")

    def literal(self, node: ast.AST) -> Any:
        node = self.bound(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
            if node.attr in _DTYPE_NAMES:
                return _DTYPE_NAMES[node.attr]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.literal(e) for e in node.elts]
        try:
            return ast.literal_eval(node)
        except ValueError:
            pass
        try:
            return self.number(node)
        except ReproError:
            raise self.fail(node, "only literals are understood here") from None

    def kwargs(self, call: ast.Call) -> dict[str, Any]:
        return {k.arg: self.literal(k.value) for k in call.keywords if k.arg is not None}

    def checked(self, node: ast.AST) -> InputRecipe:
        """``parse``, with any malformed entry (wrong arity, a shape that is not a list of ints) a ReproError."""
        try:
            recipe = self.parse(node)
            shape = tuple(recipe.shape)
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
                raise self.fail(node, f"a shape must be a list of sizes >= 0, got {list(shape)}")
            if recipe.kind == "randn_strided" and (len(recipe.strides) != len(shape)
                                                   or not all(isinstance(d, int) for d in recipe.strides)):
                raise self.fail(node, "as_strided needs one integer stride per dimension")
            if not isinstance(recipe.dtype, torch.dtype):
                raise self.fail(node, f"dtype must be a torch dtype, got {recipe.dtype!r}")
            return recipe
        except ReproError:
            raise
        except Exception as e:
            raise self.fail(node, f"cannot read this input ({type(e).__name__}: {e})") from None

    def parse(self, node: ast.AST) -> InputRecipe:
        node = self.bound(node)
        if not isinstance(node, ast.Call) or (isinstance(node.func, ast.Name) and node.func.id in ("float", "complex", "int")):
            try:
                return InputRecipe("scalar", value=self.number(node))
            except ReproError:
                pass
        if not isinstance(node, ast.Call):
            raise self.fail(node, "an input must be a tensor expression or a number")
        fn = ast.unparse(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "as_strided":
            base = node.func.value
            bases = ("torch.randn", "torch.empty", "torch.rand", "torch.testing.make_tensor")
            if not (isinstance(base, ast.Call) and ast.unparse(base.func) in bases):
                raise self.fail(node, "as_strided must be applied to torch.randn(N, ...) or make_tensor((N,), ...)")
            kw = self.kwargs(base)
            size = self.literal(base.args[0]) if base.args else None
            storage = size[0] if isinstance(size, list) else size
            if not isinstance(storage, int):
                raise self.fail(node, "the base tensor's size must be a number")
            shape, strides = (self.literal(a) for a in node.args[:2])
            return InputRecipe("randn_strided", tuple(shape), tuple(strides), kw.get("dtype", torch.float32), int(storage))
        if fn in ("torch.testing.make_tensor", "torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.full"):
            kw = self.kwargs(node)
            args = [self.literal(a) for a in node.args]
            if fn == "torch.full":
                shape, value = (args + [kw.get("size"), kw.get("fill_value")])[:2]
                return InputRecipe("factory", tuple(shape), dtype=kw.get("dtype", torch.float32), value=value, factory="full")
            shape = args[0] if args and isinstance(args[0], list) else args if args else kw.get("size")
            if shape is None:
                raise self.fail(node, "no shape given")
            shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
            if fn in ("torch.zeros", "torch.ones"):
                return InputRecipe("factory", shape, dtype=kw.get("dtype", torch.float32), factory=fn.split(".")[-1])
            return InputRecipe("make_tensor", shape, dtype=kw.get("dtype", torch.float32))
        if fn == "torch.tensor":
            kw = self.kwargs(node)
            return InputRecipe("factory", (), dtype=kw.get("dtype", torch.float32), value=self.literal(node.args[0]), factory="full")
        raise self.fail(node, f"unsupported input expression {fn}(...)")


def _module_names(tree: ast.Module) -> dict[str, ast.AST]:
    """The script's module-level ``name = expression`` bindings (the last one of each name)."""
    return {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


def _inputs_node(tree: ast.Module, bound: Callable[[ast.AST], ast.AST]) -> ast.List | ast.Tuple | None:
    """The script's inputs: a module-level ``inputs = [...]``, else the list given to a module-level
    ``fd.execute(...)`` (directly or through a name, resolved by ``bound``), as nvFuser's own repro scripts and
    issue reports write."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "inputs" for t in stmt.targets) \
                and isinstance(stmt.value, (ast.List, ast.Tuple)):
            return stmt.value
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "execute" \
                    and node.args:
                arg = bound(node.args[0])
                if isinstance(arg, (ast.List, ast.Tuple)):
                    return arg
    return None


_BINARY_MAGIC = {b"SQLite format 3\x00": "an SQLite database (an nsys report? read it with `segkit trace show`)",
                 b"\x1f\x8b": "gzip-compressed (a torch.profiler trace? read it with `segkit trace show`)",
                 b"\x7fELF": "an executable"}


def read_script(path: str | Path) -> str:
    """A script file's text; a missing file, a directory, a trace or binary file, or text that is not
    UTF-8 is a ReproError saying which."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise ReproError(f"{path} is a directory, not a repro script") from None
    except OSError as e:
        raise ReproError(f"{path}: cannot read: {e.strerror or e}") from None
    for magic, what in _BINARY_MAGIC.items():
        if data.startswith(magic):
            raise ReproError(f"{path} is {what}, not a repro script (Python source)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReproError(f"{path} is not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}): "
                         "not a repro script (Python source)") from None
    if "\x00" in text:
        raise ReproError(f"{path} holds NUL bytes: a binary file, not a repro script (Python source)")
    return text


def _script_time_limit() -> float:
    value = os.environ.get(SCRIPT_TIMEOUT_ENV, "")
    try:
        return float(value) if value else DEFAULT_SCRIPT_TIMEOUT
    except ValueError:
        raise ReproError(f"{SCRIPT_TIMEOUT_ENV}={value!r} is not a number of seconds") from None


class _Expired(BaseException):
    """The script's time limit ran out (turned into a ResourceLimitError by ``_time_limit``)."""


@contextlib.contextmanager
def _time_limit(seconds: float, what: str):
    """Interrupt the block after ``seconds`` (SIGALRM; only on the main thread of a POSIX process)."""
    usable = (seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the process's own timer is left alone
              and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None))
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise _Expired  # a BaseException: no `except Exception` in the script or the frontend swallows it

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Expired:
        raise ResourceLimitError(f"{what} ran longer than {seconds:g} s; stopped (an endless loop? raise the "
                                 f"limit with {SCRIPT_TIMEOUT_ENV}=SECONDS or load_repro(..., timeout=SECONDS))") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: Seconds a script's fusion function may run (environment variable, or ``load_repro(timeout=)``).
SCRIPT_TIMEOUT_ENV = "SEGKIT_SCRIPT_TIMEOUT"
DEFAULT_SCRIPT_TIMEOUT = 60.0


def load_repro(path_or_source: str | Path, timeout: float | None = None) -> Repro:
    """Record a repro script's fusion (no GPU, no CUDA calls) and read its inputs.

    ``path_or_source``: a path (a Path, or a one-line string; any file name), or the script's text.
    The script's imports and its fusion function run (it is Python code: load only scripts you trust),
    for at most ``timeout`` seconds (default: $SEGKIT_SCRIPT_TIMEOUT, else 60).
    """
    text = str(path_or_source)
    if isinstance(path_or_source, Path) or "\n" not in text:
        path = text
        source = read_script(path)
    else:
        path, source = "<repro>", text
    try:
        with warnings.catch_warnings():  # the script's own style warnings are not segkit's to print
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise ReproError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, nesting too deep for the parser
        raise ReproError(f"{path}: cannot parse: {e}") from None
    func = _fusion_function(tree)
    if func is None:
        raise ReproError(f"{path}: no fusion function (a def whose first parameter is 'fd : FusionDefinition')")
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    module = ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))] + [func], type_ignores=[])
    namespace: dict[str, Any] = {"__name__": "segkit_repro"}
    fd = FusionDefinition()
    with _Stubbed():
        try:
            exec(compile(module, path, "exec"), namespace)
        except ImportError as e:
            raise ReproError(f"{path}: import failed: {e}") from None
        except (Exception, SystemExit) as e:
            raise ReproError(f"{path}: its imports failed: {type(e).__name__}: {e}") from None
        try:
            with _time_limit(_script_time_limit() if timeout is None else timeout, f"{path}: {func.name}(fd)"):
                namespace[func.name](fd)
        except (UnsupportedOpError, FusionDefinitionError, ResourceLimitError):
            raise
        except (Exception, SystemExit) as e:
            import traceback

            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
            line = frames[-1].lineno if frames else func.lineno
            raise ReproError(f"{path}:{line}: {type(e).__name__}: {e}") from None
    parser = _InputParser(path, _module_names(tree))
    node = _inputs_node(tree, parser.bound)
    recipes = [parser.checked(e) for e in node.elts] if node is not None else []
    repro = Repro(fd, recipes, source, path)
    if node is not None:
        _check_recipes(repro, node.lineno)
    return repro


def _check_recipes(repro: Repro, lineno: int) -> None:
    try:
        meta = [
            torch.empty_strided(r.shape, r.strides, dtype=r.dtype, device="meta") if r.kind == "randn_strided"
            else torch.empty(r.shape, dtype=r.dtype, device="meta") if r.kind != "scalar" else r.value
            for r in repro.recipes
        ]
        check_inputs(as_fusion(repro.fd), meta)
    except InputMismatchError as e:
        raise ReproError(f"{repro.path}:{lineno}: inputs do not match the definition: {e}") from None
    except (RuntimeError, ValueError, TypeError) as e:  # torch refusing a shape/stride combination
        raise ReproError(f"{repro.path}:{lineno}: an input cannot be built: {e}") from None

