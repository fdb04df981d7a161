"""The segkit.check hook on CPU: a backend that returns a wrong answer is caught on the first call of a
signature, the reference's answer is returned instead, and the signature stays refused; a right answer
passes through; a region segkit cannot record runs unchecked with a warning. The GPU test does the same
with Thunder's real (wrong) GQA fusion."""

from __future__ import annotations

import warnings

import pytest
import torch

import fusions
import segkit
import thunder
import thunder_exec
from segkit.verdicts import ResultVerdicts
from thunder_exec.check_hook import CheckedRegion
from tests.test_thunder_exec import _close, _run, _symbols


def _rmsnorm_case():
    spec = fusions.get("rmsnorm_fwd")
    fd = spec.build("sweep_4096x1024_tiny")
    return fd, segkit.random_inputs(fd, seed=3)


class _Backend:
    """A backend under test: computes the reference, optionally corrupts one element of the first output."""

    def __init__(self, fd, corrupt: bool):
        self.fd, self.corrupt, self.calls = fd, corrupt, 0

    def __call__(self, args):
        self.calls += 1
        outs = segkit.run_reference(self.fd, args)
        if self.corrupt:
            outs[0] = outs[0].clone()
            outs[0].view(-1)[7] += 100.0
        return outs


def test_wrong_result_is_refused_and_stays_refused():
    fd, args = _rmsnorm_case()
    backend, verdicts = _Backend(fd, corrupt=True), ResultVerdicts()
    want = segkit.run_reference(fd, args)
    with pytest.warns(thunder_exec.WrongResultWarning, match="output 0"):
        got = verdicts.outputs("sig", "test backend", lambda: fd, args, lambda: backend(args))
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = verdicts.outputs("sig", "test backend", lambda: fd, args, lambda: backend(args))
    assert backend.calls == 1, "a refused signature must not run the wrong backend again"
    assert all(torch.equal(g, w) for g, w in zip(again, want))


def test_right_result_passes_through_and_is_validated_once():
    fd, args = _rmsnorm_case()
    backend, verdicts, recorded = _Backend(fd, corrupt=False), ResultVerdicts(), []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            verdicts.outputs("sig", "test backend", lambda: recorded.append(1) or fd, args, lambda: backend(args))
    assert backend.calls == 3 and len(recorded) == 1


class _Wrapper:
    """The two things CheckedRegion uses of Thunder's FusionDefinitionWrapper: its name, and its last-used
    definition's repro_script_for(inputs) (here segkit's own emitter)."""

    def __init__(self, fd, backend, script=None):
        self.name, self.backend = "nvFusion0", backend
        self.last_used = self
        self._script = script or (lambda inputs: segkit.emit_repro(fd, inputs))

    def repro_script_for(self, inputs):
        return self._script(inputs)

    def __call__(self, *args):
        return self.backend(list(args))


def test_checked_region_reads_the_definition_back_and_refuses_a_wrong_answer():
    fd, args = _rmsnorm_case()
    region = CheckedRegion(_Wrapper(fd, _Backend(fd, corrupt=True)), ResultVerdicts())
    with pytest.warns(thunder_exec.WrongResultWarning, match="nvFusion0"):
        got = region(*args)
    assert all(torch.equal(g, w) for g, w in zip(got, segkit.run_reference(fd, args)))


def test_region_segkit_cannot_record_runs_unchecked_with_a_warning():
    fd, args = _rmsnorm_case()
    script = segkit.emit_repro(fd, args).replace("fd.ops.rsqrt(", "fd.ops.not_an_op(")
    region = CheckedRegion(_Wrapper(fd, _Backend(fd, corrupt=False), lambda inputs: script), ResultVerdicts())
    with pytest.warns(thunder_exec.UncheckedFusionWarning, match="not_an_op"):
        got = region(*args)
    assert all(torch.equal(g, w) for g, w in zip(got, segkit.run_reference(fd, args)))


def test_segkit_check_compile_option_reaches_segkit_symbols():
    ln = torch.nn.RMSNorm(32)
    x = torch.randn(4, 32, requires_grad=True)
    jm, (outs, grads), (want, want_grads) = _run(ln, [x], list(ln.parameters()), segkit_check=True)
    fwd = [b for b in thunder.last_traces(jm)[-1].bound_symbols if b.sym.name == "segkit_rms_norm_fwd"]
    assert fwd and fwd[0].args[-2:] == ("outputs", True)
    assert "segkit_rms_norm_bwd" in _symbols(thunder.last_backward_traces(jm)[-1])
    _close(outs, want, torch.float32)
    _close(grads, want_grads, torch.float32)


def test_check_transform_leaves_traces_without_nvfusion_regions_correct():
    ln = torch.nn.LayerNorm(32)
    x = torch.randn(4, 32, requires_grad=True)
    _, (outs, grads), (want, want_grads) = _run(ln, [x], list(ln.parameters()),
                                                transforms=[thunder_exec.CheckNvFusions()])
    _close(outs, want, torch.float32)
    _close(grads, want_grads, torch.float32)


def test_transform_puts_checked_regions_in_the_call_context():
    """Thunder's fusion symbols re-install their own wrapper when re-bound: the swap must survive that."""
    from thunder.extend import FusionExecutor

    ln = torch.nn.LayerNorm(32)
    jm = thunder.jit(ln)
    jm(torch.randn(4, 32))
    trace = thunder.last_traces(jm)[-1]
    op = next(b for b in trace.bound_symbols if b.sym.name == "layer_norm" or b.subsymbols)
    wrapper = _Wrapper(None, None)
    fusion = FusionExecutor("fake_nvfuser").register_temporary_operation(
        "nvFusion0", wrapper, inputs=[a for a in op.flat_args if hasattr(a, "name")], outputs=list(op.flat_outs),
        bsyms=[op])
    checked = thunder_exec.CheckNvFusions()._checked(fusion)
    assert isinstance(checked._call_ctx["nvFusion0"], CheckedRegion)
    assert checked._call_ctx["nvFusion0"].wrapper is wrapper
