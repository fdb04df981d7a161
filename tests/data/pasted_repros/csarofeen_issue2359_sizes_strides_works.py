# Source: https://github.com/csarofeen/pytorch/issues/2359 (issue description, second snippet: "This works")
# Thread date: 2023-01-25; targets: torch._C._nvfuser of the nvFuser devel fork (January 2023).
# Pasted as in the thread; nothing changed except the thread's output lines after the script (the printed
# tensor, prefixed ": ") are dropped. The paste has no import lines.
a = make_tensor((2, 1), device='cuda', dtype=torch.float32)
b = make_tensor((2, 2), device='cuda', dtype=torch.float32)

fs = Fusion()
with FusionDefinition(fs) as fd:
    nv_a = fd.define_tensor(sizes=a.shape, strides=a.stride(), dtype=DataType.Float)
    nv_b = fd.define_tensor(ndims=2, dtype=DataType.Float)

    c = fd.ops.broadcast_in_dim(nv_a, (2, 2), (0, 1))
    result = fd.ops.add(nv_b, c)

    fd.add_output(result)


nv_result = fs.execute([a, b])[0]
print(nv_result)
