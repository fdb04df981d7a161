"""The one walk over a fusion that replays its definition somewhere else.

``replay(fusion, target)`` visits inputs, ops (in order) and outputs and asks a
``Target`` to define each: nvf.to_nvfuser's target builds a real nvFuser
definition, the minimizer's target records an edited copy through the
recording frontend, and repro's printer target writes script lines. Each op is
called through its catalogue entry (``OpDef.call_args``: operands positional,
attributes by keyword), so no target knows op names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from segkit import ops as catalogue
from segkit.errors import SegkitError
from segkit.ir import Fusion, Op, Value


class Target(Protocol):
    """What a replay defines things in; each method returns the target's handle for the value."""

    def input(self, v: Value) -> Any:
        """A fusion input (tensor or symbolic scalar)."""

    def constant(self, v: Value) -> Any:
        """A named constant scalar (``define_scalar(value, dtype=...)``)."""

    def literal(self, v: Value) -> Any:
        """A constant written inline as an operand."""

    def atom(self, x: Any) -> Any:
        """A non-Value argument: a DataType, a Python number, None, a bool."""

    def call(self, op: Op, opdef: catalogue.OpDef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """The op applied to lowered arguments; one handle, or a tuple/list for several outputs."""

    def output(self, handle: Any, alias_input: Any = None) -> None:
        """``add_output(handle)`` or, with ``alias_input``, the output written into that input."""


def replay(fusion: Fusion, target: Target, *, inputs: Sequence[Value] | None = None, ops: Iterable[Op] | None = None,
           outputs: Sequence[Value] | None = None, aliases: Sequence[tuple[Value, Value]] | None = None,
           forward: dict[int, Value] | None = None) -> dict[int, Any]:
    """Replay ``fusion`` into ``target``; returns id(value) -> handle.

    The keyword arguments replace parts of the fusion (the minimizer's edits): ``inputs`` (values to define as
    inputs, e.g. cut intermediates), ``ops`` (the ops to replay, in order), ``outputs``/``aliases``, and
    ``forward`` (id(op) -> a value whose handle stands for the op's output instead of calling it).
    """
    handles: dict[int, Any] = {}
    for v in fusion.inputs if inputs is None else inputs:
        handles[id(v)] = target.input(v)

    def lower(x: Any) -> Any:
        if isinstance(x, Value):
            if id(x) not in handles:
                if x.definition is not None or x.value is None:
                    raise SegkitError(f"replay: {x.name} is read before it is defined")
                handles[id(x)] = target.literal(x) if x.literal else target.constant(x)
            return handles[id(x)]
        if isinstance(x, (list, tuple)):
            return type(x)(lower(i) for i in x)
        return target.atom(x)

    forward = forward or {}
    for op in fusion.ops if ops is None else ops:
        if id(op) in forward:
            handles[id(op.outputs[0])] = lower(forward[id(op)])
            continue
        opdef = catalogue.get(op.name)
        if opdef is None:
            raise SegkitError(f"replay: {op.name} is not in the op catalogue")
        pos, kw = opdef.call_args(op.args)
        res = target.call(op, opdef, [lower(a) for a in pos], {k: lower(a) for k, a in kw.items()})
        res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        if len(res) != len(op.outputs):
            raise SegkitError(f"replay: {op.name} gave {len(res)} values for {len(op.outputs)} outputs")
        for v, r in zip(op.outputs, res):
            handles[id(v)] = r
    for v in fusion.outputs if outputs is None else outputs:
        target.output(lower(v))
    for out, inp in fusion.aliases if aliases is None else aliases:
        target.output(lower(out), alias_input=lower(inp))
    return handles
