# Source: https://github.com/NVIDIA/Fuser/issues/1850 (issue description, "Current Behavior")
# Thread date: 2024-02-29; targets: nvfuser (February 2024).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

inputs = [
        torch.randn(1024, 1024, device='cuda'),
        ]

with FusionDefinition() as fd:
    t0 = fd.from_pytorch(inputs[0])
    s0 = fd.define_scalar(2.0)
    t1 = fd.ops.mul(t0, s0)
    fd.add_output(t1)

for _ in range(5):
    out = fd.execute(inputs)
