"""Norm backward in two stages, deterministic: per-chunk partial weight gradients, then their sum.

The formulation Liger-Kernel and Quack use for norm backward (there with one partial per SM), written for
nvFuser: x viewed as (rows / chunk, chunk, hidden);

* stage 1 (one fusion, reads x, dy, the statistics and the weight once): dx, and the fp32 partial dw (and db
  for layer norm) of each chunk of ``chunk`` rows, shape (rows / chunk, hidden);
* stage 2 (a small fusion): the sum of the partials over the chunks, cast to the I/O dtype.

No atomics: each partial is one reduction over a fixed set of rows and the second stage sums them in a fixed
order, so every run gives the same bits. Which chunk pays (and whether nvFuser keeps stage 1 in one kernel)
is measured, not assumed: ``segkit tune`` and the norm backward benchmark run it beside the fused builder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

import fusions._norm as N
from fusions.configs import NormConfig
from fusions.formulations import Formulation, register
from fusions.spec import dt
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.layout import compute_tensor_descriptor
from segkit.nvfuser.run import run_on


NORM_BWD = ("rmsnorm_bwd", "layernorm_bwd")  # the specs it computes


def chunk_for(rows: int, partials: int) -> int:
    """The smallest chunk that divides ``rows`` into at most ``partials`` chunks."""
    if partials < 1:
        raise SegkitError(f"two-stage norm backward: partials must be >= 1, got {partials}")
    return next(c for c in range(-(-rows // partials), rows + 1) if rows % c == 0)


def define_stage1(fd, cfg: NormConfig, chunk: int, layer_norm: bool, host_views: bool = False,
                  strided: Sequence[tuple[Sequence[int], Sequence[int]]] | None = None) -> None:
    """dx (the builder's formula) and the per-chunk fp32 partial dw (, db), x viewed as (P, chunk, hidden).

    With ``host_views`` the inputs are already (P, chunk, hidden) / (P, chunk) and dx stays 3-D: the caller
    views them on the host, and the fusion has no reshape for a hand-written schedule to carry. ``strided``
    (host views too) gives the (shape, strides) of x, dy (, mean), rstd as the caller views them when their rows
    are not in memory order: (..., chunk, hidden) and (..., chunk), the leading dims making P, each tensor read in
    its own layout (no copy into row order); dx then has x's shape, contiguous, and the partials (..., hidden)."""
    if cfg.rows % chunk:
        raise SegkitError(f"two-stage norm backward: chunk {chunk} does not divide the {cfg.rows} rows of "
                          f"{cfg.name} {cfg.shape}")
    f32, P, H = dt(fd, "Float"), cfg.rows // chunk, cfg.hidden
    n = 3 if strided is None else len(strided[0][0])
    if strided is not None:
        host_views, lead, layouts = True, list(strided[0][0][:-2]), iter(strided)
        if math.prod(lead) != P:
            raise SegkitError(f"two-stage norm backward: leading dims {tuple(lead)} of the strided x make "
                              f"{math.prod(lead)} chunks, not the {P} of {cfg.rows} rows in chunks of {chunk}")

        def define(shape, dtype):  # shape: [*lead, chunk(, hidden)], each input's own strides
            size, strides = next(layouts)
            if list(size) != shape:
                raise SegkitError(f"two-stage norm backward: a strided input of shape {tuple(size)} where "
                                  f"{tuple(shape)} (x's leading dims, chunk {chunk}, hidden {H}) is expected")
            contiguity, order = compute_tensor_descriptor(list(size), list(strides))
            return fd.define_tensor(shape=shape, contiguity=contiguity, dtype=dtype, stride_order=order)
    elif host_views:
        lead = [P]

        def define(shape, dtype):
            return fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dtype)

    if host_views:
        x, dy = (define([*lead, chunk, H], N.io(fd, cfg)) for _ in range(2))
        mean = define([*lead, chunk], f32) if layer_norm else None
        rstd = define([*lead, chunk], f32)
    else:
        x, dy = N.define_x(fd, cfg), N.define_x(fd, cfg)
        mean = N.define_stat(fd, cfg) if layer_norm else None
        rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)

    def view3(t):  # the view on the input itself, so a bookend from inputs can take it to the host
        return fd.ops.cast(t if host_views else fd.ops.reshape(t, new_shape=[P, chunk, H]), dtype=f32)

    def stat3(t):
        return N.per_row(fd, t if host_views else fd.ops.reshape(t, new_shape=[P, chunk]), n)

    xf, dyf, rstd_b = view3(x), view3(dy), stat3(rstd)
    xhat = fd.ops.mul(fd.ops.sub(xf, stat3(mean)) if layer_norm else xf, rstd_b)
    g = fd.ops.mul(dyf, N.per_col(fd, fd.ops.cast(w, dtype=f32), n))
    inv_h = 1.0 / H
    mean_gx = fd.ops.mul(fd.ops.sum(fd.ops.mul(g, xhat), dims=[n - 1], dtype=f32), inv_h)
    inner = fd.ops.sub(g, fd.ops.mul(xhat, N.per_row(fd, mean_gx, n)))
    if layer_norm:
        mean_g = fd.ops.mul(fd.ops.sum(g, dims=[n - 1], dtype=f32), inv_h)
        inner = fd.ops.sub(inner, N.per_row(fd, mean_g, n))
    dx = fd.ops.cast(fd.ops.mul(inner, rstd_b), dtype=N.io(fd, cfg))
    fd.add_output(dx if host_views else fd.ops.reshape(dx, new_shape=list(cfg.shape)))
    fd.add_output(fd.ops.sum(fd.ops.mul(dyf, xhat), dims=[n - 2], dtype=f32))
    if layer_norm:
        fd.add_output(fd.ops.sum(dyf, dims=[n - 2], dtype=f32))


#: how stage 2 of the layer norm sums its two partials: two sums (nvFuser makes them two kernels: the graphs are
#: not connected), or one sum of the partials put side by side ("cat") or stacked on a new axis by a ``where``
#: ("stack"), whose one output ``split_joint`` views as dw and db
JOINT = (None, "cat", "stack")


def define_stage2(fd, cfg: NormConfig, chunk: int, layer_norm: bool, joint: str | None = None) -> None:
    """The partials (rows / chunk, hidden) summed over the chunks, in the I/O dtype (``joint``: see ``JOINT``)."""
    if joint not in JOINT:
        raise SegkitError(f"stage 2 joint must be one of {JOINT}, got {joint!r}")
    f32, P, H = dt(fd, "Float"), cfg.rows // chunk, cfg.hidden
    parts = [fd.define_tensor(shape=[P, H], contiguity=[True, True], dtype=f32) for _ in range(2 if layer_norm else 1)]
    if layer_norm and joint == "cat":  # (P, 2 H)
        parts = [fd.ops.cat(parts, dim=1)]
    elif layer_norm and joint == "stack":  # (P, 2, H): dw where the new index is 0, db where it is 1
        first = fd.ops.broadcast(fd.ops.eq(fd.ops.iota(2), 0), is_broadcast_dim=[True, False, True])
        dw, db = (fd.ops.broadcast(p, is_broadcast_dim=[False, True, False]) for p in parts)
        parts = [fd.ops.where(first, dw, db)]
    for p in parts:
        fd.add_output(fd.ops.cast(fd.ops.sum(p, dims=[0], dtype=f32), dtype=N.io(fd, cfg)))


def split_joint(second: list[torch.Tensor], hidden: int, layer_norm: bool, joint: str | None) -> list[torch.Tensor]:
    """Stage 2's outputs as dw (, db): a joint layer-norm stage 2's one output (2 hidden values, dw first) as two
    views, no copies; any other stage 2's as they are."""
    if not (layer_norm and joint):
        return second
    flat = second[0].view(-1)
    return [flat[:hidden], flat[hidden:]]


@dataclass
class TwoStage:
    """Both stages of one norm backward, recorded; runs on the reference interpreter or nvFuser. Each stage's
    recorded fusion can carry its own nvFuser tuning (``stages[i].nv_tuning``)."""

    cfg: NormConfig
    chunk: int
    layer_norm: bool
    stages: tuple[Any, Any] = field(init=False)

    def __post_init__(self) -> None:
        built = []
        for define in (define_stage1, define_stage2):
            with FusionDefinition() as fd:
                define(fd, self.cfg, self.chunk, self.layer_norm)
            built.append(fd)
        self.stages = tuple(built)

    def tuned(self, tuning: Any = None, bookend_policy: str = "none") -> TwoStage:
        """This formulation with stage 1 bookended by ``bookend_policy`` (segment_set realization, where it cuts)
        and run with ``tuning`` (what ``segkit tune`` tries and the tuning table keeps)."""
        from segkit.bookend import bookended

        first = bookended(self.stages[0], bookend_policy)
        first.nv_tuning = tuning
        self.stages = (first, self.stages[1])
        return self

    @property
    def partials(self) -> int:
        return self.cfg.rows // self.chunk

    def describe(self) -> str:
        return f"two-stage ({self.partials} partials of {self.chunk} rows)"

    def run(self, inputs: Sequence[torch.Tensor], backend: str = "reference") -> list[torch.Tensor]:
        """dx, dw (, db): the outputs of the fused builder, in its order."""
        first = run_on(self.stages[0], inputs, backend)
        return [first[0], *run_on(self.stages[1], [p.contiguous() for p in first[1:]], backend)]

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """On nvFuser, like a compiled fusion's ``execute``."""
        return self.run(inputs, "nvfuser")


def two_stage(spec_name: str, cfg, chunk: int) -> TwoStage:
    """The two-stage formulation of the norm backward spec ``spec_name`` ("rmsnorm_bwd" / "layernorm_bwd")."""
    if spec_name not in NORM_BWD:
        raise SegkitError(f"the two-stage formulation is for rmsnorm_bwd and layernorm_bwd, not {spec_name}")
    return TwoStage(cfg, chunk, layer_norm=spec_name == "layernorm_bwd")


register(Formulation("two_stage", NORM_BWD, lambda spec_name, cfg, how: two_stage(spec_name, cfg, how.chunk).tuned(
    how.tuning, how.bookend)))
