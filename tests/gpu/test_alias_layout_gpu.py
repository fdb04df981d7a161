"""Outputs written into strided views of an input through segkit's nvFuser replay (``add_output(alias_input=)``):
the buffer around the view untouched, the view holding the result, whether or not nvFuser keeps the view's layout
itself (segkit.layout.alias_loses_layout; the replay's fallback when it does not)."""

from __future__ import annotations

import pytest
import torch

from segkit.dtypes import DataType
from segkit.frontend import FusionDefinition
from segkit.layout import alias_loses_layout, compute_tensor_descriptor
from segkit.nvfuser.run import run_on

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("transposed", [False, True])
def test_twice_x_lands_in_columns_2_to_5_of_the_buffer(transposed):
    buf = torch.zeros(4, 8, device="cuda")
    x = torch.randn(4, 3, device="cuda")
    view = buf[:, 2:5].t() if transposed else buf[:, 2:5]
    arg = x.t().contiguous() if transposed else x
    assert alias_loses_layout(*compute_tensor_descriptor(list(view.shape), list(view.stride()))) is not transposed
    with FusionDefinition() as fd:
        tx = fd.define_tensor(sizes=list(arg.shape), strides=list(arg.stride()), dtype=DataType.Float)
        tv = fd.define_tensor(sizes=list(view.shape), strides=list(view.stride()), dtype=DataType.Float)
        fd.add_output(fd.ops.mul(tx, fd.define_scalar(2.0, dtype=DataType.Double)), alias_input=tv)
    run_on(fd, [arg, view], "nvfuser")
    want = torch.zeros_like(buf)
    want[:, 2:5] = 2 * x
    assert torch.equal(buf, want)


def test_a_bf16_input_passed_through_by_a_set_is_written():
    """A cast pair bf16 -> fp32 -> bf16 would be folded into the input by nvFuser and never written; a set is."""
    buf = torch.zeros(4, 8, dtype=torch.bfloat16, device="cuda")
    x = torch.randn(3, 4, dtype=torch.bfloat16, device="cuda")
    view = buf[:, 2:5].t()
    with FusionDefinition() as fd:
        tx = fd.define_tensor(sizes=[3, 4], strides=[4, 1], dtype=DataType.BFloat16)
        tv = fd.define_tensor(sizes=[3, 4], strides=list(view.stride()), dtype=DataType.BFloat16)
        fd.add_output(fd.ops.set(tx), alias_input=tv)
    run_on(fd, [x, view], "nvfuser")
    assert torch.equal(buf[:, 2:5], x.t()) and not buf[:, :2].any() and not buf[:, 5:].any()
