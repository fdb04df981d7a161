"""A picture of a fusion: its DAG with segments (or bookend regions) as clusters, meta (view) ops drawn apart
from compute (dashed, italic), bookend cuts (red dashed, "segment_set") and aliases ("view of") marked, edges
between clusters in orange, every edge labelled with its shape and dtype.

``Picture`` is the drawing's data; ``to_dot`` writes Graphviz text (always), ``draw`` renders with matplotlib
and a layered layout computed here, so PNG and SVG need no Graphviz binary: clusters are laid out left to
right in segment order, ops top to bottom by depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from segkit.alias import analyze, meta_ops
from segkit.interp import as_fusion
from segkit.ir import Fusion, Value


@dataclass
class Cluster:
    label: str
    ops: list[int]  # indices into fusion.ops


@dataclass
class Picture:
    fusion: Fusion
    clusters: list[Cluster]
    cuts: set[tuple[int, int]] = field(default_factory=set)  # (id(tensor), id(user op)); user 0 = the output
    aliases: dict[int, str] = field(default_factory=dict)  # id(value) -> name of the tensor it views
    title: str = ""
    shapes: dict[int, tuple[int, ...]] = field(default_factory=dict)  # concrete shapes when known


def picture(fd: Any, clusters: Sequence[Cluster], cuts: Sequence[Any] = (), title: str = "",
            shapes: dict[int, tuple[int, ...]] | None = None) -> Picture:
    """The drawing of ``fd`` with these clusters; ``cuts`` are bookend Cuts (segment_set positions)."""
    fusion = as_fusion(fd)
    placed = [i for c in clusters for i in c.ops]
    if sorted(placed) != list(range(len(fusion.ops))):
        raise ValueError("clusters must hold every op exactly once")
    cut_set = set()
    for c in cuts:
        cut_set |= {(id(c.tensor), id(u)) for u in c.users}
        if c.tensor in fusion.outputs:
            cut_set.add((id(c.tensor), 0))
    analysis = analyze(fusion)
    aliases = {id(v): root.name for v, root in analysis.aliases().items()}
    return Picture(fusion, list(clusters), cut_set, aliases, title, dict(shapes or {}))


def _short_dtype(v: Value) -> str:
    return {"BFloat16": "bf16", "Half": "f16", "Float": "f32", "Double": "f64", "Bool": "bool", "Int": "i64",
            "Int32": "i32"}.get(v.dtype.name, v.dtype.name)


def edge_label(p: Picture, v: Value) -> str:
    shape = p.shapes.get(id(v), v.shape or ())
    return f"{'x'.join('?' if s == -1 else str(s) for s in shape)} {_short_dtype(v)}"


@dataclass
class _Edge:
    src: str
    dst: str
    value: Value
    cut: bool
    crossing: bool = False  # between two clusters: through global memory when clusters are segments


def _nodes_and_edges(p: Picture):
    f = p.fusion
    op_node = {id(op): f"op{i}" for i, op in enumerate(f.ops)}
    edges, seen = [], set()
    for op in f.ops:
        for v in op.inputs:
            if not v.is_tensor:
                continue
            src = op_node[id(v.definition)] if v.definition is not None else f"in_{v.name}"
            key = (src, op_node[id(op)], id(v))
            if key not in seen:
                seen.add(key)
                edges.append(_Edge(src, op_node[id(op)], v, (id(v), id(op)) in p.cuts))
    for v in dict.fromkeys(f.outputs):
        src = op_node[id(v.definition)] if v.definition is not None else f"in_{v.name}"
        edges.append(_Edge(src, f"out_{v.name}", v, (id(v), 0) in p.cuts))
    cluster_of = {f"op{i}": k for k, c in enumerate(p.clusters) for i in c.ops}
    for e in edges:
        e.crossing = e.src in cluster_of and e.dst in cluster_of and cluster_of[e.src] != cluster_of[e.dst]
    return op_node, edges


def _op_text(p: Picture, i: int) -> str:
    op = p.fusion.ops[i]
    outs = ",".join(o.name for o in op.outputs)
    alias = [p.aliases[id(o)] for o in op.outputs if id(o) in p.aliases]
    return f"{outs} = {op.name}" + (f"\nview of {alias[0]}" if alias else "")


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(p: Picture) -> str:
    """Graphviz text: one ``subgraph cluster_k`` per cluster; meta ops dashed, compute filled; cuts red dashed."""
    f = p.fusion
    _, edges = _nodes_and_edges(p)
    out = ["digraph fusion {", "  rankdir=TB; node [fontname=Helvetica, fontsize=10]; edge [fontsize=8];"]
    if p.title:
        out.append(f'  label="{_esc(p.title)}"; labelloc=t;')
    for v in f.inputs:
        if v.is_tensor:
            out.append(f'  "in_{v.name}" [shape=ellipse, label="{_esc(v.name + " (input)")}"];')
    for k, c in enumerate(p.clusters):
        out.append(f'  subgraph cluster_{k} {{ label="{_esc(c.label)}"; style=rounded;')
        for i in c.ops:
            meta = f.ops[i].name in meta_ops()
            style = 'style="dashed", color=gray40' if meta else 'style="filled", fillcolor="#cfe2ff"'
            out.append(f'    "op{i}" [shape=box, {style}, label="{_esc(_op_text(p, i))}", kind={"meta" if meta else "compute"}];')
        out.append("  }")
    for v in dict.fromkeys(f.outputs):
        out.append(f'  "out_{v.name}" [shape=doublecircle, label="{v.name}", fontsize=8];')
    for e in edges:
        label = edge_label(p, e.value)
        if e.cut:
            out.append(f'  "{e.src}" -> "{e.dst}" [label="segment_set\\n{_esc(label)}", style=dashed, color=red, cut=true];')
        elif e.crossing:
            out.append(f'  "{e.src}" -> "{e.dst}" [label="{_esc(label)}", color=darkorange, penwidth=2, crossing=true];')
        else:
            out.append(f'  "{e.src}" -> "{e.dst}" [label="{_esc(label)}"];')
    out.append("}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- matplotlib rendering
def _layout(p: Picture) -> dict[str, tuple[float, float]]:
    f = p.fusion
    op_node, edges = _nodes_and_edges(p)
    depth: dict[int, int] = {}
    for i, op in enumerate(f.ops):
        preds = [depth[j] for v in op.inputs if v.definition is not None
                 for j in [f.ops.index(v.definition)] if j in depth]
        depth[i] = 1 + max(preds, default=-1)
    pos: dict[str, tuple[float, float]] = {}
    x0 = 0.0
    for c in p.clusters:
        by_depth: dict[int, list[int]] = {}
        for i in c.ops:
            by_depth.setdefault(depth[i], []).append(i)
        width = max((len(v) for v in by_depth.values()), default=1)
        for d, ops in by_depth.items():
            for k, i in enumerate(ops):
                pos[op_node[id(f.ops[i])]] = (x0 + k + (width - len(ops)) / 2, float(d))
        x0 += width + 0.8
    consumers: dict[str, list[float]] = {}
    for e in edges:
        if e.src.startswith("in_") and e.dst in pos:
            consumers.setdefault(e.src, []).append(pos[e.dst][0])
    xs = sorted((sum(v) / len(v), n) for n, v in consumers.items())
    last = -1e9
    for x, n in xs:
        x = max(x, last + 1.0)
        pos[n] = (x, -1.2)
        last = x
    for e in edges:
        if e.dst.startswith("out_") and e.src in pos:
            sx, sy = pos[e.src]
            pos[e.dst] = (sx + 0.25, sy + 0.75)
    return pos


def draw(p: Picture, ax) -> None:
    """Render ``p`` on a matplotlib Axes (y grows downwards: inputs on top)."""
    from matplotlib.patches import FancyBboxPatch

    f = p.fusion
    pos = _layout(p)
    op_node, edges = _nodes_and_edges(p)
    w, h = 0.42, 0.22
    colors = ["#e8f0fe", "#fef3e2", "#e6f4ea", "#fce8e6", "#f3e8fd", "#e0f7fa"]
    for k, c in enumerate(p.clusters):
        pts = [pos[f"op{i}"] for i in c.ops]
        if not pts:
            continue
        x_lo, x_hi = min(x for x, _ in pts) - 0.55, max(x for x, _ in pts) + 0.55
        y_lo, y_hi = min(y for _, y in pts) - 0.45, max(y for _, y in pts) + 0.45
        ax.add_patch(FancyBboxPatch((x_lo, y_lo), x_hi - x_lo, y_hi - y_lo, boxstyle="round,pad=0.02",
                                    fc=colors[k % len(colors)], ec="gray", lw=0.8, zorder=0))
        ax.text(x_lo + 0.05, y_lo + 0.05, c.label, fontsize=6.5, va="top", ha="left", weight="bold", zorder=5)
    for e in edges:
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        color = "red" if e.cut else "darkorange" if e.crossing else "#555"
        ax.annotate("", xy=(x2, y2 - h), xytext=(x1, y1 + h), zorder=1,
                    arrowprops=dict(arrowstyle="->", lw=1.2 if e.cut or e.crossing else 0.6, color=color,
                                    linestyle="--" if e.cut else "-", shrinkA=0, shrinkB=0))
        label = ("segment_set " if e.cut else "") + edge_label(p, e.value)
        ax.text((x1 + x2) / 2, (y1 + y2) / 2, label, fontsize=4.5, color="red" if e.cut else "#333",
                ha="center", va="center", zorder=3, bbox=dict(fc="white", ec="none", alpha=0.7, pad=0.3))
    for i, op in enumerate(f.ops):
        x, y = pos[op_node[id(op)]]
        meta = op.name in meta_ops()
        ax.add_patch(FancyBboxPatch((x - w, y - h), 2 * w, 2 * h, boxstyle="round,pad=0.01", zorder=4,
                                    fc="white" if meta else "#cfe2ff", ec="gray" if meta else "#1a4d8f",
                                    ls="--" if meta else "-", lw=0.8))
        ax.text(x, y, _op_text(p, i), fontsize=5, ha="center", va="center", zorder=6,
                style="italic" if meta else "normal")
    for v in f.inputs:
        if f"in_{v.name}" in pos:
            x, y = pos[f"in_{v.name}"]
            ax.text(x, y, f"{v.name}\n{edge_label(p, v)}", fontsize=5.5, ha="center", va="center", zorder=6,
                    bbox=dict(boxstyle="round,pad=0.3", fc="#fff7d6", ec="#b08900", lw=0.7))
    for v in dict.fromkeys(f.outputs):
        x, y = pos[f"out_{v.name}"]
        ax.text(x, y, f"out {v.name}", fontsize=5.5, ha="center", va="center", zorder=6,
                bbox=dict(boxstyle="circle,pad=0.2", fc="#e6f4ea", ec="#137333", lw=0.7))
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.set_ylim(max(ys) + 1, min(ys) - 0.8)
    ax.set_axis_off()
    if p.title:
        ax.set_title(p.title, fontsize=8)


def figure_size(pictures: Sequence[Picture]) -> tuple[float, float]:
    spans = []
    for p in pictures:
        pos = _layout(p)
        xs = [x for x, _ in pos.values()] or [0]
        ys = [y for _, y in pos.values()] or [0]
        spans.append((max(xs) - min(xs) + 2, max(ys) - min(ys) + 2))
    return (min(sum(s[0] for s in spans) * 1.25, 80), min(max(s[1] for s in spans) * 0.85, 60))


def save(pictures: Picture | Sequence[Picture], stem: str | Path) -> dict[str, Path]:
    """Write ``stem.dot`` (each picture's DOT text), ``stem.png`` and ``stem.svg`` (side by side)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pics = [pictures] if isinstance(pictures, Picture) else list(pictures)
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = {"dot": stem.with_suffix(".dot"), "png": stem.with_suffix(".png"), "svg": stem.with_suffix(".svg")}
    paths["dot"].write_text("\n".join(to_dot(p) for p in pics))
    fig, axes = plt.subplots(1, len(pics), figsize=figure_size(pics), squeeze=False)
    for p, ax in zip(pics, axes[0]):
        draw(p, ax)
    fig.tight_layout()
    fig.savefig(paths["png"], dpi=110)
    fig.savefig(paths["svg"])
    plt.close(fig)
    return paths
