# Source: https://github.com/NVIDIA/Fuser/pull/1717 (comment by jacobhinkle)
# Thread date: 2024-02-04; targets: nvfuser (February 2024).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id16(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, 1], contiguity=[True, True, True, None], dtype=DataType.Double, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.ops.var(T0, axes=[1, 3], correction=1, keepdim=False)
    fd.add_output(T1)

with FusionDefinition() as fd:
    nvfuser_fusion_id16(fd)

inputs = [
    torch.randn((280,), dtype=torch.float64, device='cuda:0').as_strided((8, 7, 5, 1), (35, 5, 1, 1)),
]
fd.execute(inputs)
