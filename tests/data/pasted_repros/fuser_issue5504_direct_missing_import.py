# Source: https://github.com/NVIDIA/Fuser/issues/5504 (issue description)
# Thread date: 2025-11-12; targets: nvfuser_direct 0.2.34+gitb90eb75 (printed in the thread).
# Pasted as in the thread; nothing changed. As pasted, line 2 reads `nvfuser_direct.__version__` although
# only names were imported from nvfuser_direct (the thread's output shows the author's own session had
# the module imported); Python stops there with a NameError. The fusion's sizes are symbolic scalars and
# the script has no inputs.
from nvfuser_direct import FusionDefinition, DataType
print(nvfuser_direct.__version__)

def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Float, is_cpu=False)
    c4 = fd.define_scalar(None, dtype=DataType.Int)
    c5 = fd.define_scalar(None, dtype=DataType.Int)
    tv1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv3 = fd.ops.broadcast_in_dim(tv0, (c4, c5), (0, 1))
    tv4 = fd.ops.add(tv3, tv1)
    fd.add_output(tv4)

with FusionDefinition() as fd:
    nvfuser_fusion(fd)
print(fd)
