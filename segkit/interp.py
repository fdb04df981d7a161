"""Reference interpreter: run a recorded fusion with torch, on the inputs' device.

It follows nvFuser's dtype semantics (casts are explicit; each op's output
dtype is the one recorded, reductions take ``dtype=``), so its outputs are
what a correct nvFuser kernel must produce. Inputs are checked against the
define_tensor specs first.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import torch

from segkit.args import FusionLike, checked
from segkit import ops as catalogue
from segkit.dtypes import DataType, python_value
from segkit.errors import InputMismatchError, ResourceLimitError, SegkitError
from segkit.ir import Fusion, Op, Value, map_values
from segkit.layout import Layout, layout_of
from segkit.limits import MAX_TENSOR_BYTES_ENV, size_in_bytes


#: Largest tensor (bytes) the reference interpreter allocates: an input it builds or an op's result.
#: Set with the environment variable, or ``run_reference(..., max_tensor_bytes=)``.
DEFAULT_MAX_TENSOR_BYTES = 16 * 2**30


def tensor_budget() -> int:
    """The per-tensor memory budget: $SEGKIT_MAX_TENSOR_BYTES (bytes, or with a K/M/G/T suffix), else 16G."""
    value = os.environ.get(MAX_TENSOR_BYTES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_TENSOR_BYTES
    budget = size_in_bytes(value)
    if budget is None:
        raise ResourceLimitError(f"{MAX_TENSOR_BYTES_ENV}={value!r}: give a positive size in bytes, e.g. 8G or 500M")
    return budget


def checked_budget(max_tensor_bytes: Any) -> int:
    """``max_tensor_bytes`` as given to the API (None: the environment's budget), refused unless a positive int."""
    if max_tensor_bytes is None:
        return tensor_budget()
    if isinstance(max_tensor_bytes, bool) or not isinstance(max_tensor_bytes, int) or max_tensor_bytes <= 0:
        raise ResourceLimitError(f"max_tensor_bytes={max_tensor_bytes!r}: give a positive number of bytes")
    return max_tensor_bytes


def checked_device(device: Any) -> torch.device:
    """``device`` as a torch.device, or one line naming the bad value (not torch's list of device types)."""
    try:
        return torch.device(device)
    except (RuntimeError, TypeError):
        raise InputMismatchError(f"device={device!r} is not a torch device (e.g. 'cpu', 'cuda', 'cuda:1', "
                                 "'meta')") from None


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def check_allocation(numel: int, dtype: torch.dtype, what: str, device: Any = "cpu", budget: int | None = None) -> None:
    """Refuse (ResourceLimitError, with the size) a tensor beyond the memory budget before allocating it."""
    if str(device) == "meta":
        return
    budget = tensor_budget() if budget is None else budget
    size = numel * dtype.itemsize
    if size > budget:
        raise ResourceLimitError(
            f"{what} ({str(dtype).removeprefix('torch.')}) needs {_human(size)}, beyond the reference interpreter's "
            f"budget of {_human(budget)} per tensor (raise it with {MAX_TENSOR_BYTES_ENV}=SIZE or max_tensor_bytes=)")


def as_fusion(obj: Any) -> Fusion:
    """The IR of a recording FusionDefinition, a Fusion, or anything with ``.fusion``."""
    if isinstance(obj, Fusion):
        return obj
    fusion = getattr(obj, "fusion", None)
    if isinstance(fusion, Fusion):
        return fusion
    raise TypeError(f"expected a segkit FusionDefinition or Fusion, got {type(obj).__name__}")


def _not_a_tensor(x: Any) -> str:
    """What an input that is no torch tensor is, in words: a numpy array by its shape and dtype (with the way to
    pass it), a Python scalar by its value, anything else by its type."""
    if type(x).__module__ == "numpy" and hasattr(x, "shape") and hasattr(x, "dtype"):
        kind = "numpy array" if getattr(x, "ndim", 0) else "numpy scalar"
        return f"a {kind} (shape {list(x.shape)}, dtype {x.dtype}): pass torch.from_numpy(x) (or torch.tensor(x))"
    if isinstance(x, (bool, int, float, complex)):
        return f"scalar {x!r}"
    return f"{type(x).__name__} {x!r:.60}"


def check_inputs(fusion: Fusion, inputs: Sequence[Any]) -> None:
    """Raise InputMismatchError naming the first input that does not fit its spec."""
    if len(inputs) != len(fusion.inputs):
        names = ", ".join(v.describe() for v in fusion.inputs)
        raise InputMismatchError(f"the fusion takes {len(fusion.inputs)} inputs ({names}), got {len(inputs)}")
    for i, (spec, x) in enumerate(zip(fusion.inputs, inputs)):
        where = f"input {i} ({spec.describe()})"
        if not spec.is_tensor:
            if isinstance(x, torch.Tensor) and x.ndim == 0:
                continue
            if isinstance(x, torch.Tensor):
                raise InputMismatchError(f"{where}: expected a scalar but got {str(x.dtype).removeprefix('torch.')} "
                                         f"tensor of rank {x.ndim}")
            if not isinstance(x, (bool, int, float, complex)):
                raise InputMismatchError(f"{where}: expected a scalar, got {_not_a_tensor(x)}")
            if not _scalar_fits(x, spec.dtype):
                raise InputMismatchError(f"{where}: Scalar value {x!r} is not compatible with the expected data type "
                                         f"{spec.dtype.name}")
            continue
        if not isinstance(x, torch.Tensor):
            raise InputMismatchError(f"{where}: expected a tensor but got {_not_a_tensor(x)}")
        if x.ndim != spec.ndim:
            raise InputMismatchError(f"{where}: expected rank {spec.ndim}, got shape {list(x.shape)}")
        if x.dtype != spec.dtype.torch:
            raise InputMismatchError(f"{where}: expected dtype {spec.dtype.torch}, got {x.dtype}")
        for d, (want, got) in enumerate(zip(spec.shape, x.shape)):
            if want != -1 and want != got:
                raise InputMismatchError(f"{where}: dim {d} must be {want}, got shape {list(x.shape)}")
        _check_layout(spec, x, where)


def _scalar_fits(x: Any, dtype: Any) -> bool:
    """nvFuser's rule for a Python scalar bound to a scalar input: no complex into a real input, no float into
    an integer or bool input."""
    if dtype is DataType.Null:
        return True
    t = dtype.torch
    if isinstance(x, complex):
        return t.is_complex
    if isinstance(x, float):
        return t.is_floating_point or t.is_complex
    return True


@checked
def random_inputs(fd: FusionLike, device: str | torch.device = "cpu", seed: int = 0,
                  shapes: Sequence[Sequence[int] | None] | None = None) -> list[Any]:
    """Inputs matching a fusion's specs (static shapes, or each input's run-time size from ``shapes``):
    random values in each input's declared layout (expanded dims get stride 0; a dim declared non-contiguous a
    stride past the dense one; a CPU scalar input on the CPU); ``device="meta"`` gives shapes and strides only."""
    device = checked_device(device)
    gen = None if device.type == "meta" else torch.Generator(device=device).manual_seed(seed)
    out = []
    for i, v in enumerate(as_fusion(fd).inputs):
        if not v.is_tensor:
            out.append(v.value if v.value is not None else (1.5 if v.dtype.is_float else 3))
            continue
        shape = tuple(shapes[i]) if shapes is not None else tuple(v.shape)
        if -1 in shape:
            raise InputMismatchError(f"random inputs need static shapes; {v.describe()} is dynamic")
        so = v.stride_order or tuple(range(v.ndim - 1, -1, -1))
        order = sorted(range(v.ndim), key=lambda d: -so[d])  # allocation order, outermost first
        # a dim declared non-contiguous (contiguity is in allocation order): its inner neighbour one longer in the
        # buffer, then cut back (the innermost: every other element)
        gaps = [c is False for c in (v.contiguity or ())] if v.ndim else []
        alloc = [shape[d] + (i > 0 and gaps[i - 1]) for i, d in enumerate(order)]
        if gaps and gaps[-1]:
            alloc[-1] *= 2
        check_allocation(math.prod(alloc), v.dtype.torch, f"input {v.describe()}", device)
        base = (torch.empty(alloc, dtype=v.dtype.torch, device="meta") if gen is None
                else torch.randn(alloc, generator=gen, device=device).to(v.dtype.torch))
        if any(gaps):
            base = base[tuple(slice(0, shape[d] * (1 + (i == v.ndim - 1 and gaps[-1])),
                                    2 if i == v.ndim - 1 and gaps[-1] else None) for i, d in enumerate(order))]
        t = base.permute([order.index(d) for d in range(v.ndim)])
        for d, e in enumerate(v.expanded):
            if e:
                t = t.narrow(d, 0, 1).expand(*shape)
        out.append(t.cpu() if v.is_cpu and gen is not None else t)  # a CPU scalar input stays on the CPU
    return out


def _check_layout(spec: Value, x: torch.Tensor, where: str) -> None:
    if x.numel() == 0:
        return  # an empty tensor has no layout to honour: any strides do
    want = Layout.from_stride_order(spec.stride_order, spec.contiguity)
    got = layout_of(list(x.shape), list(x.stride()))
    real = [d for d in range(x.ndim) if x.shape[d] != 1 and x.stride(d) != 0]
    want_order = [d for d in want.order if d in real]
    got_order = [d for d in got.order if d in real]
    if want_order != got_order:
        raise InputMismatchError(
            f"{where}: allocation order {want_order} (stride_order {list(want.stride_order)}) expected, "
            f"tensor with strides {list(x.stride())} has {got_order}"
        )
    for d in real:
        if want.contiguity_of(d) and not got.contiguity_of(d):
            raise InputMismatchError(
                f"{where}: dim {d} is declared contiguous but the tensor's strides {list(x.stride())} are not"
            )
        if spec.expanded[d]:
            raise InputMismatchError(f"{where}: dim {d} is declared expanded (stride 0), tensor stride is {x.stride(d)}")


class Interpreter:
    """Runs ops one by one; ``env`` maps id(Value) to its run-time value."""

    def __init__(self, fusion: Fusion, inputs: Sequence[Any], max_tensor_bytes: int | None = None) -> None:
        self.fusion = fusion
        self.budget = checked_budget(max_tensor_bytes)
        self.env: dict[int, Any] = {}
        for v, x in zip(fusion.inputs, inputs):
            self.env[id(v)] = x if v.is_tensor or not isinstance(x, torch.Tensor) else x.item()
        device = next((x.device for x in inputs if isinstance(x, torch.Tensor) and x.ndim > 0), torch.device("cpu"))
        self.ctx = catalogue.RunContext(device=device, resolve=self.resolve)

    def value_of(self, v: Value) -> Any:
        if id(v) in self.env:
            return self.env[id(v)]
        if v.value is not None and v.definition is None:
            return v.value
        raise SegkitError(f"{v.name} is read before it is computed")

    def resolve(self, arg: Any) -> Any:
        return map_values(arg, self.value_of)

    def run_op(self, op: Op) -> None:
        opdef = catalogue.get(op.name)
        args = {k: self.resolve(a) for k, a in op.args.items()}
        self.ctx.op = op
        where = f" (recorded at {op.site})" if op.site else ""
        for v in op.outputs:  # sizes known before the run: refuse, do not try to allocate
            if v.is_tensor and not opdef.meta and all(d >= 0 for d in v.shape):
                check_allocation(math.prod(v.shape), v.dtype.torch, f"{op.name} result {v.name} of shape {list(v.shape)}{where}",
                                 self.ctx.device, self.budget)
        try:
            res = opdef.run(args, self.ctx)
        except ResourceLimitError:
            raise
        except Exception as e:
            raise SegkitError(f"reference run of {op!r} failed: {e}" + (f" (recorded at {op.site})" if op.site else "")) from e
        res = res if isinstance(res, tuple) else (res,)
        if len(res) != len(op.outputs):
            raise SegkitError(f"{op!r} produced {len(res)} values for {len(op.outputs)} outputs")
        for v, r in zip(op.outputs, res):
            if v.is_tensor:
                if not isinstance(r, torch.Tensor):
                    r = torch.tensor(r, device=self.ctx.device)
                if r.dtype != v.dtype.torch:
                    r = r.to(v.dtype.torch)
                check_allocation(r.untyped_storage().nbytes() // max(r.element_size(), 1), r.dtype,
                                 f"{op.name} result {v.name} of shape {list(r.shape)}", r.device, self.budget)
                self.env[id(v)] = r
            else:
                self.env[id(v)] = python_value(r, v.dtype)

    def run(self) -> list[Any]:
        for op in self.fusion.ops:
            self.run_op(op)
        outputs = [self.value_of(v) for v in self.fusion.outputs]
        writes = [(self.value_of(o).clone(), self.value_of(i)) for o, i in self.fusion.aliases]
        for value, buffer in writes:  # add_output(out, alias_input=inp): the input's buffer gets the result
            buffer.copy_(value)
        written = {id(o): self.value_of(i) for o, i in self.fusion.aliases}
        return [written.get(id(v), x) for v, x in zip(self.fusion.outputs, outputs)]  # nvFuser returns the buffer


def flat_inputs(fusion: Fusion, inputs: Sequence[Any]) -> list[Any]:
    """The run-time inputs, one per fusion input: a list/tuple inside ``inputs`` fills consecutive scalar inputs
    (nvFuser's define_vector), as nvFuser's execute does. A lone tensor or number instead of a list of inputs is
    an InputMismatchError saying how to pass it."""
    if isinstance(inputs, (torch.Tensor, bool, int, float, complex, str)) or not hasattr(inputs, "__iter__"):
        names = ", ".join(v.describe() for v in fusion.inputs)
        what = (f"a {str(inputs.dtype).removeprefix('torch.')} tensor of shape {list(inputs.shape)}"
                if isinstance(inputs, torch.Tensor) else f"{type(inputs).__name__} {inputs!r}"[:120])
        raise InputMismatchError(f"inputs must be a list with one entry per fusion input ({len(fusion.inputs)}: "
                                 f"{names}), got {what}; pass [x] for a single input")
    return [y for x in inputs for y in (x if isinstance(x, (list, tuple)) else [x])]


def copy_inputs(inputs: Sequence[Any]) -> list[Any]:
    """A copy of every tensor among ``inputs`` with the same sizes, strides and storage offset (an expanded or
    overlapping input stays so), so a run that writes into its inputs (``add_output(out, alias_input=inp)``)
    leaves the caller's tensors alone; other inputs are passed as they are."""
    def copy(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return type(x)(copy(y) for y in x)
        if not isinstance(x, torch.Tensor):
            return x
        out = torch.empty(0, dtype=x.dtype, device=x.device)
        return out.set_(x.untyped_storage().clone(), x.storage_offset(), x.size(), x.stride())
    return [copy(x) for x in inputs]


@checked
def run_reference(fd: FusionLike, inputs: Any, *, check: bool = True,  # inputs: check_inputs names a misfit
                  max_tensor_bytes: int | None = None) -> list[torch.Tensor]:
    """Execute a recorded fusion with torch; outputs in add_output order. As on nvFuser, an output added with
    ``alias_input=inp`` is written into ``inp``'s tensor (after every output is computed, from the inputs as
    given) and is not returned unless also added plainly. A result beyond ``max_tensor_bytes`` (default:
    $SEGKIT_MAX_TENSOR_BYTES, else 16 GiB) is refused before it is allocated."""
    fusion = as_fusion(fd)
    inputs = flat_inputs(fusion, inputs)
    if check:
        check_inputs(fusion, inputs)
    return Interpreter(fusion, inputs, max_tensor_bytes).run()
