# Source: https://github.com/csarofeen/pytorch/issues/2359 (issue description, first snippet)
# Thread date: 2023-01-25; targets: torch._C._nvfuser of the nvFuser devel fork (January 2023).
# Pasted as in the thread, minus the thread's output line after the script (the error, prefixed ": ");
# the paste has no import lines. nvFuser rejected the inputs: `a` is declared with ndims=2 (no broadcast
# dimension) and broadcast_in_dim asks for size 2 in its dim 1, but the input `a` has size 1 there
# ("Attempting to bind T0.size[1] to 2 but it's already set to 1").
fs = Fusion()
with FusionDefinition(fs) as fd:
    nv_a = fd.define_tensor(ndims=2, dtype=DataType.Float)
    nv_b = fd.define_tensor(ndims=2, dtype=DataType.Float)

    c = fd.ops.broadcast_in_dim(nv_a, (2, 2), (0, 1))
    result = fd.ops.add(nv_b, c)

    fd.add_output(result)

a = make_tensor((2, 1), device='cuda', dtype=torch.float32)
b = make_tensor((2, 2), device='cuda', dtype=torch.float32)
nv_result = fs.execute([a, b])[0]
print(nv_result)
