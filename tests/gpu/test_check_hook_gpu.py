"""The segkit.check hook on the GPU host: Thunder's stock nvFuser executor returns a wrong GQA ``k``; with
CheckNvFusions the wrong region is caught and the answer is right; right regions pass without a warning;
segkit_ex's own fusions validate clean with segkit_check=True."""

from __future__ import annotations

import warnings

import pytest
import torch

import thunder
import thunder_exec
from fusions import torch_models as tm
from fusions._rope import cos_sin
from tests.test_thunder_exec import _close, _run

pytestmark = pytest.mark.gpu

GEOMETRY = {"llama3_8b_gqa": (32, 8, 128, 128), "llama2_13b_mha": (40, 40, 128, 128)}


def _block(name: str, T: int = 256):
    n_head, groups, hs, rn = GEOMETRY[name]
    block = tm.QKVSplitRope(n_head, groups, hs, rn)
    cos, sin = (t.cuda() for t in cos_sin(T, rn, torch.bfloat16))
    qkv = torch.randn(2, T, (n_head + 2 * groups) * hs, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    return (lambda q: block(q, cos, sin)), qkv


def _rel_err(got, want) -> float:
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


def test_stock_thunder_gets_gqa_k_wrong_and_the_hook_refuses_it(record):
    fn, qkv = _block("llama3_8b_gqa")
    thunder_exec.install()  # the nvfuser_direct compatibility fix, for stock Thunder's own run
    plain = thunder.jit(fn, executors=thunder.get_default_executors())(qkv)
    want = fn(qkv)
    k_err = _rel_err(plain[1], want[1])
    record({"test": "check_hook", "stock_k_rel_err": k_err})
    assert k_err > 0.5, "nvFuser now gets Thunder's GQA k right: the hook has nothing to catch here any more"
    with pytest.warns(thunder_exec.WrongResultWarning, match="nvFusion"):
        _, (outs, grads), (want_outs, want_grads) = _run(
            fn, [qkv], executors=thunder.get_default_executors(), transforms=[thunder_exec.CheckNvFusions()])
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


def test_hook_passes_right_regions_without_a_warning():
    fn, qkv = _block("llama2_13b_mha")
    with warnings.catch_warnings():
        warnings.simplefilter("error", thunder_exec.WrongResultWarning)
        _, (outs, grads), (want_outs, want_grads) = _run(
            fn, [qkv], executors=thunder.get_default_executors(), transforms=[thunder_exec.CheckNvFusions()])
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)


@pytest.mark.parametrize("name", list(GEOMETRY))
def test_segkit_ex_fusions_validate_clean(name):
    fn, qkv = _block(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", thunder_exec.WrongResultWarning)
        _, (outs, grads), (want_outs, want_grads) = _run(fn, [qkv], segkit_check=True)
    _close(outs, want_outs, torch.bfloat16)
    _close(grads, want_grads, torch.bfloat16)
