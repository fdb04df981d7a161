# Source: https://github.com/NVIDIA/Fuser/pull/2644 (PR description)
# Thread date: 2024-07-19; targets: nvfuser (July 2024).
# Pasted as in the thread; nothing changed. The PR uses it as an example of a definition nvFuser rejects
# while the fusion is being defined: `where` gets a Float tensor as its condition.
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.ops.where(T0, T0, T0)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

