"""Recording FusionDefinition: nvfuser_direct's Python API, recorded into segkit's IR.

``segkit.FusionDefinition`` is a drop-in stand-in for
``nvfuser_direct.FusionDefinition`` and for the legacy ``nvfuser`` package's
spellings since torch._C._nvfuser (2022): older keyword names, positional
overloads and dropped ops, listed with their sources in
tests/test_legacy_spellings.py (op spellings live in each op's catalogue
entry, ``OpDef.overloads``). Builders and
repro scripts run against it unchanged; every op is checked and its output
shape and dtype inferred as it is recorded, so a bad definition fails at the
line that wrote it.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Sequence
from typing import Any

import torch

from segkit import ops as catalogue
from segkit.compare import CheckReport, compare
from segkit.dtypes import DataType, from_torch, of_python, python_value
from segkit.errors import EmptyFusionError, FusionDefinitionError, SegkitError, UnsupportedOpError
from segkit.interp import run_reference
from segkit.ir import Fusion, Op, Value, iter_values
from segkit.layout import Layout, compute_tensor_descriptor
from segkit.printing import format_fusion

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def call_site(skip_package: bool = True) -> str:
    """``file:line: source`` of the first caller outside segkit itself."""
    f = sys._getframe(1)
    while f is not None and skip_package and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return "<unknown>"
    src = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno}" + (f": {src}" if src else "")


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex))


def _one_of(fn: str, name: str, value: Any, old_name: str, old_value: Any, site: str) -> Any:
    """The argument given as ``name=`` or by its legacy name ``old_name=`` (an error when both are)."""
    if old_value is None:
        return value
    if value is not None:
        raise FusionDefinitionError(f"{fn} got {old_name}= (nvFuser's older name of {name}=) and {name}=; give one "
                                    f"(at {site})")
    return old_value


def _is_int_list(x: Any) -> bool:
    """A non-empty list of ints (not bools): the sizes or strides of nvFuser's legacy define_tensor overload."""
    return (isinstance(x, (list, tuple)) and len(x) > 0
            and all(isinstance(i, int) and not isinstance(i, bool) for i in x))


class _Ops:
    """``fd.ops``: each attribute is a catalogue op that records into ``fd``."""

    def __init__(self, fd: FusionDefinition) -> None:
        self._fd = fd

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        opdef = catalogue.get(name) or catalogue.COMPOSITES.get(name)
        if opdef is None:
            hint = catalogue.HINTS.get(name)
            raise UnsupportedOpError(
                f"fd.ops.{name} is not in segkit's op catalogue (at {call_site()})" + (f"; {hint}" if hint else "")
            )
        return lambda *args, **kwargs: self._fd._record(opdef, args, kwargs)

    def __dir__(self):
        return sorted(catalogue.CATALOGUE) + sorted(catalogue.COMPOSITES)


class FusionDefinition:
    """Records a fusion; use it like ``nvfuser_direct.FusionDefinition``.

    ``fd.fusion`` is the recorded :class:`segkit.ir.Fusion`. ``fd.execute(inputs)``
    runs it with the torch reference interpreter (segkit.to_nvfuser gives a
    real nvFuser FusionDefinition). The legacy pattern of subclassing with a
    ``definition(self)`` method works too: it is recorded on first use.
    """

    def __init__(self, fusion: Fusion | None = None) -> None:
        self._fusion = fusion if fusion is not None else Fusion()
        self._fusion.rebind(self)
        self._pending_definition = fusion is None and callable(getattr(self, "definition", None))
        self.ops = _Ops(self)
        #: how many inputs ``add_input`` (the 2022 frontend's) has placed first, in its call order
        self._added_inputs = 0
        #: this definition on nvFuser (a ``segkit.nvfuser.runnable.NvProgram``), made once by
        #: segkit.nvfuser.run.compiled (nvFuser caches kernels per definition); typed Any because the backend is a
        #: layer above the recording frontend (tests/test_layering.py)
        self.nvfuser: Any = None

    @property
    def fusion(self) -> Fusion:
        if self._pending_definition:  # legacy subclass: record definition() once, on first use
            self._pending_definition = False
            self.definition()
        return self._fusion

    @classmethod
    def from_fusion(cls, fusion: Fusion) -> FusionDefinition:
        return cls(fusion)

    @property
    def nv_tuning(self):
        """The fusion's nvFuser tuning (``Fusion.tuning``: declared on the IR, so rewrites carry it)."""
        return self.fusion.tuning

    @nv_tuning.setter
    def nv_tuning(self, tuning) -> None:
        self.fusion.tuning = tuning

    @property
    def Ops(self) -> _Ops:  # noqa: N802  (the 2022 torch._C._nvfuser spelling: fd.Ops.add(...))
        """``fd.ops`` as the first Python frontend (torch._C._nvfuser, 2022) spelled it."""
        return self.ops

    def add_input(self, value: Value) -> None:
        """The 2022 frontend's ``fd.add_input(t)``: there, defining a tensor or scalar did not make it an input;
        the add_input calls did, in their order. segkit's definitions already are inputs, so this puts ``value``
        next in the input order."""
        site = call_site()
        inputs = self.fusion.inputs
        at = next((i for i, v in enumerate(inputs) if v is value), None)
        if at is None or at < self._added_inputs:
            name = getattr(value, "name", value)
            raise FusionDefinitionError(f"add_input({name!r}): only a tensor or symbolic scalar defined by this "
                                        f"FusionDefinition, once (at {site})")
        inputs.insert(self._added_inputs, inputs.pop(at))
        self._added_inputs += 1

    def __enter__(self) -> FusionDefinition:
        return self

    def __exit__(self, *exc) -> None:
        return None

    # -- definitions ----------------------------------------------------------
    def define_tensor(
        self,
        shape: Sequence[int] | None = None,
        contiguity: Sequence[bool | None] | bool | None = None,
        dtype: DataType = DataType.Float,
        is_cpu: bool = False,
        stride_order: Sequence[int] | None = None,
        *,
        sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        static_sizes: bool = False,
        symbolic_sizes: Sequence[int] | None = None,
        contiguous: Sequence[bool | None] | bool | None = None,
        ndims: int | None = None,
    ) -> Value:
        """A tensor input: symbolic shape (-1 dynamic, 1 broadcast), contiguity, dtype, stride_order.

        Legacy spellings: ``define_tensor(ndims[, contiguity], dtype)`` (torch._C._nvfuser, 2022: every dim
        dynamic, contiguous unless told), ``symbolic_sizes=`` for ``shape=`` (before nvFuser 0.0.17, PR #701),
        ``contiguous=`` for ``contiguity=`` (before 0.0.9, PR #191), and the ``(sizes, strides, dtype,
        static_sizes, is_cpu)`` overload given positionally (``define_tensor([2, 3], [3, 1])``: two lists of ints
        are sizes and strides, as pybind's overload resolution picks)."""
        site = call_site()
        shape = _one_of("define_tensor", "shape", shape, "symbolic_sizes", symbolic_sizes, site)
        shape = _one_of("define_tensor", "shape", shape, "ndims", ndims, site)
        contiguity = _one_of("define_tensor", "contiguity", contiguity, "contiguous", contiguous, site)
        if isinstance(shape, int) and not isinstance(shape, bool):  # the 2022 frontend: (ndims[, contiguity], dtype)
            if shape < 0:
                raise FusionDefinitionError(f"define_tensor({shape}): a rank must be >= 0 (at {site})")
            if isinstance(contiguity, DataType):
                contiguity, dtype = None, contiguity
            shape, contiguity = [-1] * shape, True if contiguity is None else contiguity
        if sizes is None and strides is None and _is_int_list(shape) and _is_int_list(contiguity):
            sizes, strides, contiguity = shape, contiguity, None
            # that overload's 4th and 5th positional arguments are static_sizes and is_cpu
            static_sizes, is_cpu = bool(is_cpu) or static_sizes, bool(stride_order)
            stride_order = None
        if sizes is not None or strides is not None:
            if sizes is None or strides is None or len(sizes) != len(strides):
                raise FusionDefinitionError(f"define_tensor(sizes=, strides=) needs both, of equal rank (at {site})")
            contiguity, stride_order = compute_tensor_descriptor(list(sizes), list(strides))
            shape = [s if (static_sizes or s == 1) else -1 for s in sizes]
            return self._define_tensor(shape, contiguity, dtype, is_cpu, stride_order, site)
        if shape is None:
            raise FusionDefinitionError(f"define_tensor needs shape= (at {site})")
        return self._define_tensor(list(shape), contiguity, dtype, is_cpu, stride_order, site)

    def _define_tensor(self, shape, contiguity, dtype, is_cpu, stride_order, site) -> Value:
        n = len(shape)
        if not isinstance(dtype, DataType):
            raise FusionDefinitionError(f"define_tensor dtype must be a DataType, got {dtype!r} (at {site})")
        if any(not isinstance(s, int) or isinstance(s, bool) or not -1 <= s < 2**63 for s in shape):
            raise FusionDefinitionError(f"define_tensor shape {shape} must hold sizes >= -1 (at {site})")
        if is_cpu and n > 0:
            raise FusionDefinitionError(
                f"define_tensor(is_cpu=True) of rank {n}: nvFuser takes CPU tensors only as 0-dim scalars (at {site})")
        so = list(stride_order or [])
        if so:
            so = [d % n if isinstance(d, int) and -n <= d < n else None for d in so]
            if sorted(x for x in so if x is not None) != list(range(n)) or None in so:
                raise FusionDefinitionError(f"define_tensor stride_order {list(stride_order)} is not a permutation of range({n}) (at {site})")
        layout_order = Layout.from_stride_order(so, [None] * n).order
        if contiguity is None or isinstance(contiguity, bool):
            flag = bool(contiguity)
            contig = [None if shape[d] == 1 else flag for d in layout_order]
        else:
            contig = list(contiguity)
            if len(contig) != n:
                raise FusionDefinitionError(f"define_tensor contiguity {contig} has {len(contig)} entries for rank {n} (at {site})")
            contig = [None if shape[d] == 1 else c for c, d in zip(contig, layout_order)]
        by_dim = {d: contig[pos] for pos, d in enumerate(layout_order)}
        broadcast = tuple(shape[d] == 1 or by_dim[d] is None for d in range(n))
        expanded = tuple(shape[d] != 1 and by_dim[d] is None for d in range(n))
        v = self.fusion.new_value(
            dtype, shape, broadcast=broadcast, expanded=expanded, contiguity=tuple(contig),
            stride_order=tuple(so) if so else None, is_cpu=bool(is_cpu),
        )
        self.fusion.inputs.append(v)
        return v

    def define_scalar(self, value: Any = None, dtype: DataType | None = None) -> Value:
        """A constant (value given) or a scalar input (value None; dtype defaults to Double)."""
        site = call_site()
        if isinstance(value, DataType) and dtype is None:  # define_scalar(DataType.Int): symbolic
            value, dtype = None, value
        if value is None:
            v = self.fusion.new_value(dtype or DataType.Double)
            self.fusion.inputs.append(v)
            return v
        if dtype is not None and not isinstance(dtype, DataType):
            raise FusionDefinitionError(f"define_scalar dtype must be a DataType, got {dtype!r} (at {site})")
        if not _is_number(value):
            raise FusionDefinitionError(f"define_scalar value must be a number, got {value!r} (at {site})")
        dt = dtype or of_python(value)
        if isinstance(value, complex) and not dt.torch.is_complex:
            raise FusionDefinitionError(f"define_scalar({value!r}, dtype={dt!r}): a complex value needs a complex dtype (at {site})")
        return self.fusion.new_value(dt, value=python_value(value, dt))

    def define_constant(self, value: Any = None, dtype: DataType | None = None, *, val: Any = None) -> Value:
        """The legacy frontend's name for a constant ``define_scalar`` (``val=`` until nvFuser 0.0.14, PR #208)."""
        value = _one_of("define_constant", "value", value, "val", val, call_site())
        if value is None:
            raise FusionDefinitionError(f"define_constant needs a value; a scalar input is define_scalar(dtype=...) "
                                        f"(at {call_site()})")
        return self.define_scalar(value, dtype)

    def define_vector(self, values: int | Sequence[Any], dtype: DataType = DataType.Int) -> list:
        """``define_vector(n)`` (nvfuser_direct): n symbolic Int scalar inputs, e.g. a shape given at run time.
        ``define_vector([...])`` (legacy): a plain list of scalars (ints or scalar Values)."""
        if isinstance(values, int) and not isinstance(values, bool):
            if values < 0:
                raise FusionDefinitionError(f"define_vector({values}): the size must be >= 0 (at {call_site()})")
            return [self.define_scalar(dtype=DataType.Int) for _ in range(values)]
        if not isinstance(values, (list, tuple)):
            raise FusionDefinitionError(f"define_vector takes a size or a list of scalars, got {values!r} (at {call_site()})")
        out = []
        for x in values:
            if isinstance(x, Value) and x.is_tensor:
                raise FusionDefinitionError(f"define_vector takes scalars, got tensor {x.name} (at {call_site()})")
            out.append(x)
        return out

    def from_pytorch(self, tensor: torch.Tensor, static_sizes: bool = False) -> Value:
        """An input defined from an example tensor (its sizes, strides and dtype). The reference runs on any
        device, so a CPU tensor stands for a device tensor; only a 0-dim CPU tensor is a CPU scalar input."""
        if not isinstance(tensor, torch.Tensor):
            raise FusionDefinitionError(f"from_pytorch takes a torch.Tensor, got {type(tensor).__name__} (at {call_site()})")
        return self.define_tensor(sizes=list(tensor.shape), strides=list(tensor.stride()),
                                  dtype=from_torch(tensor.dtype), static_sizes=static_sizes,
                                  is_cpu=tensor.is_cpu and tensor.ndim == 0)

    def add_output(self, value: Value, alias_input: Value | None = None, stride_order: Sequence[int] | None = None) -> None:
        """Mark an output. ``alias_input``: the output is written into that input's buffer and is not returned
        (unless also added plainly), as nvFuser's ``add_output(output, alias_input)``. ``stride_order``
        (legacy spelling): the output gets that memory layout (recorded as the ``stride_order`` op); the legacy
        binding's ``add_output(output, stride_order)`` overload took it positionally, so a list or tuple in the
        second place is a stride order, not an alias."""
        site = call_site()
        if isinstance(alias_input, (list, tuple)):
            if stride_order is not None:
                raise FusionDefinitionError(f"add_output got a stride order positionally and stride_order=; give one "
                                            f"(at {site})")
            alias_input, stride_order = None, alias_input
        if not isinstance(value, Value) or not value.is_tensor:
            raise FusionDefinitionError(f"add_output takes a tensor of this fusion, got {value!r} (at {site})")
        self._check_owned([value], "add_output", site)
        if stride_order is not None and list(stride_order):
            value = self.ops.stride_order(value, stride_order=list(stride_order))
        if alias_input is None:
            self.fusion.outputs.append(value)
            return
        self._check_owned([alias_input] if isinstance(alias_input, Value) else [], "add_output", site)
        if not isinstance(alias_input, Value) or not alias_input.is_tensor:
            raise FusionDefinitionError(f"add_output(alias_input={alias_input!r}): aliasing output to input is only "
                                        f"supported for tensors (at {site})")
        if not any(alias_input is v for v in self.fusion.inputs):
            raise FusionDefinitionError(f"add_output(alias_input={alias_input.name}): alias source can only be a fusion "
                                        f"input (at {site})")
        if value.ndim != alias_input.ndim or any(a != b and -1 not in (a, b) for a, b in zip(value.shape, alias_input.shape)):
            raise FusionDefinitionError(f"add_output({value.describe()}, alias_input={alias_input.describe()}): the output "
                                        f"must have the input's shape to be written into it (at {site})")
        if value.dtype is not alias_input.dtype:
            raise FusionDefinitionError(f"add_output({value.describe()}, alias_input={alias_input.describe()}): the output "
                                        f"must have the input's dtype to be written into it; cast it first (at {site})")
        self.fusion.aliases.append((value, alias_input))

    def execute(self, inputs: Sequence[Any], **_ignored) -> list[torch.Tensor]:
        """Run the recorded fusion with the torch reference interpreter (nvFuser refuses an empty fusion)."""
        if not self.fusion.values:
            raise EmptyFusionError("Fusion does not exist! Use `with FusionDefinition() as fd: ...` to define a "
                                   "fusion. Nothing was recorded.")
        if not self.fusion.outputs and not self.fusion.aliases:
            raise EmptyFusionError("Fusion is empty!: the definition adds no output, nothing to execute")
        return run_reference(self, inputs)

    def validate(self, inputs: Sequence[Any], reference_outputs: Sequence[torch.Tensor] | None = None,
                 **_ignored) -> list[torch.Tensor]:
        """nvFuser's ``fd.validate``: execute, and check the outputs against ``reference_outputs`` when given
        (segkit's execute is the reference itself, so without them there is nothing else to compare)."""
        outputs = self.execute(inputs)
        if reference_outputs is not None:
            report = CheckReport(compare(list(reference_outputs), outputs, None), "reference_outputs")
            if len(outputs) != len(reference_outputs) or not report.ok:
                raise SegkitError(f"validate: the outputs do not match reference_outputs:\n{report}")
        return outputs

    def __repr__(self) -> str:
        return format_fusion(self.fusion)

    # -- recording ------------------------------------------------------------
    def _constant(self, x: Any, literal: bool = True) -> Value:
        return self.fusion.new_value(of_python(x), value=x, literal=literal)

    def _check_owned(self, values, name: str, site: str) -> None:
        owned = {id(v) for v in self.fusion.values}
        for v in values:
            if id(v) not in owned:
                raise FusionDefinitionError(f"fd.ops.{name}: {v.name} belongs to another FusionDefinition (at {site})")

    def _record(self, opdef: catalogue.OpDef, args: tuple, kwargs: dict):
        site = call_site()
        try:
            bound = opdef.bind(args, kwargs)
        except TypeError as e:
            raise FusionDefinitionError(f"fd.ops.{opdef.name}: {e} (at {site})") from None
        if opdef.literal_operands:
            for name in opdef.operands:
                if _is_number(bound[name]):
                    bound[name] = self._constant(bound[name], literal=name not in opdef.scalar_operands)
        for name, arg in bound.items():
            if not isinstance(arg, (Value, list, tuple, DataType, bool, int, float, complex, type(None))):
                raise FusionDefinitionError(f"fd.ops.{opdef.name}: argument {name}={arg!r} is not a value, number or list (at {site})")
        self._check_owned([v for a in bound.values() for v in iter_values(a)], opdef.name, site)
        if opdef.decompose is not None:
            try:
                return opdef.decompose(self, bound)
            except catalogue.InferError as e:
                raise FusionDefinitionError(f"fd.ops.{opdef.name} at {site}: {e}") from None
        try:
            outs = opdef.infer(bound)
        except catalogue.InferError as e:
            raise FusionDefinitionError(f"fd.ops.{opdef.name} at {site}: {e}") from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:  # a rule met an argument it did not expect
            args = ", ".join(f"{k}={a!r}" for k, a in bound.items())
            raise FusionDefinitionError(f"fd.ops.{opdef.name} at {site}: arguments ({args}) do not fit the op: "
                                        f"{type(e).__name__}: {e}") from None
        values = [self.fusion.new_value(o.dtype, o.shape, broadcast=o.broadcast, expanded=o.expanded) for o in outs]
        op = self.fusion.add_op(Op(opdef.name, bound, values, site))
        self._fold(opdef, op)
        return values[0] if len(values) == 1 else tuple(values)

    def _fold(self, opdef: catalogue.OpDef, op: Op) -> None:
        """Give scalar outputs their value when every input is known now (for shape arguments)."""
        if any(v.is_tensor for v in op.outputs):
            return
        if opdef.fold is not None:
            res = opdef.fold(op.args)
            for v, r in zip(op.outputs, res if isinstance(res, tuple) else (res,)):
                v.value = r
            return
        if any(v.is_tensor or v.value is None for v in op.inputs):
            return
        resolved = {k: catalogue.static(a) for k, a in op.args.items()}
        try:
            res = opdef.run(resolved, catalogue.RunContext())
        except Exception:  # leave it symbolic; the interpreter will compute it
            return
        res = res if isinstance(res, tuple) else (res,)
        for v, r in zip(op.outputs, res):
            v.value = python_value(r, v.dtype)
