# Source: https://github.com/NVIDIA/Fuser/issues/1116 (issue description)
# Thread date: 2023-10-19; targets: nvfuser (October 2023).
# Pasted as in the thread; nothing changed. The fusion is built by a function nested in a pytest test.
import torch
from nvfuser import FusionDefinition

def test_expand_reshape():
    def expand_reshape() -> FusionDefinition:
        with FusionDefinition() as fd:
            x = fd.define_tensor([4, 5], [True, True])
            y = fd.ops.broadcast_in_dim(x, [4, 5, 6], [0, 1])
            y = fd.ops.reshape(y, [40, 3])
            fd.add_output(y)
        return fd

    fd = expand_reshape()

    x = torch.rand(4, 5, device="cuda")
    y = fd.execute([x])[0]
    print(y.shape)
