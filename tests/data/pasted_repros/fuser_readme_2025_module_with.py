# Source: https://github.com/NVIDIA/Fuser/blob/59fe4b8a9a076673be501d4d2bd832a1bd9ca1e8/python/nvfuser/README.md ("Example 1 - Define and Execute a Fusion")
# Committed: 2025-08-18; targets: nvfuser 0.2.x legacy bindings (August 2025).
# The README's example code block as written; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd :
    t0 = fd.define_tensor(shape=[-1, 1, -1],
                          contiguity=[True, None, True],
                          dtype=DataType.Float)
    t1 = fd.define_tensor([-1, -1, -1])
    c0 = fd.define_scalar(3.0)

    t2 = fd.ops.add(t0, t1)
    t3 = fd.ops.mul(t2, c0)
    t4 = fd.ops.sum(t3, [-1], False, DataType.Float)

    fd.add_output(t4)

input1 = torch.ones(2, 1, 8, device='cuda')
input2 = torch.ones(2, 4, 8, device='cuda')

nvf_out = fd.execute([input1, input2])[0]
