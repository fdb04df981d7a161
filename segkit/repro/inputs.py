"""The inputs of a repro script: read from its syntax tree where they are written as literal expressions
(``torch.randn(N, ...).as_strided(...)``, ``make_tensor``, ``zeros``/``ones``/``full``, numbers), else taken from
the objects the script built when it ran, and rebuilt on demand on any device (``InputRecipe``)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from segkit.errors import InputMismatchError, ReproError
from segkit.interp import check_allocation, check_inputs
from segkit.ir import Fusion


@dataclass
class InputRecipe:
    """One entry of a script's ``inputs`` list, rebuilt on demand."""

    kind: str  # "randn_strided" | "make_tensor" | "scalar" | "factory" | "values" (the script's own tensor)
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] | None = None
    dtype: torch.dtype = torch.float32
    storage: int = 0
    value: Any = None
    factory: str = ""
    #: make_tensor's ``low`` / ``high`` (values drawn in [low, high)); None: the defaults below
    low: float | None = None
    high: float | None = None

    def make(self, device: str, gen: torch.Generator) -> Any:
        if self.kind == "scalar":
            return self.value
        if self.kind == "values":  # exact values and layout: value is the flat storage the strides index
            check_allocation(self.storage, self.dtype, f"input of shape {list(self.shape)}", device)
            return self.value.to(device).as_strided(self.shape, self.strides)
        check_allocation(self.storage if self.kind == "randn_strided" else math.prod(self.shape), self.dtype,
                         f"input of shape {list(self.shape)}", device)
        if self.kind == "factory":
            if self.factory in ("zeros", "ones"):
                return getattr(torch, self.factory)(self.shape, dtype=self.dtype, device=device)
            if self.factory == "full":
                return torch.full(self.shape, self.value, dtype=self.dtype, device=device)
        n = self.storage if self.kind == "randn_strided" else math.prod(self.shape)
        ranged = self.low is not None or self.high is not None
        low = self.low if self.low is not None else -9
        high = self.high if self.high is not None else 10
        if self.dtype.is_floating_point and ranged:
            base = (torch.rand(n, generator=gen, dtype=torch.float64) * (high - low) + low).to(self.dtype)
        elif self.dtype.is_floating_point:
            base = torch.randn(n, generator=gen, dtype=torch.float32).to(self.dtype)
        elif self.dtype == torch.bool:
            base = torch.randint(0, 2, (n,), generator=gen).bool()
        elif ranged:
            base = torch.randint(math.ceil(low), math.ceil(high), (n,), generator=gen).to(self.dtype)
        else:
            base = torch.randint(-8, 9, (n,), generator=gen).to(self.dtype)
        base = base.to(device)
        if self.kind == "randn_strided":
            return base.as_strided(self.shape, self.strides)
        return base.reshape(self.shape)


_DTYPE_NAMES = {name: getattr(torch, name) for name in dir(torch) if isinstance(getattr(torch, name, None), torch.dtype)}


class InputParser:
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
            size = [self.literal(a) for a in base.args] if base.args else []
            size = size[0] if len(size) == 1 and isinstance(size[0], list) else size
            if not size or not all(isinstance(d, int) and not isinstance(d, bool) for d in size):
                raise self.fail(node, "the base tensor's size must be a number or a list of numbers")
            storage = math.prod(size)  # torch.randn((216, 20480)) holds 216 * 20480 elements
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
            return InputRecipe("make_tensor", shape, dtype=kw.get("dtype", torch.float32), low=kw.get("low"),
                                high=kw.get("high"))
        if fn == "torch.tensor":
            kw = self.kwargs(node)
            return InputRecipe("factory", (), dtype=kw.get("dtype", torch.float32), value=self.literal(node.args[0]), factory="full")
        raise self.fail(node, f"unsupported input expression {fn}(...)")


def module_names(tree: ast.Module) -> dict[str, ast.AST]:
    """The script's module-level ``name = expression`` bindings (the last one of each name)."""
    return {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


def inputs_node(tree: ast.Module, bound: Callable[[ast.AST], ast.AST]) -> ast.List | ast.Tuple | None:
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




def _storage_span(t: torch.Tensor) -> int:
    """Elements of storage that ``t``'s sizes and strides reach (from its storage offset)."""
    return 0 if t.numel() == 0 else 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


def captured_recipe(x: Any, where: str) -> InputRecipe:
    """The recipe of an object the script passed as an input: its exact values and layout (a tensor the
    loader made on the CPU), random values of its layout (one too large, made on the meta device), or a
    number (or a list of numbers, for ``define_vector`` inputs)."""
    if isinstance(x, (bool, int, float, complex)) or (isinstance(x, (list, tuple))
                                                      and all(isinstance(e, (bool, int, float)) for e in x)):
        return InputRecipe("scalar", value=list(x) if isinstance(x, tuple) else x)
    if not isinstance(x, torch.Tensor):
        raise ReproError(f"{where}: an input is a {type(x).__name__}, not a tensor or a number")
    if type(x) is not torch.Tensor and not isinstance(x, torch.nn.Parameter):
        raise ReproError(f"{where}: an input is a {type(x).__name__} (a tensor subclass): give plain tensors")
    span = _storage_span(x)
    shape, strides = tuple(x.shape), tuple(x.stride())
    if x.device.type == "meta":
        return InputRecipe("randn_strided", shape, strides, x.dtype, span)
    flat = x.detach().as_strided((span,), (1,), x.storage_offset()).clone() if span else x.new_empty(0)
    return InputRecipe("values", shape, strides, x.dtype, span, value=flat.cpu())


def same_layout(recipe: InputRecipe, x: Any) -> bool:
    """Whether a recipe read from the syntax tree describes the object the script really passed (same kind,
    shape, strides and dtype): the tree is trusted only where the run agrees with it."""
    if recipe.kind == "scalar":
        return not isinstance(x, torch.Tensor) and type(x) is type(recipe.value)
    if not isinstance(x, torch.Tensor) or tuple(x.shape) != tuple(recipe.shape) or x.dtype != recipe.dtype:
        return False
    strides = recipe.strides if recipe.strides is not None else torch.empty(recipe.shape, device="meta").stride()
    return x.numel() == 0 or all(n == 1 or a == b for n, a, b in zip(x.shape, x.stride(), strides))


def check_recipes(fusion: Fusion, recipes: list[InputRecipe], where: str) -> None:
    """Refuse (ReproError at ``where``, the script's path and line) inputs that do not fit the fusion's inputs."""
    try:
        meta = [
            torch.empty_strided(r.shape, r.strides, dtype=r.dtype, device="meta")
            if r.kind in ("randn_strided", "values")
            else torch.empty(r.shape, dtype=r.dtype, device="meta") if r.kind != "scalar" else r.value
            for r in recipes
        ]
        check_inputs(fusion, [y for x in meta for y in (x if isinstance(x, (list, tuple)) else [x])])
    except InputMismatchError as e:
        raise ReproError(f"{where}: inputs do not match the definition: {e}") from None
    except (RuntimeError, ValueError, TypeError) as e:  # torch refusing a shape/stride combination
        raise ReproError(f"{where}: an input cannot be built: {e}") from None
