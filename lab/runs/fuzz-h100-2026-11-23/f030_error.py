# segkit fuzz finding f030: error under realization outputs/host
# Found by `segkit fuzz --seed 1` (target nvfuser), case 20.33; minimized from 3 to 3 ops in 2 s (14 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/device_lower/validation.cpp:1559, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:select>permute>reshape
# Steps: size 32 -> 16
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[16, 4, 16, 17], contiguity=[True, None, True, True], dtype=DataType.Int32, is_cpu=False, stride_order=[3, 2, 1, 0])
    c0 = fd.define_scalar(15, dtype=DataType.Int)
    tv1 = fd.ops.select(tv0, c0, dim=3)
    tv2 = fd.ops.permute(tv0, dims=[0, 3, 2, 1])
    tv3 = fd.ops.reshape(tv0, new_shape=[64, 16, 17])
    fd.add_output(tv3)
    fd.add_output(tv2)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((4352,), dtype=torch.int32, device='cuda:0').as_strided((16, 4, 16, 17), (272, 0, 17, 1)),
]
fd.execute(inputs)
