"""The competitors, each prepared on one workload: segkit, eager, torch.compile, Thunder (stock and with
segkit_ex), Liger-Kernel and Quack. Each returns a harness.Prepared, or skips with the reason."""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import fusions
from benchmarks.harness import Prepared
from fusions import torch_models as tm
from segkit.nvfuser.timing import wall_us
from segkit.nvfuser.run import compiled
from fusions.runner import runner

EXECUTORS = ("segkit", "eager", "torch.compile", "thunder", "thunder+segkit_ex", "liger", "quack")
ROPE_EXECUTORS = (*EXECUTORS, "segkit:fp32")  # RoPE in fp32, rounded once: the math torch.compile and Thunder do
TWO_STAGE = "segkit two-stage"  # norm backward only: the two-stage formulation beside the fused builder


def _segkit(spec_name: str, cfg, inputs: list[torch.Tensor], outputs: tuple[int, ...] | None = None) -> Prepared:
    """The fusions builder on nvFuser, its FusionDefinition built and compiled once, timed as a bare execute
    (only the ``outputs`` given, when given).

    ``wall_us_runtime`` is the host wall of the same compiled fusion through segkit's per-call path
    (fusions.runner's SpecRunner, what segkit_ex runs for each Thunder operator call)."""
    run = runner(spec_name, cfg, "none", outputs=outputs)
    execute = run.staged.execute if run.staged is not None else compiled(run.fd).execute
    execute(inputs)
    info = {"wall_us_runtime": wall_us(lambda: run(inputs), 20)}
    if run.staged is not None:
        info["formulation"] = run.staged.describe()
    return Prepared(lambda: execute(inputs), info=info)


def _compile(fn: Callable, executor: str) -> Callable:
    if executor == "eager":
        return fn
    if executor == "torch.compile":
        # A fresh Dynamo cache per case: otherwise the second shape of a suite compiles as dynamic-shape code
        # and the ninth falls back to eager (cache_size_limit). Metrics reset so the mix-order count is this case's.
        from torch._inductor import metrics

        torch._dynamo.reset()
        metrics.reset()
        return torch.compile(fn, dynamic=False)
    import thunder
    import thunder_exec

    thunder_exec.install()  # stock Thunder too: its nvFuser fusions need the nvfuser_direct compatibility fix
    if executor == "thunder":
        return thunder.jit(fn)
    if executor == "thunder+segkit_ex":
        return thunder.jit(fn, executors=thunder_exec.executors())
    raise ValueError(executor)


def _skip_unavailable(executor: str, workload: str) -> None:
    if executor == "quack" and importlib.util.find_spec("quack") is None:
        pytest.skip("quack-kernels is not importable: stage it with benchmarks/stage_quack.sh and source "
                    "benchmarks/activate_quack.sh on the GPU host (benchmarks/README.md)")
    if executor == "liger" and importlib.util.find_spec("liger_kernel") is None:
        pytest.skip("liger-kernel is not installed")
    if executor in ("liger", "quack") and workload not in ("layernorm", "rmsnorm"):
        pytest.skip(f"{executor} has no kernel for {workload} in litgpt's layout")


def _norm_fn(kind: str, cfg, executor: str) -> Callable:
    H = cfg.hidden
    if executor == "liger":
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        if kind == "layernorm":
            return lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, cfg.eps)
        return lambda x, w: LigerRMSNormFunction.apply(x, w, cfg.eps, 0.0, "llama", False)  # in_place=False: keep dy
    if executor == "quack":
        import quack

        return lambda x, w: quack.rmsnorm(x, w, eps=cfg.eps)
    if kind == "layernorm":
        return _compile(lambda x, w, b: F.layer_norm(x, (H,), w, b, cfg.eps), executor)
    return _compile(lambda x, w: F.rms_norm(x, (H,), w, cfg.eps), executor)


def _quack_layernorm(cfg, inputs: dict, backward: bool) -> Prepared:
    """quack's layer norm has no autograd wrapper: layernorm_fwd takes 2-D rows and float32 weight and bias
    (upcast once, untimed); layernorm_bwd takes x, weight, dy and the saved float32 mean and rstd, which the
    workload provides as segkit's backward gets them, so nothing else runs per round. Its dw/db partial sums
    are part of the timed call."""
    from quack.rmsnorm import layernorm_bwd, layernorm_fwd

    H = cfg.hidden
    x, w = inputs["x"], inputs["weight"]
    x2 = x.reshape(-1, H)
    if not backward:
        w32, b32 = w.float(), inputs["bias"].float()
        p = Prepared(lambda: layernorm_fwd(x2, w32, b32, cfg.eps).view(x.shape),
                     info={"quack_weight_dtype": "float32"})
        p.outputs = lambda: (p.fn(),)
        return p
    dy, mean, rstd = inputs["dy"].reshape(-1, H), inputs["mean"].reshape(-1), inputs["rstd"].reshape(-1)

    def call():
        dx, dw, db = layernorm_bwd(x2, w, dy, rstd, mean, has_bias=True)
        return dx.view(x.shape), dw, db

    call()
    return Prepared(call)


def _mix_order_info(executor: str) -> dict:
    if executor != "torch.compile":
        return {}
    from torch._inductor import metrics

    return {"inductor_mix_order_reduction": getattr(metrics, "codegen_mix_order_reduction", None)}


def norm_forward(kind: str, cfg, executor: str, inputs: dict) -> Prepared:
    """Forward without autograd: y from x, weight (and bias for layer norm). Every executor writes y alone
    (segkit: its forward fusion with y as the only output, what segkit_ex runs for inference)."""
    _skip_unavailable(executor, kind)
    if executor == "segkit":
        return _segkit(f"{kind}_fwd", cfg, list(inputs.values()), outputs=(0,))
    if executor == "quack" and kind == "layernorm":
        return _quack_layernorm(cfg, inputs, backward=False)
    fn = _norm_fn(kind, cfg, executor)
    args = list(inputs.values())
    with torch.no_grad():
        fn(*args)
    p = Prepared(lambda: fn(*args))
    p.outputs = lambda: (p.fn(),)
    p.info = _mix_order_info(executor)
    return p


def _segkit_two_stage(spec_name: str, cfg, inputs: list[torch.Tensor]) -> Prepared:
    """The two-stage formulation (fusions/norm_bwd_two_stage.py): the tuning table's chunk and stage-1 tuning
    when it chose two-stage on this GPU, else one partial per SM at most and nvFuser's defaults."""
    from fusions.norm_bwd_two_stage import TwoStage, chunk_for, two_stage
    from fusions.runner import staged_for

    staged = staged_for(spec_name, cfg)
    if not isinstance(staged, TwoStage):  # the table chose no two-stage here (nothing, or the rows schedule)
        staged = two_stage(spec_name, cfg, chunk_for(cfg.rows, torch.cuda.get_device_properties(0).multi_processor_count))
    staged.execute(inputs)
    return Prepared(lambda: staged.execute(inputs), info={"two_stage_chunk": staged.chunk})


def norm_backward(kind: str, cfg, executor: str, inputs: dict) -> Prepared:
    """Backward only: the forward runs in the untimed setup of every round; dx, dw (, db) are timed."""
    _skip_unavailable(executor, kind)
    if executor == "segkit":
        return _segkit(f"{kind}_bwd", cfg, list(inputs.values()))
    if executor == TWO_STAGE:
        return _segkit_two_stage(f"{kind}_bwd", cfg, list(inputs.values()))
    if executor == "quack" and kind == "layernorm":
        return _quack_layernorm(cfg, inputs, backward=True)
    x = inputs["x"].detach().requires_grad_(True)
    w = inputs["weight"].detach().requires_grad_(True)
    leaves = [x, w]
    if kind == "layernorm":
        leaves.append(torch.zeros_like(w, requires_grad=True))
    dy = inputs["dy"]
    fn = _norm_fn(kind, cfg, executor)
    state = {}

    def setup():
        state["y"] = fn(*leaves)

    def backward():
        return torch.autograd.grad(state["y"], leaves, dy, retain_graph=True)

    setup()
    backward()
    return Prepared(backward, setup, info=_mix_order_info(executor))


def rope(cfg, executor: str, inputs: dict, mode: str) -> Prepared:
    """qkv split + RoPE: ``mode`` is "inference" (no autograd), "forward" (with autograd) or "backward"."""
    _skip_unavailable(executor, "qkv split + RoPE")
    geom = (cfg.n_head, cfg.n_query_groups, cfg.head_size, cfg.rope_n_elem)
    if executor in ("segkit", "segkit:fp32"):
        spec = "qkv_split_rope_bwd" if mode == "backward" else "qkv_split_rope_fwd"
        if executor == "segkit:fp32":
            if mode == "backward" or cfg.dtype not in (torch.bfloat16, torch.float16):
                pytest.skip("segkit:fp32 differs from segkit only in the 16-bit forward's rounding")
            cfg = dataclasses.replace(cfg, rounding="fp32")
        return _segkit(spec, cfg, list(inputs.values()))
    fn = _compile(lambda qkv, cos, sin: tm.qkv_split_rope(qkv, cos, sin, *geom), executor)
    cos, sin = inputs["cos"], inputs["sin"]
    if mode != "backward":
        qkv = inputs["qkv"].detach().requires_grad_(mode == "forward")
        ctx = torch.no_grad if mode == "inference" else torch.enable_grad
        with ctx():
            fn(qkv, cos, sin)

        def call():
            with ctx():
                return fn(qkv, cos, sin)

        return Prepared(call, info=_mix_order_info(executor))
    qkv = torch.zeros(cfg.batch, cfg.T, cfg.qkv_width, dtype=cfg.dtype, device=cos.device, requires_grad=True)
    grads = [inputs["dq"], inputs["dk"], inputs["dv"]]
    state = {}

    def setup():
        state["outs"] = fn(qkv, cos, sin)

    def backward():
        return torch.autograd.grad(state["outs"], [qkv], grads, retain_graph=True)

    setup()
    backward()
    return Prepared(backward, setup, info=_mix_order_info(executor))


QK_NORM_ROPE_EXECUTORS = ("segkit", "segkit:sliced_inputs", "eager", "torch.compile")


def qk_norm_rope_fn(cfg) -> Callable:
    """The eager function the rivals run, on the specs' inputs: q and k (B, T, heads, head_dim) viewed back as the
    projections (B, T, heads * head_dim) the model hands over (fusions.torch_models.qk_norm_rope, in the model's
    form)."""
    from fusions._qk_norm_rope import form

    def fn(q, k, w_q, w_k, cos, sin):
        return tm.qk_norm_rope(q.flatten(2), k.flatten(2), w_q, w_k, cos, sin, cfg.head_dim, cfg.eps, form(cfg))

    return fn


def qk_norm_rope(cfg, executor: str, inputs: dict, mode: str) -> Prepared:
    """QK-norm + RoPE: ``mode`` "forward" (autograd on: the rivals save for the backward, segkit returns rstd) or
    "backward" (the forward in each round's untimed setup; dq, dk, dw_q, dw_k timed)."""
    spec = "qk_norm_rope_bwd" if mode == "backward" else "qk_norm_rope_fwd"
    if executor == "segkit":
        return _segkit(spec, cfg, list(inputs.values()))
    if executor == "segkit:sliced_inputs":  # the per-half formulation, whatever the tuning table chose
        args = list(inputs.values())
        nvfd = compiled(fusions.get(spec).build(cfg, formulation="sliced_inputs"))
        nvfd.execute(args)
        return Prepared(lambda: nvfd.execute(args), info={"formulation": "sliced_inputs"})
    fn = _compile(qk_norm_rope_fn(cfg), executor)
    leaves = [inputs[n].detach().requires_grad_(True) for n in ("q", "k", "w_q", "w_k")]
    if mode == "forward":
        fn(*leaves, inputs["cos"], inputs["sin"])
        return Prepared(lambda: fn(*leaves, inputs["cos"], inputs["sin"]), info=_mix_order_info(executor))
    grads = [inputs["dq_out"], inputs["dk_out"]]
    state = {}

    def setup():
        state["outs"] = fn(*leaves, inputs["cos"], inputs["sin"])

    def backward():
        return torch.autograd.grad(state["outs"], leaves, grads, retain_graph=True)

    setup()
    backward()
    return Prepared(backward, setup, info=_mix_order_info(executor))


AMAX_EXECUTORS = ("segkit", "segkit+reuse", "segkit:inner_outer", "segkit:inner_outer_rows", "segkit:two_stage", "eager",
                  "torch.compile", "torch.compile+reuse_fx", "thunder", "thunder+reuse")


def amax(cfg, executor: str, inputs: dict) -> Prepared:
    """fp8 amaxes (``cfg.amaxes``): segkit's builder as written (``segkit``), through segkit.reuse_reductions
    (``segkit+reuse``) or in another formulation (``segkit:VARIANT``, fusions/fp8_amax.py); torch.compile stock
    or with the seed's reuse as a post-grad pass (benchmarks/fx_reuse.py); Thunder stock or with
    thunder_exec.ReuseNvFusions on its nvFusion regions."""
    from dataclasses import replace

    x = inputs["x"]
    if executor.startswith("segkit:"):
        if "col" not in cfg.amaxes:
            pytest.skip(f"{executor} differs from segkit only with a column amax")
        return _segkit("fp8_amax", replace(cfg, variant=executor.split(":", 1)[1]), [x])
    if executor == "segkit":
        return _segkit("fp8_amax", cfg, [x])
    if executor == "segkit+reuse":
        import fusions
        from segkit.reuse import reuse_reductions

        nvfd = compiled(reuse_reductions(fusions.get("fp8_amax").build(cfg)).apply())
        nvfd.execute([x])
        return Prepared(lambda: nvfd.execute([x]))
    fn = tm.fp8_amaxes(cfg.amaxes)
    info = {}
    if executor == "torch.compile+reuse_fx":
        from benchmarks.fx_reuse import compile_with_amax_reuse

        torch._dynamo.reset()
        fn, reuse = compile_with_amax_reuse(fn)
        fn(x)
        info = {"fx_reuse_rewrites": reuse.rewrites, **_mix_order_info("torch.compile")}
    elif executor == "thunder+reuse":
        import thunder
        import thunder_exec

        transform = thunder_exec.ReuseNvFusions()
        fn = thunder.jit(fn, transforms=[transform])
        fn(x)
        info = {"reuse_regions": len(transform.rewrites.plans)}
    else:
        fn = _compile(fn, executor)
        fn(x)
        info = _mix_order_info(executor)
    return Prepared(lambda: fn(x), info=info)
