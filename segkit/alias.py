"""Alias analysis: which tensors can be views of another, and the layout that makes them so.

A Python re-creation of nvFuser's csrc/alias_analysis.cpp on segkit's IR. Ops
are visited in topological order; each meta op tries to carry its input's
preferred layout (allocation order of logical dims + contiguity) to its
output. When it can, the output is an alias of the input:

* set, segment_set, permute: the layout is carried (permute renames dims);
* reshape: the size-1 dims it drops are squeezed, each group of dims is
  merged (dims must be adjacent in allocation order, outer contiguous, no
  expanded dim merged or split) then split, and size-1 dims it adds go last;
* slice: order kept; scanning from innermost out, the next non-broadcast dim
  outside a sliced dim becomes non-contiguous; slicing an expanded dim is not
  an alias;
* broadcast: new broadcast dims go last; squeeze drops dims; expand carries.

The per-op rules live in segkit.ops.view_layouts; the catalogue names each view op's rule
(``OpDef.meta`` and ``OpDef.view_layout``). Every other op (pad, cat, casts,
arithmetic, reductions) computes values. Each alias maps to a root by walking sources up; fusion inputs are never
aliases, and a root may be an intermediate.
"""

from __future__ import annotations

from dataclasses import dataclass

from segkit.args import FusionLike, checked
from segkit.interp import as_fusion
from segkit.ir import Fusion, Value
from segkit.layout import Layout
from segkit.ops import CATALOGUE


def meta_ops() -> frozenset[str]:
    """Names of the catalogue's view ops (``OpDef.meta``): the ops whose output may alias their input."""
    return frozenset(name for name, d in CATALOGUE.items() if d.meta)


def own_layout(v: Value) -> Layout:
    """The layout a tensor has when nothing is preferred: its define_tensor layout, else row-major."""
    if v.contiguity is not None:
        return Layout.from_stride_order(v.stride_order, v.contiguity)
    return Layout.row_major([None if b else True for b in v.broadcast])


@dataclass
class AliasAnalysis:
    """Result of the analysis: for each alias, its source, root and preferred layout."""

    fusion: Fusion
    source: dict[int, Value]
    layout: dict[int, Layout]

    def root(self, v: Value) -> Value | None:
        """The tensor ``v`` is a (transitive) view of, or None when ``v`` is not an alias."""
        if id(v) not in self.source:
            return None
        r = v
        while id(r) in self.source:
            r = self.source[id(r)]
        return r

    def is_alias(self, v: Value) -> bool:
        return id(v) in self.source

    def preferred_layout(self, v: Value) -> Layout:
        return self.layout.get(id(v)) or own_layout(v)

    def aliases(self) -> dict[Value, Value]:
        return {v: self.root(v) for v in self.fusion.tensors() if self.is_alias(v)}


def analyze(fd) -> AliasAnalysis:
    """Run the alias analysis over a recorded fusion."""
    fusion = as_fusion(fd)
    source: dict[int, Value] = {}
    layout: dict[int, Layout] = {}
    for op in fusion.ops:
        opdef = CATALOGUE[op.name]
        rule = opdef.view_layout if opdef.meta else None
        if rule is None or not op.outputs[0].is_tensor:
            continue
        x = op.args[next(iter(op.args))]
        if not isinstance(x, Value) or not x.is_tensor:
            continue
        lay = rule(op, x, layout.get(id(x)) or own_layout(x))
        if lay is not None:
            source[id(op.outputs[0])] = x
            layout[id(op.outputs[0])] = lay
    return AliasAnalysis(fusion, source, layout)


@checked
def find_aliases(fd: FusionLike) -> dict[Value, Value]:
    """alias -> root, for every tensor that can be a view (aliases only)."""
    return analyze(fd).aliases()


@checked
def preferred_layouts(fd: FusionLike) -> dict[Value, Layout]:
    """Every tensor's preferred layout: what makes an alias a view, else its own layout."""
    a = analyze(fd)
    return {v: a.preferred_layout(v) for v in a.fusion.tensors()}
