# Source: https://github.com/NVIDIA/Fuser/blob/7de82c24a1ef6f75243df70e1e5434096a43bd33/doc/dev/debug.md ("Python definition for segmented group 8")
# Committed: 2025-03-17; targets: nvfuser 0.2.x legacy bindings (March 2025).
# The doc's code block as written, minus its first line (the log's "Python definition for segmented group 8:").
# A segment's definition as nvFuser prints it: no import lines and no inputs.

def nvfuser_fusion_id8(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1, 32768, 56], contiguity=[None, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.squeeze(T0, dims=[0], squeeze_expanded=True)
    T2 = fd.ops.permute(T1, dims=[1, 0])
    fd.add_output(T1, stride_order=[1, 0])
    fd.add_output(T2, stride_order=[0, 1])
