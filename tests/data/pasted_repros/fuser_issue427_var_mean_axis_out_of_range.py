# Source: https://github.com/NVIDIA/Fuser/issues/427 (issue description)
# Thread date: 2023-05-31; targets: nvfuser (May 2023).
# Pasted as in the thread; nothing changed. The thread reports that var_mean segfaults when asked to reduce
# axis 5 of a 5-D tensor (axes 0..4): the script is invalid input.
import torch
from nvfuser import FusionDefinition, DataType

inputs = [
    torch.randn(256, 28, 28, 4, 32, device='cuda'),
]

def func(fd: FusionDefinition) :
    T0 = fd.from_pytorch(inputs[0])
    S1 = fd.define_scalar(1.0e-5)
    var, mean = fd.ops.var_mean(T0, axes=[1, 2, 5], correction=0, keepdim=True)
    T2 = (T0 - mean) / fd.ops.sqrt(var + S1)
    fd.add_output(T2)

with FusionDefinition() as fd:
    func(fd)

print(fd)

for _ in range(5):
    out = fd.execute(inputs)
