# Source: https://github.com/NVIDIA/Fuser/issues/1906 (issue description)
# Thread date: 2024-03-12; targets: nvfuser (March 2024).
# Pasted as in the thread; nothing changed (it keeps a commented-out line and lines holding one space).
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id6(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    S4 = fd.define_scalar(4.2, dtype=DataType.Double)
    T5 = fd.ops.pad(T0, [-1, -1, 0, 0, 0, 0, 0, 0], S4)
    fd.add_output(T5, stride_order=[3, 2, 1, 0])
    #fd.add_output(T5)
 
with FusionDefinition() as fd:
    nvfuser_fusion_id6(fd)
 
inputs = [
    torch.randn((72,), dtype=torch.bfloat16, device='cuda:0').as_strided((3, 3, 4, 2), (24, 8, 2, 1)),
]
fd.execute(inputs)
