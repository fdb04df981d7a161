"""Issue 37 items 1-2 on the GPU host: with ``segkit_fuse="fused"`` Thunder's nvFuser executor fuses segkit's norms
and RoPE into its own regions (thunder_exec.nv_ops): no opaque segkit norm / RoPE symbol is left in the traces,
the regions hold the segkit_nv symbols, and loss and grads agree with the opaque mode and with eager."""

from __future__ import annotations

import warnings
from collections import Counter

import pytest
import torch

import thunder
import thunder_exec
from tests.test_thunder_exec import _close, _run
from thunder_exec.decide import FuseFallbackWarning

pytestmark = pytest.mark.gpu

OPAQUE_FW = {"segkit_rms_norm_fwd", "segkit_rms_norm", "segkit_layer_norm_fwd", "segkit_layer_norm", "segkit_rope_fwd"}
OPAQUE_BW = {"segkit_rms_norm_bwd", "segkit_layer_norm_bwd", "segkit_rope_bwd"}


def _top(trace) -> set[str]:
    return {b.sym.name for b in trace.bound_symbols}


def _in_regions(trace) -> Counter:
    """Symbol names inside the trace's nvFusion regions (each region keeps its bound symbols as subsymbols)."""
    return Counter(s.sym.name for b in trace.bound_symbols if b.sym.name.startswith("nvFusion") for s in b.subsymbols)


def _jit(fn, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FuseFallbackWarning)  # on the GPU host nothing falls back
        return thunder.jit(fn, executors=thunder_exec.executors(), **options)


class _Step(torch.nn.Module):
    """A litgpt model and a loss reaching every logit, as one module (thunder.jit differentiates the whole step)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, idx):
        logits = self.model(idx).float()
        return (logits * logits.detach().sin()).mean()


def _tiny_llama():
    from litgpt import GPT, Config

    cfg = Config.from_name("Llama-3.2-1B", n_layer=2, block_size=128, n_embd=256, n_head=4, n_query_groups=2,
                           head_size=64, intermediate_size=512, padded_vocab_size=512, vocab_size=512)
    torch.manual_seed(0)
    return GPT(cfg).cuda().bfloat16(), cfg


def _step_grads(f, step: _Step, idx):
    """Loss and every parameter's grad (fp32 copies) of one forward + backward of ``f`` (``step`` or a jit of it)."""
    for p in step.parameters():
        p.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error", FuseFallbackWarning)
        loss = f(idx)
    loss.backward()
    return loss.detach().float(), [p.grad.float().clone() for p in step.parameters()]


def test_tiny_llama_step_fused_into_nvfuser_regions():
    """litgpt Llama, 2 layers, bf16: 5 RMSNorms (2 per block + the final one) and 4 RoPEs (q and k per block) run
    inside nvFusion regions forward and backward; loss and grads as the opaque mode's and eager's."""
    model, cfg = _tiny_llama()
    step = _Step(model)
    idx = torch.randint(0, cfg.vocab_size, (2, 128), device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    fused = _jit(step, segkit_fuse="fused")
    loss, grads = _step_grads(fused, step, idx)
    fw, bw = thunder.last_traces(fused)[-1], thunder.last_backward_traces(fused)[-1]
    assert not _top(fw) & OPAQUE_FW, _top(fw) & OPAQUE_FW
    assert not _top(bw) & OPAQUE_BW, _top(bw) & OPAQUE_BW
    fw_in, bw_in = _in_regions(fw), _in_regions(bw)
    assert (fw_in["segkit_nv_rms_norm_fwd"], fw_in["segkit_nv_rope_fwd"]) == (5, 4), fw_in
    assert (bw_in["segkit_nv_rms_norm_bwd"], bw_in["segkit_nv_rope_bwd"]) == (5, 4), bw_in

    opaque = _jit(step, segkit_fuse="opaque")
    want_loss, want_grads = _step_grads(opaque, step, idx)
    assert OPAQUE_FW & _top(thunder.last_traces(opaque)[-1])
    eager_loss, eager_grads = _step_grads(step, step, idx)
    for ref_loss, ref_grads in ((want_loss, want_grads), (eager_loss, eager_grads)):
        _close([loss], [ref_loss], torch.bfloat16)
        _close(grads, ref_grads, torch.bfloat16)


def test_litgpt_norm_and_rope_fused_match_eager():
    """litgpt's RMSNorm (fp32 weight, bf16 x) and apply_rope with (1, T, n) fp32 tables, as its attention calls
    them: the fused symbols (tables squeezed in the region) give eager's numbers within bf16 tolerance."""
    from litgpt.model import RMSNorm, apply_rope, build_rope_cache

    torch.manual_seed(0)
    norm = RMSNorm(512).cuda()
    norm.weight.data = torch.randn(512, device="cuda") * 0.3 + 1.0
    cos, sin = (t[None] for t in build_rope_cache(256, 64, device="cuda"))
    x = torch.randn(2, 256, 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def fn(x):
        q = norm(x).view(2, 256, 8, 64).transpose(1, 2)
        return apply_rope(q, cos, sin)

    jf, (outs, grads), (want, want_grads) = _run(fn, [x], [norm.weight], executors=None, segkit_fuse="fused")
    assert {"segkit_nv_rms_norm_fwd", "segkit_nv_rope_fwd"} <= set(_in_regions(thunder.last_traces(jf)[-1]))
    assert {"segkit_nv_rms_norm_bwd", "segkit_nv_rope_bwd"} <= set(_in_regions(thunder.last_backward_traces(jf)[-1]))
    _close(outs, want, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


@pytest.mark.parametrize("fuse", ["fused", "auto"])
def test_layer_norm_with_bias_fused_matches_eager(fuse):
    """torch.nn.LayerNorm (weight and bias) between two pointwise ops: one region holds the add, the norm and the
    gelu; "auto" fuses too where the tuning table has no entry for the shape."""
    ln = torch.nn.LayerNorm(768).cuda().bfloat16()
    with torch.no_grad():
        ln.weight.mul_(0.5).add_(0.7)
        ln.bias.add_(0.1)
    x = torch.randn(4, 256, 768, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    r = torch.randn(4, 256, 768, device="cuda", dtype=torch.bfloat16)

    def fn(x):
        return torch.nn.functional.gelu(ln(x + r))

    jf, (outs, grads), (want, want_grads) = _run(fn, [x], list(ln.parameters()), segkit_fuse=fuse)
    fw, bw = thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]
    assert not (_top(fw) & OPAQUE_FW or _top(bw) & OPAQUE_BW)
    assert _in_regions(fw)["segkit_nv_layer_norm_fwd"] == 1 and _in_regions(bw)["segkit_nv_layer_norm_bwd"] == 1
    _close(outs, want, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


def test_inference_fused_forward_gives_y():
    """Without autograd the fused forward's y alone leaves the region (the statistics are not outputs)."""
    norm = torch.nn.RMSNorm(1024).cuda().bfloat16()
    x = torch.randn(8, 128, 1024, device="cuda", dtype=torch.bfloat16)
    jm = _jit(norm, segkit_fuse="fused")
    with torch.no_grad():
        _close([jm(x)], [norm(x)], torch.bfloat16)
    assert _in_regions(thunder.last_traces(jm)[-1])["segkit_nv_rms_norm_fwd"] == 1


def _alone_table(kind: str, rows: int, hidden: int, eps: float, faster: bool):
    """A tuning table with segkit's kernel 5 us faster (``faster``) or 5 us slower than nvFuser's default for the
    norm's forward and backward configs on this GPU: too little gain to pay for a cut
    (thunder_exec.decide.cut_cost.decide fuses), enough for a call alone in its region."""
    from fusions.configs import NormConfig
    from fusions.spec import signature
    from segkit.tuning import TableEntry, TuningTable, gpu_model

    bias = kind == "layernorm"
    cfgs = {f"{kind}_fwd": NormConfig("thunder", (rows, hidden), torch.bfloat16, eps, bias),
            f"{kind}_bwd": NormConfig("thunder", (rows, hidden), torch.bfloat16, eps, False)}
    us, default = (10.0, 15.0) if faster else (15.0, 10.0)
    return TuningTable([TableEntry(gpu_model(), spec, cfg.name, signature(cfg), "rows", us=us, default_us=default)
                        for spec, cfg in cfgs.items()])


@pytest.mark.parametrize("faster", [True, False], ids=["tuned-faster", "default-faster"])
@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
def test_a_norm_alone_in_its_region_runs_the_faster_kernel(monkeypatch, kind, faster):
    """An isolated norm under segkit_fuse="auto", the cut cost model choosing fused: nvFuser's pass leaves each
    call alone in a region. Where segkit's kernel is faster (the tuning table) forward and backward run as
    segkit_ex's opaque symbols; where nvFuser's default is, they stay in regions. Grads as eager's either way."""
    from thunder_exec.decide import cut_cost, evidence

    rows, hidden, eps = 2048, 384, 1e-5
    monkeypatch.setattr(cut_cost, "tuning_table", lambda: _alone_table(kind, rows, hidden, eps, faster))
    monkeypatch.setattr(evidence, "committed", lambda: cut_cost.EvidenceTable())
    thunder_exec.clear_caches(keep_compiled=True)
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.rand(hidden, device="cuda", dtype=torch.bfloat16) + 0.5).requires_grad_()
    b = torch.randn(hidden, device="cuda", dtype=torch.bfloat16).requires_grad_()
    if kind == "rmsnorm":
        fn, params = (lambda x: torch.nn.functional.rms_norm(x, (hidden,), w, eps)), [w]
        fused, opaque = ("segkit_nv_rms_norm_fwd", "segkit_nv_rms_norm_bwd"), ("segkit_rms_norm_fwd",
                                                                             "segkit_rms_norm_bwd")
    else:
        fn, params = (lambda x: torch.nn.functional.layer_norm(x, (hidden,), w, b, eps)), [w, b]
        fused, opaque = ("segkit_nv_layer_norm_fwd", "segkit_nv_layer_norm_bwd"), ("segkit_layer_norm_fwd",
                                                                                 "segkit_layer_norm_bwd")
    jf, (outs, grads), (want, want_grads) = _run(fn, [x], params, segkit_fuse="auto")
    fw, bw = thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]
    if faster:
        assert opaque[0] in _top(fw) and opaque[1] in _top(bw), (_top(fw), _top(bw))
        assert not (_in_regions(fw) or _in_regions(bw)), (_in_regions(fw), _in_regions(bw))
    else:
        assert not (_top(fw) & OPAQUE_FW or _top(bw) & OPAQUE_BW)
        assert _in_regions(fw)[fused[0]] == 1 and _in_regions(bw)[fused[1]] == 1, _in_regions(bw)
    _close(outs, want, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


@pytest.mark.parametrize("thunder_faster", [True, False], ids=["thunder-faster", "claim-faster"])
def test_auto_leaves_a_call_to_thunder_where_a_step_measured_thunders_own_faster(monkeypatch, thunder_faster):
    """segkit_fuse="auto" with claim evidence for the RMSNorm backward's signature on this GPU: where Thunder's own
    decomposition ran faster, the whole call (forward and backward) is left to Thunder: no segkit symbol, opaque
    or fused, in either trace, the choice recorded; where the claim ran faster, segkit's symbols are there. Grads
    as eager's either way."""
    from fusions.configs import NormConfig
    from fusions.spec import signature
    from segkit.tuning import gpu_model
    from thunder_exec import decide
    from thunder_exec.decide import cut_cost, evidence
    from thunder_exec.decide.evidence import ClaimEvidence, ClaimTable

    rows, hidden, eps = 2048, 384, 1e-5
    sig = signature(NormConfig("thunder", (rows, hidden), torch.bfloat16, eps, False))
    claimed, declined = (200.0, 150.0) if thunder_faster else (150.0, 200.0)
    table = ClaimTable([ClaimEvidence(gpu_model(), "rmsnorm_bwd", sig, claimed, declined, "fused", "case",
                                      "test: profiles a vs b", "today")])
    monkeypatch.setattr(evidence, "committed_claims", lambda: table)
    # the claim runs fused, as the evidence measured it (no tuning entry or cut evidence would make it opaque)
    monkeypatch.setattr(cut_cost, "tuning_table", lambda: cut_cost.TuningTable())
    monkeypatch.setattr(evidence, "committed", lambda: cut_cost.EvidenceTable())
    thunder_exec.clear_caches(keep_compiled=True)
    decide.clear_notes()
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.rand(hidden, device="cuda", dtype=torch.bfloat16) + 0.5).requires_grad_()
    jf, (outs, grads), (want, want_grads) = _run(lambda x: torch.nn.functional.rms_norm(x, (hidden,), w, eps), [x],
                                                 [w], segkit_fuse="auto")
    fw, bw = thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]
    segkit_names = {n for n in _top(fw) | _top(bw) | set(_in_regions(fw)) | set(_in_regions(bw))
                    if n.startswith("segkit")}
    chosen = {c.spec: c.chosen for c in decide.CHOICES.values()}
    if thunder_faster:
        assert not segkit_names, segkit_names
        assert chosen == {"rmsnorm_fwd": "thunder", "rmsnorm_bwd": "thunder"}, chosen
    else:
        assert segkit_names and "thunder" not in chosen.values(), (segkit_names, chosen)
    _close(outs, want, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)
