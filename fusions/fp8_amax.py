"""float8 scaling statistics: amax of |x| per row (over the last dim), per column (over the leading dims) and over
all, in fp32, formulated so that x can be read once.

Variants (``AmaxConfig.variant``), timed side by side by ``lab/drivers/reuse.sh``:

* ``direct``: each amax reduces |x| (what a user writes; ``segkit.reuse_reductions`` then feeds the global amax
  from the smaller of the row and column amaxes);
* ``inner_outer``: a persistent buffer for nvFuser's inner-outer persistent scheduler (an inner reduction, its
  result broadcast back and combined with |x|), as ``reuse_reductions(inner_outer=True)`` writes it: the column
  amax reduces
  ``where(|x| > row, row, |x|)``, which is |x| itself (every element is at most its row's max; a NaN row or element
  gives NaN either way), so |x| becomes the persistent buffer and both reductions can share one read;
* ``inner_outer_rows``: the same where() on the row side instead, as in the norm backward (whose outer
  reductions do not depend on its inner ones, which nvFuser's inner-outer check may require): the row amax is
  taken twice, the second time of ``where(|x| > row, row, |x|)``, and the column amax reduces |x| directly;
* ``two_stage``: the rows in blocks of ``block_rows``: a row amax and a per-block partial column amax in one pass
  (the same where() keeps the pair one inner-outer pattern per block), then the partials reduced to the columns.

Without a column amax every variant is ``direct``. The global amax is always taken from a narrower amax when
the variant is not ``direct``.
"""

from __future__ import annotations

import math

import torch

from fusions.configs import AmaxConfig, amax_configs
from fusions.fp8_amax_bit_tiles import AmaxBitTiles
from fusions.fp8_amax_tiles import AmaxTiles
from fusions.fp8_amax_tiles import candidates as tile_candidates
from fusions.spec import FusionSpec, dt, nv_dtype, randn
from segkit.tuning.search import Candidate, SpecCandidates


def define(fd, cfg: AmaxConfig) -> None:
    n = len(cfg.shape)
    x = fd.define_tensor(shape=list(cfg.shape), contiguity=[True] * n, dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a = fd.ops.abs(fd.ops.cast(x, dtype=dt(fd, "Float")))
    lead, last = list(range(n - 1)), [n - 1]
    if cfg.variant == "direct" or "col" not in cfg.amaxes:
        out = {"row": lambda: fd.ops.max(a, dims=last), "col": lambda: fd.ops.max(a, dims=lead),
               "all": lambda: fd.ops.max(a, dims=list(range(n)))}
        for name in cfg.amaxes:
            fd.add_output(out[name]())
        return
    if cfg.variant == "inner_outer":
        row = fd.ops.max(a, dims=last)
        col = fd.ops.max(_clip_to_row(fd, a, row, n), dims=lead)
    elif cfg.variant == "inner_outer_rows":
        row = fd.ops.max(_clip_to_row(fd, a, fd.ops.max(a, dims=last), n), dims=last)
        col = fd.ops.max(a, dims=lead)
    else:  # two_stage
        block = math.gcd(cfg.lead, cfg.block_rows)
        a3 = fd.ops.reshape(a, new_shape=[cfg.lead // block, block, cfg.cols])
        row3 = fd.ops.max(a3, dims=[2])
        partial = fd.ops.max(_clip_to_row(fd, a3, row3, 3), dims=[1])
        col = fd.ops.max(partial, dims=[0])
        row = fd.ops.reshape(row3, new_shape=list(cfg.shape[:-1]))
    out = {"row": row, "col": col}
    for name in cfg.amaxes:
        fd.add_output(out[name] if name in out else fd.ops.max(col, dims=[0]))


def _clip_to_row(fd, a, row, n: int):
    """``a`` where it is at most its row's amax (everywhere), else that amax: equal to ``a``, read after ``row``."""
    rb = fd.ops.broadcast(row, is_broadcast_dim=[False] * (n - 1) + [True])
    return fd.ops.where(fd.ops.gt(a, rb), rb, a)


def inputs(cfg: AmaxConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn(cfg.shape, gen, cfg.dtype, scale=3.0)}


def reference(inp: dict, cfg: AmaxConfig) -> tuple:
    a = inp["x"].to(torch.float64).abs()
    n = a.ndim
    out = {"row": lambda: a.amax(dim=n - 1), "col": lambda: a.amax(dim=tuple(range(n - 1))), "all": a.max}
    return tuple(out[name]() for name in cfg.amaxes)


#: the tile schedules a quick search tries (``fp8_amax_tiles.candidates`` orders them likeliest first)
QUICK_TILES = 24


def candidates(cfg: AmaxConfig, sm_count: int, quick: bool = True) -> SpecCandidates:
    """x read once, first: the tiles where there is a column amax (on x's bits for bf16, which also take the
    tensorwise amax from the rows), and the rows on bits then one CTA for bf16 without a column amax."""
    bits = cfg.dtype == torch.bfloat16
    if not ("col" in cfg.amaxes or bits and "all" in cfg.amaxes):
        return SpecCandidates()
    tiles = tile_candidates(cfg, sm_count)
    first = [Candidate("bits")] if bits and "col" not in cfg.amaxes else []
    form = AmaxBitTiles.formulation if bits else AmaxTiles.formulation
    return SpecCandidates(first=first + [Candidate(form, t.chunk, schedule=t.to_dict())
                                         for t in (tiles[:QUICK_TILES] if quick else tiles)])


def bytes_floor(cfg: AmaxConfig) -> int:
    """x read once, and the fp32 amaxes the config asks for written."""
    out = {"row": cfg.lead, "col": cfg.cols, "all": 1}
    return cfg.dtype.itemsize * cfg.lead * cfg.cols + 4 * sum(out[a] for a in cfg.amaxes)


SPEC = FusionSpec("fp8_amax", amax_configs(), define, inputs, reference, ("row_amax", "col_amax", "amax"), __doc__,
                  candidates=candidates, bytes_floor=bytes_floor)
