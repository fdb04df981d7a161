"""Property: for random fusions of meta and pointwise ops, every policy's realizations compute the
original fusion's outputs, and host-run aliased outputs are views of their root input."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit import DataType, FusionDefinition
from segkit.bookend import bookend, run_plan
from tests.test_properties import _apply

KINDS = ("unary", "binary", "scalar", "permute", "reshape", "broadcast", "slice", "squeeze", "set")


def _host_view_chain(plan, host, out) -> bool:
    """True when every op from ``out`` up to its root runs on the host (so it must be a view)."""
    host_ops = {id(op) for op in host.prologue + host.epilogue}
    root = plan.analysis.root(out)
    v = out
    while v is not root:
        if v.definition is None or id(v.definition) not in host_ops:
            return False
        v = v.definition.inputs[0]
    return True


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_realizations_match_the_interpreter(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=DataType.Float)
        values = [x]
        for _ in range(data.draw(st.integers(1, 7))):
            values.append(_apply(fd, data, data.draw(st.sampled_from(values)), KINDS))
        for v in data.draw(st.lists(st.sampled_from(values[1:]), min_size=1, max_size=3, unique_by=id)):
            fd.add_output(v)
    inputs = [torch.randn(shape, dtype=torch.float32)]
    want = segkit.run_reference(fd, inputs)
    for policy in ("none", "outputs", "inputs+outputs"):
        plan = bookend(fd, policy)
        for realization in ("segment_set", "host"):
            got = run_plan(plan, inputs, realization=realization)
            for w, g in zip(want, got):
                torch.testing.assert_close(g, w, rtol=0, atol=0)
        host = plan.apply("host")
        outs = host.run(inputs)
        for out_value, out in zip(fd.fusion.outputs, outs):
            if plan.analysis.root(out_value) is x and _host_view_chain(plan, host, out_value):
                assert out.untyped_storage().data_ptr() == inputs[0].untyped_storage().data_ptr(), (
                    f"{policy}: {out_value.describe()} should be a view of the input\\n{plan.describe()}")
