"""Generated model steps for launch alignment: ``layers`` transformer layers of the kernels a step table profile
holds (GEMMs, attention, nvFuser's regions), and a second executor's step of the same model, where every layer
cuts one region in two and names another differently. Each kernel's ``correlation_id`` is ``layer * 100 + slot``
so a test can tell which launch of A should pair with which of B."""

from __future__ import annotations

from segkit.trace.model import Kernel

#: One layer's kernels in launch order (A's executor).
LAYER_A = ("nvf::nvfuser_inner_persistent_f0_c1_r0_g0", "nvjet_gemm_qkv", "nvf::nvfuser_resize_f0_c1_r0_g1",
           "flash_fwd_kernel", "nvjet_gemm_o", "nvf::nvfuser_inner_persistent_f0_c1_r0_g2", "nvjet_gemm_up",
           "nvf::nvfuser_pointwise_f0_c1_r0_g3", "nvjet_gemm_down", "nvf::nvfuser_pointwise_f0_c1_r0_g4")
#: B's executor: the rope region (slot 2) is two kernels, the last add (slot 9) is Triton's.
LAYER_B = (LAYER_A[0], LAYER_A[1], "nvf::nvfuser_resize_f0_c1_r0_g7", "nvf::nvfuser_pointwise_f0_c1_r0_g8",
           *LAYER_A[3:9], "triton_poi_fused_add_0")
#: Slot of each of B's kernels in A's layer (None: B's own).
SLOTS_B = (0, 1, 2, None, 3, 4, 5, 6, 7, 8, 9)


def model_steps(layers: int) -> tuple[list[Kernel], list[Kernel]]:
    """A's and B's step: an embedding kernel, ``layers`` layers, a final norm and the head's GEMM."""
    def step(layer: tuple[str, ...], slots) -> list[Kernel]:
        names = [("embedding_kernel", 0)]
        names += [(n, 100 * (i + 1) + (50 + s if slot is None else slot))
                  for i in range(layers) for s, (n, slot) in enumerate(zip(layer, slots))]
        names += [("nvf::nvfuser_inner_persistent_f9_c1_r0_g0", 100 * (layers + 1)),
                  ("nvjet_gemm_lm_head", 100 * (layers + 1) + 1)]
        return [Kernel(n, 1000 * t, 500 + t % 7, correlation_id=c) for t, (n, c) in enumerate(names)]

    return step(LAYER_A, range(len(LAYER_A))), step(LAYER_B, SLOTS_B)
