# Source: https://github.com/NVIDIA/Fuser/issues/1277 (comment by jjsjann123)
# Thread date: 2023-11-10; targets: nvfuser (November 2023).
# Pasted as in the thread; nothing changed (the trailing spaces after the inputs list are the thread's).
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False)
    S2 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T3 = fd.ops.pad(T1, [4, 0, 0, 0, 0, 0, 0, 0], S2)
    S4 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T5 = fd.ops.pad(T0, [0, 12, 0, 0, 0, 0, 0, 0], S4)
    T6 = fd.ops.add(T3, T5)
    fd.add_output(T6)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn((20,), dtype=torch.float32, device='cuda:0').as_strided((5, 4, 5, 4), (0, 0, 4, 1)),
    torch.randn((1200,), dtype=torch.float32, device='cuda:0').as_strided((5, 4, 5, 12), (240, 60, 12, 1)),
]   
fd.execute(inputs)
