"""The op surface: every nvfuser_direct 0.2.36 op is in segkit's catalogue or refused with a reason, every
catalogue op has samples (tests/op_samples.py), and on every sample the recorded shape/dtype rule agrees
with what the reference computes, and the fusion round-trips through emit_repro / load_repro."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import segkit
from segkit import ops as catalogue
from segkit.interp import Interpreter, as_fusion

from tests.op_samples import SAMPLES, build_fusion

OPS = json.loads((Path(__file__).parent / "data" / "nvfuser_direct_ops.json").read_text())


def test_every_nvfuser_op_is_supported_or_refused_with_a_reason():
    unknown = [op for op in OPS["ops"] if op not in catalogue.CATALOGUE and op not in catalogue.REFUSED]
    assert not unknown, f"nvfuser_direct ops neither in segkit's catalogue nor in ops.REFUSED: {unknown}"
    assert all(len(why) > 20 for why in catalogue.REFUSED.values())
    assert set(catalogue.REFUSED) <= set(OPS["ops"]), "REFUSED names ops nvfuser_direct does not have"
    supported = [op for op in OPS["ops"] if op in catalogue.CATALOGUE]
    assert len(supported) / len(OPS["ops"]) >= 0.95, f"{len(supported)} of {len(OPS['ops'])} supported"
    recorded = {op: "supported" if op in catalogue.CATALOGUE else "refused" for op in OPS["ops"]}
    assert recorded == OPS["ops"], "tests/data/nvfuser_direct_ops.json's status column is out of date"


def test_catalogue_has_no_op_nvfuser_lacks():
    assert sorted(set(catalogue.CATALOGUE) - set(OPS["ops"])) == []


def test_refused_op_says_why_at_the_call():
    fd = segkit.FusionDefinition()
    x = fd.define_tensor([-1, -1])
    with pytest.raises(segkit.UnsupportedOpError, match=r"scaled_mm.*deliberately unsupported.*fp8"):
        fd.ops.scaled_mm(x, x, x, x)


def test_definers_exist():
    for name in OPS["definers"]:
        assert callable(getattr(segkit.FusionDefinition, name)), name


def test_every_catalogue_op_has_samples():
    missing = sorted(set(catalogue.CATALOGUE) - set(SAMPLES))
    assert not missing, f"catalogue ops without samples in tests/op_samples.py: {missing}"
    assert sorted(set(SAMPLES) - set(catalogue.CATALOGUE)) == []


def _structure(fd):
    """A fusion's ops with their outputs' dtypes and shapes, independent of value names."""
    return [(op.name, [o.describe().split(": ", 1)[1] for o in op.outputs]) for op in as_fusion(fd).ops]


class _RuleChecker(Interpreter):
    """Runs the reference and checks each op's raw result against the shape and dtype it was recorded with."""

    def run_op(self, op):
        args = {k: self.resolve(a) for k, a in op.args.items()}
        self.ctx.op = op
        raw = catalogue.get(op.name).run(args, self.ctx)
        raw = raw if isinstance(raw, tuple) else (raw,)
        for v, r in zip(op.outputs, raw):
            if not v.is_tensor:
                continue
            assert r.ndim == v.ndim and all(s in (-1, g) for s, g in zip(v.shape, r.shape)), \
                f"{op.name}: recorded {v.describe()}, reference gives shape {list(r.shape)}"
            assert r.dtype == v.dtype.torch, f"{op.name}: recorded {v.describe()}, reference gives {r.dtype}"
        super().run_op(op)


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_samples_follow_the_shape_rule_and_round_trip(op):
    spec = SAMPLES[op]
    for dt in spec.dtypes:
        samples = spec.make(dt)
        fd, inputs = build_fusion(samples)
        assert any(o.name == op for o in as_fusion(fd).ops), f"no sample of {op} records {op}"
        outs = _RuleChecker(as_fusion(fd), inputs).run()
        text = segkit.emit_repro(fd, inputs)
        again = segkit.load_repro(text)
        assert _structure(again.fd) == _structure(fd)
        if any(catalogue.get(o.name).random for o in as_fusion(fd).ops):
            continue
        for a, b in zip(outs, segkit.run_reference(again.fd, inputs)):
            torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)
