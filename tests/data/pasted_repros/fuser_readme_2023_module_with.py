# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python/README.md ("Example 1 - Define and Execute a Fusion")
# Committed: 2023-03-12 (nvFuser's first commit after leaving PyTorch); targets: nvfuser (March 2023).
# The README's example code block as written; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd :
    t0 = fd.define_tensor(symbolic_sizes=[-1, 1, -1],
                          contiguous=[True, True, True],
                          dtype=DataType.Float)
    t1 = fd.define_tensor(3)
    c0 = fd.define_constant(3.0)

    t2 = fd.ops.add(t0, t1)
    t3 = fd.ops.mul(t2, c0)
    t4 = fd.ops.sum(t3, [-1], False, DataType.Float)

    fd.add_output(t4)

input1 = torch.ones(2, 1, 8, device='cuda')
input2 = torch.ones(2, 4, 8, device='cuda')

nvf_out = fd.execute([input1, input2])[0]
