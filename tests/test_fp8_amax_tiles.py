"""The tiled one-read fp8 amax (fusions/fp8_amax_tiles.py), in floats and on bf16 bits, on the reference
interpreter: both stages as recorded, with the host views between them, against the spec's float64 reference."""

from dataclasses import replace

import pytest
import torch

import fusions
from fusions.fp8_amax_bit_tiles import AmaxBitTiles
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
    ("4096x4096_tiny", ("row", "all", "col"), TileSchedule(48, 16, rows=4, vec=4)),  # one chunk, 5 row segments
    ("4096x4096_tiny", ("col", "row"), TileSchedule(8, 80, rows=2, vec=8)),  # whole rows, 6 chunks
])
@pytest.mark.parametrize("kind", [AmaxTiles, AmaxBitTiles])
def test_tiles_match_the_float64_reference(config, amaxes, schedule, kind):
    cfg = replace(SPEC.config(config), amaxes=amaxes)
    inputs = SPEC.make_inputs(cfg)
    refs = SPEC.reference(inputs, cfg)
    outs = kind(cfg, schedule).run(list(inputs.values()))
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(o.dtype == torch.float32 for o in outs)
    assert all(torch.equal(o.double(), r) for o, r in zip(outs, refs)), compare(refs, outs)  # max is exact


@pytest.mark.parametrize("config, amaxes, schedule", [
    ("4096x4096_tiny", ("row", "all"), TileSchedule(8, 16, rows=2, vec=4)),  # 6 x 5 tiles
    ("4096x4096_tiny", ("all", "row"), TileSchedule(8, 80, rows=2, vec=8)),  # whole rows: stage 2 only the max
    ("seed_12x34x56_tiny", ("all",), TileSchedule(34, 28, rows=2, vec=4)),
])
def test_bit_tiles_without_a_column_amax_take_the_tensorwise_one_from_the_rows(config, amaxes, schedule):
    cfg = replace(SPEC.config(config), amaxes=amaxes)
    inputs = SPEC.make_inputs(cfg)
    run = AmaxBitTiles(cfg, schedule)
    s1, s2 = run.recorded()
    assert len(s1.fusion.outputs) == 1  # the row segments only: no column partials written
    outs = run.run(list(inputs.values()))
    assert all(torch.equal(o.double(), r) for o, r in zip(outs, SPEC.reference(inputs, cfg)))
    with pytest.raises(SegkitError, match="asks for the row amax only"):
        AmaxBitTiles(replace(cfg, amaxes=("row",)), schedule)
    with pytest.raises(SegkitError, match="tiles formulation of fp8_amax is for a column amax"):
        AmaxTiles(cfg, schedule)


def test_bit_tiles_keep_nan_infinities_signed_zeros_and_subnormals():
    """The integer order of |bf16| bits is the order of the values with a NaN above inf: each amax is what
    torch's is, NaN where the row or column holds one, a -inf's amax inf, -0.0 as 0, a subnormal itself."""
    cfg = replace(SPEC.config("4096x4096_tiny"), amaxes=("row", "col", "all"))
    x = torch.full((cfg.rows, cfg.cols), -0.0, dtype=torch.bfloat16)
    tiny = torch.tensor(2.0 ** -133, dtype=torch.bfloat16)  # bf16's smallest subnormal
    x[0, 5], x[1, 7], x[2, 9], x[3, 11] = float("nan"), -float("inf"), -tiny, -3.0e38
    x[4:, 20] = float("-nan")  # a NaN with the sign bit set
    got = AmaxBitTiles(cfg, TileSchedule(8, 16, rows=2, vec=4)).run([x])
    want = [x.double().abs().amax(dim=1), x.double().abs().amax(dim=0), x.double().abs().max()]
    for g, w in zip(got, want):
        assert torch.equal(g.isnan(), w.isnan()) and torch.equal(g.double()[~w.isnan()], w[~w.isnan()])
    row, col, every = got
    assert row[1] == float("inf") and row[2] == 2.0 ** -133 and row[0].isnan() and row[5].isnan()
    assert col[0] == 0.0 and not col[0].signbit() and every.isnan()


def test_an_x_the_views_cannot_take_is_named():
    cfg = replace(SPEC.config("4096x4096_tiny"), amaxes=("row", "col", "all"))
    bits, floats = AmaxBitTiles(cfg, TileSchedule(8, 16, rows=2, vec=4)), AmaxTiles(cfg, TileSchedule(8, 16, rows=2, vec=4))
    x = SPEC.make_inputs(cfg)["x"]
    with pytest.raises(SegkitError, match=r"bit_tiles formulation of fp8_amax \(4096x4096_tiny\).*strides \(1, 48\)"):
        bits.run([x.t().contiguous().t()])
    with pytest.raises(SegkitError, match=r"tiles formulation .*shape \(47, 80\), not \(48, 80\)"):
        floats.run([x[1:]])
    with pytest.raises(SegkitError, match=r"dtype torch.float32, not torch.bfloat16"):
        floats.run([x.float()])
    odd = torch.empty(48 * 80 + 1, dtype=torch.bfloat16)[1:].view(48, 80)
    odd.copy_(x)
    with pytest.raises(SegkitError, match="storage offset 1: not aligned to torch.int32"):
        bits.run([odd])
    assert all(torch.equal(a, b) for a, b in zip(floats.run([odd]), floats.run([x])))  # floats need no alignment


def test_bit_tiles_read_bf16_only():
    with pytest.raises(SegkitError, match="reads bf16 bits; 4096x4096 is torch.float16"):
        AmaxBitTiles(replace(SPEC.config("4096x4096"), dtype=torch.float16), TileSchedule(32, 256))
    with pytest.raises(SegkitError, match="vec 1 must be even"):
        AmaxBitTiles(SPEC.config("4096x4096"), TileSchedule(32, 32, rows=2, vec=1))


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
    # what measured fastest on an H100 at each of these shapes (explore_fp8_tiles_unroll.log) comes first
    assert (cands[0].vec, cands[0].rows, cands[0].unroll, cands[0].width) == (8, 4, 4, 256)
    ctas = [(cfg.lead // s.chunk) * (cfg.cols // s.width) for s in cands[:3]]  # about 16, 8 and 32 CTAs per SM
    assert ctas[1] < ctas[0] < ctas[2]


def test_a_tile_schedule_survives_the_tuning_table_and_runs_as_the_table_says():
    """What `segkit tune fp8_amax:...` stores and segkit's runners read back: the same schedule, run right."""
    from fusions import formulations
    from fusions.runner import staged_for
    from segkit.tuning import TableEntry, TuningTable
    from segkit.tuning.search import Candidate

    cfg = SPEC.config("4096x4096_tiny")
    sched = TileSchedule(16, 80, rows=4, vec=8, unroll=2)
    entry = TableEntry.from_dict(SPEC.entry(cfg, "GPU X", formulation="tiles", chunk=16,
                                            schedule=sched.to_dict()).to_dict())
    assert entry.tuning is None and TileSchedule.from_dict(entry.chunk, entry.schedule) == sched
    run = staged_for("fp8_amax", cfg, "GPU X", TuningTable([entry]))
    assert isinstance(run, AmaxTiles) and run.schedule == sched
    assert staged_for("fp8_amax", cfg, "GPU Y", TuningTable([entry])) is None  # another GPU: nvFuser's own
    inputs = SPEC.make_inputs(cfg)
    assert all(d.ok for d in compare(SPEC.reference(inputs, cfg), run.run(list(inputs.values()))))
    with pytest.raises(SegkitError, match="tiles formulation is for fp8_amax, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", cfg, Candidate("tiles", 16, schedule=sched.to_dict()))
    with pytest.raises(SegkitError, match="TileSchedule needs a schedule"):
        TileSchedule.from_dict(16, None)
    with pytest.raises(SegkitError, match="missing 1 required positional argument: 'width'"):
        TileSchedule.from_dict(16, {"rows": 4})


def test_the_tune_offers_bit_tiles_for_bf16_and_float_tiles_otherwise():
    from fusions import formulations
    from fusions.runner import staged_for
    from fusions.tune import space
    from segkit.tuning import TableEntry, TuningTable
    from segkit.tuning.search import Candidate

    forms = {dtype: {c.formulation for c in space("fp8_amax", replace(SPEC.config("4096x4096"), dtype=dtype), None)}
             for dtype in (torch.bfloat16, torch.float16)}
    assert "bit_tiles" in forms[torch.bfloat16] and "tiles" not in forms[torch.bfloat16]
    assert "tiles" in forms[torch.float16] and "bit_tiles" not in forms[torch.float16]
    cfg = SPEC.config("4096x4096_tiny")
    sched = TileSchedule(16, 80, rows=4, vec=8, unroll=2)
    entry = TableEntry.from_dict(SPEC.entry(cfg, "GPU X", formulation="bit_tiles", chunk=16,
                                            schedule=sched.to_dict()).to_dict())
    run = staged_for("fp8_amax", cfg, "GPU X", TuningTable([entry]))
    assert isinstance(run, AmaxBitTiles) and run.schedule == sched and "bit_tiles chunk 16" in entry.describe()
    inputs = SPEC.make_inputs(cfg)
    assert all(d.ok for d in compare(SPEC.reference(inputs, cfg), run.run(list(inputs.values()))))
    with pytest.raises(SegkitError, match="bit_tiles formulation is for fp8_amax, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", cfg, Candidate("bit_tiles", 16, schedule=sched.to_dict()))


def test_the_tiles_schedule_is_no_nvfuser_tuning():
    from segkit.tuning import NvTuning, tuning_from_dict

    with pytest.raises(TypeError, match="tile_width"):  # nvFuser's knobs only: a hand schedule is no NvTuning
        NvTuning("x", scheduler="tiles", tile_width=256)
    with pytest.raises(TypeError, match="unroll"):
        NvTuning("x", scheduler="inner_persistent", unroll=2)
    with pytest.raises(ValueError, match="unknown NvTuning fields"):
        tuning_from_dict({"why": "x", "scheduler": "tiles", "tile_width": 256, "unroll": 4})


def test_tune_offers_tiles_first_where_there_is_a_column_amax():
    from fusions.fp8_amax import QUICK_TILES
    from fusions.tune import space

    cfg = SPEC.config("16384x8192")  # bf16: the tiles on its bits
    cands = space("fp8_amax", cfg, None, 132)
    assert [c.formulation for c in cands[1:1 + QUICK_TILES]] == ["bit_tiles"] * QUICK_TILES  # after nvFuser's defaults
    first = candidates(cfg, 132)[0]
    assert (cands[1].chunk, cands[1].schedule, cands[1].tuning) == (first.chunk, first.to_dict(), None)
    assert len([c for c in space("fp8_amax", cfg, None, 132, quick=False) if c.formulation == "bit_tiles"]) == \
        len(candidates(cfg, 132))
    no_col = replace(cfg, amaxes=("row", "all"))  # bf16: the tensorwise amax from the rows' bits
    assert {c.formulation for c in space("fp8_amax", no_col, None, 132)} >= {"bit_tiles"}
    fp16 = replace(no_col, dtype=torch.float16)
    assert not any(c.formulation.endswith("tiles") for c in space("fp8_amax", fp16, None, 132))
    assert not any(c.formulation.endswith("tiles") for c in space("fp8_amax", replace(cfg, amaxes=("row",)), None, 132))


def test_tune_takes_the_amaxes_asked_for():
    from fusions.tune import tune_spec

    result = tune_spec("fp8_amax", "4096x4096", reference=True, log=lambda _: None, amaxes=("row", "all"))
    assert "amaxes=('row', 'all')" in result.signature
    assert any(t.candidate.formulation == "bit_tiles" for t in result.trials) and all(t.ok for t in result.trials)
    with pytest.raises(SegkitError, match="--amaxes picks fp8_amax's outputs; rmsnorm_bwd has none"):
        tune_spec("rmsnorm_bwd", "llama2_7b", reference=True, amaxes=("row",))
