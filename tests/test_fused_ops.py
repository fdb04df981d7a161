"""The fused norm / RoPE operators (thunder_exec.norms, thunder_exec.rope, registered through thunder_exec.nv_ops)
on CPU: the fusions' bodies on a region's tensors of any rank give the builders' numbers, the translators record
the builders' ops from Thunder proxies, each fused operator has its opaque twin, and ``segkit_fuse`` falls back to
the opaque symbols (with a warning) where Thunder's nvFuser executor is not loaded, or, with an executor that
interprets the fused operators, puts them in the traces. The decisions themselves: tests/test_decide.py. The fused
path itself runs on the GPU host (tests/gpu/test_fusible_gpu.py).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
import torch

import fusions
import segkit
import thunder
import thunder_exec
from fusions import layernorm_bwd, layernorm_fwd, rmsnorm_bwd, rmsnorm_fwd, rope_bwd, rope_fwd
from fusions.configs import ApplyRopeConfig, NormConfig
from fusions.spec import nv_dtype
from segkit.compare import diff
from segkit.frontend import FusionDefinition
from thunder.core import devices, dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.core.utils import ProxyDict
from thunder.extend import OperatorExecutor
from thunder_exec import decide, norms, nv_ops, rope

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
    "rmsnorm_fwd": (norms.rms_fwd_translator, ("x", "weight"), (1e-6, False)),
    "rmsnorm_bwd": (norms.rms_bwd_translator, ("dy", "x", "rstd", "weight"), (1e-6, False)),
    "layernorm_fwd": (norms.ln_fwd_translator, ("x", "weight", "bias"), (1e-5,)),
    "layernorm_bwd": (norms.ln_bwd_translator, ("dy", "x", "mean", "rstd", "weight"), (1e-5,)),
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
    from thunder_exec.calls import runner_shape

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
    translator = rope.rope_fwd_translator if name == "rope_fwd" else rope.rope_bwd_translator
    fd, _ = _translated([x, cos, sin], lambda p, fd, m: translator(*p, BF16, fd=fd, lc_to_nv_map=m))
    assert segkit.emit_repro(fd) == segkit.emit_repro(spec.build(cfg, gpu="none"))


def test_rope_translator_squeezes_tables_given_with_leading_ones():
    """litgpt hands (1, T, n) tables: the translator squeezes them to (T, n); same numbers as the builder's."""
    spec = fusions.get("rope_fwd")
    cfg = ApplyRopeConfig("t", (2, 3, 8, 16), 1, BF16, torch.float32)
    x, cos, sin = spec.make_inputs(cfg).values()
    args = [x, cos[None], sin[None]]
    fd, _ = _translated(args, lambda p, fd, m: rope.rope_fwd_translator(*p, BF16, fd=fd, lc_to_nv_map=m))
    assert "squeeze" in segkit.emit_repro(fd)
    (got,) = segkit.run_reference(fd, args)
    assert torch.equal(got, segkit.run_reference(spec.build(cfg, gpu="none"), [x, cos, sin])[0])


def test_registration_puts_operators_and_translators_on_the_executor():
    from thunder.extend import FusionExecutor

    ex, translators = FusionExecutor("segkit_fusible_test"), {}
    symbols = nv_ops.register(ex, lambda sym_id, translator, checker: translators.setdefault(sym_id, translator))
    assert {s.name for s in (symbols.rms_fwd, symbols.rms_bwd, symbols.ln_fwd, symbols.ln_bwd, symbols.rope_fwd,
                             symbols.rope_bwd)} == set(nv_ops.NAMES)
    assert translators[symbols.rope_bwd.id] is rope.rope_bwd_translator
    with tracectx(TraceCtx()):
        x = _proxy(torch.empty(2, 4, 64, dtype=BF16))
        w = _proxy(torch.empty(64, dtype=torch.float32))
        y, rstd = symbols.rms_fwd(x, w, 1e-6, False)
    assert (y.shape, y.dtype, rstd.shape, rstd.dtype) == ((2, 4, 64), dtypes.bfloat16, (2, 4), dtypes.float32)


def test_every_fusible_operator_has_its_opaque_symbols_with_the_same_arguments():
    """thunder_exec.decide.alone binds a region's call to ``op.opaque`` (its arguments, then the compile options'): the
    symbol exists on segkit_ex and takes two more parameters than the fused meta."""
    import inspect

    from thunder_exec.base import segkit_ex

    for op in nv_ops.BY_NAME.values():
        for name in filter(None, (op.opaque, op.opaque_y)):
            sym = segkit_ex.opmap[name]
            assert (len(inspect.signature(sym.meta).parameters) ==
                    len(inspect.signature(op.meta).parameters) + 2), name
        assert op.spec in fusions.names()


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
    decide.clear_notes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jf, loss, grads = _grads(step, leaves, segkit_fuse="fused")
    said = [str(w.message) for w in caught if issubclass(w.category, decide.FuseFallbackWarning)]
    assert len(said) == 1 and "nvFuser executor is not loaded" in said[0]  # once, not per norm / RoPE call
    names = {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    assert {"segkit_rms_norm_fwd", "segkit_rope_fwd"} <= names
    assert not names & set(nv_ops.NAMES)
    assert {"segkit_rms_norm_bwd", "segkit_rope_bwd"} <= {
        b.sym.name for b in thunder.last_backward_traces(jf)[-1].bound_symbols}
    assert torch.equal(loss, loss0) and all(torch.equal(g, w) for g, w in zip(grads, grads0))


def test_choices_record_what_each_call_became():
    """The opaque mode records every norm and RoPE call it cut, forward and backward, with its signature: what the
    step table keeps per variant (Row.cuts) and benchmarks.cut_evidence reads."""
    step, leaves = _litgpt_block_piece()
    decide.clear_notes()
    _grads(step, leaves, segkit_fuse="opaque")
    got = {(c.spec, c.chosen, c.mode) for c in decide.CHOICES.values()}
    assert got == {(s, "opaque", "opaque") for s in ("rmsnorm_fwd", "rmsnorm_bwd", "rope_fwd", "rope_bwd")}, got
    rope = next(c for c in decide.CHOICES.values() if c.spec == "rope_bwd")
    assert rope.signature.startswith("shape=(2, 4, 8, 16)"), rope
    decide.clear_notes()
    assert decide.CHOICES.values() == []


def test_a_claimed_norm_builds_each_config_once(monkeypatch):
    """Along one jitted step the RMSNorm's checker, its grad transform and its opaque symbols' runners read the
    calls of thunder_exec.calls: each config (one for the forward and the backward) is made once, then found."""
    from thunder_exec import calls

    built = []

    def counted(*args):
        built.append(args)
        return NormConfig(*args)

    monkeypatch.setattr(calls, "NormConfig", counted)
    calls.clear()
    step, leaves = _litgpt_block_piece()
    _grads(step, leaves, segkit_fuse="opaque")
    assert any(args[1] == (2, 8, 64) for args in built), built  # the step's x (the claim check may add its own)
    assert len(built) == len(set(built)), built


def test_one_module_of_thunder_exec_builds_the_configs_and_keys_the_runners():
    """thunder_exec.calls alone constructs the norm / RoPE configs and keys fusions.runner.RUNNERS: the family
    files ask it for their calls and runners."""
    root = Path(thunder_exec.__file__).parent
    for path in sorted(root.rglob("*.py")):
        found = [name for name in ("NormConfig(", "RopeConfig(", "RUNNERS") if name in path.read_text()]
        assert path.name == "calls.py" or not found, (path.relative_to(root), found)


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
    decide.clear_notes()
    jf, loss, grads = _grads(step, leaves, segkit_fuse={"*": "opaque", **fuse})
    choices = {c.spec: c for c in decide.CHOICES.values()}
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


def test_default_is_auto_fused_where_no_tuning_entry_and_silent_without_nvfuser(monkeypatch, opaque_piece):
    """No ``segkit_fuse``: "auto". Without Thunder's nvFuser executor it is the opaque symbols and says nothing
    (only an explicit "fused" warns); with the fusible symbols registered, a call with no tuning entry (here: no
    GPU) is fused. Loss and grads are the opaque mode's either way."""
    step, leaves = _litgpt_block_piece()
    with warnings.catch_warnings():
        warnings.simplefilter("error", decide.FuseFallbackWarning)
        jf, loss, grads = _grads(step, leaves)
    assert "segkit_rms_norm_fwd" in {b.sym.name for b in thunder.last_traces(jf)[-1].bound_symbols}
    ex = _InterpretedRegions("segkit_fusible_cpu_default")
    symbols = nv_ops.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(nv_ops, "registered", lambda: symbols)
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
    symbols = nv_ops.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(nv_ops, "registered", lambda: symbols)
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
        translator = nv_ops.BY_NAME[name].translator

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
    symbols = nv_ops.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
    monkeypatch.setattr(nv_ops, "registered", lambda: symbols)
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
    symbols = nv_ops.register(ex, lambda sym_id, translator, checker: None, devices.DeviceType.CPU)
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
    monkeypatch.setattr(nv_ops, "registered", lambda: symbols)
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
