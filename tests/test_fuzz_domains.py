"""The generator's domain steps (segkit.fuzz.domains): they reach the catalogue ops they name, their operands
lie in each op's safe domain on the inputs a campaign makes, and the reference agrees with itself on them under
every realization (no false positives)."""

from __future__ import annotations

import itertools
import math

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segkit.dtypes import DataType
from segkit.fuzz import run_case, target
from segkit.fuzz.campaign import Coverage, case_stream
from segkit.fuzz.domains import DOMAIN_STEPS
from segkit.fuzz.gen import _Builder, generated_ops, strided_inputs
from segkit.fuzz.targets import REALIZATIONS
from segkit.interp import run_reference
from segkit.printing import emit_repro
from segkit.repro import load_repro

DOMAIN_OPS = {n for ops in DOMAIN_STEPS.values() for n in ops}
#: Domain steps only (each as often as it has ops to reach), between meta ops: a short run reaches every op.
BOOSTED = {**{k: len(ops) for k, ops in DOMAIN_STEPS.items()}, "reshape": 2, "permute": 2, "expand": 2}


def _campaign_inputs(fd) -> list:
    """The inputs a campaign runs a case on: its script's recipes (integers in [-8, 8], floats randn)."""
    return load_repro(emit_repro(fd, strided_inputs(fd))).make_inputs("cpu")


def test_generator_reaches_the_domain_ops_and_the_reference_finds_nothing_on_them():
    """A campaign's own case stream (fixed seed) of domain steps: every domain op is generated, and the reference
    run against itself under every realization finds nothing (an out-of-range index would make it raise)."""
    seen, with_domain_ops = Coverage(), 0
    for _, case in itertools.islice(case_stream(1, max_ops=6, max_elements=1024, weights=BOOSTED), 300):
        seen.add(case)
        with_domain_ops += bool(DOMAIN_OPS & set(case.ops))
        for v in case.fd.fusion.outputs:  # tie-dependent indices never reach an output
            op = v.definition
            assert op is None or op.name != "argsort" and not (op.name == "topk" and v is op.outputs[1]), case.script
        repro = load_repro(case.script)
        res = run_case(target("reference"), repro.fd, repro.make_inputs("cpu"), list(REALIZATIONS))
        assert res.status == "ok", (res.detail, [v.detail for v in res.failures], case.script)
    assert DOMAIN_OPS <= generated_ops()
    assert not DOMAIN_OPS - set(seen.ops), f"never generated: {sorted(DOMAIN_OPS - set(seen.ops))}"
    assert with_domain_ops >= 250


#: Each op's safe domain, on its recorded operands (tensors or numbers) as the reference computed them.
def _within(name: str, a, b=None) -> bool:
    def t(x):
        return x if isinstance(x, torch.Tensor) else torch.tensor(x)

    if name == "bitwise_left_shift":
        return bool((t(a) >= 0).all() and (t(a) <= 255).all() and (t(b) >= 0).all() and (t(b) <= 7).all())
    if name in ("bitwise_right_shift", "logical_right_shift"):
        return bool((t(b) >= 0).all() and (t(b) <= 7).all())
    if name == "gcd":
        return bool((t(a) >= 0).all() and (t(b) >= 0).all())
    if name == "mod":
        return bool((t(b) != 0).all())
    if name == "erfinv":
        return bool((t(a).abs() < 1).all())
    if name == "lgamma":
        return bool((t(a) > 0).all())
    if name == "tan":
        return bool((t(a).abs() < math.pi / 2).all())
    if name == "pow":
        return bool((t(a) > 0).all() and (t(b).abs() <= 3).all())
    if name in ("sinh", "cosh", "exp2"):
        return bool((t(a).abs() <= 10).all())
    return True


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(st.data(), st.sampled_from(["integer", "wild"]))
def test_domain_steps_feed_each_op_inside_its_domain(data, step):
    """On the campaign's own inputs (integers in [-8, 8], randn floats), every operand of a shift, gcd, mod
    and of the numerically wild ops lies where the op is defined and nothing overflows."""
    b = _Builder(data.draw, 1024)
    b.new_input([5, 7], DataType.Int32 if step == "integer" else DataType.Float)
    out = b.step(step)
    if out is None:
        return
    op = out.definition
    tensors = [x for x in op.inputs if x.is_tensor]
    for x in tensors:
        b.fd.add_output(x)
    b.fd.add_output(out)
    values = run_reference(b.fd, _campaign_inputs(b.fd))
    by_id = {id(x): v for x, v in zip(tensors, values)}
    operands = [by_id.get(id(x), x.value) for x in op.inputs]
    assert _within(op.name, *operands), (op.name, operands)
    if op.name == "bitwise_left_shift":  # the result fits: 255 << 7
        assert int(values[-1].abs().max()) <= 255 << 7


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(st.data(), st.lists(st.sampled_from([1, 2, 3, 4, 6, 9, 16]), min_size=1, max_size=3))
def test_scatter_writes_every_position_once(data, shape):
    """scatter's index is a permutation along its dim (built from iota): the output holds exactly src's values
    in each row along that dim, none of arg's left and none of src's lost."""
    b = _Builder(data.draw, 1024)
    b.new_input(shape, DataType.Float, expand={d: False for d in range(len(shape))})
    out = b.step("scatter")
    if max(shape) < 2:
        assert out is None  # nothing to permute
        return
    assert out is not None and out.definition.name == "scatter"
    b.fd.add_output(out)
    arg, _, src = out.definition.inputs
    b.fd.add_output(src)
    got, src_value = run_reference(b.fd, _campaign_inputs(b.fd))
    d = out.definition.args["dim"]
    assert torch.equal(got.sort(dim=d).values, src_value.sort(dim=d).values)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(st.data())
def test_sorted_values_do_not_depend_on_how_ties_are_broken(data):
    """argsort feeds take_along_axis on its own input and topk gives its values only: with many ties (a
    BFloat16 input), reversing the order of tied indices changes neither."""
    b = _Builder(data.draw, 1024)
    out = b.step("sort")
    op = out.definition
    assert op.name in ("take_along_axis", "topk")
    b.fd.add_output(out)
    x, ref = op.inputs[0], run_reference(b.fd, _campaign_inputs(b.fd))[0]
    b.fd.add_output(x)
    xv = run_reference(b.fd, _campaign_inputs(b.fd))[1]
    d = op.args["dim"]
    if op.name == "take_along_axis":
        descending = op.inputs[1].definition.args["descending"]
        other = xv.flip(d).sort(dim=d, descending=descending, stable=True).values  # ties taken the other way
    else:
        k, largest = ref.shape[d], op.args["largest"]
        other = xv.flip(d).topk(k, dim=d, largest=largest, sorted=True).values
    assert torch.equal(ref, other)
