# Source: https://github.com/csarofeen/pytorch/issues/1788 (issue description)
# Thread date: 2022-06-30; targets: torch._C._nvfuser (June 2022). The thread's error was an nvFuser bug,
# fixed by https://github.com/csarofeen/pytorch/pull/1794; the script itself is valid.
# Pasted as in the thread; nothing changed.
import torch

from torch._C._nvfuser import Fusion, FusionDefinition

# Construct and Define Fusion
fusion = Fusion()

with FusionDefinition(fusion) as fd :
    t0 = fd.define_tensor(2)
    t1 = fd.define_tensor(1)

    fd.add_input(t0)
    fd.add_input(t1)

    t0_b = fd.Ops.broadcast_in_dim(t0, [3, 3], [0, 1])
    t1_b = fd.Ops.broadcast_in_dim(t1, [3, 3], [1])
    t2 = fd.Ops.add(t0_b, t1_b)

    fd.add_output(t2)

fusion.print_ir()

# Execute Fusion
input1 = torch.ones(3, 1, device='cuda')
input2 = torch.ones(3, device='cuda')

fusion.execute([input1, input2])
