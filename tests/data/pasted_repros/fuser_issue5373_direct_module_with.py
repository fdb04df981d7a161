# Source: https://github.com/NVIDIA/Fuser/issues/5373 (issue description)
# Thread date: 2025-10-10; targets: nvfuser_direct (version not stated).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser_direct import FusionDefinition, DataType

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
# torch_out = fd.execute_torch([input1, input2])[0] # 😃
