"""The qkv split + RoPE backward with no cat of q, k and v: each piece written straight into its slice of dqkv.

nvFuser lowers a cat by computing every piece for every output element and keeping the one whose range holds it,
so the builder's one cat of q, k and v (and of RoPE's halves) costs several pieces' work per element. Here the host
allocates dqkv (B, T, G, Q + 2, hs) and passes views of it as fusion inputs; each piece is an output added with
``alias_input=`` its view, so nvFuser writes it in place. The gradients and the cos/sin tables are host views too
(no copies): dq, dk, dv (B, n_head, T, hs) seen as (B, T, G, [Q,] cols), the tables' column ranges expanded over
B, G (and Q) with stride 0. The fusion then holds no permute, no broadcast op and, in the ``halves`` variants, no
slice or cat: only the arithmetic, the grouped-query sums and casts.

No broadcast op matters: nvFuser's pre-segmentation pass ``SegmentInplaceUpdate`` (csrc/preseg_passes/
segment_inplace_update.cpp, NVIDIA/Fuser PR #2999) moves the in-place write of any aliased output that a broadcast
op reaches into a copy kernel of its own (a read-write race guard), which would write dqkv twice.

Variants, ``segkit tune`` choices of the qkv_split_rope_bwd spec:

* ``slices_halves``: one fusion; every column piece of q, k and v (RoPE's two halves, the pass-through columns of a
  partial rotary; v cut at the same bounds) is its own aliased output, RoPE's adjoint written per half (``_rope.adjoint_halves``);
* ``slices_heads``: one fusion; the q, k and v heads are one aliased output each, q's and k's RoPE halves joined
  by one last-axis cat of two (or three, with pass-through columns) pieces;
* ``slices_per_group``: the halves as two fusions, q's pieces, then k's and v's (with the grouped-query sums).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

import fusions._rope as R
from fusions.configs import RopeConfig
from fusions.formulations import Formulation, register
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.nvf import run_on

GROUPS = ("q", "k", "v")
ROPED = ("q", "k")  # the groups RoPE rotates; v passes through


@dataclass(frozen=True)
class Variant:
    """A way to write dqkv's pieces: ``parts`` are the fusions, each the groups it writes; ``whole_heads`` writes
    each group's head as one output (RoPE's halves joined by a cat) instead of one output per column piece."""

    name: str
    parts: tuple[tuple[str, ...], ...]
    whole_heads: bool
    what: str


VARIANTS = {v.name: v for v in (
    Variant("slices_halves", (GROUPS,), False, "one fusion, every column piece of q, k, v its own aliased output"),
    Variant("slices_heads", (GROUPS,), True, "one fusion, q, k, v heads aliased outputs, RoPE's halves joined by a cat"),
    Variant("slices_per_group", (("q",), ("k", "v")), False, "the column pieces in two fusions: q; k and v"),
)}


def rope_columns(cfg: RopeConfig) -> list[tuple[int, int]]:
    """The head's column ranges: RoPE's two halves, then the pass-through columns of a partial rotary."""
    rn, half, H = cfg.rope_n_elem, cfg.rope_n_elem // 2, cfg.head_size
    return [(0, half), (half, rn)] + ([(rn, H)] if rn < H else [])


def group_columns(cfg: RopeConfig, group: str, whole_heads: bool) -> list[tuple[int, int]]:
    """The column pieces a group's gradient comes in: RoPE's (``rope_columns``), and v's the same unless whole heads
    are written (then v is one piece: it is only cast). v split as q and k keeps every output of a multi-head,
    full-rotary config one shape, so that nvFuser's pointwise scheduler takes them all in one kernel."""
    return [(0, cfg.head_size)] if whole_heads and group not in ROPED else rope_columns(cfg)


def _slot_view(t: torch.Tensor, cfg: RopeConfig) -> torch.Tensor:
    """A (B, T, G, Q, .) view; Q squeezed away in multi-head configs (every tensor then (B, T, G, .))."""
    return t.squeeze(3) if cfg.q_per_kv == 1 else t


def grad_view(g: torch.Tensor, cfg: RopeConfig, lo: int, hi: int) -> torch.Tensor:
    """Columns lo:hi of a gradient (B, n_head, T, hs) as a (B, T, G, [Q,] hi - lo) view."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    return _slot_view(g.view(B, G, Q, T, H).permute(0, 3, 1, 2, 4)[..., lo:hi], cfg)


def out_view(dqkv: torch.Tensor, cfg: RopeConfig, group: str, lo: int, hi: int) -> torch.Tensor:
    """Columns lo:hi of ``group``'s heads in dqkv (B, T, G, Q + 2, hs): q's (B, T, G, [Q,] .), k's and v's (B, T, G, .)."""
    Q = cfg.q_per_kv
    if group == "q":
        return _slot_view(dqkv[:, :, :, :Q, lo:hi], cfg)
    return dqkv[:, :, :, Q + GROUPS.index(group) - 1, lo:hi]


def table_view(t: torch.Tensor, lead: Sequence[int], lo: int, hi: int) -> torch.Tensor:
    """Columns lo:hi of a table (T, rope_n_elem) expanded (stride 0) to ``lead`` + [hi - lo], T at dim 1."""
    cols = t[:, lo:hi]
    return cols[(None, slice(None), *[None] * (len(lead) - 2))].expand(*lead, hi - lo)


def _kv_lead(cfg: RopeConfig) -> list[int]:
    return [cfg.batch, cfg.T, cfg.n_query_groups]


def _q_lead(cfg: RopeConfig) -> list[int]:
    return _kv_lead(cfg) + ([cfg.q_per_kv] if cfg.q_per_kv > 1 else [])


def part_views(cfg: RopeConfig, part: Sequence[str], whole_heads: bool, grads: Sequence[torch.Tensor],
               cos: torch.Tensor, sin: torch.Tensor, dqkv: torch.Tensor) -> dict[str, torch.Tensor]:
    """The inputs of one fusion, by name, in its input order: the gradients' column pieces, the tables' RoPE halves
    at each rank the part needs, then the views of dqkv it writes. All views, never copies."""
    cols = rope_columns(cfg)
    out: dict[str, torch.Tensor] = {}
    for g in part:
        for lo, hi in group_columns(cfg, g, whole_heads):
            out[f"d{g}[{lo}:{hi}]"] = grad_view(grads[GROUPS.index(g)], cfg, lo, hi)
    for g in (g for g in part if g in ROPED):
        lead = _q_lead(cfg) if g == "q" else _kv_lead(cfg)
        for name, t in (("cos", cos), ("sin", sin)):
            for lo, hi in cols[:2]:
                out.setdefault(f"{name}{len(lead)}[{lo}:{hi}]", table_view(t, lead, lo, hi))
    for g in part:
        for lo, hi in [(0, cfg.head_size)] if whole_heads else cols:
            out[f"out_{g}[{lo}:{hi}]"] = out_view(dqkv, cfg, g, lo, hi)
    return out


@dataclass(frozen=True)
class ViewOf:
    """One fusion input as a strided view of a source: 0-4 the builder's inputs (dq, dk, dv, cos, sin), 5 dqkv;
    ``offset`` in elements past the source's own storage offset. Made per call with one ``as_strided``."""

    source: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int

    def of(self, sources: Sequence[torch.Tensor]) -> torch.Tensor:
        src = sources[self.source]
        return src.as_strided(self.size, self.stride, src.storage_offset() + self.offset)


def part_layout(cfg: RopeConfig, part: Sequence[str], whole_heads: bool) -> dict[str, ViewOf]:
    """``part_views`` of meta tensors, each view as the source it is taken of and its sizes, strides and offset."""
    grad = (cfg.batch, cfg.n_head, cfg.T, cfg.head_size)
    sources = [torch.empty(*shape, dtype=cfg.dtype, device="meta") for shape in [grad] * 3 + [(cfg.T, cfg.rope_n_elem)] * 2
               + [(cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv + 2, cfg.head_size)]]
    views = part_views(cfg, part, whole_heads, sources[:3], sources[3], sources[4], sources[5])

    def source(t: torch.Tensor) -> int:
        root = t._base if t._base is not None else t
        return next(i for i, s in enumerate(sources) if s is root)

    return {name: ViewOf(source(t), tuple(t.shape), tuple(t.stride()), t.storage_offset()) for name, t in views.items()}


def define_part(fd, cfg: RopeConfig, part: Sequence[str], whole_heads: bool) -> None:
    """One fusion of a variant: the inputs ``part_views`` gives, RoPE's adjoint per half in fp32, the grouped-query
    sums of dk and dv (over the Q copies, dim 3), each piece cast to the I/O dtype and added with ``alias_input=``
    its view of dqkv."""
    f32, io = dt(fd, "Float"), R.io(fd, cfg)
    x = {name: fd.define_tensor(sizes=list(v.size), strides=list(v.stride), dtype=io, static_sizes=True)
         for name, v in part_layout(cfg, part, whole_heads).items()}
    cols = rope_columns(cfg)
    for g in part:
        pieces = []
        for lo, hi in group_columns(cfg, g, whole_heads):
            p = fd.ops.cast(x[f"d{g}[{lo}:{hi}]"], dtype=f32)
            if g != "q" and cfg.q_per_kv > 1:  # adjoint of the grouped-query expand
                p = fd.ops.sum(p, dims=[3], dtype=f32)
            pieces.append(p)
        if g in ROPED:
            rank = len(_q_lead(cfg) if g == "q" else _kv_lead(cfg)) + 1
            tables = tuple(fd.ops.cast(x[f"{name}{rank - 1}[{lo}:{hi}]"], dtype=f32)
                           for name in ("cos", "sin") for lo, hi in cols[:2])
            pieces[:2] = R.adjoint_halves(fd, pieces[0], pieces[1], tables)
        pieces = [fd.ops.cast(p, dtype=io) for p in pieces]
        if whole_heads:
            head = fd.ops.cat(pieces, dim=-1) if len(pieces) > 1 else pieces[0]
            fd.add_output(head, alias_input=x[f"out_{g}[0:{cfg.head_size}]"])
            continue
        for p, (lo, hi) in zip(pieces, cols):
            fd.add_output(p, alias_input=x[f"out_{g}[{lo}:{hi}]"])


@dataclass
class SlicedRopeBwd:
    """A variant's fusions, recorded; runs on the reference interpreter or nvFuser, taking and giving what the
    one-fusion builder does (dq, dk, dv, cos, sin -> dqkv (B, T, qkv_width)), dqkv allocated here."""

    cfg: RopeConfig
    variant: Variant
    parts: tuple = field(init=False)  # one recorded fusion per entry of variant.parts
    layouts: tuple[tuple[ViewOf, ...], ...] = field(init=False)  # each part's inputs, as views of what a call gets

    def __post_init__(self) -> None:
        built = []
        for part in self.variant.parts:
            with FusionDefinition() as fd:
                define_part(fd, self.cfg, part, self.variant.whole_heads)
            built.append(fd)
        self.parts = tuple(built)
        self.layouts = tuple(tuple(part_layout(self.cfg, part, self.variant.whole_heads).values())
                             for part in self.variant.parts)

    def describe(self) -> str:
        return f"{self.variant.name} ({self.variant.what})"

    def new_dqkv(self, like: torch.Tensor) -> torch.Tensor:
        c = self.cfg
        return torch.empty(c.batch, c.T, c.n_query_groups, c.q_per_kv + 2, c.head_size, dtype=c.dtype, device=like.device)

    def check(self, inputs: Sequence[torch.Tensor]) -> None:
        """One line naming the first input that is not what the builder takes (the views need its exact layout)."""
        c, name = self.cfg, self.variant.name
        if len(inputs) != 5:
            raise SegkitError(f"{name} takes dq, dk, dv, cos, sin; got {len(inputs)} inputs")
        shapes = [(c.batch, c.n_head, c.T, c.head_size)] * 3 + [(c.T, c.rope_n_elem)] * 2
        for what, t, shape in zip(("dq", "dk", "dv", "cos", "sin"), inputs, shapes):
            if not isinstance(t, torch.Tensor) or tuple(t.shape) != shape or t.dtype != c.dtype:
                got = f"{str(t.dtype).removeprefix('torch.')} {list(t.shape)}" if isinstance(t, torch.Tensor) else repr(t)
                raise SegkitError(f"{name} of {c.name}: {what} must be a {str(c.dtype).removeprefix('torch.')} tensor "
                                  f"of shape {list(shape)}, got {got}")
            if not t.is_contiguous():
                raise SegkitError(f"{name} of {c.name}: {what} must be contiguous (its views are recorded so), got "
                                  f"strides {list(t.stride())}")

    def part_args(self, inputs: Sequence[torch.Tensor], dqkv: torch.Tensor) -> list[list[torch.Tensor]]:
        """Each fusion's inputs: views of the builder's inputs (dq, dk, dv, cos, sin) and of ``dqkv``."""
        self.check(inputs)
        sources = [*inputs, dqkv]
        return [[v.of(sources) for v in layout] for layout in self.layouts]

    def run(self, inputs: Sequence[torch.Tensor], backend: str = "reference") -> list[torch.Tensor]:
        dqkv = self.new_dqkv(inputs[0])
        for fd, args in zip(self.parts, self.part_args(inputs, dqkv)):
            run_on(fd, args, backend)
        return [dqkv.view(self.cfg.batch, self.cfg.T, self.cfg.qkv_width)]

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """On nvFuser, like a compiled fusion's ``execute``."""
        return self.run(inputs, "nvfuser")


for _name in VARIANTS:
    register(Formulation(_name, ("qkv_split_rope_bwd",),
                         lambda spec_name, cfg, how: SlicedRopeBwd(cfg, VARIANTS[how.formulation])))
