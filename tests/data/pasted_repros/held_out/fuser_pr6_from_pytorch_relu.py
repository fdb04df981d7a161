# Source: https://github.com/NVIDIA/Fuser/pull/6 (PR description)
# Thread date: 2023-03-14; targets: nvfuser (March 2023).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition

inputs = [
    torch.randn(4, 4, device='cuda'),
]

with FusionDefinition() as fd:
    t0 = fd.from_pytorch(inputs[0])
    t1 = fd.ops.relu(t0)
    fd.add_output(t1)

out = fd.execute(inputs)
