# Source: https://github.com/NVIDIA/Fuser/blob/59fe4b8a9a076673be501d4d2bd832a1bd9ca1e8/python/nvfuser/README.md ("Complete Working Example")
# Committed: 2025-08-18; targets: nvfuser 0.2.x legacy bindings (August 2025).
# The README's example code block as written; nothing changed. The fusion is built inside main().
import torch
from nvfuser import FusionDefinition, DataType

def main():
    # Check CUDA availability
    if not torch.cuda.is_available():
        print("CUDA is not available. nvfuser requires CUDA.")
        return

    # Define a fusion that computes (x + y) * 2
    with FusionDefinition() as fd:
        # Define input tensors with explicit shapes
        x = fd.define_tensor([-1, -1], dtype=DataType.Float)  # 2D tensor
        y = fd.define_tensor([-1, -1], dtype=DataType.Float)  # 2D tensor

        # Define operations
        sum_result = fd.ops.add(x, y)       # x + y
        two = fd.define_scalar(2.0)         # scalar constant
        final_result = fd.ops.mul(sum_result, two)  # (x + y) * 2

        # Mark output
        fd.add_output(final_result)

    # Create input tensors on GPU
    input_x = torch.ones(3, 4, device='cuda', dtype=torch.float32)
    input_y = torch.ones(3, 4, device='cuda', dtype=torch.float32) * 2

    # Execute the fusion
    nvf_result = fd.execute([input_x, input_y])[0]

    # Compare with PyTorch eager execution
    eager_result = (input_x + input_y) * 2.0

    print(f"Results match: {torch.allclose(nvf_result, eager_result)}")

    # Get debug information (only available after execution)
    print(f"Fusion ID: {fd.id()}")
    print(f"Fusion IR:\n{fd.fusion_ir()}")

if __name__ == "__main__":
    main()
