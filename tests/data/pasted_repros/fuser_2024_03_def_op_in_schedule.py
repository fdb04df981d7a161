# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L2320-L2341
# Committed by nvFuser developers: test_def_op_in_schedule in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
# Targets: nvfuser 0.1.x (March 2024).
# Extracted as a developer pastes it: the test function moved out of its class, dedented one level;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import torch.nn.functional as F
import torch._refs as refs
import torch._prims as prims

from nvfuser import (
    FusionCache,
    FusionDefinition,
    DataType,
    Tensor,
    version,
    compute_contiguity,
    compute_tensor_descriptor,
)
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype


def test_def_op_in_schedule(self):
    """
    Tests for an error when a definition op is used in a schedule
    """
    inputs = [
        torch.randn(4, 4, 4, device="cuda"),
    ]

    class SchedError(FusionDefinition):
        def definition(self):
            self.t0 = self.from_pytorch(inputs[0])
            self.t1 = self.ops.tanh(self.t0)
            self.add_output(self.t1)

        def schedule(self):
            self.t2 = self.ops.relu(self.t1)

    with self.assertRaisesRegex(
        RuntimeError, "Attempting to add to a completed definition!"
    ):
        fd = SchedError()
        _ = fd.execute(inputs)
