# Source: https://github.com/NVIDIA/Fuser/issues/1541 (issue description)
# Thread date: 2023-12-18; targets: nvfuser (December 2023).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id1(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
    T1 = fd.ops.neg(T0)
    T2 = fd.ops.slice(T1, start_indices=[0], end_indices=[5])
    fd.add_output(T2)

with FusionDefinition() as fd:
    nvfuser_fusion_id1(fd)

inputs = [
    torch.randn((10,), dtype=torch.bfloat16, device='cuda:0')
]
fd.execute(inputs)
