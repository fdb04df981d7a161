"""Delta-debug a fusion down to a small one that still satisfies a predicate (e.g. "nvFuser mismatches").

Each candidate is the current fusion replayed through the recording frontend
with one edit, so shapes and dtypes are re-checked and an invalid edit is
simply skipped:

* keep fewer outputs;
* cut at an intermediate tensor (it becomes an input with random values),
  which drops everything only it needed (biggest cuts tried first);
* remove an op by forwarding one of its inputs (same shape, dtype and
  broadcast flags) to its uses;
* shrink a size: every occurrence of n in input shapes and shape-like
  attributes (each op's ``OpDef.size_attrs``: reshape/expand shapes, slice
  bounds, pad widths) becomes n/2.

A candidate is kept when it is smaller (fewer ops, then fewer input
elements) and the predicate still holds. Predicate results are cached by the
candidate's script text, so a fusion is never compiled twice.

A fusion with symbolic (-1) input sizes is usually made static first
(:func:`specialize`). When a failure needs the symbolic sizes (nvFuser
concretizes dynamic reshapes, slices and squeezes at run time, and takes
another path for static ones), ``minimize(..., shapes=...)`` minimizes it as
recorded: the run-time shape of each input travels with each candidate (a cut
tensor's comes from a reference run), a size is halved in the run-time shapes
and in the shape-like attributes, and recorded sizes stay -1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.interp import Interpreter, as_fusion, random_inputs
from segkit.ir import Value, ops_needed_by, retune
from segkit.replay import replay
from segkit.printing import fusion_lines


def _subst(x: Any, sizes: dict[int, int]) -> Any:
    if isinstance(x, bool) or not isinstance(x, (int, list, tuple)):
        return x
    if isinstance(x, int):
        return sizes.get(x, x)
    return type(x)(_subst(i, sizes) for i in x)


#: The run-time shape of each fusion input, in order (None for a scalar input).
Shapes = list[tuple[int, ...] | None]


def rebuild(fd: Any, *, outputs: list[int] | None = None, cut: frozenset[int] = frozenset(),
            bypass: dict[int, Value] | None = None, sizes: dict[int, int] | None = None,
            shapes: dict[int, tuple[int, ...]] | None = None) -> FusionDefinition:
    """Replay a fusion with edits (ids are of the original Values/Ops); raises SegkitError if it no longer records.

    outputs: indices of outputs to keep; cut: ids of tensors that become inputs; bypass: op id -> the input
    that replaces its output; sizes: n -> m for every size; shapes: input id -> concrete shape.
    """
    return _rebuild(fd, outputs=outputs, cut=cut, bypass=bypass, sizes=sizes, shapes=shapes)[0]


def _rebuild(fd: Any, *, outputs: list[int] | None = None, cut: frozenset[int] = frozenset(),
             bypass: dict[int, Value] | None = None, sizes: dict[int, int] | None = None,
             shapes: dict[int, tuple[int, ...]] | None = None) -> tuple[FusionDefinition, list[Value]]:
    """:func:`rebuild`, and the original Values that became the new fusion's inputs (in order)."""
    src = as_fusion(fd)
    bypass, sizes, shapes = bypass or {}, sizes or {}, shapes or {}
    keep = [src.outputs[i] for i in (outputs if outputs is not None else range(len(src.outputs)))]
    aliases = list(src.aliases) if outputs is None else []  # writes into inputs stay unless outputs are picked
    live_ops: set[int] = set()
    leaves: list[Value] = []
    stack = keep + [v for pair in aliases for v in pair]
    seen: set[int] = set()
    while stack:  # what the kept outputs need, stopping at cuts and following bypasses
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        op = v.definition
        if op is None or id(v) in cut:
            leaves.append(v)
        elif id(op) in bypass:
            live_ops.add(id(op))
            stack.append(bypass[id(op)])
        else:
            live_ops.add(id(op))
            stack.extend(op.inputs)
    leaf_ids = {id(x) for x in leaves}
    inputs = [v for v in src.inputs if id(v) in leaf_ids] + [v for v in src.values if id(v) in cut and id(v) in leaf_ids]
    new = FusionDefinition()
    replay(src, _Rebuild(new, src, sizes, shapes), inputs=inputs, ops=[op for op in src.ops if id(op) in live_ops],
           outputs=keep, aliases=aliases, forward=bypass)
    new.fusion.tuning = retune(src.tuning, [[i] for i in (outputs if outputs is not None else range(len(keep)))])
    return new, inputs


class _Rebuild:
    """Replay target: record into a new FusionDefinition, with sizes substituted and cut tensors as inputs."""

    def __init__(self, new: FusionDefinition, src: Any, sizes: dict[int, int], shapes: dict[int, tuple[int, ...]]):
        self.new, self.src, self.sizes, self.shapes = new, src, sizes, shapes
        self.original = {id(v) for v in src.inputs}

    def input(self, v: Value) -> Any:
        if not v.is_tensor:
            return self.new.define_scalar(v.value, dtype=v.dtype) if v.value is not None else self.new.define_scalar(dtype=v.dtype)
        shape = list(self.shapes.get(id(v), _subst(list(v.shape), self.sizes)))
        if id(v) in self.original:
            return self.new.define_tensor(shape=shape, contiguity=list(v.contiguity), dtype=v.dtype, is_cpu=v.is_cpu,
                                          stride_order=list(v.stride_order or []))
        contiguity = [None if (b and not e) or e else True for b, e in zip(v.broadcast, v.expanded)]
        return self.new.define_tensor(shape=shape, contiguity=contiguity, dtype=v.dtype)

    def constant(self, v: Value) -> Any:
        return self.new.define_scalar(v.value, dtype=v.dtype)

    def literal(self, v: Value) -> Any:
        return v.value

    def atom(self, x: Any) -> Any:
        return x

    def call(self, op, opdef, args, kwargs) -> Any:
        kwargs = {k: _subst(a, self.sizes) if k in opdef.size_attrs else a for k, a in kwargs.items()}
        return getattr(self.new.ops, op.name)(*args, **kwargs)

    def output(self, handle: Any, alias_input: Any = None) -> None:
        self.new.add_output(handle, alias_input=alias_input)


def size_of(fd: Any, shapes: Shapes | None = None) -> tuple[int, int]:
    """(ops, input elements): what 'smaller' means (elements of the run-time ``shapes`` where given)."""
    f = as_fusion(fd)
    dims = shapes if shapes is not None else [v.shape if v.is_tensor else None for v in f.inputs]
    return len(f.ops), sum(math.prod(s) for s in dims if s is not None)


def specialize(fd: Any, inputs: list[Any]) -> FusionDefinition:
    """The fusion with every dynamic input size replaced by the given inputs' sizes."""
    f = as_fusion(fd)
    shapes = {id(v): tuple(x.shape) for v, x in zip(f.inputs, inputs) if v.is_tensor}
    return rebuild(fd, shapes=shapes)


def is_symbolic(fd: Any) -> bool:
    """Whether some input size is only known at run time (-1)."""
    return any(v.is_tensor and -1 in v.shape for v in as_fusion(fd).inputs)


def runtime_shapes(fd: Any, shapes: Shapes) -> dict[int, tuple[int, ...]]:
    """id(tensor) -> its run-time shape, for every tensor of the fusion when its inputs have ``shapes``
    (a reference run on random values; raises if the reference cannot run it with those sizes)."""
    f = as_fusion(fd)
    bad = [v.describe() for v, s in zip(f.inputs, shapes) if v.is_tensor and (s is None or len(s) != v.ndim or any(
        d not in (-1, n) for d, n in zip(v.shape, s)))]
    if len(shapes) != len(f.inputs) or bad:
        raise SegkitError(f"run-time shapes {shapes} do not fit the fusion's inputs"
                          + (f" ({', '.join(bad)})" if bad else f" ({len(f.inputs)} inputs)"))
    interp = Interpreter(f, random_inputs(f, shapes=shapes))
    interp.run()
    return {vid: tuple(x.shape) for vid, x in interp.env.items() if isinstance(x, torch.Tensor)}


def _candidates(fd: FusionDefinition, shapes: Shapes | None = None,
                runtime: dict[int, tuple[int, ...]] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, edit): each edit is :func:`rebuild`'s keyword arguments. With run-time ``shapes`` (and every
    tensor's ``runtime`` shape), an op is removed only where the sizes match at run time too, and sizes are
    halved where they occur at run time (recorded sizes of -1 stay -1)."""
    f = fd.fusion
    runtime = runtime or {}
    n_out = len(f.outputs)
    if n_out > 1:
        for i in range(n_out):
            yield f"keep output {i}", {"outputs": [i]}
        for i in range(n_out):
            yield f"drop output {i}", {"outputs": [j for j in range(n_out) if j != i]}
    outs = {id(v) for v in f.outputs}
    # not at an Index tensor (welford's count): no client defines an Index input, whose width nvFuser fixes
    # only when it compiles a kernel (csrc/type.h), so such a cut makes a repro of another bug (fuzz finding f032)
    ancestors = {id(v): ops_needed_by([v]) for v in f.tensors()
                 if v.definition is not None and id(v) not in outs and v.dtype is not DataType.Index}
    for vid, anc in sorted(ancestors.items(), key=lambda kv: -len(kv[1])):
        v = next(x for x in f.values if id(x) == vid)
        yield f"cut at {v.name}", {"cut": frozenset({id(v)})}
    for op in reversed(f.ops):
        out = op.outputs[0]
        if len(op.outputs) != 1 or not out.is_tensor:
            continue
        for x in dict.fromkeys(op.inputs):
            if x.is_tensor and (x.shape, x.dtype, x.broadcast, x.expanded) == (out.shape, out.dtype, out.broadcast, out.expanded) \
                    and runtime.get(id(x)) == runtime.get(id(out)):
                yield f"remove {op.name} -> {out.name}", {"bypass": {id(op): x}}
    given = shapes if shapes is not None else [v.shape for v in f.inputs if v.is_tensor]
    dims = sorted({n for s in given if s is not None for n in s if n > 1 and n % 2 == 0}, reverse=True)
    for n in dims:
        yield f"size {n} -> {n // 2}", {"sizes": {n: n // 2}}


@dataclass
class MinimizeResult:
    fd: FusionDefinition
    steps: list[str] = field(default_factory=list)
    checks: int = 0
    seconds: float = 0.0
    start_size: tuple[int, int] = (0, 0)
    shapes: Shapes | None = None  # the result's run-time input shapes (when minimized with symbolic sizes)


def minimize(fd: Any, predicate: Callable[..., bool], *, max_seconds: float = 900,
             log: Callable[[str], None] = print, on_accept: Callable[[str, FusionDefinition], None] | None = None,
             shapes: Shapes | None = None) -> MinimizeResult:
    """Greedily shrink ``fd`` while ``predicate(fd)`` holds (it must hold for ``fd`` itself).

    ``shapes``: the run-time shape of each input of a fusion minimized with its sizes as recorded (symbolic
    sizes kept); each candidate then comes with its own, and the predicate is asked ``predicate(fd, shapes)``.
    """
    t0 = time.perf_counter()
    current = fd if isinstance(fd, FusionDefinition) else FusionDefinition.from_fusion(as_fusion(fd))
    runtime = runtime_shapes(current, shapes) if shapes is not None else {}
    cache: dict[str, bool] = {}
    result = MinimizeResult(current, start_size=size_of(current, shapes), shapes=shapes)

    def holds(cand: FusionDefinition, cand_shapes: Shapes | None) -> bool:
        key = "\n".join(fusion_lines(cand.fusion)) + ("" if cand_shapes is None else f"\n{cand_shapes}")
        if key not in cache:
            result.checks += 1
            try:
                cache[key] = bool(predicate(cand) if cand_shapes is None else predicate(cand, cand_shapes))
            except Exception:  # a candidate the backend cannot run does not reproduce the failure
                cache[key] = False
        return cache[key]

    if not holds(current, shapes):
        raise SegkitError("the predicate does not hold for the fusion itself: nothing to minimize")
    improved = True
    while improved and time.perf_counter() - t0 < max_seconds:
        improved = False
        for label, edit in _candidates(current, shapes, runtime):
            if time.perf_counter() - t0 >= max_seconds:
                log(f"time limit of {max_seconds:.0f} s reached")
                break
            try:
                cand, sources = _rebuild(current, **edit)
            except SegkitError:
                continue  # the edit does not record (shapes no longer fit)
            cand_shapes = None if shapes is None else \
                [_subst(runtime[id(v)], edit.get("sizes", {})) if v.is_tensor else None for v in sources]
            if size_of(cand, cand_shapes) >= size_of(current, shapes):
                continue
            cand_runtime = {}
            if shapes is not None:
                try:
                    cand_runtime = runtime_shapes(cand, cand_shapes)
                except Exception:  # the sizes no longer fit at run time (e.g. a reshape of a halved size)
                    continue
            if holds(cand, cand_shapes):
                current, shapes, runtime = cand, cand_shapes, cand_runtime
                result.steps.append(label)
                log(f"  {label}: {size_of(cand, shapes)[0]} ops, {size_of(cand, shapes)[1]} input elements "
                    f"({result.checks} checks, {time.perf_counter() - t0:.1f} s)")
                if on_accept:
                    on_accept(label, cand)
                improved = True
                break
    result.fd, result.shapes, result.seconds = current, shapes, time.perf_counter() - t0
    return result


def input_shapes(inputs: list[Any]) -> Shapes:
    """The run-time shape of each input (None for a scalar): ``minimize``'s ``shapes``."""
    return [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]


def minimize_as_recorded_if_needed(fd: Any, inputs: list[Any], predicate: Callable[..., bool], *,
                                   max_seconds: float = 900, log: Callable[[str], None] = print) -> MinimizeResult:
    """:func:`minimize` ``fd`` as run on ``inputs``: with its sizes made static first (they can then be halved);
    when the predicate does not hold with static sizes and ``fd`` has symbolic ones, with its sizes as recorded
    (the result's ``shapes`` is then set). Raises SegkitError when the predicate holds for neither."""
    t0 = time.perf_counter()
    try:
        return minimize(specialize(fd, inputs), predicate, max_seconds=max_seconds, log=log)
    except SegkitError:
        if not is_symbolic(fd):
            raise
    return minimize(fd, predicate, max_seconds=max(0.0, max_seconds - (time.perf_counter() - t0)), log=log,
                    shapes=input_shapes(inputs))
