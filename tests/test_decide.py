"""segkit_ex's decisions (thunder_exec.decide) on CPU: the cut cost model decides from the tuning table and the
step evidence, the claim evidence declines a call only where Thunder's own ran faster, the evidence files load
and name a bad record, ``segkit_fuse`` parses into a FusePolicy or names its fault, and one compilation parses it
once. What the decisions do to a traced model: tests/test_fused_ops.py.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

import fusions
import segkit
import thunder
import thunder_exec
from fusions.configs import ApplyRopeConfig, NormConfig
from fusions.spec import signature
from segkit.tuning import TableEntry, TuningTable
from tests.test_fused_ops import _grads, _litgpt_block_piece
from thunder_exec.decide import FusePolicy, cut_cost, evidence, options
from thunder_exec.decide.evidence import ClaimEvidence, ClaimTable, CutEvidence, EvidenceTable

BF16 = torch.bfloat16


# --------------------------------------------------------------------------- cut cost model
H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
NARROW = NormConfig("t", (4096, 384), BF16, 1e-6, False)


def _table(us: float, default_us: float, gpu: str = H100) -> TuningTable:
    spec = fusions.get("rmsnorm_bwd")
    return TuningTable([TableEntry(gpu, spec.name, NARROW.name, signature(NARROW), "rows", us=us, default_us=default_us)])


def _crossing(cfg: NormConfig) -> int:
    """rmsnorm_bwd's tensors: x, dy, dx (bf16 rows x hidden), fp32 rstd per row, weight and dw (bf16 hidden)."""
    return 3 * 2 * cfg.rows * cfg.hidden + 4 * cfg.rows + 2 * 2 * cfg.hidden


def test_cut_kept_where_the_tuned_kernel_gains_more_than_the_cut_costs():
    d = cut_cost.decide("rmsnorm_bwd", NARROW, H100, _table(10.0, 60.0))
    assert d.decision == cut_cost.OPAQUE
    assert d.crossing_bytes == _crossing(NARROW)
    assert d.memory_us == pytest.approx(2 * _crossing(NARROW) / 3.0e12 * 1e6)
    assert d.gain_us == 50.0 and d.cut_us < 50.0
    text = d.describe()
    for part in ("opaque", "gain 50.0 us", "3.00 TB/s (H100)", f"{d.cut_us:.1f} us"):
        assert part in text


def test_small_gain_or_no_entry_fuses():
    small = cut_cost.decide("rmsnorm_bwd", NARROW, H100, _table(10.0, 15.0))
    assert small.decision == cut_cost.FUSED and small.gain_us == 5.0 and "costs more" in small.why
    none = cut_cost.decide("rmsnorm_bwd", NARROW, H100, TuningTable())
    assert none.decision == cut_cost.FUSED and none.gain_us is None and "no tuning entry" in none.describe()
    assert cut_cost.decide("rmsnorm_bwd", NARROW, None, _table(10.0, 60.0)).decision == cut_cost.FUSED  # no GPU


def test_bandwidth_per_gpu_and_policy_as_a_parameter():
    h200 = cut_cost.decide("rmsnorm_bwd", NARROW, H200, _table(10.0, 60.0, H200))
    assert h200.memory_us == pytest.approx(2 * _crossing(NARROW) / 4.25e12 * 1e6) and h200.counted_as == "H200"
    assert cut_cost.decide("rmsnorm_bwd", NARROW, "NVIDIA A100", TuningTable()).counted_as == "H100"
    slow_host = cut_cost.CutPolicy(host_us=100.0)
    assert cut_cost.decide("rmsnorm_bwd", NARROW, H100, _table(10.0, 60.0), slow_host).decision == cut_cost.FUSED


def test_a_call_alone_in_its_region_runs_the_faster_kernel_whatever_the_cut_would_cost():
    """Alone in its region nothing crosses a cut: segkit's kernel wins on any gain (5 us here, where ``decide``
    fuses because the cut would cost more), nvFuser's default where it is no slower, fused without an entry."""
    table = _table(10.0, 15.0)
    assert cut_cost.decide("rmsnorm_bwd", NARROW, H100, table, evidence=EvidenceTable()).decision == cut_cost.FUSED
    d = cut_cost.decide_alone("rmsnorm_bwd", NARROW, H100, table)
    assert d.decision == cut_cost.OPAQUE and d.cut_us == 0.0 and d.crossing_bytes == 0 and d.gain_us == 5.0
    assert "alone in its nvFuser region" in d.describe() and "gain 5.0 us" in d.describe()
    slower = cut_cost.decide_alone("rmsnorm_bwd", NARROW, H100, _table(15.0, 15.0))
    assert slower.decision == cut_cost.FUSED and "no slower" in slower.why
    assert cut_cost.decide_alone("rmsnorm_bwd", NARROW, H100, TuningTable()).decision == cut_cost.FUSED
    assert cut_cost.decide_alone("rmsnorm_bwd", NARROW, H200, table).decision == cut_cost.FUSED  # H100's entry


def _evidence(fused_us: float, opaque_us: float, gpu: str = H100, host_us: float | None = None) -> EvidenceTable:
    return EvidenceTable([CutEvidence(gpu, "rmsnorm_bwd", signature(NARROW), fused_us, opaque_us, "case",
                                      "run: profiles case-a vs case-b", "today", host_us,
                                      None if host_us is None else "run2: b vs a, 10 paired passes")])


def test_step_evidence_decides_over_the_tuning_table():
    """Measured in a step, the cut wins where it saved more kernel time than its call's host time, whatever the
    standalone tuning says; loses where it saved less; and only on the GPU it was measured on."""
    no_gain = _table(10.0, 10.0)  # the tuning table alone: fused
    assert cut_cost.decide("rmsnorm_bwd", NARROW, H100, no_gain, evidence=EvidenceTable()).decision == cut_cost.FUSED
    d = cut_cost.decide("rmsnorm_bwd", NARROW, H100, no_gain, evidence=_evidence(200.0, 150.0))
    assert d.decision == cut_cost.OPAQUE and d.measured.gain_us == 50.0
    for part in ("opaque", "measured in the case step", "200.0 us fused", "150.0 us opaque", "gain 50.0 us"):
        assert part in d.describe(), d.describe()
    small = cut_cost.decide("rmsnorm_bwd", NARROW, H100, _table(10.0, 60.0), evidence=_evidence(155.0, 150.0))
    assert small.decision == cut_cost.FUSED and "saved less" in small.why  # 5 us < host 8 us; the table said cut
    other_gpu = cut_cost.decide("rmsnorm_bwd", NARROW, H200, no_gain, evidence=_evidence(200.0, 150.0))
    assert other_gpu.decision == cut_cost.FUSED and other_gpu.measured is None


def test_a_cut_whose_timed_host_time_exceeds_its_kernel_gain_is_fused():
    """Both sides per step (issue 54: no cut that costs more host time than it saves kernel time): a 50 us kernel
    gain against 591 us of host the cut added in the step's paired passes fuses, against 40 us cuts; a record
    without a host timing weighs the estimate of one call (8 us) as before."""
    timed = cut_cost.decide("rmsnorm_bwd", NARROW, H100, evidence=_evidence(200.0, 150.0, host_us=591.0))
    assert timed.decision == cut_cost.FUSED and timed.host_us == 591.0, timed.describe()
    assert "host time it added to the step" in timed.why
    for part in ("gain 50.0 us vs host 591.0 us (timed)", "host +591.0 us per step opaque (run2: b vs a"):
        assert part in timed.describe(), timed.describe()
    cheap = cut_cost.decide("rmsnorm_bwd", NARROW, H100, evidence=_evidence(200.0, 150.0, host_us=40.0))
    assert cheap.decision == cut_cost.OPAQUE and cheap.host_us == 40.0
    untimed = cut_cost.decide("rmsnorm_bwd", NARROW, H100, evidence=_evidence(200.0, 150.0))
    assert untimed.decision == cut_cost.OPAQUE and untimed.host_us == cut_cost.CutPolicy().host_us
    assert "(estimated)" in untimed.describe() and "estimated host time" in untimed.why


def test_committed_evidence_with_a_host_timing_decides_by_it():
    """The Llama-3-8B RoPE backward on the H200 (q: 32 heads, k: 8), timed on both sides in a step: "auto" runs it
    opaque exactly where its kernel gain beats the host time it added, whatever the tuning table holds."""
    for heads in (32, 8):
        cfg = ApplyRopeConfig("thunder", (1, heads, 4096, 128), table_dtype=torch.float32)
        record = evidence.committed().lookup(H200, "rope_bwd", signature(cfg))
        assert record is not None and record.host_us is not None, signature(cfg)
        d = cut_cost.decide("rope_bwd", cfg, H200)
        assert d.decision == (cut_cost.OPAQUE if record.gain_us > record.host_us else cut_cost.FUSED), d.describe()
        assert "(timed)" in d.describe()


def _claims(claimed_us: float, declined_us: float, gpu: str = H100) -> ClaimTable:
    return ClaimTable([ClaimEvidence(gpu, "rmsnorm_bwd", signature(NARROW), claimed_us, declined_us, "fused", "case",
                                     "run: profiles case-a vs case-b", "today")])


def _declines(spec_name: str, gpu, claims, table=None):
    """The record that leaves one call of ``spec_name`` at NARROW to Thunder, or None."""
    found = cut_cost.call_declines(((spec_name, NARROW),), gpu, claims, table)
    return None if found is None else found[1]


def test_claim_evidence_declines_only_where_thunders_own_ran_faster(tmp_path):
    """A call is left to Thunder where a step measured Thunder's own decomposition faster than segkit's claim, on
    that GPU and signature only; where the claim was faster (or level) it is kept."""
    d = _declines("rmsnorm_bwd", H100, _claims(240.0, 200.0))
    assert d is not None and d.gain_us == 40.0 and "200.0 us left to Thunder" in d.describe()
    assert _declines("rmsnorm_bwd", H100, _claims(200.0, 240.0)) is None
    assert _declines("rmsnorm_bwd", H100, _claims(200.0, 200.0)) is None
    assert _declines("rmsnorm_bwd", H200, _claims(240.0, 200.0)) is None
    assert _declines("rmsnorm_fwd", H100, _claims(240.0, 200.0)) is None
    assert _declines("rmsnorm_bwd", None, _claims(240.0, 200.0)) is None
    # the step measured the claim fused; a tuning entry found since makes it opaque: that evidence no longer applies
    assert cut_cost.decide("rmsnorm_bwd", NARROW, H100, _table(100.0, 400.0)).decision == cut_cost.OPAQUE
    assert _declines("rmsnorm_bwd", H100, _claims(240.0, 200.0), _table(100.0, 400.0)) is None
    assert _declines("rmsnorm_bwd", H100, _claims(240.0, 200.0), _table(399.0, 400.0)) is not None
    # a call's forward and backward measured together: the backward opaque now voids the forward's record too
    both = ClaimTable([dataclasses.replace(r, spec=spec) for r in _claims(240.0, 200.0).records()
                       for spec in ("rmsnorm_fwd", "rmsnorm_bwd")])
    call = (("rmsnorm_fwd", NARROW), ("rmsnorm_bwd", NARROW))
    assert cut_cost.call_declines(call, H100, both)[0] == "rmsnorm_fwd"
    assert cut_cost.call_declines(call, H100, both, _table(100.0, 400.0)) is None
    path = tmp_path / "claims.json"
    _claims(240.0, 200.0).save(path)
    assert ClaimTable.load(path).records() == _claims(240.0, 200.0).records()
    _evidence(200.0, 150.0).save(path)  # a cut evidence file is not a claim evidence file
    with pytest.raises(segkit.errors.TuningTableError, match="claims.json: record 0 must have exactly the fields"):
        ClaimTable.load(path)


def test_evidence_file_round_trips_and_names_a_bad_record(tmp_path):
    table = _evidence(200.0, 150.0)
    path = tmp_path / "ev.json"
    table.save(path)
    assert EvidenceTable.load(path).records() == table.records()
    assert EvidenceTable.load(tmp_path / "none.json").records() == []
    path.write_text('{"records": [{"gpu": "x"}]}')
    with pytest.raises(segkit.errors.TuningTableError, match="ev.json: record 0 must have exactly the fields"):
        EvidenceTable.load(path)


def test_committed_evidence_is_well_formed():
    """Every committed record names a spec, a GPU, a source and a gain that decides one way."""
    for r in evidence.committed().records():
        assert r.spec in fusions.names() and r.gpu.startswith("NVIDIA") and " vs " in r.source, r
        assert r.fused_us > 0 and r.opaque_us > 0, r
    for r in evidence.committed_claims().records():
        assert r.spec in fusions.names() and r.gpu.startswith("NVIDIA") and " vs " in r.source, r
        assert r.claimed_us > 0 and r.declined_us > 0 and r.claimed_as in ("fused", "opaque"), r


def test_segkit_fuse_names_its_values():
    x, w = torch.randn(4, 16), torch.ones(16)
    with pytest.raises(ValueError, match="segkit_fuse must be one of opaque, fused, auto, thunder, got 'yes'"):
        thunder.jit(lambda x: torch.nn.functional.rms_norm(x, (16,), w), executors=thunder_exec.executors(),
                    segkit_fuse="yes")(x)


@pytest.mark.parametrize("value, want", [
    (None, FusePolicy("auto")),
    ("fused", FusePolicy("fused")),
    ({"*": "fused", "norm_bwd": "opaque"},
     FusePolicy("fused", (("layernorm_bwd", "opaque"), ("rmsnorm_bwd", "opaque")))),
    ({"norm_fwd": "fused", "layernorm_fwd": "opaque"}, FusePolicy("auto", (("layernorm_fwd", "opaque"),
                                                                           ("rmsnorm_fwd", "fused")))),
    ({"*": "opaque", "rope_bwd": "opaque"}, FusePolicy("opaque")),
    ({"norm_bwd@131072x128": "thunder"}, FusePolicy("auto", (("layernorm_bwd@131072x128", "thunder"),
                                                             ("rmsnorm_bwd@131072x128", "thunder")))),
    ({"rmsnorm_bwd": "opaque", "norm_bwd@4x4": "opaque", "rmsnorm_bwd@8x8": "thunder"},  # @4x4 = its op's mode
     FusePolicy("auto", (("layernorm_bwd@4x4", "opaque"), ("rmsnorm_bwd", "opaque"), ("rmsnorm_bwd@8x8", "thunder")))),
])
def test_fuse_policy_per_op(value, want):
    """A mapping sets the mode per op: a spec's own key beats its group's, '*' the rest, and an override equal to
    the default is dropped (one policy, one spelling)."""
    got = FusePolicy.parse(value)
    assert got == want
    assert got.mode("rmsnorm_bwd") == dict(want.overrides).get("rmsnorm_bwd", want.default)
    shaped = {k.partition("@")[2] for k, _ in want.overrides if "@" in k}
    for shape in shaped:  # a call of that shape takes its key; any other shape its op's mode
        assert got.mode("rmsnorm_bwd", shape) == dict(want.overrides).get(f"rmsnorm_bwd@{shape}",
                                                                          got.mode("rmsnorm_bwd"))
        assert got.mode("rmsnorm_bwd", shape + "0") == got.mode("rmsnorm_bwd")


@pytest.mark.parametrize("value, match", [
    ({"norm": "fused"}, "unknown op 'norm'; known: '\\*', norm_fwd"),
    ({"norm_bwd": "yes"}, "segkit_fuse\\['norm_bwd'\\] must be one of opaque, fused, auto, thunder, got 'yes'"),
    (["fused"], "a mode .* or a mapping of ops to modes, got list"),
    ({"norm_bwd@131072": "thunder"}, "'norm_bwd@131072': a shape is sizes joined by x .* got '131072'"),
    ({"norm_bwd@": "thunder"}, "'norm_bwd@': a shape is sizes joined by x"),
    ({"norm@4x4": "fused"}, "unknown op 'norm'; known: .* \\(each may end in @SHAPE\\)"),
])
def test_fuse_policy_refuses_naming_the_fault(value, match):
    with pytest.raises(ValueError, match=match):
        FusePolicy.parse(value)



def test_one_compilation_parses_segkit_fuse_once(monkeypatch):
    """The checkers and transforms of every norm and RoPE call of a jitted step, forward and backward, share one
    parse of ``segkit_fuse``; a new compilation (a new input shape) parses it once more."""
    parses = []
    parse = FusePolicy.parse.__func__

    def counted(cls, value):
        parses.append(value)
        return parse(cls, value)

    monkeypatch.setattr(options.FusePolicy, "parse", classmethod(counted))
    step, leaves = _litgpt_block_piece()
    jf, _, _ = _grads(step, leaves, segkit_fuse={"*": "opaque"})
    names = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    assert {"segkit_rms_norm_fwd", "segkit_rope_fwd"} <= names  # both calls claimed, each checked and transformed
    assert parses == [{"*": "opaque"}]
    x = torch.randn(3, 5, 16)
    w = torch.ones(16)
    jn = thunder.jit(lambda x: torch.nn.functional.rms_norm(x, (16,), w), executors=thunder_exec.executors(),
                     segkit_fuse="opaque")
    jn(x)
    jn(x)  # a cache hit: no compilation
    assert len(parses) == 2
    jn(torch.randn(2, 5, 16))  # a new shape: a new compilation
    assert parses[1:] == ["opaque", "opaque"]
