"""The qkv split + RoPE backward with no cat of q, k and v: each piece written straight into its slice of dqkv.

nvFuser lowers a cat by computing every piece for every output element and keeping the one whose range holds it,
so the builder's one cat of q, k and v (and of RoPE's halves) costs several pieces' work per element. Here the host
allocates dqkv (B, T, G, Q + 2, hs) and passes views of it as fusion inputs; each piece is an output added with
``alias_input=`` its view, so nvFuser writes it in place. The gradients and the cos/sin tables are host views too
(no copies): dq, dk, dv (B, n_head, T, hs) seen as (B, G, [Q,] T, cols), the tables' column ranges expanded over
B, G (and Q) with stride 0. The fusion then holds no permute, no broadcast op and, in the ``halves`` variants, no
slice or cat: only the arithmetic, the grouped-query sums and casts.

No broadcast op matters: nvFuser's pre-segmentation pass ``SegmentInplaceUpdate`` (csrc/preseg_passes/
segment_inplace_update.cpp, NVIDIA/Fuser PR #2999) moves the in-place write of any aliased output that a broadcast
op reaches into a copy kernel of its own (a read-write race guard), which would write dqkv twice.

The fusion's dims are ordered (B, G, [Q,] T, cols), the gradients' own order, not dqkv's (B, T, G, ...): a view of
dqkv then has a stride order that is a real permutation, which nvFuser keeps as the input's allocation domain, and
only then does ``add_output(alias_input=)`` give the output the view's contiguity (``segkit.layout.
alias_loses_layout``: in dqkv's own order the slices were written as dense tensors, scrambling dqkv). A piece
only passed through (v of a multi-head config, a partial rotary's last columns) is a ``set``, not a bf16 -> fp32 ->
bf16 cast pair: nvFuser's ConsecutiveCastPass folds that pair into the input itself (csrc/preseg_passes/
consecutive_cast.cpp:282 at 7e04d265a), and the aliased output would never be written.

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
from segkit.nvfuser.run import run_on

GROUPS = ("q", "k", "v")
ROPED = ("q", "k")  # the groups RoPE rotates; v passes through


@dataclass(frozen=True)
class Variant:
    """A way to write dqkv's pieces: ``parts`` are the fusions, each the groups it writes; ``whole_heads`` writes
    each group's head as one output (RoPE's halves joined by a cat) instead of one output per column piece;
    ``order`` the dim order of the fusion's tensors."""

    name: str
    parts: tuple[tuple[str, ...], ...]
    whole_heads: bool
    what: str
    order: str = "bgt"  # the fusion's dim order, a key of ORDERS


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


# The fusion's dim order, as a permutation of (B, T, G, Q, cols): "bgt" the gradients' order (dqkv's views are
# then permuted, and nvFuser keeps their layout); "btg" dqkv's own (its views are row-major, and nvFuser writes an
# aliased row-major view with a non-contiguous dim dense unless the replay gives the output a layout of its own).
ORDERS = {"bgt": (0, 2, 3, 1, 4), "btg": (0, 1, 2, 3, 4)}


def q_dim(order: str) -> int:
    """Where the Q dim (the q_per_kv copies) sits in ``order``."""
    return ORDERS[order].index(3)


def _ordered(t: torch.Tensor, cfg: RopeConfig, order: str, keep_q: bool) -> torch.Tensor:
    """A (B, T, G, Q, .) view in ``order``; Q squeezed away unless ``keep_q`` and q_per_kv > 1."""
    t = t.permute(ORDERS[order])
    return t if keep_q and cfg.q_per_kv > 1 else t.squeeze(q_dim(order))


def grad_view(g: torch.Tensor, cfg: RopeConfig, lo: int, hi: int, order: str = "bgt") -> torch.Tensor:
    """Columns lo:hi of a gradient (B, n_head, T, hs) as a view of its (B, T, G, [Q,] hi - lo) in ``order``."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    return _ordered(g.view(B, G, Q, T, H).permute(0, 3, 1, 2, 4)[..., lo:hi], cfg, order, True)


def out_view(dqkv: torch.Tensor, cfg: RopeConfig, group: str, lo: int, hi: int, order: str = "bgt") -> torch.Tensor:
    """Columns lo:hi of ``group``'s heads in dqkv (B, T, G, Q + 2, hs): q's (B, T, G, [Q,] .), k's and v's
    (B, T, G, .), in ``order``."""
    Q = cfg.q_per_kv
    if group == "q":
        return _ordered(dqkv[:, :, :, :Q, lo:hi], cfg, order, True)
    slot = Q + GROUPS.index(group) - 1
    return _ordered(dqkv[:, :, :, slot:slot + 1, lo:hi], cfg, order, False)


def table_view(t: torch.Tensor, cfg: RopeConfig, lo: int, hi: int, order: str, keep_q: bool) -> torch.Tensor:
    """Columns lo:hi of a table (T, rope_n_elem) expanded (stride 0) over B, G (and Q when ``keep_q``), in
    ``order``."""
    cols = t[:, lo:hi][None, :, None, None]
    Q = cfg.q_per_kv if keep_q else 1
    return _ordered(cols.expand(cfg.batch, cfg.T, cfg.n_query_groups, Q, hi - lo), cfg, order, keep_q)


def part_views(cfg: RopeConfig, part: Sequence[str], whole_heads: bool, grads: Sequence[torch.Tensor],
               cos: torch.Tensor, sin: torch.Tensor, dqkv: torch.Tensor, order: str = "bgt") -> dict[str, torch.Tensor]:
    """The inputs of one fusion, by name, in its input order: the gradients' column pieces, the tables' RoPE halves
    at each rank the part needs, then the views of dqkv it writes. All views, never copies."""
    cols = rope_columns(cfg)
    out: dict[str, torch.Tensor] = {}
    for g in part:
        for lo, hi in group_columns(cfg, g, whole_heads):
            out[f"d{g}[{lo}:{hi}]"] = grad_view(grads[GROUPS.index(g)], cfg, lo, hi, order)
    for g in (g for g in part if g in ROPED):
        keep_q = g == "q"
        for name, t in (("cos", cos), ("sin", sin)):
            for lo, hi in cols[:2]:
                view = table_view(t, cfg, lo, hi, order, keep_q)
                out.setdefault(f"{name}{view.ndim - 1}[{lo}:{hi}]", view)
    for g in part:
        for lo, hi in [(0, cfg.head_size)] if whole_heads else cols:
            out[f"out_{g}[{lo}:{hi}]"] = out_view(dqkv, cfg, g, lo, hi, order)
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


def part_layout(cfg: RopeConfig, part: Sequence[str], whole_heads: bool, order: str = "bgt") -> dict[str, ViewOf]:
    """``part_views`` of meta tensors, each view as the source it is taken of and its sizes, strides and offset."""
    grad = (cfg.batch, cfg.n_head, cfg.T, cfg.head_size)
    sources = [torch.empty(*shape, dtype=cfg.dtype, device="meta") for shape in [grad] * 3 + [(cfg.T, cfg.rope_n_elem)] * 2
               + [(cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv + 2, cfg.head_size)]]
    views = part_views(cfg, part, whole_heads, sources[:3], sources[3], sources[4], sources[5], order)

    def source(t: torch.Tensor) -> int:
        root = t._base if t._base is not None else t
        return next(i for i, s in enumerate(sources) if s is root)

    return {name: ViewOf(source(t), tuple(t.shape), tuple(t.stride()), t.storage_offset()) for name, t in views.items()}


def define_part(fd, cfg: RopeConfig, part: Sequence[str], whole_heads: bool, order: str = "bgt") -> None:
    """One fusion of a variant: the inputs ``part_views`` gives, RoPE's adjoint per half in fp32, the grouped-query
    sums of dk and dv (over the Q copies), each piece cast to the I/O dtype (a piece only passed through: set) and
    added with ``alias_input=`` its view of dqkv."""
    f32, io = dt(fd, "Float"), R.io(fd, cfg)
    x = {name: fd.define_tensor(sizes=list(v.size), strides=list(v.stride), dtype=io, static_sizes=True)
         for name, v in part_layout(cfg, part, whole_heads, order).items()}
    cols = rope_columns(cfg)
    for g in part:
        summed = g != "q" and cfg.q_per_kv > 1  # adjoint of the grouped-query expand
        grads = [x[f"d{g}[{lo}:{hi}]"] for lo, hi in group_columns(cfg, g, whole_heads)]
        computed = len(grads) if summed else 2 if g in ROPED else 0  # the rest only pass through
        pieces = [fd.ops.cast(p, dtype=f32) for p in grads[:computed]]
        if summed:
            pieces = [fd.ops.sum(p, dims=[q_dim(order)], dtype=f32) for p in pieces]
        if g in ROPED:
            rank = pieces[0].ndim
            tables = tuple(fd.ops.cast(x[f"{name}{rank - 1}[{lo}:{hi}]"], dtype=f32)
                           for name in ("cos", "sin") for lo, hi in cols[:2])
            pieces[:2] = R.adjoint_halves(fd, pieces[0], pieces[1], tables)
        # a piece passed through is a set: nvFuser would fold a cast pair into the input, leaving the output unwritten
        pieces = [fd.ops.cast(p, dtype=io) for p in pieces] + [fd.ops.set(p) for p in grads[computed:]]
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
                define_part(fd, self.cfg, part, self.variant.whole_heads, self.variant.order)
            built.append(fd)
        self.parts = tuple(built)
        self.layouts = tuple(tuple(part_layout(self.cfg, part, self.variant.whole_heads, self.variant.order).values())
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
