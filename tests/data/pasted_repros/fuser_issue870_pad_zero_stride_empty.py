# Source: https://github.com/NVIDIA/Fuser/issues/870 (issue description)
# Thread date: 2023-09-12; targets: nvfuser (September 2023).
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id11(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[None, None, None], dtype=DataType.Double, is_cpu=False)
    S1 = fd.define_scalar(-3.70753, dtype=DataType.Double)
    T2 = fd.ops.pad(T0, [0, 0, 1, 1, 1, 0], S1)
    fd.add_output(T2)

with FusionDefinition() as fd:
    nvfuser_fusion_id11(fd)

inputs = [
    torch.randn((0,), dtype=torch.float64, device='cuda:0').as_strided((2, 0, 3), (0, 0, 0)),
]
fd.execute(inputs)
