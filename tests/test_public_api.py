"""Every public entry point (what segkit, segkit.trace, fusions and thunder_exec export) checks its arguments: a
wrong type or value is an ArgumentError (a TypeError and a ValueError) naming the argument ("ARG must be"), never an
AttributeError or a bare TypeError from inside. A new entry point without ``@segkit.args.checked`` fails here."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
import torch

import fusions
import segkit
import thunder_exec
from segkit import DataType, FusionDefinition, trace
from segkit.args import MARK
from segkit.errors import ArgumentError, InputMismatchError, SegkitError

PACKAGES = ("segkit", "segkit.trace", "fusions", "thunder_exec")
#: Names in ``__all__`` that are not entry points, with why.
NOT_ENTRY_POINTS = {
    **{f"segkit.{n}": "a result or data class segkit builds" for n in
       ("CheckReport", "DataType", "HostPlan", "Plan", "Repro", "ReusePlan")},
    **{f"segkit.trace.{n}": "a result class the readers build" for n in ("ApiCall", "Kernel", "Range", "Trace")},
    "segkit.FusionDefinition": "the recording frontend: each op checks its own arguments at the user's line "
                               "(tests/test_frontend.py, tests/test_bad_inputs.py)",
    "fusions.FusionSpec": "built by fusions' own modules; its methods are entry points (METHODS)",
    "thunder_exec.segkit_ex": "the executor object, handed to thunder.jit",
    "thunder_exec.rms_norm": "a function Thunder claims under thunder.jit, where its arguments are proxies",
    "thunder_exec.qkv_split_rope": "a function Thunder claims under thunder.jit, where its arguments are proxies",
}
SPEC = fusions.get("layernorm_fwd")
METHODS = {"fusions.FusionSpec.build": SPEC.build, "fusions.FusionSpec.make_inputs": SPEC.make_inputs,
           "fusions.FusionSpec.config": SPEC.config}
WRONG = (None, 123, "text", ["text"], object())


def _fusion() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(x))
    return fd


def _routed(x, weight, eps):
    return x


FD = _fusion()
#: Valid values for each entry point's required arguments (the others are left at their defaults).
VALID = {
    "fd": FD, "inputs": [torch.ones(2, 4)], "outputs": [torch.ones(2, 4)], "plan": FD, "path_or_source": "x = 1",
    "path": "missing.json", "name": "layernorm_fwd", "cfg": "nanogpt_tiny", "fn": _routed, "to": "rms_norm",
}


def entry_points() -> dict[str, object]:
    found = dict(METHODS)
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            qual, obj = f"{package}.{name}", getattr(module, name)
            if qual in NOT_ENTRY_POINTS or (inspect.isclass(obj) and issubclass(obj, (BaseException, Warning))):
                continue
            found[qual] = obj
    return found


ENTRY_POINTS = entry_points()


def test_the_walk_finds_the_entry_points_the_docs_name():
    assert {"segkit.check", "segkit.trace.load", "segkit.trace.range", "fusions.get", "thunder_exec.route",
            "fusions.FusionSpec.build", "thunder_exec.ReuseNvFusions"} <= set(ENTRY_POINTS)


@pytest.mark.parametrize("qual", sorted(ENTRY_POINTS))
def test_every_entry_point_is_checked(qual):
    fn = ENTRY_POINTS[qual]
    fn = fn.__init__ if inspect.isclass(fn) else fn
    assert getattr(fn, MARK, False), f"{qual}: a public entry point without @segkit.args.checked"


def _params(fn) -> list[inspect.Parameter]:
    fn = fn.__init__ if inspect.isclass(fn) else fn
    return [p for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


CASES = [(q, p.name) for q, fn in sorted(ENTRY_POINTS.items()) for p in _params(fn)]


@pytest.mark.parametrize(("qual", "arg"), CASES, ids=[f"{q}:{a}" for q, a in CASES])
def test_wrong_arguments_are_refused_by_name(qual, arg):
    """Each argument given each wrong value (the others valid): refused naming it, or taken because it fits the
    annotation (None where None is allowed; then at most a SegkitError); refused for at least one value."""
    fn = ENTRY_POINTS[qual]
    required = {p.name: VALID[p.name] for p in _params(fn) if p.default is p.empty and p.name != arg}
    refused = 0
    for value in WRONG:
        try:
            fn(**required, **{arg: value})
        except ArgumentError as e:
            assert re.search(rf"\b{arg} must be", str(e)), f"{qual}({arg}={value!r}): {e}"
            refused += 1
        except InputMismatchError as e:  # inputs checked against the fusion's specs, naming what does not fit
            refused += bool(re.search(rf"\b{arg}\b", str(e)))
        except SegkitError:
            pass  # the right type, a wrong file or name: segkit's own one-line error
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"{qual}({arg}={value!r}): {type(e).__name__} from inside: {e}")
    assert refused, f"{qual}: argument {arg!r} takes every wrong value"


@pytest.mark.parametrize(("call", "arg"), [
    (lambda: trace.load(123), "path"), (lambda: trace.load(None), "path"), (lambda: trace.range(123), "name"),
    (lambda: SPEC.build(123), "cfg"), (lambda: SPEC.build(None), "cfg"),
    (lambda: thunder_exec.route(_routed, ["rms_norm"]), "to"),
    (lambda: segkit.check(FD, [torch.ones(2, 4)], policy="bogus"), "policy"),
    (lambda: segkit.check(FD, torch.ones(2, 4)), "inputs"),
])
def test_the_reported_calls_name_their_argument(call, arg):
    """The calls of issues 52 and 53 (an AttributeError, a TypeError from inside, or a report carrying the error)."""
    with pytest.raises(ArgumentError, match=rf"\b{arg} must be") as e:
        call()
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)
