"""The fusion graph segkit records, analyses and rewrites.

A :class:`Fusion` holds its inputs, its ops in topological (definition)
order and its outputs. Every tensor or scalar is a :class:`Value` with a
stable name (``tv3``, ``c7``) given in definition order. An :class:`Op`
keeps the arguments it was called with by parameter name, so it can be
printed back as a script or replayed into nvFuser exactly as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from segkit.dtypes import DataType


class Flag(int):
    """A bool that can also be called: ``t.is_tensor`` (segkit) and ``t.is_tensor()`` (nvFuser) both work."""

    def __call__(self) -> bool:
        return bool(self)

    def __repr__(self) -> str:
        return repr(bool(self))


YES, NO = Flag(1), Flag(0)


class Sizes(tuple):
    """A tensor's symbolic sizes (-1 = known at run time). Calling it is nvFuser's ``t.shape()``: one Int
    scalar per dim, recorded as the ``shape`` op (static sizes fold to their value)."""

    tensor: Value

    def __call__(self) -> list[Value]:
        sizes = self.tensor.recorded_call("shape")
        return list(sizes) if isinstance(sizes, tuple) else [sizes]


_BINARY_OPERATORS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "pow": "pow", "mod": "mod",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
}


@dataclass(eq=False)
class Value:
    """A tensor or scalar of the fusion.

    Tensors carry a symbolic ``shape`` (-1 for a size only known at run time)
    and, per dim, whether it is a broadcast dim and whether that broadcast is
    expanded (stride 0, logical size > 1). Fusion inputs also carry the layout
    they were defined with: ``contiguity`` in allocation order (None for
    broadcast dims) and ``stride_order`` (nvFuser's: 0 = innermost).
    Scalars carry ``value`` when it is known while recording (constants, and
    scalar arithmetic on them); ``literal`` scalars are written inline.

    ``recorder`` is the recording FusionDefinition the value belongs to: it
    lets the nvFuser spellings on values record ops (``t.shape()``,
    ``t.size(d)``, and the legacy operators ``t + 1``, ``-t``, ``abs(t)``;
    ``==``/``!=`` keep Python's identity meaning, since values are dict keys).
    """

    name: str
    dtype: DataType
    shape: tuple[int, ...] | None = None
    broadcast: tuple[bool, ...] = ()
    expanded: tuple[bool, ...] = ()
    contiguity: tuple[bool | None, ...] | None = None
    stride_order: tuple[int, ...] | None = None
    is_cpu: bool = False
    value: Any = None
    literal: bool = False
    definition: Op | None = field(default=None, repr=False)
    recorder: Any = field(default=None, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "shape" and value is not None:
            value = Sizes(value)
            value.tensor = self
        object.__setattr__(self, name, value)

    @property
    def is_tensor(self) -> Flag:
        return YES if self.shape is not None else NO

    def size(self, dim: int) -> Value:
        """nvFuser's ``t.size(dim)``: the extent of one dim as an Int scalar (recorded as the ``size`` op)."""
        return self.recorded_call("size", dim=dim)

    def recorded_call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Record ``fd.ops.<op>(self, *args)`` on the definition this value belongs to."""
        if self.recorder is None:
            raise TypeError(f"{self.name} does not belong to a recording FusionDefinition; cannot record {op}")
        return getattr(self.recorder.ops, op)(self, *args, **kwargs)

    def __neg__(self) -> Value:
        return self.recorded_call("neg")

    def __abs__(self) -> Value:
        return self.recorded_call("abs")

    @property
    def ndim(self) -> int:
        if self.shape is None:
            raise TypeError(f"{self.name} is a scalar")
        return len(self.shape)

    @property
    def is_constant(self) -> bool:
        return self.shape is None and self.definition is None and self.value is not None

    def describe(self) -> str:
        if not self.is_tensor:
            v = "" if self.value is None else f" = {self.value!r}"
            return f"{self.name}: {self.dtype.name}{v}"
        dims = []
        for s, b, e in zip(self.shape, self.broadcast, self.expanded):
            dims.append(f"{'?' if s == -1 else s}{'e' if e else 'b' if b else ''}")
        return f"{self.name}: {self.dtype.name}[{', '.join(dims)}]"

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


def _operator(op: str, reflected: bool):
    def method(self: Value, other: Any) -> Value:
        if reflected:
            if self.recorder is None:
                raise TypeError(f"{self.name} does not belong to a recording FusionDefinition; cannot record {op}")
            return getattr(self.recorder.ops, op)(other, self)
        return self.recorded_call(op, other)

    return method


for _py, _op in _BINARY_OPERATORS.items():
    setattr(Value, f"__{_py}__", _operator(_op, False))
    if _py not in ("lt", "le", "gt", "ge"):
        setattr(Value, f"__r{_py}__", _operator(_op, True))


def iter_values(obj: Any) -> Iterator[Value]:
    """Values inside an argument (a Value, or lists/tuples of them), in order."""
    if isinstance(obj, Value):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from iter_values(item)


def map_values(obj: Any, fn) -> Any:
    """An argument with every Value inside replaced by ``fn(value)``."""
    if isinstance(obj, Value):
        return fn(obj)
    if isinstance(obj, list):
        return [map_values(x, fn) for x in obj]
    if isinstance(obj, tuple):
        return tuple(map_values(x, fn) for x in obj)
    return obj


@dataclass(eq=False)
class Op:
    """One call of a catalogue op: its name, bound arguments and outputs."""

    name: str
    args: dict[str, Any]
    outputs: list[Value]
    site: str = ""

    @property
    def inputs(self) -> list[Value]:
        """Every Value the op reads, in argument order (duplicates kept)."""
        return [v for a in self.args.values() for v in iter_values(a)]

    @property
    def output(self) -> Value:
        if len(self.outputs) != 1:
            raise ValueError(f"{self.name} has {len(self.outputs)} outputs")
        return self.outputs[0]

    def __repr__(self) -> str:
        outs = ", ".join(v.name for v in self.outputs)
        ins = ", ".join(v.name for v in self.inputs)
        return f"<Op {outs} = {self.name}({ins})>"


def ops_needed_by(values: Iterable[Value]) -> set[int]:
    """ids of the ops transitively needed to compute ``values`` (walking definitions back to inputs)."""
    needed: set[int] = set()
    stack = [v.definition for v in values if v.definition is not None]
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        stack.extend(x.definition for x in op.inputs if x.definition is not None)
    return needed


def retune(tuning: Any, served: Sequence[Sequence[int]]) -> Any:
    """``tuning`` for a rewritten fusion whose output j computes the old outputs ``served[j]``."""
    return None if tuning is None else tuning.for_outputs(served)


class Fusion:
    """Inputs, ops in topological order, and outputs of one fusion.

    ``tuning`` is how nvFuser should run it (a ``segkit.tuning.NvTuning``, or None for nvFuser's defaults):
    per-fusion state that every rewrite carries (``copy``; ``keep_outputs`` and the other rewrites that change
    the outputs map it through its ``for_outputs``).
    """

    def __init__(self) -> None:
        self.inputs: list[Value] = []
        self.ops: list[Op] = []
        self.outputs: list[Value] = []
        self.values: list[Value] = []
        #: (output, input) pairs of ``add_output(output, alias_input=input)``: the output is written into the
        #: input's buffer and, unless also a regular output, not returned.
        self.aliases: list[tuple[Value, Value]] = []
        #: the recording FusionDefinition new values belong to (see Value.recorder)
        self.recorder: Any = None
        self.tuning: Any = None
        self._counters = {"tv": 0, "c": 0}

    # -- construction -------------------------------------------------------
    def new_value(self, dtype: DataType, shape=None, **kw) -> Value:
        prefix = "tv" if shape is not None else "c"
        name = f"{prefix}{self._counters[prefix]}"
        self._counters[prefix] += 1
        v = Value(name=name, dtype=dtype, shape=None if shape is None else tuple(shape), recorder=self.recorder, **kw)
        if v.is_tensor:
            n = len(v.shape)
            v.broadcast = tuple(v.broadcast) or (False,) * n
            v.expanded = tuple(v.expanded) or (False,) * n
        self.values.append(v)
        return v

    def add_op(self, op: Op, index: int | None = None) -> Op:
        for out in op.outputs:
            out.definition = op
        if index is None:
            self.ops.append(op)
        else:
            self.ops.insert(index, op)
        return op

    # -- queries --------------------------------------------------------------
    def producer(self, v: Value) -> Op | None:
        return v.definition

    def uses(self, v: Value) -> list[Op]:
        """Ops that read ``v``, in topological order, each once."""
        return [op for op in self.ops if any(x is v for x in op.inputs)]

    def consumers(self, v: Value) -> list[Value]:
        """Outputs of the ops that read ``v``."""
        return [out for op in self.uses(v) for out in op.outputs]

    def topological(self) -> list[Op]:
        """Ops in an order where every producer comes before its uses (checked)."""
        seen = {id(v) for v in self.inputs} | {id(v) for v in self.values if v.definition is None}
        for op in self.ops:
            for v in op.inputs:
                if id(v) not in seen:
                    raise ValueError(f"{op!r} reads {v.name} before it is defined")
            seen.update(id(o) for o in op.outputs)
        return list(self.ops)

    def tensors(self) -> list[Value]:
        return [v for v in self.values if v.is_tensor]

    def value(self, name: str) -> Value:
        for v in self.values:
            if v.name == name:
                return v
        raise KeyError(f"no value named {name!r} in this fusion")

    # -- rewriting ------------------------------------------------------------
    def replace_uses(self, old: Value, new: Value, ops: Iterable[Op] | None = None) -> None:
        """Make ``ops`` (default: every use) read ``new`` where they read ``old``."""
        targets = self.uses(old) if ops is None else list(ops)
        for op in targets:
            op.args = {k: map_values(a, lambda v: new if v is old else v) for k, a in op.args.items()}

    def replace_output(self, old: Value, new: Value) -> None:
        self.outputs = [new if v is old else v for v in self.outputs]

    def insert_after(self, anchor: Value, op: Op) -> Op:
        """Insert ``op`` right after the op defining ``anchor`` (or first, for inputs)."""
        index = 0 if anchor.definition is None else self.ops.index(anchor.definition) + 1
        return self.add_op(op, index)

    def copy(self) -> tuple[Fusion, dict[int, Value]]:
        """A deep copy and the map id(old value) -> new value."""
        new = Fusion()
        new._counters = dict(self._counters)
        new.tuning = self.tuning
        vmap: dict[int, Value] = {}
        for v in self.values:
            nv = replace(v, definition=None, recorder=None)
            vmap[id(v)] = nv
            new.values.append(nv)
        new.inputs = [vmap[id(v)] for v in self.inputs]
        for op in self.ops:
            args = {k: map_values(a, lambda v: vmap[id(v)]) for k, a in op.args.items()}
            new.add_op(Op(op.name, args, [vmap[id(o)] for o in op.outputs], op.site))
        new.outputs = [vmap[id(v)] for v in self.outputs]
        new.aliases = [(vmap[id(o)], vmap[id(i)]) for o, i in self.aliases]
        return new, vmap

    def prune(self) -> None:
        """Drop ops none of whose outputs reach a fusion output."""
        needed = ops_needed_by(self.outputs + [o for o, _ in self.aliases])
        self.ops = [op for op in self.ops if id(op) in needed]
        kept = {id(v) for v in self.outputs} | {id(v) for v in self.inputs} | {id(o) for o, _ in self.aliases}
        kept |= {id(v) for op in self.ops for v in [*op.inputs, *op.outputs]}
        self.values = [v for v in self.values if id(v) in kept]

    def keep_outputs(self, indices: Sequence[int]) -> Fusion:
        """A copy with only the outputs at ``indices`` (in that order) and the ops they need; same inputs.
        Aliased outputs (writes into inputs) are dropped: the copy only computes."""
        bad = [i for i in indices if not 0 <= i < len(self.outputs)]
        if bad:
            raise IndexError(f"output indices {bad} out of range: the fusion has {len(self.outputs)} outputs")
        new, _ = self.copy()
        new.outputs = [new.outputs[i] for i in indices]
        new.aliases = []
        new.prune()
        new.tuning = retune(self.tuning, [[i] for i in indices])
        return new

    def rebind(self, recorder: Any) -> None:
        """Make ``recorder`` the definition this fusion's values (and new ones) belong to."""
        self.recorder = recorder
        for v in self.values:
            v.recorder = recorder

    def __repr__(self) -> str:
        return f"<Fusion {len(self.inputs)} inputs, {len(self.ops)} ops, {len(self.outputs)} outputs>"
