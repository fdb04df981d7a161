"""``segkit_norm_saves="output"`` on the GPU host: a tiny litgpt Llama in bf16 on CUDA, segkit_ex's defaults
(``segkit_fuse="auto"``: the forward may fuse into Thunder's regions; the backward from the output runs opaque):
the backward reads the norms' outputs, their inputs are not saved for it, and the grads stay at bf16 distance
from the default's."""

from __future__ import annotations

import pytest
import torch

from tests.test_norm_saves_output import _step, _worst

pytestmark = pytest.mark.gpu


def test_the_backward_from_the_output_on_cuda_bf16():
    saved_x, grads_x, _, eager = _step("Llama-3.2-1B", "cuda", torch.bfloat16)
    saved_y, grads_y, names, _ = _step("Llama-3.2-1B", "cuda", torch.bfloat16, segkit_norm_saves="output")
    assert names.count("segkit_rms_norm_bwd_from_output") == 5, names
    assert saved_y < saved_x
    assert _worst(grads_y, grads_x) < 3e-2 and _worst(grads_y, eager) < 3e-2
