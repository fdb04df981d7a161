"""The minimizer on the reference interpreter: every accepted step keeps the predicate and shrinks the fusion."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition
from segkit_cli.main import main as cli_main
from segkit.errors import SegkitError
from segkit.interp import random_inputs
from segkit.minimize import _candidates, minimize, rebuild, size_of
from tests.conftest import DATA


def _planted_nan():
    """Three outputs; the second holds a NaN planted by 0/0 deep inside other work."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.Float)
        w = fd.define_tensor(shape=[16], contiguity=[True], dtype=DataType.Float)
        a = fd.ops.exp(fd.ops.mul(x, 0.5))
        b = fd.ops.add(a, fd.ops.broadcast(w, is_broadcast_dim=[True, False]))
        zero = fd.ops.sub(b, b)
        nan = fd.ops.div(zero, zero)
        c = fd.ops.tanh(fd.ops.add(fd.ops.mul(nan, 2.0), b))
        fd.add_output(fd.ops.sum(a, dims=[1]))
        fd.add_output(fd.ops.reshape(c, new_shape=[128]))
        fd.add_output(fd.ops.neg(b))
    return fd


def _has_nan(fd) -> bool:
    return any(torch.isnan(o).any().item() for o in segkit.run_reference(fd, random_inputs(fd)))


def test_minimize_keeps_the_predicate_at_every_step():
    fd = _planted_nan()
    assert _has_nan(fd)
    accepted = []
    res = minimize(fd, _has_nan, log=lambda s: None, on_accept=lambda label, c: accepted.append(c))
    sizes = [size_of(fd)] + [size_of(c) for c in accepted]
    assert accepted and all(_has_nan(c) for c in accepted)
    assert all(later < earlier for earlier, later in zip(sizes, sizes[1:]))
    assert size_of(res.fd)[0] <= 3 and len(res.fd.fusion.outputs) == 1
    assert any(op.name == "div" for op in res.fd.fusion.ops)  # the cause stays
    assert res.checks >= len(accepted)


def _gqa_chain(fd) -> bool:
    """The shape of nvFuser's GQA bug: slice -> expand -> reshape feeding a computing op."""
    f = fd.fusion
    for op in f.ops:
        if op.name != "reshape":
            continue
        e = op.inputs[0].definition
        if e is None or e.name != "expand" or e.inputs[0].definition is None or e.inputs[0].definition.name != "slice":
            continue
        if any(u.name not in ("set", "reshape", "permute", "slice", "expand", "broadcast", "squeeze") for u in f.uses(op.output)):
            return True
    return False


def test_minimize_thunder_gqa_fixture_to_a_few_ops():
    repro = segkit.load_repro(DATA / "thunder" / "rope_gqa_fwd_nvFusion0.py")
    assert _gqa_chain(repro.fd)
    res = minimize(repro.fd, _gqa_chain, log=lambda s: None)
    assert _gqa_chain(res.fd) and size_of(res.fd)[0] <= 6 < size_of(repro.fd)[0]
    assert size_of(res.fd)[1] < size_of(repro.fd)[1]  # sizes shrank too
    segkit.run_reference(res.fd, random_inputs(res.fd))  # and it still runs


def test_rebuild_edits():
    fd = _planted_nan()
    f = fd.fusion
    b = f.ops[3].output  # add(a, broadcast(w))
    cut = rebuild(fd, cut=frozenset({id(b)}), outputs=[2])
    assert [op.name for op in cut.fusion.ops] == ["neg"] and cut.fusion.inputs[0].shape == (8, 16)
    tanh = next(op for op in f.ops if op.name == "tanh")
    bypassed = rebuild(fd, bypass={id(tanh): tanh.inputs[0]})
    assert "tanh" not in [op.name for op in bypassed.fusion.ops]
    small = rebuild(fd, sizes={16: 8, 128: 64})
    assert small.fusion.inputs[0].shape == (8, 8) and small.fusion.outputs[1].shape == (64,)
    with pytest.raises(SegkitError, match="cannot reshape"):
        rebuild(fd, sizes={16: 8})  # 8 x 8 no longer reshapes to [128]: the edit is rejected, not silently wrong


def test_minimize_refuses_when_the_predicate_does_not_hold():
    with pytest.raises(SegkitError, match="nothing to minimize"):
        minimize(_planted_nan(), lambda fd: False, log=lambda s: None)


def test_random_inputs_follow_the_declared_layout():
    with FusionDefinition() as fd:
        fd.define_tensor(shape=[4, 5, 6], contiguity=[True, True, None], dtype=DataType.BFloat16)
        fd.define_tensor(shape=[3, 7], contiguity=[True, True], stride_order=[0, 1])
    x, y = random_inputs(fd)
    assert x.stride()[2] == 0 and x.dtype == torch.bfloat16
    assert y.stride() == (1, 3)


@pytest.mark.parametrize("cmd", [["check", "layernorm_fwd:nanogpt_tiny"],
                                 ["minimize", str(DATA / "minimized" / "gqa_k_nvfuser.py"), "-o", "m.py"]])
def test_check_and_minimize_need_nvfuser(cmd, capsys):
    if segkit.nvfuser_available():
        pytest.skip("this machine has nvFuser")
    assert cli_main(cmd) == 1  # a failure (no device), not a usage error
    assert "needs a CUDA device and nvfuser_direct" in capsys.readouterr().err


def test_committed_minimized_gqa_repro_loads_and_is_small():
    """The repro `segkit minimize` wrote on the H200 (tests/gpu checks that it still mismatches there)."""
    r = segkit.load_repro(DATA / "minimized" / "gqa_k_nvfuser.py")
    assert size_of(r.fd)[0] <= 8
    assert "MISMATCH" in r.source.splitlines()[2] + r.source.splitlines()[3]
    segkit.run_reference(r.fd, r.make_inputs())


def test_no_cut_turns_an_index_tensor_into_an_input():
    """welford's count is Index, a dtype no client gives an input (nvFuser fixes its width per kernel): fuzz
    finding f032's cut at it made a repro with an Index input; cuts at the other intermediates remain."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.neg(x)
        avg, var, n = fd.ops.welford(y, dims=[1])
        fd.add_output(fd.ops.reshape(n, new_shape=[2, 2]))
        fd.add_output(fd.ops.add(avg, var))
    labels = [label for label, _ in _candidates(fd)]
    assert n.dtype is DataType.Index and f"cut at {n.name}" not in labels
    assert {f"cut at {y.name}", f"cut at {avg.name}"} <= set(labels)
