"""The competitors on the residual add + norm (fusions/add_rmsnorm_fwd.py and its kin), forward and backward:
segkit's fusions, eager and torch.compile of the same function (fusions.torch_models.add_rms_norm /
add_layer_norm), and Liger-Kernel's ``LigerFusedAddRMSNorm`` (its autograd function; RMSNorm only: Liger ships no
fused add + layer norm). Each returns a harness.Prepared, or skips with the reason."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import pytest
import torch

from benchmarks.executors import _compile, _mix_order_info, _segkit
from benchmarks.harness import Prepared
from fusions import torch_models as tm

ADD_NORM_EXECUTORS = ("segkit", "eager", "torch.compile", "liger")
KINDS = ("rmsnorm", "layernorm")


def eager_fn(kind: str, cfg) -> Callable:
    """The function every rival but Liger runs: (x, residual, weight[, bias]) -> (y, h), as a block writes it."""
    if kind == "rmsnorm":
        return lambda x, r, w: tm.add_rms_norm(x, r, w, cfg.eps)
    return lambda x, r, w, b: tm.add_layer_norm(x, r, w, b, cfg.eps)


def spec_name(kind: str, direction: str) -> str:
    """The segkit spec a ``kind`` ("rmsnorm" / "layernorm") and ``direction`` ("fwd" / "bwd") case times."""
    if kind not in KINDS or direction not in ("fwd", "bwd"):
        raise ValueError(f"add + norm: kind must be one of {KINDS} and direction fwd or bwd, "
                         f"got {kind!r}, {direction!r}")
    return f"add_{kind}_{direction}"


def _fn(kind: str, cfg, executor: str) -> Callable:
    if executor != "liger":
        return _compile(eager_fn(kind, cfg), executor)
    if importlib.util.find_spec("liger_kernel") is None:
        pytest.skip("liger-kernel is not installed")
    if kind != "rmsnorm":
        pytest.skip("Liger-Kernel has no fused residual add + layer norm")
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

    # what LigerFusedAddRMSNorm's forward calls, with its defaults (offset 0, "llama" casting, not in place), on the
    # case's own weight leaf so that dW is taken against it
    return lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, cfg.eps, 0.0, "llama", False)


def forward(kind: str, cfg, executor: str, inputs: dict) -> Prepared:
    """The training forward: y and h, and what each saves for its backward (segkit: its fusion's y, h and the
    statistics; the rivals run with grad enabled on leaves that require it)."""
    if executor == "segkit":
        return _segkit(spec_name(kind, "fwd"), cfg, list(inputs.values()))
    fn = _fn(kind, cfg, executor)
    args = [t.detach().requires_grad_(True) for t in inputs.values()]
    with torch.enable_grad():
        fn(*args)

    def call():
        with torch.enable_grad():
            return fn(*args)

    return Prepared(call, info=_mix_order_info(executor))


def backward(kind: str, cfg, executor: str, inputs: dict) -> Prepared:
    """Backward only (the forward runs in each round's untimed setup): dx, dw (, db) and dresidual from dy and dh.
    The rivals take x = h and a zero residual, so their h is the spec's h exactly."""
    if executor == "segkit":
        return _segkit(spec_name(kind, "bwd"), cfg, list(inputs.values()))
    fn = _fn(kind, cfg, executor)
    h, w = inputs["h"], inputs["weight"]
    x = h.detach().clone().requires_grad_(True)
    residual = torch.zeros_like(h, requires_grad=True)
    params = [w.detach().requires_grad_(True)]
    if kind == "layernorm":
        params.append(torch.zeros_like(w, requires_grad=True))
    leaves = [x, *params, residual]
    grads_out = (inputs["dy"], inputs["dh"])
    state = {}

    def setup():
        state["outs"] = fn(x, residual, *params)

    def call():
        return torch.autograd.grad(state["outs"], leaves, grads_out, retain_graph=True)

    setup()
    call()
    return Prepared(call, setup, info=_mix_order_info(executor))
