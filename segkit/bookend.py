"""The bookend / mark-aliases pass: cut meta-op chains off the fusion boundary.

A re-creation of nvFuser's MarkAliasesPrepare (csrc/preseg_passes/
mark_aliases_prepare.cpp) that users can steer:

* ``"outputs"`` (what nvFuser ships, PR #2639): from each output, walk up
  through aliases whose defining op is not needed by any non-alias tensor,
  and cut where the walk stops;
* ``"inputs+outputs"`` (unmerged PR #2815): also walk down breadth-first from
  each input through meta ops, stopping at a non-meta use or at a fork (unless
  every use is a slice, the RoPE split), and cut there;
* ``"none"``; and ``ops={...}``: only these meta ops may be bookended (the
  others count as computing values).

A plan is realized either by inserting ``segment_set`` ops (nvFuser then
segments there and runs the meta chains as no-op segments) or as a
:class:`HostPlan` that runs the bookended ops as torch views around a smaller
core fusion (what Thunder's removed ``nv_enable_bookend`` did).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import torch

from segkit.alias import AliasAnalysis, analyze, meta_ops
from segkit.args import FusionLike, checked
from segkit.errors import ArgumentError
from segkit.frontend import FusionDefinition
from segkit.interp import Interpreter, as_fusion, check_inputs, run_reference
from segkit.ir import Fusion, Op, Value, ops_needed_by, retune
from segkit.layout import compute_tensor_descriptor
from segkit.nvfuser.run import run_nvfuser
from segkit.ops import CATALOGUE, is_segment_boundary

Policy = Literal["none", "outputs", "inputs+outputs"]
POLICIES = get_args(Policy)
#: How a plan is realized: segment_set ops in the fusion, or the bookended ops as torch views on the host.
Realization = Literal["segment_set", "host"]


@dataclass
class Cut:
    """Insert ``segment_set`` after ``tensor`` and redirect ``users`` (and the output, if it is one)."""

    tensor: Value
    users: list[Op]


@dataclass
class Plan:
    """What the pass decided for one fusion; ``apply`` realizes it."""

    fd: Any
    policy: str
    ops: frozenset[str] | None
    analysis: AliasAnalysis
    cuts: list[Cut]
    prologue: list[Op] = field(default_factory=list)  # meta ops reached from inputs (inputs+outputs)
    epilogue: list[Op] = field(default_factory=list)  # meta ops walked from outputs

    @property
    def fusion(self) -> Fusion:
        return as_fusion(self.fd)

    @property
    def segment_sets(self) -> dict[Value, list[Value]]:
        """cut tensor -> outputs of the users redirected to its copy."""
        return {c.tensor: [o for u in c.users for o in u.outputs] for c in self.cuts}

    def apply(self, realization: str = "segment_set"):
        if realization == "segment_set":
            return _with_segment_sets(self)
        if realization == "host":
            return HostPlan.build(self)
        raise ValueError(f"realization must be 'segment_set' or 'host', got {realization!r}")

    def describe(self) -> str:
        lines = [f"policy {self.policy}" + (f", ops {sorted(self.ops)}" if self.ops else "")]
        for v, root in self.analysis.aliases().items():
            lay = self.analysis.preferred_layout(v)
            lines.append(f"  alias {v.name} -> {root.name}  order {list(lay.order)} contiguity {list(lay.contiguity)}")
        if not self.cuts:
            lines.append("  no segment_set")
        for c in self.cuts:
            users = ", ".join(f"{u.name}->{'/'.join(o.name for o in u.outputs)}" for u in c.users)
            lines.append(f"  segment_set after {c.tensor.name}, redirecting {users or 'the output'}")
        return "\n".join(lines)


@checked
def bookend(fd: FusionLike, policy: Policy = "outputs", ops: Iterable[str] | None = None) -> Plan:
    """Decide where to cut meta-op chains off the fusion boundary (see module docstring)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    allowed = frozenset(ops) if ops is not None else None
    meta = meta_ops()
    if allowed is not None and not allowed <= meta:
        raise ArgumentError(f"bookend(): ops must be meta op names: {sorted(allowed - meta)} are not meta ops; meta ops "
                            f"are {sorted(meta)}")
    fusion = as_fusion(fd)
    analysis = analyze(fusion)
    if policy == "none":
        return Plan(fd, policy, allowed, analysis, [])

    def is_alias(v: Value) -> bool:  # an alias the pass may bookend
        return analysis.is_alias(v) and (allowed is None or v.definition.name in allowed)

    def is_meta(op: Op) -> bool:
        return all(o.is_tensor and is_alias(o) for o in op.outputs)

    depended = _depended_by_non_aliases(fusion, is_alias)
    uses: dict[tuple[int, int], tuple[Value, Op | None]] = {}
    epilogue: list[Op] = []
    for out in fusion.outputs:  # step 1: bookend from outputs
        tensor, user, walked = out, None, []
        while is_alias(tensor) and id(tensor.definition) not in depended:
            user = tensor.definition
            walked.append(user)
            tensor = user.inputs[0]
        if user is not None:
            uses[(id(tensor), id(user))] = (tensor, user)
            epilogue += [op for op in walked if op not in epilogue]

    prologue: list[Op] = []
    if policy == "inputs+outputs":  # step 2: bookend from inputs
        frontier = deque(v for v in fusion.inputs if v.is_tensor)
        while frontier:
            tv = frontier.popleft()
            users = fusion.uses(tv)
            forks = len(users) > 1 and not all(CATALOGUE[u.name].bookend_forks for u in users)
            if all(is_meta(u) for u in users) and not forks:
                for u in users:
                    if (id(tv), id(u)) in uses:
                        continue
                    if u not in prologue and u not in epilogue:
                        prologue.append(u)
                    frontier.extend(o for o in u.outputs if o.is_tensor)
            else:
                uses[(id(tv), 0)] = (tv, None)

    cuts = _resolve_cuts(fusion, list(uses.values()))
    order = {id(op): i for i, op in enumerate(fusion.ops)}
    return Plan(fd, policy, allowed, analysis, cuts, sorted(prologue, key=lambda o: order[id(o)]),
                sorted(epilogue, key=lambda o: order[id(o)]))


def bookended(fd: Any, policy: str, ops: Iterable[str] | None = None) -> Any:
    """``fd`` with ``policy``'s segment_sets inserted, or ``fd`` itself where the policy cuts nothing."""
    if policy == "none":
        return fd
    plan = bookend(fd, policy, ops)
    return plan.apply("segment_set") if plan.cuts else fd


def _depended_by_non_aliases(fusion: Fusion, is_alias) -> set[int]:
    """ids of ops transitively needed to compute any tensor that is not a (bookendable) alias."""
    return ops_needed_by(v for v in fusion.tensors() if not is_alias(v))


def _resolve_cuts(fusion: Fusion, uses: list[tuple[Value, Op | None]]) -> list[Cut]:
    """Group recorded uses by tensor and apply nvFuser's rules for when a segment_set is useless."""
    by_tensor: dict[int, list[tuple[Value, Op | None]]] = {}
    for u in uses:
        by_tensor.setdefault(id(u[0]), []).append(u)
    cuts = []
    for group in sorted(by_tensor.values(), key=lambda g: fusion.values.index(g[0][0])):
        tensor = group[0][0]
        all_uses = fusion.uses(tensor)
        recorded = [op for _, op in group if op is not None]
        if any(op is None for _, op in group):  # cut from all users, except those the outputs walk keeps
            users = [op for op in all_uses if op not in recorded]
        else:
            users = [op for op in all_uses if op in recorded]
        if len(users) == len(all_uses):
            if tensor in fusion.inputs:
                continue  # a segment_set between an input and all its users changes nothing
            if tensor.definition is not None and is_segment_boundary(tensor.definition):
                continue
        if all(is_segment_boundary(op) for op in users):
            continue
        cuts.append(Cut(tensor, users))
    return cuts


def _with_segment_sets(plan: Plan) -> FusionDefinition:
    fusion, vmap = plan.fusion.copy()
    ops = {id(old): new for old, new in zip(plan.fusion.ops, fusion.ops)}
    for cut in plan.cuts:
        t = vmap[id(cut.tensor)]
        copy = fusion.new_value(t.dtype, t.shape, broadcast=t.broadcast, expanded=t.expanded)
        users = [ops[id(u)] for u in cut.users]
        fusion.replace_uses(t, copy, users)
        fusion.insert_after(t, Op("segment_set", {"x": t}, [copy], "inserted by segkit.bookend"))
        if t in fusion.outputs:
            fusion.replace_output(t, copy)
    return FusionDefinition.from_fusion(fusion)


@dataclass
class HostPlan:
    """Bookended meta ops as torch views around a smaller core fusion (a ``segkit.nvfuser.runnable.Runnable``)."""

    plan: Plan
    prologue: list[Op]
    epilogue: list[Op]
    core_ops: list[Op]
    core_inputs: list[Value]
    core_outputs: list[Value]
    _cores: dict = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, plan: Plan) -> HostPlan:
        fusion = plan.fusion
        host = {id(op) for op in plan.prologue + plan.epilogue}
        live = ops_needed_by(fusion.outputs)  # dead ops may read epilogue values: leave them out
        core_ops = [op for op in fusion.ops if id(op) not in host and id(op) in live]
        produced = {id(o) for op in core_ops for o in op.outputs}
        core_inputs, seen = [], set()
        for op in core_ops:
            for v in op.inputs:
                if id(v) not in produced and id(v) not in seen and (v.definition is not None or v in fusion.inputs):
                    seen.add(id(v))
                    core_inputs.append(v)
        wanted = [v for op in plan.epilogue for v in op.inputs] + list(fusion.outputs)
        core_outputs, seen = [], set()
        for v in wanted:
            if id(v) in produced and id(v) not in seen:
                seen.add(id(v))
                core_outputs.append(v)
        return cls(plan, plan.prologue, plan.epilogue, core_ops, core_inputs, core_outputs)

    def core_fusion(self, core_args: Sequence[Any]) -> FusionDefinition:
        """The core fusion for these run-time inputs (views carry their actual layout)."""
        key = tuple((tuple(a.shape), tuple(a.stride()), a.dtype) if isinstance(a, torch.Tensor) else type(a)
                    for a in core_args)
        if key in self._cores:
            return self._cores[key]
        core = sub_fusion(self.plan.fusion, self.core_ops, self.core_inputs, self.core_outputs, core_args)
        core.fusion.tuning = retune(self.plan.fusion.tuning, self._served())
        self._cores[key] = core
        return self._cores[key]

    def _served(self) -> list[list[int]]:
        """For each core output, the indices of the fusion outputs computed from it (through the epilogue)."""
        epilogue, core = {id(op) for op in self.epilogue}, {id(v): j for j, v in enumerate(self.core_outputs)}
        served: list[list[int]] = [[] for _ in self.core_outputs]
        for i, out in enumerate(self.plan.fusion.outputs):
            stack, seen = [out], set()
            while stack:
                v = stack.pop()
                if id(v) in seen:
                    continue
                seen.add(id(v))
                if id(v) in core:
                    served[core[id(v)]].append(i)
                elif v.definition is not None and id(v.definition) in epilogue:
                    stack.extend(v.definition.inputs)
        return served

    def after_prologue(self, inputs: Sequence[Any]) -> Interpreter:
        """The host interpreter with the prologue's views of ``inputs`` made (the core reads them from it)."""
        host = Interpreter(self.plan.fusion, list(inputs))
        for op in self.prologue:
            host.run_op(op)
        return host

    def run(self, inputs: Sequence[Any], backend: str = "reference", check: bool = True) -> list[Any]:
        """Prologue views, the core fusion on ``backend``, epilogue views; outputs in fusion order."""
        fusion = self.plan.fusion
        if check:
            check_inputs(fusion, list(inputs))
        host = self.after_prologue(inputs)
        if self.core_outputs:
            args = [host.value_of(v) for v in self.core_inputs]
            core = self.core_fusion(args)
            outs = _run_backend(core, args, backend)
            for v, o in zip(self.core_outputs, outs):
                host.env[id(v)] = o
        for op in self.epilogue:
            host.run_op(op)
        return [host.value_of(v) for v in fusion.outputs]

    def execute(self, inputs: Sequence[Any]) -> list[Any]:
        """``run`` on nvFuser."""
        return self.run(inputs, "nvfuser")


def sub_fusion(fusion: Fusion, ops: Sequence[Op], inputs: Sequence[Value], outputs: Sequence[Value],
               args: Sequence[Any]) -> FusionDefinition:
    """A fusion of ``ops`` alone: ``inputs`` become its inputs with the layout of the run-time ``args``
    (views keep their strides), ``outputs`` its outputs; ops that feed none of them are dropped."""
    new, vmap = fusion.copy()
    keep = {id(vmap[id(o)]) for op in ops for o in op.outputs}
    new.ops = [op for op in new.ops if id(op.outputs[0]) in keep]
    for op in new.ops:  # a scalar known while recording whose producer is left out is a constant of the piece
        for v in op.inputs:
            if not v.is_tensor and v.value is not None and v.definition is not None and id(v) not in keep:
                v.definition = None
    new.inputs = []
    for v, a in zip(inputs, args):
        nv = vmap[id(v)]
        nv.definition = None
        if nv.is_tensor:
            contiguity, stride_order = compute_tensor_descriptor(list(a.shape), list(a.stride()))
            nv.contiguity, nv.stride_order = tuple(contiguity), tuple(stride_order)
            # what the piece receives decides what is expanded: an expand the producer materialized is a plain dim
            nv.expanded = tuple(st == 0 and n > 1 for st, n in zip(a.stride(), a.shape))
            nv.broadcast = tuple(e or (b and n == 1) for e, b, n in zip(nv.expanded, nv.broadcast, a.shape))
        new.inputs.append(nv)
    new.outputs = [vmap[id(v)] for v in outputs]
    new.prune()
    return FusionDefinition.from_fusion(new)


def _run_backend(fd: Any, inputs: Sequence[Any], backend: str | Callable) -> list[Any]:
    """Run on "reference", "nvfuser", or a callable ``backend(fd, inputs) -> outputs`` (a fuzz target)."""
    if callable(backend):
        return backend(fd, list(inputs))
    if backend == "reference":
        return run_reference(fd, inputs)
    if backend == "nvfuser":
        return run_nvfuser(fd, inputs, profile=False).outputs
    raise ValueError(f"backend must be 'reference', 'nvfuser' or a callable, got {backend!r}")


@checked
def run_plan(plan: Plan | HostPlan | FusionLike, inputs: Sequence[Any],
             backend: Literal["reference", "nvfuser"] | Callable = "reference",
             realization: Realization = "segment_set") -> list[Any]:
    """Run a plan's realization (or a HostPlan / FusionDefinition) on a backend."""
    if isinstance(plan, Plan):
        plan = plan.apply(realization)
    if isinstance(plan, HostPlan):
        return plan.run(inputs, backend)
    return _run_backend(plan, inputs, backend)
