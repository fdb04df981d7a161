# Source: https://github.com/NVIDIA/Fuser/issues/1306 (issue description)
# Thread date: 2023-11-15; targets: nvfuser (November 2023).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id1(fd : FusionDefinition) -> None :
    T3 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T14 = fd.ops.cast(T3, dtype=DataType.Float) # NOTE that RHS is same, but the result is assigned to different variables
    T15 = fd.ops.cast(T3, dtype=DataType.Float) # NOTE that RHS is same, but the result is assigned to different variables
    T16 = fd.ops.sum(T15, axes=[0, 1], keepdim=False, dtype=DataType.Null)
    T20 = fd.ops.sum(T14, axes=[0, 1], keepdim=False, dtype=DataType.Null)
    T31 = fd.ops.sum(T14, axes=[2], keepdim=False, dtype=DataType.Null)
    fd.add_output(T16)
    fd.add_output(T20)
    fd.add_output(T31)

with FusionDefinition() as fd:
    nvfuser_fusion_id1(fd)

inputs = [
    torch.randn((1572864,), dtype=torch.bfloat16, device='cuda:0').as_strided((16, 128, 768), (98304, 768, 1)),
]
fd.execute(inputs)
