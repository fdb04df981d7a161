# Source: https://github.com/NVIDIA/Fuser/pull/213 (PR description)
# Thread date: 2023-04-24; targets: nvfuser (April 2023 printer output).
# Pasted as in the thread, which shows the text nvFuser printed on an error; the log's first line
# ("Error executing nvFuser FusionDefinition:") is dropped. The paste has no import lines.

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.max(T0, axes=[1], keepdim=False, dtype=DataType.Null)
    T2 = fd.ops.broadcast_in_dim(T1, output_shape=[3, 1], broadcast_dims=[0])
    T3 = fd.ops.broadcast_in_dim(T2, output_shape=[3, 3], broadcast_dims=[0, 1])
    T4 = fd.ops.sub(T0, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, axes=[1], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, output_shape=[3, 1], broadcast_dims=[0])
    T8 = fd.ops.broadcast_in_dim(T7, output_shape=[3, 3], broadcast_dims=[0, 1])
    T9 = fd.ops.div(T5, T8)
    fd.add_output(T9)


# Generate similar inputs to reproduce:
inputs = [
    torch.randn((3, 3), dtype=torch.float32, device='cuda:0').as_strided((3, 3), (3, 1)),
]
