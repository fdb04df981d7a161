"""The norm backward from its output (fusions/rmsnorm_bwd_from_output.py, layernorm_bwd_from_output.py) on the
reference interpreter: the same grads as the standard backward from x (float64 torch autograd the judge), with
zero and tiny weights, and a backward that does not read x at all."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import fusions
import segkit
from segkit.compare import diff
from segkit.errors import ArgumentError

KINDS = ["rmsnorm", "layernorm"]
#: a weight's columns: exact zeros, tiny values (below Apex's clamp at eps too) and ordinary ones
SPECIAL = [0.0, 0.0, 1e-3, -1e-6, 1e-12, -1e-30]


def _interp(name: str, cfg, inputs) -> list[torch.Tensor]:
    return segkit.run_reference(fusions.get(name).build(cfg), list(inputs))


def _case(kind: str, dtype: torch.dtype, special: bool, bias_there: bool = False):
    """The standard backward's inputs, with SPECIAL in the weight's first columns when ``special`` (and the bias
    0 there unless ``bias_there``), and the forward fusion's own y (and statistics) for them."""
    std = fusions.get(f"{kind}_bwd")
    cfg = std.config("nanogpt_tiny", dtype)
    inp = std.make_inputs(cfg)
    bias = fusions.get(f"{kind}_bwd_from_output").make_inputs(cfg).get("bias")  # the same draws
    if special:
        inp["weight"][: len(SPECIAL)] = torch.tensor(SPECIAL, dtype=dtype)
        if bias is not None and not bias_there:
            bias[: len(SPECIAL)] = 0
    fwd = [inp["x"], inp["weight"]] + ([bias] if bias is not None else [])
    y, *stats = _interp(f"{kind}_fwd", cfg, fwd)
    return cfg, inp, bias, y, stats


def _standard(kind, cfg, inp, stats):
    return _interp(f"{kind}_bwd", cfg, [inp["x"], inp["dy"], *stats, inp["weight"]])


def _from_output(kind, cfg, inp, bias, y, stats):
    rstd = stats[-1]
    return _interp(f"{kind}_bwd_from_output", cfg, [y, inp["dy"], rstd, inp["weight"]] +
                   ([bias] if bias is not None else []))


def _truth(kind: str, cfg, inp) -> tuple:
    """float64 torch autograd of the norm at x: (dx, dw[, db]), and its xhat, rstd and g = w dy."""
    x = inp["x"].double().requires_grad_(True)
    w = inp["weight"].double().requires_grad_(True)
    dy = inp["dy"].double()
    if kind == "rmsnorm":
        y = F.rms_norm(x, (cfg.hidden,), w, cfg.eps)
        grads = torch.autograd.grad(y, [x, w], dy)
        rstd = (x.detach().pow(2).mean(-1, keepdim=True) + cfg.eps).rsqrt()
        xhat = x.detach() * rstd
    else:
        b = torch.zeros_like(w, requires_grad=True)
        y = F.layer_norm(x, (cfg.hidden,), w, b, cfg.eps)
        grads = torch.autograd.grad(y, [x, w, b], dy)
        xd = x.detach()
        rstd = (xd.var(-1, unbiased=False, keepdim=True) + cfg.eps).rsqrt()
        xhat = (xd - xd.mean(-1, keepdim=True)) * rstd
    return grads, xhat, rstd, dy * w.detach()


def _within_rounding_of_y(kind, cfg, inp, y, got, zero_cols: torch.Tensor):
    """Each grad of the backward from y is within the error y's rounding to its dtype carries into it: xhat
    = (y - b) / w is off by at most ulp(y) / |w| (taken as 2^-8 |y| / |w|), which reaches dw and both terms of
    dx, plus the grads' own rounding; where w = 0, xhat is not in y, so dw is 0 and dx lacks its xhat term."""
    (dx, dw, *_), xhat, rstd, g = _truth(kind, cfg, inp)
    w = inp["weight"].double()
    dy = inp["dy"].double()
    y = y.double()
    u = 2.0 ** -8
    dxhat = torch.where(zero_cols, torch.zeros_like(y), u * y.abs() / torch.where(zero_cols, 1.0, w.abs()))
    c = (g * xhat).mean(-1, keepdim=True)
    dc = (g.abs() * dxhat).mean(-1, keepdim=True)
    missing = torch.where(zero_cols, -rstd * xhat * c, torch.zeros_like(xhat))  # the xhat term y cannot give
    want_dx = dx - missing
    want_dw = torch.where(zero_cols, torch.zeros_like(dw), dw)
    bound_dx = rstd * (dxhat * c.abs() + xhat.abs() * dc) + u * want_dx.abs() + 1e-6 * want_dx.abs().max()
    bound_dw = (dy.abs() * dxhat).sum(tuple(range(y.ndim - 1))) + u * want_dw.abs() + 1e-6 * want_dw.abs().max()
    assert all(torch.isfinite(t).all() for t in got)
    err_dx, err_dw = (got[0].double() - want_dx).abs(), (got[1].double() - want_dw).abs()
    assert (err_dx <= bound_dx).all(), f"dx off by {(err_dx - bound_dx).max():.3g} past y's rounding"
    assert (err_dw <= bound_dw).all(), f"dw off by {(err_dw - bound_dw).max():.3g} past y's rounding"
    assert (got[1][zero_cols] == 0).all()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_grads_from_output_equal_the_standard_backward(kind, dtype):
    cfg, inp, bias, y, stats = _case(kind, dtype, special=False)
    standard, from_y = _standard(kind, cfg, inp, stats), _from_output(kind, cfg, inp, bias, y, stats)
    truth = _truth(kind, cfg, inp)[0]
    assert len(standard) == len(from_y) == len(truth)
    for i, (t, s, o) in enumerate(zip(truth, standard, from_y)):
        assert diff(i, t, s).ok and diff(i, t, o).ok, (diff(i, t, s), diff(i, t, o))
        assert diff(i, s, o).ok, diff(i, s, o)
    _within_rounding_of_y(kind, cfg, inp, y, from_y, torch.zeros(cfg.hidden, dtype=torch.bool))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_zero_and_tiny_weights_are_never_divided_into_a_wrong_grad(kind, dtype):
    """Tiny weights (1e-3 down to 1e-30) are divided by as they are and give the standard backward's grads to y's
    rounding; exact zeros give finite grads with dw 0 and only dx's xhat term missing there (that x is not in y)."""
    cfg, inp, bias, y, stats = _case(kind, dtype, special=True)
    got = _from_output(kind, cfg, inp, bias, y, stats)
    zero_cols = inp["weight"] == 0
    assert int(zero_cols.sum()) == 2
    _within_rounding_of_y(kind, cfg, inp, y, got, zero_cols)
    # away from the zero columns the grads are the standard backward's, tiny columns included
    standard = _standard(kind, cfg, inp, stats)
    keep = ~zero_cols
    for i, (s, o) in enumerate(zip(standard[:2], got[:2])):
        d = diff(i, s[..., keep], o[..., keep])
        assert d.ok, d
    tiny = (inp["weight"] != 0) & (inp["weight"].abs() < 1e-2)
    assert diff(1, standard[1][tiny], got[1][tiny]).ok and standard[1][tiny].abs().min() > 0


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_a_bias_beside_a_tiny_weight_leaves_xhat_only_the_rounding_of_y(dtype):
    """y - b cancels where |w xhat| is small beside |b|: what is left of xhat is y's rounding over |w| (the bound
    holds), and a column of weight 1e-3 under a bias of 0.5 has lost its dw to it (so has any reader of y)."""
    cfg, inp, bias, y, stats = _case("layernorm", dtype, special=True, bias_there=True)
    bias[2] = 0.5  # beside the weight 1e-3
    y, *stats = _interp("layernorm_fwd", cfg, [inp["x"], inp["weight"], bias])
    got = _from_output("layernorm", cfg, inp, bias, y, stats)
    _within_rounding_of_y("layernorm", cfg, inp, y, got, inp["weight"] == 0)
    dw = _truth("layernorm", cfg, inp)[0][1]
    if dtype == torch.bfloat16:
        assert (got[1][2].double() - dw[2]).abs() > 0.1 * dw.abs().max()


@pytest.mark.parametrize("kind", KINDS)
def test_the_backward_reads_y_not_x(kind):
    """Saved for the backward: y (which the next op keeps anyway), rstd and the weight, not x. With x's memory
    overwritten after the forward, the grads from y are unchanged; the standard backward's are not."""
    cfg, inp, bias, y, stats = _case(kind, torch.bfloat16, special=False)
    spec = fusions.get(f"{kind}_bwd_from_output")
    names = list(spec.make_inputs(cfg))
    assert "x" not in names and names[:3] == ["y", "dy", "rstd"]
    before = _from_output(kind, cfg, inp, bias, y, stats)
    standard = _standard(kind, cfg, inp, stats)
    inp["x"].fill_(float("nan"))  # x is gone
    after = _from_output(kind, cfg, inp, bias, y, stats)
    assert all(torch.equal(a, b) for a, b in zip(before, after))
    assert all(diff(i, s, a).ok for i, (s, a) in enumerate(zip(standard, after)))
    assert not torch.isfinite(_standard(kind, cfg, inp, stats)[0]).any()


def test_hugging_face_rounding_is_refused_naming_the_config():
    from dataclasses import replace

    spec = fusions.get("rmsnorm_bwd_from_output")
    cfg = replace(spec.config("nanogpt_tiny"), round_normed=True)
    with pytest.raises(ArgumentError, match="rmsnorm_bwd_from_output: config 'nanogpt_tiny' has round_normed=True"):
        spec.build(cfg)
