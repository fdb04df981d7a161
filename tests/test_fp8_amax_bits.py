"""The fp8 tensorwise (+ rowwise) amax on bf16 bits (fusions/fp8_amax_bits.py) on the reference interpreter:
both fusions as recorded, with the host views between them, against the spec's float64 reference."""

from dataclasses import replace

import pytest
import torch

import fusions
from fusions.fp8_amax_bits import AmaxBits
from segkit.errors import SegkitError

SPEC = fusions.get("fp8_amax")


@pytest.mark.parametrize("config, amaxes", [
    ("4096x4096_tiny", ("row", "all")), ("16384x8192_tiny", ("all", "row")), ("seed_12x34x56_tiny", ("all",)),
    ("seed_12x34x56", ("row", "all")),  # 3-D x: the rows of both leading dims
])
def test_bits_match_the_float64_reference(config, amaxes):
    cfg = replace(SPEC.config(config), amaxes=amaxes)
    inputs = SPEC.make_inputs(cfg)
    refs = SPEC.reference(inputs, cfg)
    outs = AmaxBits(cfg).run(list(inputs.values()))
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(o.dtype == torch.float32 and torch.equal(o.double(), r) for o, r in zip(outs, refs))


def test_bits_keep_nan_infinities_signed_zeros_and_subnormals():
    cfg = replace(SPEC.config("4096x4096_tiny"), amaxes=("row", "all"))
    x = torch.full((cfg.rows, cfg.cols), -0.0, dtype=torch.bfloat16)
    x[1, 7], x[2, 9] = -float("inf"), -torch.tensor(2.0 ** -133, dtype=torch.bfloat16)
    row, every = AmaxBits(cfg).run([x])
    assert row[1] == float("inf") and row[2] == 2.0 ** -133 and row[0] == 0 and not row[0].signbit()
    assert every == float("inf")
    x[3, 0] = float("-nan")
    row, every = AmaxBits(cfg).run([x])
    assert row[3].isnan() and every.isnan() and not row[4].isnan()


def test_bits_refuse_what_they_cannot_take():
    cfg = replace(SPEC.config("4096x4096_tiny"), amaxes=("row", "all"))
    with pytest.raises(SegkitError, match="reads bf16 pairs as int32; 4096x4096_tiny is torch.float16"):
        AmaxBits(replace(cfg, dtype=torch.float16))
    with pytest.raises(SegkitError, match="without a column amax; 4096x4096_tiny asks for row, col, all"):
        AmaxBits(replace(cfg, amaxes=("row", "col", "all")))
    with pytest.raises(SegkitError, match="asks for row$"):
        AmaxBits(replace(cfg, amaxes=("row",)))
    x = SPEC.make_inputs(cfg)["x"]
    with pytest.raises(SegkitError, match=r"bits formulation of fp8_amax \(4096x4096_tiny\) reads x as a view; x has "
                                          r"strides \(1, 48\)"):
        AmaxBits(cfg).run([x.t().contiguous().t()])
    odd = torch.empty(x.numel() + 1, dtype=torch.bfloat16)[1:].view(x.shape)
    with pytest.raises(SegkitError, match="storage offset 1: not aligned to torch.int32"):
        AmaxBits(cfg).run([odd])


def test_the_tune_offers_bits_without_a_column_amax_and_the_table_runs_them():
    from fusions import formulations
    from fusions.tune import space
    from segkit.tuning import TableEntry, TuningTable
    from segkit.tuning.search import Candidate
    from fusions.runner import staged_for

    cfg = replace(SPEC.config("16384x8192"), amaxes=("row", "all"))
    assert "bits" in {c.formulation for c in space("fp8_amax", cfg, None, 132)}
    assert "bits" not in {c.formulation for c in space("fp8_amax", SPEC.config("16384x8192"), None, 132)}
    tiny = replace(SPEC.config("16384x8192_tiny"), amaxes=("row", "all"))
    entry = TableEntry.from_dict(SPEC.entry(tiny, "GPU X", formulation="bits").to_dict())
    run = staged_for("fp8_amax", tiny, "GPU X", TuningTable([entry]))
    assert isinstance(run, AmaxBits)
    inputs = SPEC.make_inputs(tiny)
    assert all(torch.equal(o.double(), r) for o, r in zip(run.run(list(inputs.values())), SPEC.reference(inputs, tiny)))
    with pytest.raises(SegkitError, match="bits formulation is for fp8_amax, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", tiny, Candidate("bits"))
