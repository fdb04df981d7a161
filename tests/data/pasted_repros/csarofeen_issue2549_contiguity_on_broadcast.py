# Source: https://github.com/csarofeen/pytorch/issues/2549 (issue description)
# Thread date: 2023-03-07; targets: nvfuser of the nvFuser devel fork (March 2023).
# Pasted as in the thread; nothing changed. The maintainers answered that the repro itself is wrong: since
# that day's contiguity change a broadcast (size-1) dimension takes no contiguity flag, so nvFuser rejects
# `contiguous=[True, True]` for symbolic_sizes=[-1, 1] ("The size of contiguity must equal to the number of
# non-broadcasting IterDomains"). The same fusion, written with sizes=/strides=, is test_fix_2549
# (fuser_2023_03_fix_2549.py).
from nvfuser import FusionDefinition, DataType
import torch

def nvfuser_fusion_id2(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(symbolic_sizes=[-1, 1], contiguous=[True, True], dtype=DataType.Double, is_cpu=False)
    T1 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Double, is_cpu=False)
    T2 = fd.ops.broadcast_in_dim(T0, output_shape=[4, 4], broadcast_dims=[0, 1])
    T3 = fd.ops.div(T1, T2)
    fd.add_output(T3)

a = torch.ones(4, 1, dtype=torch.double, device='cuda')
b = torch.ones(4, 4, dtype=torch.double, device='cuda')

# RuntimeError: The size of contiguity must equal to the number of non-broadcasting IterDomains
with FusionDefinition() as fd:
    nvfuser_fusion_id2(fd)

fd.execute([a, b])
