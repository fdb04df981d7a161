"""thunder_exec on the GPU host: real sizes in bf16, correct against eager, one nvFuser kernel per norm
direction, and Thunder's stock nvFuser executor running through the compat fix. The norm and RoPE tests pin
``segkit_fuse="opaque"``: they are about segkit's own fusions (tests/gpu/test_fusible_gpu.py covers the regions)."""

from __future__ import annotations

import pytest
import torch

import thunder
import thunder_exec
from fusions import torch_models as tm
from fusions._rope import cos_sin
from segkit import trace
from tests.test_thunder_exec import _close, _run, _symbols

pytestmark = pytest.mark.gpu


def _nvfuser_kernels(fn) -> list[str]:
    with trace.capture() as cap:
        with trace.range("step"):
            fn()
            torch.cuda.synchronize()
    return [k.key for r in cap.trace.ranges_named("step") for k in r.kernels if k.key.startswith("nvfuser")]


@pytest.mark.fresh_process
@pytest.mark.parametrize("module, shape", [("LayerNorm", (16, 128, 1600)), ("RMSNorm", (2, 4096, 5120))])
def test_norms_real_sizes_one_kernel_each_way(module, shape, record):
    mod = (torch.nn.LayerNorm(shape[-1]) if module == "LayerNorm" else torch.nn.RMSNorm(shape[-1])).cuda().bfloat16()
    x = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(mod, [x], list(mod.parameters()), segkit_fuse="opaque")
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)
    y = jm(x)
    fwd = _nvfuser_kernels(lambda: jm(x))
    bwd = _nvfuser_kernels(lambda: y.backward(torch.ones_like(y), retain_graph=True))
    record({"test": "thunder_exec_norm", "module": module, "fwd_kernels": fwd, "bwd_kernels": bwd})
    assert len(fwd) == 1 and len(bwd) == 1, (fwd, bwd)


@pytest.mark.fresh_process
@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_norm_inference_is_one_y_only_kernel(module, record):
    """nanoGPT size without autograd: one nvFuser kernel writing y alone (segkit_layer_norm / segkit_rms_norm)."""
    mod = (torch.nn.LayerNorm(1600) if module == "LayerNorm" else torch.nn.RMSNorm(1600)).cuda().bfloat16()
    x = torch.randn(16, 128, 1600, device="cuda", dtype=torch.bfloat16)
    jm = thunder.jit(mod, executors=thunder_exec.executors(), segkit_fuse="opaque")
    with torch.no_grad():
        _close([jm(x)], [mod(x)], torch.bfloat16)
        kernels = _nvfuser_kernels(lambda: jm(x))
    name = "layer_norm" if module == "LayerNorm" else "rms_norm"
    assert f"segkit_{name}" in _symbols(thunder.last_traces(jm)[-1])
    record({"test": "thunder_exec_norm_inference", "module": module, "kernels": kernels})
    assert len(kernels) == 1, kernels


@pytest.mark.parametrize("geometry", [(32, 8, 128, 128), (40, 40, 128, 128)], ids=["llama3_8b_gqa", "llama2_13b_mha"])
def test_qkv_split_rope_real_size_is_right(geometry):
    n_head, groups, hs, rn = geometry
    block = tm.QKVSplitRope(n_head, groups, hs, rn)
    cos, sin = (t.cuda() for t in cos_sin(4096, rn, torch.bfloat16))
    qkv = torch.randn(1, 4096, (n_head + 2 * groups) * hs, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(lambda q: block(q, cos, sin), [qkv])
    assert "segkit_qkv_split_rope_fwd" in _symbols(thunder.last_traces(jm)[-1])
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


def test_stock_thunder_nvfuser_runs_with_the_compat_fix():
    thunder_exec.install()
    ln = torch.nn.LayerNorm(1600).cuda().bfloat16()
    x = torch.randn(16, 128, 1600, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(ln, [x], list(ln.parameters()),
                                                      executors=thunder.get_default_executors())
    assert any(s.startswith("nvFusion") for s in _symbols(thunder.last_traces(jm)[-1]))
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


@pytest.mark.parametrize("name", ["Llama-3-8B", "pythia-1b"])
def test_litgpt_block_bf16_claimed_and_right(name):
    """A real-width litgpt block in bf16 (fp32 RoPE tables, as litgpt keeps them): every norm and RoPE claimed
    by segkit_ex forward and backward, input and weight grads within bf16 tolerance of eager."""
    from benchmarks.model_step import NORM_BW, NORM_FW, ROPE_BW, ROPE_FW, import_litgpt

    model_mod, config_mod = import_litgpt()
    thunder_exec.executors()
    cfg = config_mod.Config.from_name(name, n_layer=1, block_size=512)
    torch.manual_seed(0)
    block = model_mod.Block(cfg, 0).cuda().bfloat16()
    cos, sin = (t[None] for t in model_mod.build_rope_cache(512, cfg.rope_n_elem, device="cuda"))
    x = torch.randn(1, 512, cfg.n_embd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(lambda x: block(x, cos, sin), [x], list(block.parameters()),
                                                      segkit_fuse="opaque")
    fw, bw = thunder.last_traces(jm)[-1], thunder.last_backward_traces(jm)[-1]
    count = lambda t, names: sum(b.sym.name in names for b in t.bound_symbols)  # noqa: E731
    norms = 1 if cfg.shared_attention_norm else 2
    assert (count(fw, NORM_FW), count(bw, NORM_BW), count(fw, ROPE_FW), count(bw, ROPE_BW)) == (norms, norms, 2, 2)
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


def test_litgpt_block_at_a_tuned_shape_runs_the_tuned_rows_schedule(record):
    """An outside model at a shape the tuning table holds a rows schedule for on this GPU: litgpt's pythia block
    (two LayerNorms, parallel residual) made 384 wide, 1125 sequences of 512 tokens, so its norms are the
    576000 x 384 bf16 entry. segkit_ex's layer-norm backward runs that schedule (its runner holds it), and the
    block's outputs and grads agree with eager."""
    import fusions
    from benchmarks.model_step import import_litgpt
    from fusions.norm_bwd_rows import RowsScheduled
    from fusions.runner import RUNNERS

    spec = fusions.get("layernorm_bwd")
    entry = spec.table_entry(spec.config("mixorder_576000x384"))
    if entry is None or entry.formulation != "rows":
        pytest.skip(f"fusions/tunings.json holds no rows schedule at 576000 x 384 for {torch.cuda.get_device_name()}")
    model_mod, config_mod = import_litgpt()
    thunder_exec.executors()
    cfg = config_mod.Config.from_name("pythia-70m", n_layer=1, n_embd=384, n_head=6, block_size=512)
    torch.manual_seed(0)
    block = model_mod.Block(cfg, 0).cuda().bfloat16()
    cos, sin = (t[None] for t in model_mod.build_rope_cache(512, cfg.rope_n_elem, device="cuda"))
    x = torch.randn(1125, 512, 384, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(lambda x: block(x, cos, sin), [x], list(block.parameters()),
                                                      segkit_fuse="opaque")
    # the cache also holds the runners of earlier tests (other shapes, no rows entry): only this shape's count
    staged = [r.staged for r in RUNNERS.values() if r.spec_name == "layernorm_bwd" and r.cfg.shape == tuple(x.shape)]
    record({"test": "litgpt_tuned_shape", "gpu": torch.cuda.get_device_name(), "entry": entry.describe(),
            "layernorm_bwd_runners": [type(s).__name__ for s in staged]})
    assert staged and all(isinstance(s, RowsScheduled) for s in staged), staged
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


def test_per_head_norm_backward_reads_its_rows_in_place(tmp_path, monkeypatch, record):
    """Qwen3's q / k norm: RMSNorm over q.view(B, T, nh, hs).transpose(1, 2). With a rows schedule at its
    signature for this GPU, segkit_ex's backward hands x (memory in (b, t, h) order) and its grad (contiguous in
    (B, nh, T, hs)) to the schedule as they are: its stage 1 compiled for that strided layout, no copy into row
    order. The grads agree with eager."""
    import fusions
    from fusions.configs import NormConfig
    from fusions.norm_bwd_rows import RowsScheduled
    from fusions.runner import RUNNERS, clear_caches
    from fusions.spec import tuning_table
    from segkit.tuning import TuningTable, gpu_model

    B, T, nh, hs = 2, 256, 4, 128
    spec = fusions.get("rmsnorm_bwd")
    cfg = NormConfig("per_head", (B * T * nh, hs), torch.bfloat16, 1e-6, False)
    TuningTable([spec.entry(cfg, gpu_model(), formulation="rows", chunk=32,
                            schedule={"rows": 4, "vec": 8}, us=1.0)]).save(tmp_path / "t.json")
    monkeypatch.setenv("SEGKIT_TUNING_TABLE", str(tmp_path / "t.json"))
    tuning_table.cache_clear()
    clear_caches()
    try:
        torch.manual_seed(0)
        norm = torch.nn.RMSNorm(hs, eps=1e-6).cuda().bfloat16()
        scale = torch.randn(B, nh, T, hs, device="cuda", dtype=torch.bfloat16)
        q = torch.randn(B, T, nh * hs, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        jm, (outs, grads), (want_outs, want_grads) = _run(
            lambda q: norm(q.view(B, T, nh, hs).transpose(1, 2)) * scale, [q], list(norm.parameters()),
            segkit_fuse="opaque")
        staged = [r.staged for r in RUNNERS.values() if r.spec_name == "rmsnorm_bwd"]
        record({"test": "per_head_norm_in_place", "staged": [type(s).__name__ for s in staged],
                "layouts": [list(getattr(s, "_by_layout", {})) for s in staged]})
        assert staged and all(isinstance(s, RowsScheduled) and s._by_layout for s in staged), staged
        _close(outs, want_outs, torch.bfloat16)
        _close(grads, want_grads, torch.bfloat16)
    finally:
        monkeypatch.delenv("SEGKIT_TUNING_TABLE")
        tuning_table.cache_clear()
        clear_caches()
