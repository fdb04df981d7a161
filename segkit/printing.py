"""Printing fusions: as runnable repro scripts (``emit_repro``, ``fusion_lines``) and as readable listings
(``format_fusion``).

A replay target that writes one statement per definition, op and output. It reads the IR (and, for
``emit_repro``'s default inputs, the interpreter's input specs) and never a frontend, so the recording frontend
can print itself and the repro loader (segkit.repro) stays a loader.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import torch

from segkit.args import Device, FusionLike, checked
from segkit.dtypes import DataType
from segkit.errors import InputMismatchError, ReproError
from segkit.interp import as_fusion, check_inputs, random_inputs
from segkit.ir import Fusion, Op, Value
from segkit.replay import replay


def py_literal(x: Any) -> str:
    """Python source for a number that evaluates back to it (nan, inf and complex included)."""
    if isinstance(x, bool) or isinstance(x, int):
        return repr(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "float('nan')"
        if math.isinf(x):
            return "float('inf')" if x > 0 else "-float('inf')"
        return repr(x)
    if isinstance(x, complex):
        return f"complex({py_literal(x.real)}, {py_literal(x.imag)})"
    return repr(x)


class _Src(str):
    """Printed source of an argument (its repr is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


def _text(x: Any) -> str:
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_text(i) for i in x) + "]"
    return repr(x)


def _define(v: Value, name: str) -> str:
    if v.is_tensor:
        parts = [f"shape={list(v.shape)}", f"contiguity={list(v.contiguity)}", f"dtype=DataType.{v.dtype.name}",
                 f"is_cpu={v.is_cpu}"]
        if v.stride_order:
            parts.append(f"stride_order={list(v.stride_order)}")
        return f"{name} = fd.define_tensor({', '.join(parts)})"
    if v.value is None:
        return f"{name} = fd.define_scalar(dtype=DataType.{v.dtype.name})"
    return f"{name} = fd.define_scalar({py_literal(v.value)}, dtype=DataType.{v.dtype.name})"


class _Printer:
    """Replay target: one script statement per definition, op and output (or a listing with shapes).

    Scripts name values tv0, tv1, ... and c0, c1, ... in the order they are printed, so a script loaded and
    printed again is the same text whatever order the original definition created its values in. Listings
    keep the recorded names (the ones analyses and errors use)."""

    def __init__(self, listing: bool = False) -> None:
        self.listing = listing
        self.lines: list[str] = []
        self.counts = {"tv": 0, "c": 0}

    def name(self, v: Value) -> str:
        if self.listing:
            return v.name
        prefix = "tv" if v.is_tensor else "c"
        self.counts[prefix] += 1
        return f"{prefix}{self.counts[prefix] - 1}"

    def input(self, v: Value) -> _Src:
        name = self.name(v)
        self.lines.append(f"  {v.describe()}" if self.listing else _define(v, name))
        return _Src(name)

    def constant(self, v: Value) -> _Src:
        name = self.name(v)
        if not self.listing:
            self.lines.append(_define(v, name))
        return _Src(name)

    def literal(self, v: Value) -> _Src:
        return _Src(py_literal(v.value))

    def atom(self, x: Any) -> Any:
        if isinstance(x, DataType):
            return _Src(f"DataType.{x.name}")
        return _Src(py_literal(x)) if isinstance(x, (float, complex)) else x

    def call(self, op: Op, opdef: Any, args: list, kwargs: dict) -> tuple:
        call = f"{op.name}({', '.join([_text(a) for a in args] + [f'{k}={_text(a)}' for k, a in kwargs.items()])})"
        names = [self.name(o) for o in op.outputs]
        if self.listing:
            self.lines.append(f"  {', '.join(o.describe() for o in op.outputs)} = {call}")
        else:
            self.lines.append(f"{', '.join(names)} = fd.ops.{call}")
        return tuple(_Src(n) for n in names)

    def output(self, handle: _Src, alias_input: _Src | None = None) -> None:
        if self.listing:
            self.lines.append(f"output: {handle}" + (f" (written into {alias_input})" if alias_input else ""))
        else:
            self.lines.append(f"fd.add_output({handle}" + (f", alias_input={alias_input})" if alias_input else ")"))


def fusion_lines(fusion: Fusion) -> list[str]:
    """The body of a fusion function: definitions, ops, outputs (one statement each)."""
    printer = _Printer()
    replay(fusion, printer)
    return printer.lines


def format_fusion(fusion: Fusion) -> str:
    """A readable listing: each op with its output shapes and dtypes."""
    printer = _Printer(listing=True)
    printer.lines.append("inputs:")
    replay(fusion, printer, outputs=[], aliases=[])
    printer.lines.insert(len(fusion.inputs) + 1, "ops:")
    outs = ", ".join(v.name for v in fusion.outputs)
    written = ", ".join(f"{o.name} -> {i.name}" for o, i in fusion.aliases)
    return "\n".join(printer.lines + ["outputs: " + outs + (f" (written into inputs: {written})" if written else "")])


def _input_expr(x: Any, device: str) -> str:
    if not isinstance(x, torch.Tensor):
        return py_literal(x)
    dt = str(x.dtype)
    if x.ndim == 0:
        return f"torch.tensor({py_literal(x.item())}, dtype={dt}, device='{device}')"
    storage = 1 + sum((s - 1) * st for s, st in zip(x.shape, x.stride()) if s > 0)
    if x.dtype.is_floating_point:
        base = f"torch.randn({storage}, dtype={dt}, device='{device}')"
    else:
        base = f"torch.testing.make_tensor(({storage},), dtype={dt}, device='{device}')"
    return f"{base}.as_strided({tuple(x.shape)}, {tuple(x.stride())})"


@checked
def emit_repro(fd: FusionLike, inputs: Any = None,  # checked by check_inputs
               style: Literal["direct", "legacy"] = "direct",
               device: Device = "cuda:0") -> str:
    """A runnable repro script for a recorded fusion (``style``: "direct" or "legacy" imports). ``inputs`` must fit
    the definition (count, kind, rank, dtype, sizes, layout): one that does not is an InputMismatchError naming it."""
    if style not in ("direct", "legacy"):
        raise ValueError(f"style must be 'direct' or 'legacy', got {style!r}")
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a device name such as 'cuda:0', got {type(device).__name__} {device!r}")
    fusion = as_fusion(fd)
    module = "nvfuser_direct" if style == "direct" else "nvfuser"
    if inputs is None:
        try:
            inputs = random_inputs(fusion, "meta")
        except InputMismatchError as e:
            raise ReproError(f"emit_repro needs inputs=: {e}") from None
    if isinstance(inputs, (torch.Tensor, str, bytes)) or not isinstance(inputs, Sequence):
        raise InputMismatchError(f"emit_repro: inputs= must be a list of the fusion's inputs, got "
                                 f"{type(inputs).__name__}")
    xs = list(inputs)
    try:
        check_inputs(fusion, xs)  # a script that would fail where it is run is refused where it is written
    except InputMismatchError as e:
        raise InputMismatchError(f"emit_repro: {e}") from None
    body = "\n".join("    " + line for line in fusion_lines(fusion) or ["pass"])
    ins = "\n".join(f"    {_input_expr(x, device)}," for x in xs)
    return (
        "import torch\n"
        f"from {module} import FusionDefinition, DataType\n\n"
        "def nvfuser_fusion_id0(fd : FusionDefinition) -> None :\n"
        f"{body}\n\n"
        "with FusionDefinition() as fd:\n"
        "    nvfuser_fusion_id0(fd)\n\n"
        f"inputs = [\n{ins}\n]\n"
        "fd.execute(inputs)\n"
    )
