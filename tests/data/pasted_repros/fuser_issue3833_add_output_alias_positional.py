# Source: https://github.com/NVIDIA/Fuser/issues/3833 (issue description)
# Thread date: 2025-02-05; targets: nvfuser 0.2.25+git6627725, torch 2.7.0a0 (stated in the script).
# Pasted as in the thread; nothing changed.
# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
#  1: NVIDIA H100 80GB HBM3
#  2: NVIDIA H100 80GB HBM3
#  3: NVIDIA H100 80GB HBM3
#  4: NVIDIA H100 80GB HBM3
#  5: NVIDIA H100 80GB HBM3
#  6: NVIDIA H100 80GB HBM3
#  7: NVIDIA H100 80GB HBM3
# torch version: 2.7.0a0+ecf3bae40a
# cuda version: 12.8
# nvfuser version: 0.2.25+git6627725
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1, 1, 576], contiguity=[None, None, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[1, 576], contiguity=[None, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T5 = fd.ops.reshape(T0, new_shape=[1, 576])
    T6 = fd.ops.set(T5)
    fd.add_output(T6, T1)
    fd.add_output(T5)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((1, 1, 576), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1, 576), dtype=torch.bfloat16, device='cuda:0'),
]
out = fd.execute(inputs)
print(f"$$$ {out = }")
