"""Fusible norm / RoPE symbols (thunder_exec.fusible) on CPU: the fusions' bodies on a region's tensors of any
rank give the builders' numbers, the translators record the builders' ops from Thunder proxies, the cut cost model
decides from the tuning table, and ``segkit_fuse`` falls back to the opaque symbols (with a warning) where
Thunder's nvFuser executor is not loaded. The fused path itself runs on the GPU host (tests/gpu/test_fusible_gpu.py).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import pytest
import torch

import fusions
import segkit
import thunder
import thunder_exec
from fusions import cut_cost, cut_evidence, layernorm_bwd, layernorm_fwd, rmsnorm_bwd, rmsnorm_fwd, rope_bwd, rope_fwd
from fusions.configs import ApplyRopeConfig, NormConfig
from fusions.cut_evidence import ClaimEvidence, ClaimTable, CutEvidence, EvidenceTable
from fusions.spec import nv_dtype, signature
from segkit.compare import diff
from segkit.frontend import FusionDefinition
from segkit.tuning import TableEntry, TuningTable
from thunder.core import devices, dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.core.utils import ProxyDict
from thunder.extend import OperatorExecutor
from thunder_exec import fusible
from thunder_exec.base import FusePolicy

BF16 = torch.bfloat16
NORMS = {  # spec: (body, the input names the body takes after fd, in order)
    "rmsnorm_fwd": (rmsnorm_fwd.body, ("x", "weight")),
    "rmsnorm_bwd": (rmsnorm_bwd.body, ("x", "dy", "rstd", "weight")),
    "layernorm_fwd": (layernorm_fwd.body, ("x", "weight", "bias")),
    "layernorm_bwd": (layernorm_bwd.body, ("x", "dy", "mean", "rstd", "weight")),
}


def _define(fd, t: torch.Tensor):
    return fd.define_tensor(shape=list(t.shape), contiguity=[True] * t.ndim, dtype=nv_dtype(t.dtype))


def _recorded(tensors: list[torch.Tensor], emit) -> FusionDefinition:
    """A recording fusion with ``tensors`` as inputs and what ``emit(fd, *inputs)`` returns as outputs."""
    with FusionDefinition() as fd:
        outs = emit(fd, *[_define(fd, t) for t in tensors])
        for o in outs if isinstance(outs, tuple) else (outs,):
            fd.add_output(o)
    return fd


def _shaped_norm_inputs(spec, cfg: NormConfig, shape: tuple[int, ...]) -> dict[str, torch.Tensor]:
    """The spec's inputs for ``cfg`` (rows x hidden) with x, dy and the statistics viewed as ``shape``."""
    inp = spec.make_inputs(cfg)
    return {k: v.reshape(shape) if k in ("x", "dy") else v.reshape(shape[:-1]) if k in ("mean", "rstd") else v
            for k, v in inp.items()}


@pytest.mark.parametrize("shape", [(2, 4, 64), (2, 2, 3, 64)], ids=["3d", "4d"])
@pytest.mark.parametrize("name, round_normed", [*((n, False) for n in NORMS), ("rmsnorm_fwd", True),
                                                ("rmsnorm_bwd", True)])  # Hugging Face's rounding: RMSNorm only
def test_norm_body_on_any_rank_equals_the_builder(name, round_normed, shape):
    spec, (body, names) = fusions.get(name), NORMS[name]
    cfg = NormConfig("t", (math.prod(shape[:-1]), shape[-1]), BF16, 1e-5, name.startswith("layernorm"),
                     round_normed=round_normed)
    flat = spec.make_inputs(cfg)
    want = segkit.run_reference(spec.build(cfg, gpu="none"), list(flat.values()))
    inp = _shaped_norm_inputs(spec, cfg, shape)
    got = segkit.run_reference(_recorded([inp[k] for k in names], lambda fd, *t: body(fd, *t, cfg, len(shape))),
                               [inp[k] for k in names])
    for i, (g, w) in enumerate(zip(got, want)):
        rows_shaped = g.shape == (*shape[:-1],) or g.shape == shape
        assert torch.equal(g.reshape(w.shape) if rows_shaped else g, w), f"{spec.outputs[i]} differs from the builder"
    for i, (ref, g) in enumerate(zip(spec.reference(flat, cfg), got)):
        d = diff(i, ref, g.reshape(ref.shape))
        assert d.ok, f"{spec.outputs[i]}: {d}"


@pytest.mark.parametrize("shape", [(2, 8, 16), (2, 2, 3, 8, 16)], ids=["3d", "5d"])
@pytest.mark.parametrize("name, body", [("rope_fwd", rope_fwd.body), ("rope_bwd", rope_bwd.body)])
def test_rope_body_on_any_rank_equals_the_builder(name, body, shape):
    spec = fusions.get(name)
    cfg = ApplyRopeConfig("t", (shape[0], math.prod(shape[1:-2]), *shape[-2:]), 1, BF16, torch.float32)
    flat = spec.make_inputs(cfg)
    want = segkit.run_reference(spec.build(cfg, gpu="none"), list(flat.values()))
    x, cos, sin = flat.values()
    args = [x.reshape(shape), cos, sin]
    (got,) = segkit.run_reference(_recorded(args, lambda fd, *t: body(fd, *t, cfg, shape)), args)
    assert got.shape == shape and torch.equal(got.reshape(want[0].shape), want[0])
    d = diff(0, spec.reference(flat, cfg)[0], got.reshape(cfg.shape))
    assert d.ok, d


# --------------------------------------------------------------------------- translators
def _proxy(t: torch.Tensor) -> TensorProxy:
    return TensorProxy(shape=tuple(t.shape), dtype=dtypes.to_dtype(t.dtype), device=devices.cpu)


def _translated(tensors: list[torch.Tensor], call) -> tuple[FusionDefinition, tuple]:
    """A recording fusion whose inputs are ``tensors`` and whose ops ``call(proxies, fd, lc_to_nv_map)`` emits from
    Thunder proxies of them, as Thunder's nvFuser executor calls a translator."""
    with tracectx(TraceCtx()):
        proxies = [None if t is None else _proxy(t) for t in tensors]
        lc_to_nv_map = ProxyDict()
        with FusionDefinition() as fd:
            for p, t in zip(proxies, tensors):
                if t is not None:
                    lc_to_nv_map[p] = _define(fd, t)
            outs = call(proxies, fd, lc_to_nv_map)
            for o in outs if isinstance(outs, tuple) else (outs,):
                fd.add_output(o)
    return fd, outs


TRANSLATORS = {  # spec: (translator, inputs by name in the translator's order, constants after them)
    "rmsnorm_fwd": (fusible.rms_fwd_translator, ("x", "weight"), (1e-6, False)),
    "rmsnorm_bwd": (fusible.rms_bwd_translator, ("dy", "x", "rstd", "weight"), (1e-6, False)),
    "layernorm_fwd": (fusible.ln_fwd_translator, ("x", "weight", "bias"), (1e-5,)),
    "layernorm_bwd": (fusible.ln_bwd_translator, ("dy", "x", "mean", "rstd", "weight"), (1e-5,)),
}


@pytest.mark.parametrize("name", list(TRANSLATORS))
def test_norm_translator_records_the_builders_ops(name):
    translator, order, consts = TRANSLATORS[name]
    spec = fusions.get(name)
    cfg = NormConfig("t", (2, 4, 64), BF16, consts[0], name.startswith("layernorm"))
    inp = spec.make_inputs(cfg)
    want = spec.build(cfg, gpu="none")
    # the translator's inputs in the builder's define order, so the two recordings can be compared op for op
    defined = [inp[k] for k in inp]
    fd, _ = _translated(defined, lambda p, fd, m: translator(
        *[p[list(inp).index(k)] for k in order], *consts, fd=fd, lc_to_nv_map=m))
    assert segkit.emit_repro(fd) == segkit.emit_repro(want)
    assert all(torch.equal(g, w) for g, w in zip(segkit.run_reference(fd, defined),
                                                 segkit.run_reference(want, defined)))


@pytest.mark.parametrize("shape", [(1, 8, 64), (1, 1, 8, 64), (2, 1, 8, 64)])
@pytest.mark.parametrize("name", ["rmsnorm_bwd", "layernorm_bwd"])
def test_backward_translators_sum_dw_over_rows_without_unit_dims(name, shape):
    """A size-1 row dim (batch 1 in a training step) is a broadcast dim to nvFuser, and a dw summed over it is
    scheduled as separate reductions: the backward translators squeeze such dims off, so every sum reads a tensor
    with no size-1 row dim, and dx comes back at x's shape with the numbers of the builder at (rows, hidden)."""
    translator, order, consts = TRANSLATORS[name]
    spec = fusions.get(name)
    cfg = NormConfig("t", (math.prod(shape[:-1]), shape[-1]), BF16, consts[0], name.startswith("layernorm"))
    flat = spec.make_inputs(cfg)
    inp = _shaped_norm_inputs(spec, cfg, shape)
    defined = [inp[k] for k in inp]
    fd, _ = _translated(defined, lambda p, fd, m: translator(
        *[p[list(inp).index(k)] for k in order], *consts, fd=fd, lc_to_nv_map=m))
    for op in fd.fusion.ops:
        if op.name == "sum":
            assert 1 not in op.inputs[0].shape[:-1], (op.inputs[0].shape, op.args)
    got = segkit.run_reference(fd, defined)
    want = segkit.run_reference(spec.build(cfg, gpu="none"), list(flat.values()))
    assert got[0].shape == shape
    assert all(torch.equal(g.reshape(w.shape), w) for g, w in zip(got, want))


def test_runner_shape_flattens_only_where_a_row_dim_is_one():
    from thunder_exec.norms import runner_shape

    assert runner_shape((4096, 4096)) == (4096, 4096)
    assert runner_shape((2, 4096, 5120)) == (2, 4096, 5120)
    assert runner_shape((1, 4096, 4096)) == (4096, 4096)
    assert runner_shape((2, 1, 8, 64)) == (16, 64)
    assert runner_shape((2, 3, 8, 64)) == (48, 64)


@pytest.mark.parametrize("name", ["rope_fwd", "rope_bwd"])
def test_rope_translator_records_the_builders_ops(name):
    spec = fusions.get(name)
    cfg = ApplyRopeConfig("t", (2, 3, 8, 16), 1, BF16, torch.float32)
    x, cos, sin = spec.make_inputs(cfg).values()
    translator = fusible.rope_fwd_translator if name == "rope_fwd" else fusible.rope_bwd_translator
    fd, _ = _translated([x, cos, sin], lambda p, fd, m: translator(*p, BF16, fd=fd, lc_to_nv_map=m))
    assert segkit.emit_repro(fd) == segkit.emit_repro(spec.build(cfg, gpu="none"))


def test_rope_translator_squeezes_tables_given_with_leading_ones():
    """litgpt hands (1, T, n) tables: the translator squeezes them to (T, n); same numbers as the builder's."""
    spec = fusions.get("rope_fwd")
    cfg = ApplyRopeConfig("t", (2, 3, 8, 16), 1, BF16, torch.float32)
    x, cos, sin = spec.make_inputs(cfg).values()
    args = [x, cos[None], sin[None]]
    fd, _ = _translated(args, lambda p, fd, m: fusible.rope_fwd_translator(*p, BF16, fd=fd, lc_to_nv_map=m))
    assert "squeeze" in segkit.emit_repro(fd)
    (got,) = segkit.run_reference(fd, args)
    assert torch.equal(got, segkit.run_reference(spec.build(cfg, gpu="none"), [x, cos, sin])[0])


def test_registration_puts_operators_and_translators_on_the_executor():
    from thunder.extend import FusionExecutor

    ex, translators = FusionExecutor("segkit_fusible_test"), {}
    symbols = fusible.register(ex, lambda sym_id, translator, checker: translators.setdefault(sym_id, translator))
    assert {s.name for s in (symbols.rms_fwd, symbols.rms_bwd, symbols.ln_fwd, symbols.ln_bwd, symbols.rope_fwd,
                             symbols.rope_bwd)} == set(fusible.NAMES)
    assert translators[symbols.rope_bwd.id] is fusible.rope_bwd_translator
    with tracectx(TraceCtx()):
        x = _proxy(torch.empty(2, 4, 64, dtype=BF16))
        w = _proxy(torch.empty(64, dtype=torch.float32))
        y, rstd = symbols.rms_fwd(x, w, 1e-6, False)
    assert (y.shape, y.dtype, rstd.shape, rstd.dtype) == ((2, 4, 64), dtypes.bfloat16, (2, 4), dtypes.float32)


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


def test_every_fusible_operator_has_its_opaque_symbols_with_the_same_arguments():
    """thunder_exec.alone binds a region's call to ``op.opaque`` (its arguments, then the compile options'): the
    symbol exists on segkit_ex and takes two more parameters than the fused meta."""
    import inspect

    from thunder_exec.base import segkit_ex

    for op in fusible.BY_NAME.values():
        for name in filter(None, (op.opaque, op.opaque_y)):
            sym = segkit_ex.opmap[name]
            assert (len(inspect.signature(sym.meta).parameters) ==
                    len(inspect.signature(op.meta).parameters) + 2), name
        assert op.spec in fusions.names()


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
        record = cut_evidence.committed().lookup(H200, "rope_bwd", signature(cfg))
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
    for r in cut_evidence.committed().records():
        assert r.spec in fusions.names() and r.gpu.startswith("NVIDIA") and " vs " in r.source, r
        assert r.fused_us > 0 and r.opaque_us > 0, r
    for r in cut_evidence.committed_claims().records():
        assert r.spec in fusions.names() and r.gpu.startswith("NVIDIA") and " vs " in r.source, r
        assert r.claimed_us > 0 and r.declined_us > 0 and r.claimed_as in ("fused", "opaque"), r


# --------------------------------------------------------------------------- the compile option on CPU
def _litgpt_block_piece():
    """litgpt's RMSNorm (fp32 weight, bf16 x) and apply_rope on q, as its CausalSelfAttention calls them."""
    from litgpt.model import RMSNorm, apply_rope, build_rope_cache

    torch.manual_seed(0)
    norm = RMSNorm(64).to(torch.float32)
    norm.weight.data = torch.randn(64) * 0.3 + 1.0
    cos, sin = (t[None] for t in build_rope_cache(8, 16))  # (1, T, n), as litgpt's GPT hands them
    x = torch.randn(2, 8, 64, dtype=BF16, requires_grad=True)

    def step():
        q = norm(x).view(2, 8, 4, 16).transpose(1, 2)
        return apply_rope(q, cos, sin).sum(dtype=torch.float32)

    return step, [x, norm.weight]


def _grads(step, leaves, executors=None, **options):
    jf = thunder.jit(step, executors=executors or thunder_exec.executors(), **options)
    for t in leaves:
        t.grad = None
    loss = jf()
    loss.backward()
    return jf, loss.detach(), [t.grad.clone() for t in leaves]


@pytest.fixture(scope="module")
def opaque_piece():
    """The litgpt piece's loss and grads in the opaque mode."""
    step, leaves = _litgpt_block_piece()
    _, loss, grads = _grads(step, leaves, segkit_fuse="opaque")
    return loss, grads


def test_fused_without_nvfuser_claims_opaquely_with_one_warning(opaque_piece):
    step, leaves = _litgpt_block_piece()
    loss0, grads0 = opaque_piece
    fusible.clear_notes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jf, loss, grads = _grads(step, leaves, segkit_fuse="fused")
    said = [str(w.message) for w in caught if issubclass(w.category, fusible.FuseFallbackWarning)]
    assert len(said) == 1 and "nvFuser executor is not loaded" in said[0]  # once, not per norm / RoPE call
    names = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    assert {"segkit_rms_norm_fwd", "segkit_rope_fwd"} <= names
    assert not names & set(fusible.NAMES)
    assert {"segkit_rms_norm_bwd", "segkit_rope_bwd"} <= {
        b.sym.name for b in thunder.last_backward_traces(jf)[-1].bound_symbols}
    assert torch.equal(loss, loss0) and all(torch.equal(g, w) for g, w in zip(grads, grads0))


def test_choices_record_what_each_call_became():
    """The opaque mode records every norm and RoPE call it cut, forward and backward, with its signature: what the
    step table keeps per variant (Row.cuts) and benchmarks.cut_evidence reads."""
    step, leaves = _litgpt_block_piece()
    fusible.clear_notes()
    _grads(step, leaves, segkit_fuse="opaque")
    got = {(c.spec, c.chosen, c.mode) for c in fusible.CHOICES.values()}
    assert got == {(s, "opaque", "opaque") for s in ("rmsnorm_fwd", "rmsnorm_bwd", "rope_fwd", "rope_bwd")}, got
    rope = next(c for c in fusible.CHOICES.values() if c.spec == "rope_bwd")
    assert rope.signature.startswith("shape=(2, 4, 8, 16)"), rope
    fusible.clear_notes()
    assert fusible.CHOICES.values() == []


def _eager_grads(step, leaves):
    for t in leaves:
        t.grad = None
    loss = step()
    loss.backward()
    return loss.detach(), [t.grad.clone() for t in leaves]


@pytest.mark.parametrize("fuse, left, kept", [
    ({"norm_fwd": "thunder", "norm_bwd": "thunder"}, ("rmsnorm_fwd", "rmsnorm_bwd"), ("rope_fwd", "rope_bwd")),
    ({"rope_bwd": "thunder"}, ("rope_fwd", "rope_bwd"), ("rmsnorm_fwd", "rmsnorm_bwd")),
    # keys with a call's shape: the norm's rows x hidden, the RoPE's x; a shape no call has changes nothing
    ({"norm_bwd@16x64": "thunder"}, ("rmsnorm_fwd", "rmsnorm_bwd"), ("rope_fwd", "rope_bwd")),
    ({"norm_bwd@16x128": "thunder", "rope_fwd@2x4x8x16": "thunder"}, ("rope_fwd", "rope_bwd"),
     ("rmsnorm_fwd", "rmsnorm_bwd")),
])
def test_thunder_mode_leaves_the_whole_call_to_thunders_decomposition(fuse, left, kept):
    """"thunder" on an op leaves its calls unclaimed, forward and backward together (Thunder's grad of its own
    decomposition comes as one), recorded as such; the other op stays claimed; the loss and grads are Thunder's
    own decomposition's, as close to eager as the fully claimed step's."""
    step, leaves = _litgpt_block_piece()
    loss_e, grads_e = _eager_grads(step, leaves)
    fusible.clear_notes()
    jf, loss, grads = _grads(step, leaves, segkit_fuse={"*": "opaque", **fuse})
    choices = {c.spec: c for c in fusible.CHOICES.values()}
    assert {s for s, c in choices.items() if c.chosen == "thunder"} == set(left), choices
    assert {s for s, c in choices.items() if c.chosen == "opaque"} == set(kept), choices
    named = next(c for c in choices.values() if c.chosen == "thunder" and c.mode == "thunder")
    assert named.why == "segkit_fuse thunder"
    names = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    bwd = {b.sym.name for b in thunder.last_backward_traces(jf)[-1].bound_symbols}
    norm_left, rope_left = "rmsnorm_fwd" in left, "rope_fwd" in left
    assert ("segkit_rms_norm_fwd" in names) != norm_left and ("segkit_rms_norm_bwd" in bwd) != norm_left
    assert ("segkit_rope_fwd" in names) != rope_left and ("segkit_rope_bwd" in bwd) != rope_left
    for got, want in zip((loss, *grads), (loss_e, *grads_e)):
        err = (got.double() - want.double()).abs().max() / want.double().abs().max()
        assert err < 2e-2, (err, got, want)


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


def test_default_is_auto_fused_where_no_tuning_entry_and_silent_without_nvfuser(monkeypatch, opaque_piece):
    """No ``segkit_fuse``: "auto". Without Thunder's nvFuser executor it is the opaque symbols and says nothing
    (only an explicit "fused" warns); with the fusible symbols registered, a call with no tuning entry (here: no
    GPU) is fused. Loss and grads are the opaque mode's either way."""
    step, leaves = _litgpt_block_piece()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fusible.FuseFallbackWarning)
        jf, loss, grads = _grads(step, leaves)
    assert "segkit_rms_norm_fwd" in {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    ex = _InterpretedRegions("segkit_fusible_cpu_default")
    symbols = fusible.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(fusible, "registered", lambda: symbols)
    default = thunder_exec.executors()
    jf, loss, grads = _grads(step, leaves, executors=[default[0], ex, *default[1:]])
    fw = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    assert {"segkit_nv_rms_norm_fwd", "segkit_nv_rope_fwd"} <= fw and "segkit_rms_norm_fwd" not in fw
    loss0, grads0 = opaque_piece
    torch.testing.assert_close(loss, loss0)
    for g, w in zip(grads, grads0):
        torch.testing.assert_close(g, w)


def test_fuse_policy_mapping_through_thunder(monkeypatch, opaque_piece):
    """``{"*": "fused", "norm_bwd": "opaque"}``: the norm forward and both RoPE symbols are fusible ones, the norm
    backward segkit_ex's opaque symbol; loss and grads are the opaque mode's."""
    ex = _InterpretedRegions("segkit_fusible_cpu_mixed")
    symbols = fusible.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(fusible, "registered", lambda: symbols)
    step, leaves = _litgpt_block_piece()
    default = thunder_exec.executors()
    jf, loss, grads = _grads(step, leaves, executors=[default[0], ex, *default[1:]],
                             segkit_fuse={"*": "fused", "norm_bwd": "opaque"})
    fw = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    bw = {b.sym.name for b in thunder.last_backward_traces(jf)[-1].bound_symbols}
    assert {"segkit_nv_rms_norm_fwd", "segkit_nv_rope_fwd"} <= fw
    assert {"segkit_rms_norm_bwd", "segkit_nv_rope_bwd"} <= bw and "segkit_nv_rms_norm_bwd" not in bw
    loss0, grads0 = opaque_piece
    torch.testing.assert_close(loss, loss0)
    for g, w in zip(grads, grads0):
        torch.testing.assert_close(g, w)


class _InterpretedRegions(OperatorExecutor):
    """Stands in for Thunder's nvFuser executor on CPU: each fusible symbol is its own region, its translator
    recorded into segkit's FusionDefinition from the call's tensors and run by the reference interpreter."""

    def register_operator(self, name, *, meta):
        translator = fusible.BY_NAME[name].translator

        def run(*args):
            tensors = [a.contiguous() for a in args if isinstance(a, torch.Tensor)]
            ins = [a for a in args if isinstance(a, torch.Tensor)]
            with FusionDefinition() as fd:
                lc_to_nv_map = {a: _define(fd, a) for a in ins}
                outs = translator(*args, fd=fd, lc_to_nv_map=lc_to_nv_map)
                for o in outs if isinstance(outs, tuple) else (outs,):
                    fd.add_output(o)
            got = segkit.run_reference(fd, tensors)
            return tuple(got) if isinstance(outs, tuple) else got[0]

        return super().register_operator(name, meta=meta, fn=run)


def test_fused_symbols_through_thunder_autograd(monkeypatch, opaque_piece):
    """The transforms emit the fusible symbols (forward and backward, tables given as (1, T, n)) when they are
    registered on an executor of the compilation: here one whose regions run the translators on the reference
    interpreter. Loss and grads are the opaque mode's."""
    ex = _InterpretedRegions("segkit_fusible_cpu")
    symbols = fusible.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(fusible, "registered", lambda: symbols)
    step, leaves = _litgpt_block_piece()
    default = thunder_exec.executors()
    jf, loss, grads = _grads(step, leaves, executors=[default[0], ex, *default[1:]], segkit_fuse="fused")
    fw = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    bw = {b.sym.name for b in thunder.last_backward_traces(jf)[-1].bound_symbols}
    assert {"segkit_nv_rms_norm_fwd", "segkit_nv_rope_fwd"} <= fw and not fw & {"segkit_rms_norm_fwd", "segkit_rope_fwd"}
    assert {"segkit_nv_rms_norm_bwd", "segkit_nv_rope_bwd"} <= bw and not bw & {"segkit_rms_norm_bwd", "segkit_rope_bwd"}
    loss0, grads0 = opaque_piece
    torch.testing.assert_close(loss, loss0)
    for g, w in zip(grads, grads0):
        torch.testing.assert_close(g, w)


@pytest.mark.models
@pytest.mark.parametrize("name", ["Llama-3.2-1B", "pythia-14m"])
def test_whole_litgpt_model_fused_claims_every_norm_and_rope(monkeypatch, name):
    """A whole tiny litgpt model (RMSNorm or LayerNorm, full or partial rotary) with the fusible symbols on the
    interpreting executor: every norm and RoPE is a segkit_nv symbol forward and backward, none opaque, and loss
    and grads agree with the opaque mode's."""
    from tests import model_zoo

    ex = _InterpretedRegions(f"segkit_fusible_cpu_{name}")
    symbols = fusible.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    model = model_zoo.build(name)
    idx = torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T), generator=torch.Generator().manual_seed(0))
    step = model_zoo._Loss(model)

    def run(executors, **options):
        model.zero_grad(set_to_none=True)
        jf = thunder.jit(step, executors=executors, **options)
        loss = jf(idx)
        loss.backward()
        return jf, loss.detach(), [p.grad.clone() for p in model.parameters()]

    default = thunder_exec.executors()
    _, loss0, grads0 = run(default)
    monkeypatch.setattr(fusible, "registered", lambda: symbols)
    jf, loss, grads = run([default[0], ex, *default[1:]], segkit_fuse="fused")
    norms, attentions = model_zoo._eager_counts(model, idx, rope=True)
    fw, bw = thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]
    count = model_zoo.count_symbols
    assert count(fw, {"segkit_nv_rms_norm_fwd", "segkit_nv_layer_norm_fwd"}) == norms
    assert count(bw, {"segkit_nv_rms_norm_bwd", "segkit_nv_layer_norm_bwd"}) == norms
    assert count(fw, {"segkit_nv_rope_fwd"}) == count(bw, {"segkit_nv_rope_bwd"}) == 2 * attentions
    assert not count(fw, {"segkit_rms_norm_fwd", "segkit_layer_norm_fwd", "segkit_rope_fwd"})
    torch.testing.assert_close(loss, loss0)
    for g, w in zip(grads, grads0):
        torch.testing.assert_close(g, w)
