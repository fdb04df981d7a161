# Source: https://github.com/csarofeen/pytorch/pull/2438 (PR description)
# Thread date: 2023-02-09; targets: nvfuser of the nvFuser devel fork (February 2023), user scheduling.
# Pasted as in the thread; nothing changed.
import torch
from nvfuser import FusionDefinition

inputs = [torch.randn(4, 4, 4, device='cuda'),]

class MyScheduledFusion(FusionDefinition):
    def definition(self):
        self.t0 = self.from_pytorch(inputs[0])
        self.t1 = self.ops.relu(self.t0)
        self.add_output(self.t1)
        
    def schedule(self):
        self.sched.merge(self.t1, 1)
        
fd = MyScheduledFusion()
out = fd.execute(inputs)
