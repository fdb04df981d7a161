"""The tiled one-read fp8 amax (fusions/fp8_amax_tiles.py) on the reference interpreter: both stages as recorded,
with the host views between them, against the spec's float64 reference."""

from dataclasses import replace

import pytest
import torch

import fusions
from fusions.fp8_amax_tiles import AmaxTiles, TileSchedule, candidates
from segkit.compare import compare
from segkit.errors import SegkitError

SPEC = fusions.get("fp8_amax")


@pytest.mark.parametrize("config, amaxes, schedule", [
    ("4096x4096_tiny", ("row", "col", "all"), TileSchedule(8, 16, rows=2, vec=4)),  # 6 x 5 tiles
    ("4096x4096_tiny", ("all", "row", "col"), TileSchedule(48, 80, rows=4, vec=8)),  # one tile: the rows schedule
    ("16384x8192_tiny", ("col", "all"), TileSchedule(4, 8, rows=1, vec=8)),
    ("seed_12x34x56_tiny", ("row", "col", "all"), TileSchedule(34, 28, rows=2, vec=4)),  # 3-D x, batch folded
    ("4096x4096_tiny", ("row", "col", "all"), TileSchedule(24, 16, rows=2, vec=8, unroll=4)),
])
def test_tiles_match_the_float64_reference(config, amaxes, schedule):
    cfg = replace(SPEC.config(config), amaxes=amaxes)
    inputs = SPEC.make_inputs(cfg)
    refs = SPEC.reference(inputs, cfg)
    outs = AmaxTiles(cfg, schedule).run(list(inputs.values()))
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)


def test_a_row_maximum_in_one_tile_only_reaches_the_row_amax():
    """A row's amax that sits in its last column tile, and a column's that sits in the last chunk: the partials of
    every other tile must not mask them (what a wrong stage-2 view would do)."""
    cfg = replace(SPEC.config("4096x4096_tiny"), amaxes=("row", "col", "all"))
    x = torch.full((cfg.rows, cfg.cols), 0.5, dtype=cfg.dtype)
    x[3, cfg.cols - 1] = -7.0
    x[cfg.rows - 1, 2] = 5.0
    row, col, every = AmaxTiles(cfg, TileSchedule(8, 16, rows=2, vec=4)).run([x])
    assert row[3] == 7.0 and row[cfg.rows - 1] == 5.0 and row[0] == 0.5
    assert col[cfg.cols - 1] == 7.0 and col[2] == 5.0 and col[0] == 0.5
    assert every == 7.0


def test_tiles_need_a_column_amax_and_a_fitting_schedule():
    with pytest.raises(SegkitError, match="is for a column amax.*reads x once there"):
        AmaxTiles(replace(SPEC.config("4096x4096"), amaxes=("row", "all")), TileSchedule(32, 256))
    with pytest.raises(SegkitError, match="width 384 does not divide the 4096 columns"):
        AmaxTiles(SPEC.config("4096x4096"), TileSchedule(32, 384))
    with pytest.raises(SegkitError, match="256 x 8 threads exceed a CTA's 1024"):
        AmaxTiles(SPEC.config("4096x4096"), TileSchedule(32, 1024, rows=8, vec=4))
    with pytest.raises(SegkitError, match="rows 8 x unroll 8 does not divide chunk 32"):
        AmaxTiles(SPEC.config("4096x4096"), TileSchedule(32, 256, rows=8, unroll=8))


@pytest.mark.parametrize("config", ["4096x4096", "16384x8192", "8192x28672"])
def test_candidates_fit_and_lead_with_wide_loads_rows_and_unrolled_steps(config):
    cfg = SPEC.config(config)
    cands = candidates(cfg, 132)
    for s in cands:
        s.check(cfg.lead, cfg.cols, config)
        assert s.threads <= 512 and 32 <= s.width // s.vec <= 256
    assert len(set(cands)) == len(cands)
    assert (cands[0].vec, cands[0].rows, cands[0].unroll) == (8, 8, 2)  # what measured fastest, then unrolled
    ctas = [(cfg.lead // s.chunk) * (cfg.cols // s.width) for s in cands[:3]]  # about 8, 16 and 4 CTAs per SM
    assert ctas[2] < ctas[0] < ctas[1]
