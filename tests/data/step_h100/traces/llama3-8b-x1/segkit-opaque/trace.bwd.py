# Constructed by Delete Last Used (took 4 milliseconds)
import torch
from thunder.executors.torchex import no_autocast

@torch.no_grad()
@no_autocast
def backward_fn(saved_for_backward, cotangents):
  # saved_for_backward: "Collection"
  # cotangents: "Collection"
  C0, C1, = saved_for_backward
  # C0: "Collection"
  # C1: "Collection"
  clear_mutable_collection(saved_for_backward)
  clear_mutable_collection(C1)
  del C1, saved_for_backward
  t536, = cotangents
  # t536: "cuda:0 f32[]"
  clear_mutable_collection(cotangents)
  del cotangents
  t511, t508, t500, t504, t_norm_weight, t_blocks_0_mlp_proj_weight, t480, t578, \
  t579, t_blocks_0_mlp_fc_2_weight, t406, t_blocks_0_mlp_fc_1_weight, t403, t407, \
  t, t_blocks_0_attn_proj_weight, t606, t331, t354, t369, t374, t372, t373, t375, \
  t602, t603, t_blocks_0_attn_qkv_weight, t223, x, t224, weight, = C0
  # t511: "cuda:0 f32[1, 4096, 4096]"
  # t508: "cuda:0 f32[1, 4096, 4096]"
  # t500: "cuda:0 bf16[1, 4096, 4096]"
  # t504: "cuda:0 f32[1, 4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"
  # t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
  # t480: "cuda:0 bf16[1, 4096, 14336]"
  # t578: "cuda:0 bf16[1, 4096, 14336]"
  # t579: "cuda:0 bf16[1, 4096, 14336]"
  # t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
  # t406: "cuda:0 bf16[1, 4096, 4096]"
  # t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
  # t403: "cuda:0 bf16[1, 4096, 4096]"
  # t407: "cuda:0 f32[1, 4096]"
  # t: "cuda:0 bf16[4096]"
  # t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
  # t606: "cuda:0 bf16[1, 4096, 4096]"
  # t331: "cuda:0 bf16[1, 32, 4096, 128]"
  # t354: "cuda:0 bf16[1, 32, 4096, 128]"
  # t369: "cuda:0 bf16[1, 32, 4096, 128]"
  # t374: "cuda:0 bf16[1, 32, 4096, 128]"
  # t372: "cuda:0 f32[1, 32, 4096, 1]"
  # t373: "cuda:0 i64[]"
  # t375: "cuda:0 i64[]"
  # t602: "cuda:0 f32[1, 1, 4096, 128]"
  # t603: "cuda:0 f32[1, 1, 4096, 128]"
  # t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
  # t223: "cuda:0 bf16[1, 4096, 4096]"
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # t224: "cuda:0 f32[1, 4096]"
  # weight: "cuda:0 bf16[4096]"
  clear_mutable_collection(C0)
  del C0
  [t517, t520] = nvFusion6(t536, t511, t508)
    # t530 = prims.div(t536, 16777216.0)  # t530: "cuda:0 f32[]"
    # t526 = prims.broadcast_in_dim(t530, [1, 1, 1], [])  # t526: "cuda:0 f32[1, 1, 1]"
    # t527 = prims.broadcast_in_dim(t526, (1, 4096, 4096), (0, 1, 2))  # t527: "cuda:0 f32[1, 4096, 4096]"
    # t516 = prims.cos(t511)  # t516: "cuda:0 f32[1, 4096, 4096]"
    # t521 = prims.mul(t508, t527)  # t521: "cuda:0 f32[1, 4096, 4096]"
    # t514 = prims.sin(t511)  # t514: "cuda:0 f32[1, 4096, 4096]"
    # t517 = prims.mul(t521, t516)  # t517: "cuda:0 f32[1, 4096, 4096]"
    # t520 = prims.mul(t514, t527)  # t520: "cuda:0 f32[1, 4096, 4096]"
  del t536, t511
  (t607,) = detach_vjp(((t508,), {}), t517)
  del t508, t517
  [t510] = nvFusion7(t520, t607)
    # t537 = prims.add(t520, t607)  # t537: "cuda:0 f32[1, 4096, 4096]"
    # t510 = prims.convert_element_type(t537, dtypes.bfloat16)  # t510: "cuda:0 bf16[1, 4096, 4096]"
  del t520, t607
  (t506, t507) = segkit_rms_norm_bwd(t510, t500, t504, t_norm_weight, 1e-05, False, 'outputs', False)
  del t510, t500, t504, t_norm_weight
  [t506, t485] = nvFusion8(t506)
    # t485 = prims.reshape(t506, (4096, 4096))  # t485: "cuda:0 bf16[4096, 4096]"
  t582 = torch.matmul(t485, t_blocks_0_mlp_proj_weight)  # t582: "cuda:0 bf16[4096, 14336]"
    # t582 = ltorch.matmul(t485, t_blocks_0_mlp_proj_weight)  # t582: "cuda:0 bf16[4096, 14336]"
      # t582 = prims.matmul(t485, t_blocks_0_mlp_proj_weight)  # t582: "cuda:0 bf16[4096, 14336]"
  del t485, t_blocks_0_mlp_proj_weight
  t608 = torch.reshape(t582, (1, 4096, 14336))  # t608: "cuda:0 bf16[1, 4096, 14336]"
    # t608 = ltorch.reshape(t582, (1, 4096, 14336))  # t608: "cuda:0 bf16[1, 4096, 14336]"
      # t608 = prims.reshape(t582, (1, 4096, 14336))  # t608: "cuda:0 bf16[1, 4096, 14336]"
  del t582
  t609 = torch.reshape(t506, (-1, 4096))  # t609: "cuda:0 bf16[4096, 4096]"
    # t609 = ltorch.reshape(t506, (-1, 4096))  # t609: "cuda:0 bf16[4096, 4096]"
      # t609 = prims.reshape(t506, (4096, 4096))  # t609: "cuda:0 bf16[4096, 4096]"
  t610 = torch.permute(t609, (1, 0))  # t610: "cuda:0 bf16[4096, 4096]"
    # t610 = ltorch.permute(t609, (1, 0))  # t610: "cuda:0 bf16[4096, 4096]"
      # t610 = prims.transpose(t609, (1, 0))  # t610: "cuda:0 bf16[4096, 4096]"
  del t609
  t611 = torch.reshape(t480, (-1, 14336))  # t611: "cuda:0 bf16[4096, 14336]"
    # t611 = ltorch.reshape(t480, (-1, 14336))  # t611: "cuda:0 bf16[4096, 14336]"
      # t611 = prims.reshape(t480, (4096, 14336))  # t611: "cuda:0 bf16[4096, 14336]"
  del t480
  t583 = torch.matmul(t610, t611)  # t583: "cuda:0 bf16[4096, 14336]"
    # t583 = ltorch.matmul(t610, t611)  # t583: "cuda:0 bf16[4096, 14336]"
      # t583 = prims.matmul(t610, t611)  # t583: "cuda:0 bf16[4096, 14336]"
  del t610, t611
  [t475, t469, t422] = nvFusion9(t578, t608, t579)
    # t440 = prims.convert_element_type(t578, dtypes.float32)  # t440: "cuda:0 f32[1, 4096, 14336]"
    # t441 = prims.neg(t440)  # t441: "cuda:0 f32[1, 4096, 14336]"
    # t444 = prims.exp(t441)  # t444: "cuda:0 f32[1, 4096, 14336]"
    # t447 = prims.add(1.0, t444)  # t447: "cuda:0 f32[1, 4096, 14336]"
    # t450 = prims.div(1.0, t447)  # t450: "cuda:0 f32[1, 4096, 14336]"
    # t431 = prims.exp(t441)  # t431: "cuda:0 f32[1, 4096, 14336]"
    # t457 = prims.sub(1.0, t450)  # t457: "cuda:0 f32[1, 4096, 14336]"
    # t432 = prims.add(1.0, t431)  # t432: "cuda:0 f32[1, 4096, 14336]"
    # t433 = prims.reciprocal(t432)  # t433: "cuda:0 f32[1, 4096, 14336]"
    # t482 = prims.convert_element_type(t608, dtypes.float32)  # t482: "cuda:0 f32[1, 4096, 14336]"
    # t473 = prims.convert_element_type(t579, dtypes.float32)  # t473: "cuda:0 f32[1, 4096, 14336]"
    # t461 = prims.mul(t440, t457)  # t461: "cuda:0 f32[1, 4096, 14336]"
    # t478 = prims.mul(t473, t482)  # t478: "cuda:0 f32[1, 4096, 14336]"
    # t437 = prims.mul(t440, t433)  # t437: "cuda:0 f32[1, 4096, 14336]"
    # t464 = prims.add(1.0, t461)  # t464: "cuda:0 f32[1, 4096, 14336]"
    # t454 = prims.mul(t478, t450)  # t454: "cuda:0 f32[1, 4096, 14336]"
    # t479 = prims.mul(t437, t482)  # t479: "cuda:0 f32[1, 4096, 14336]"
    # t475 = prims.convert_element_type(t479, dtypes.bfloat16)  # t475: "cuda:0 bf16[1, 4096, 14336]"
    # t468 = prims.mul(t454, t464)  # t468: "cuda:0 f32[1, 4096, 14336]"
    # t422 = prims.reshape(t475, (4096, 14336))  # t422: "cuda:0 bf16[4096, 14336]"
    # t469 = prims.convert_element_type(t468, dtypes.bfloat16)  # t469: "cuda:0 bf16[1, 4096, 14336]"
  del t578, t608, t579
  t584 = torch.matmul(t422, t_blocks_0_mlp_fc_2_weight)  # t584: "cuda:0 bf16[4096, 4096]"
    # t584 = ltorch.matmul(t422, t_blocks_0_mlp_fc_2_weight)  # t584: "cuda:0 bf16[4096, 4096]"
      # t584 = prims.matmul(t422, t_blocks_0_mlp_fc_2_weight)  # t584: "cuda:0 bf16[4096, 4096]"
  del t422, t_blocks_0_mlp_fc_2_weight
  t612 = torch.reshape(t584, (1, 4096, 4096))  # t612: "cuda:0 bf16[1, 4096, 4096]"
    # t612 = ltorch.reshape(t584, (1, 4096, 4096))  # t612: "cuda:0 bf16[1, 4096, 4096]"
      # t612 = prims.reshape(t584, (1, 4096, 4096))  # t612: "cuda:0 bf16[1, 4096, 4096]"
  del t584
  t613 = torch.reshape(t475, (-1, 14336))  # t613: "cuda:0 bf16[4096, 14336]"
    # t613 = ltorch.reshape(t475, (-1, 14336))  # t613: "cuda:0 bf16[4096, 14336]"
      # t613 = prims.reshape(t475, (4096, 14336))  # t613: "cuda:0 bf16[4096, 14336]"
  del t475
  t614 = torch.permute(t613, (1, 0))  # t614: "cuda:0 bf16[14336, 4096]"
    # t614 = ltorch.permute(t613, (1, 0))  # t614: "cuda:0 bf16[14336, 4096]"
      # t614 = prims.transpose(t613, (1, 0))  # t614: "cuda:0 bf16[14336, 4096]"
  del t613
  t615 = torch.reshape(t406, (-1, 4096))  # t615: "cuda:0 bf16[4096, 4096]"
    # t615 = ltorch.reshape(t406, (-1, 4096))  # t615: "cuda:0 bf16[4096, 4096]"
      # t615 = prims.reshape(t406, (4096, 4096))  # t615: "cuda:0 bf16[4096, 4096]"
  del t406
  t585 = torch.matmul(t614, t615)  # t585: "cuda:0 bf16[14336, 4096]"
    # t585 = ltorch.matmul(t614, t615)  # t585: "cuda:0 bf16[14336, 4096]"
      # t585 = prims.matmul(t614, t615)  # t585: "cuda:0 bf16[14336, 4096]"
  del t614
  t616 = torch.reshape(t469, (-1, 14336))  # t616: "cuda:0 bf16[4096, 14336]"
    # t616 = ltorch.reshape(t469, (-1, 14336))  # t616: "cuda:0 bf16[4096, 14336]"
      # t616 = prims.reshape(t469, (4096, 14336))  # t616: "cuda:0 bf16[4096, 14336]"
  del t469
  t586 = torch.matmul(t616, t_blocks_0_mlp_fc_1_weight)  # t586: "cuda:0 bf16[4096, 4096]"
    # t586 = ltorch.matmul(t616, t_blocks_0_mlp_fc_1_weight)  # t586: "cuda:0 bf16[4096, 4096]"
      # t586 = prims.matmul(t616, t_blocks_0_mlp_fc_1_weight)  # t586: "cuda:0 bf16[4096, 4096]"
  del t_blocks_0_mlp_fc_1_weight
  t617 = torch.reshape(t586, (1, 4096, 4096))  # t617: "cuda:0 bf16[1, 4096, 4096]"
    # t617 = ltorch.reshape(t586, (1, 4096, 4096))  # t617: "cuda:0 bf16[1, 4096, 4096]"
      # t617 = prims.reshape(t586, (1, 4096, 4096))  # t617: "cuda:0 bf16[1, 4096, 4096]"
  del t586
  t618 = torch.permute(t616, (1, 0))  # t618: "cuda:0 bf16[14336, 4096]"
    # t618 = ltorch.permute(t616, (1, 0))  # t618: "cuda:0 bf16[14336, 4096]"
      # t618 = prims.transpose(t616, (1, 0))  # t618: "cuda:0 bf16[14336, 4096]"
  del t616
  t587 = torch.matmul(t618, t615)  # t587: "cuda:0 bf16[14336, 4096]"
    # t587 = ltorch.matmul(t618, t615)  # t587: "cuda:0 bf16[14336, 4096]"
      # t587 = prims.matmul(t618, t615)  # t587: "cuda:0 bf16[14336, 4096]"
  del t618, t615
  [t541] = nvFusion10(t612, t617)
    # t538 = prims.convert_element_type(t612, dtypes.float32)  # t538: "cuda:0 f32[1, 4096, 4096]"
    # t539 = prims.convert_element_type(t617, dtypes.float32)  # t539: "cuda:0 f32[1, 4096, 4096]"
    # t540 = prims.add(t538, t539)  # t540: "cuda:0 f32[1, 4096, 4096]"
    # t541 = prims.convert_element_type(t540, dtypes.bfloat16)  # t541: "cuda:0 bf16[1, 4096, 4096]"
  del t612, t617
  (t409, t410) = segkit_rms_norm_bwd(t541, t403, t407, t, 1e-05, False, 'outputs', False)
  del t541, t403, t407, t
  [t397, t388] = nvFusion11(t506, t409)
    # t543 = prims.convert_element_type(t409, dtypes.float32)  # t543: "cuda:0 f32[1, 4096, 4096]"
    # t542 = prims.convert_element_type(t506, dtypes.float32)  # t542: "cuda:0 f32[1, 4096, 4096]"
    # t544 = prims.add(t542, t543)  # t544: "cuda:0 f32[1, 4096, 4096]"
    # t397 = prims.convert_element_type(t544, dtypes.bfloat16)  # t397: "cuda:0 bf16[1, 4096, 4096]"
    # t388 = prims.reshape(t397, (4096, 4096))  # t388: "cuda:0 bf16[4096, 4096]"
  del t506, t409
  t588 = torch.matmul(t388, t_blocks_0_attn_proj_weight)  # t588: "cuda:0 bf16[4096, 4096]"
    # t588 = ltorch.matmul(t388, t_blocks_0_attn_proj_weight)  # t588: "cuda:0 bf16[4096, 4096]"
      # t588 = prims.matmul(t388, t_blocks_0_attn_proj_weight)  # t588: "cuda:0 bf16[4096, 4096]"
  del t388, t_blocks_0_attn_proj_weight
  t619 = torch.reshape(t588, (1, 4096, 4096))  # t619: "cuda:0 bf16[1, 4096, 4096]"
    # t619 = ltorch.reshape(t588, (1, 4096, 4096))  # t619: "cuda:0 bf16[1, 4096, 4096]"
      # t619 = prims.reshape(t588, (1, 4096, 4096))  # t619: "cuda:0 bf16[1, 4096, 4096]"
  del t588
  t620 = torch.reshape(t397, (-1, 4096))  # t620: "cuda:0 bf16[4096, 4096]"
    # t620 = ltorch.reshape(t397, (-1, 4096))  # t620: "cuda:0 bf16[4096, 4096]"
      # t620 = prims.reshape(t397, (4096, 4096))  # t620: "cuda:0 bf16[4096, 4096]"
  t621 = torch.permute(t620, (1, 0))  # t621: "cuda:0 bf16[4096, 4096]"
    # t621 = ltorch.permute(t620, (1, 0))  # t621: "cuda:0 bf16[4096, 4096]"
      # t621 = prims.transpose(t620, (1, 0))  # t621: "cuda:0 bf16[4096, 4096]"
  del t620
  t622 = torch.reshape(t606, (-1, 4096))  # t622: "cuda:0 bf16[4096, 4096]"
    # t622 = ltorch.reshape(t606, (-1, 4096))  # t622: "cuda:0 bf16[4096, 4096]"
      # t622 = prims.reshape(t606, (4096, 4096))  # t622: "cuda:0 bf16[4096, 4096]"
  del t606
  t589 = torch.matmul(t621, t622)  # t589: "cuda:0 bf16[4096, 4096]"
    # t589 = ltorch.matmul(t621, t622)  # t589: "cuda:0 bf16[4096, 4096]"
      # t589 = prims.matmul(t621, t622)  # t589: "cuda:0 bf16[4096, 4096]"
  del t621, t622
  t623 = torch_prims_reshape_impl(t619, (1, 4096, 32, 128))  # t623: "cuda:0 bf16[1, 4096, 32, 128]"
  del t619
  t624 = torch.permute(t623, (0, 2, 1, 3))  # t624: "cuda:0 bf16[1, 32, 4096, 128]"
    # t624 = ltorch.permute(t623, (0, 2, 1, 3))  # t624: "cuda:0 bf16[1, 32, 4096, 128]"
      # t624 = prims.transpose(t623, (0, 2, 1, 3))  # t624: "cuda:0 bf16[1, 32, 4096, 128]"
  del t623
  (t377, t378, t379) = segkit_cudnn_sdpa_bwd(t624, t331, t354, t369, t374, t372, t373, t375, True, 0.08838834764831843)
  del t624, t331, t354, t369, t374, t372, t373, t375
  [t362, t340, t337, t333] = nvFusion12(t379, t378, t377)
    # t371 = prims.reshape(t379, (1, 8, 4, 4096, 128))  # t371: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t365 = prims.convert_element_type(t371, dtypes.float32)  # t365: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t366 = prims.sum(t365, (0, 2))  # t366: "cuda:0 f32[8, 4096, 128]"
    # t367 = prims.convert_element_type(t366, dtypes.bfloat16)  # t367: "cuda:0 bf16[8, 4096, 128]"
    # t368 = prims.broadcast_in_dim(t367, [1, 8, 1, 4096, 128], [1, 3, 4])  # t368: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t359 = prims.convert_element_type(t368, dtypes.float32)  # t359: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t360 = prims.sum(t359, (0, 2))  # t360: "cuda:0 f32[8, 4096, 128]"
    # t361 = prims.convert_element_type(t360, dtypes.bfloat16)  # t361: "cuda:0 bf16[8, 4096, 128]"
    # t362 = prims.broadcast_in_dim(t361, [1, 8, 4096, 128], [1, 2, 3])  # t362: "cuda:0 bf16[1, 8, 4096, 128]"
    # t356 = prims.reshape(t378, (1, 8, 4, 4096, 128))  # t356: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t350 = prims.convert_element_type(t356, dtypes.float32)  # t350: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t351 = prims.sum(t350, (0, 2))  # t351: "cuda:0 f32[8, 4096, 128]"
    # t352 = prims.convert_element_type(t351, dtypes.bfloat16)  # t352: "cuda:0 bf16[8, 4096, 128]"
    # t353 = prims.broadcast_in_dim(t352, [1, 8, 1, 4096, 128], [1, 3, 4])  # t353: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t344 = prims.convert_element_type(t353, dtypes.float32)  # t344: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t345 = prims.sum(t344, (0, 2))  # t345: "cuda:0 f32[8, 4096, 128]"
    # t346 = prims.convert_element_type(t345, dtypes.bfloat16)  # t346: "cuda:0 bf16[8, 4096, 128]"
    # t347 = prims.broadcast_in_dim(t346, [1, 8, 4096, 128], [1, 2, 3])  # t347: "cuda:0 bf16[1, 8, 4096, 128]"
    # t340 = prims.slice_prim(t347, [0, 0, 0, 0], [1, 8, 4096, 128], [1, 1, 1, 1])  # t340: "cuda:0 bf16[1, 8, 4096, 128]"
    # t341 = prims.full((1, 8, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t341: "cuda:0 bf16[1, 8, 4096, 0]"
    # t337 = prims.pad(t341, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t337: "cuda:0 bf16[1, 8, 4096, 128]"
    # t333 = prims.slice_prim(t377, [0, 0, 0, 0], [1, 32, 4096, 128], [1, 1, 1, 1])  # t333: "cuda:0 bf16[1, 32, 4096, 128]"
  del t379, t378, t377
  t305 = segkit_rope_bwd(t340, t602, t603, torch.bfloat16, 'outputs', False)  # t305: "cuda:0 bf16[1, 8, 4096, 128]"
  del t340
  [t549] = nvFusion13(t337, t305)
    # t546 = prims.convert_element_type(t337, dtypes.float32)  # t546: "cuda:0 f32[1, 8, 4096, 128]"
    # t547 = prims.convert_element_type(t305, dtypes.float32)  # t547: "cuda:0 f32[1, 8, 4096, 128]"
    # t548 = prims.add(t546, t547)  # t548: "cuda:0 f32[1, 8, 4096, 128]"
    # t549 = prims.convert_element_type(t548, dtypes.bfloat16)  # t549: "cuda:0 bf16[1, 8, 4096, 128]"
  del t337, t305
  t272 = segkit_rope_bwd(t333, t602, t603, torch.bfloat16, 'outputs', False)  # t272: "cuda:0 bf16[1, 32, 4096, 128]"
  del t333, t602, t603
  [t243, t230] = nvFusion14(t272, t362, t549)
    # t334 = prims.full((1, 32, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t334: "cuda:0 bf16[1, 32, 4096, 0]"
    # t330 = prims.pad(t334, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t330: "cuda:0 bf16[1, 32, 4096, 128]"
    # t553 = prims.convert_element_type(t272, dtypes.float32)  # t553: "cuda:0 f32[1, 32, 4096, 128]"
    # t552 = prims.convert_element_type(t330, dtypes.float32)  # t552: "cuda:0 f32[1, 32, 4096, 128]"
    # t554 = prims.add(t552, t553)  # t554: "cuda:0 f32[1, 32, 4096, 128]"
    # t555 = prims.convert_element_type(t554, dtypes.bfloat16)  # t555: "cuda:0 bf16[1, 32, 4096, 128]"
    # t261 = prims.transpose(t362, (0, 2, 1, 3))  # t261: "cuda:0 bf16[1, 4096, 8, 128]"
    # t258 = prims.transpose(t549, (0, 2, 1, 3))  # t258: "cuda:0 bf16[1, 4096, 8, 128]"
    # t255 = prims.transpose(t555, (0, 2, 1, 3))  # t255: "cuda:0 bf16[1, 4096, 32, 128]"
    # t252 = prims.reshape(t261, (1, 4096, 1024))  # t252: "cuda:0 bf16[1, 4096, 1024]"
    # t249 = prims.reshape(t258, (1, 4096, 1024))  # t249: "cuda:0 bf16[1, 4096, 1024]"
    # t246 = prims.reshape(t255, (1, 4096, 4096))  # t246: "cuda:0 bf16[1, 4096, 4096]"
    # t243 = prims.cat([t246, t249, t252], -1)  # t243: "cuda:0 bf16[1, 4096, 6144]"
    # t230 = prims.reshape(t243, (4096, 6144))  # t230: "cuda:0 bf16[4096, 6144]"
  del t272, t362, t549
  t590 = torch.matmul(t230, t_blocks_0_attn_qkv_weight)  # t590: "cuda:0 bf16[4096, 4096]"
    # t590 = ltorch.matmul(t230, t_blocks_0_attn_qkv_weight)  # t590: "cuda:0 bf16[4096, 4096]"
      # t590 = prims.matmul(t230, t_blocks_0_attn_qkv_weight)  # t590: "cuda:0 bf16[4096, 4096]"
  del t230, t_blocks_0_attn_qkv_weight
  t625 = torch.reshape(t590, (1, 4096, 4096))  # t625: "cuda:0 bf16[1, 4096, 4096]"
    # t625 = ltorch.reshape(t590, (1, 4096, 4096))  # t625: "cuda:0 bf16[1, 4096, 4096]"
      # t625 = prims.reshape(t590, (1, 4096, 4096))  # t625: "cuda:0 bf16[1, 4096, 4096]"
  del t590
  t626 = torch.reshape(t243, (-1, 6144))  # t626: "cuda:0 bf16[4096, 6144]"
    # t626 = ltorch.reshape(t243, (-1, 6144))  # t626: "cuda:0 bf16[4096, 6144]"
      # t626 = prims.reshape(t243, (4096, 6144))  # t626: "cuda:0 bf16[4096, 6144]"
  del t243
  t627 = torch.permute(t626, (1, 0))  # t627: "cuda:0 bf16[6144, 4096]"
    # t627 = ltorch.permute(t626, (1, 0))  # t627: "cuda:0 bf16[6144, 4096]"
      # t627 = prims.transpose(t626, (1, 0))  # t627: "cuda:0 bf16[6144, 4096]"
  del t626
  t628 = torch.reshape(t223, (-1, 4096))  # t628: "cuda:0 bf16[4096, 4096]"
    # t628 = ltorch.reshape(t223, (-1, 4096))  # t628: "cuda:0 bf16[4096, 4096]"
      # t628 = prims.reshape(t223, (4096, 4096))  # t628: "cuda:0 bf16[4096, 4096]"
  del t223
  t591 = torch.matmul(t627, t628)  # t591: "cuda:0 bf16[6144, 4096]"
    # t591 = ltorch.matmul(t627, t628)  # t591: "cuda:0 bf16[6144, 4096]"
      # t591 = prims.matmul(t627, t628)  # t591: "cuda:0 bf16[6144, 4096]"
  del t627, t628
  (t226, t227) = segkit_rms_norm_bwd(t625, x, t224, weight, 1e-05, False, 'outputs', False)
  del t625, x, t224, weight
  [t559] = nvFusion15(t397, t226)
    # t556 = prims.convert_element_type(t397, dtypes.float32)  # t556: "cuda:0 f32[1, 4096, 4096]"
    # t557 = prims.convert_element_type(t226, dtypes.float32)  # t557: "cuda:0 f32[1, 4096, 4096]"
    # t558 = prims.add(t556, t557)  # t558: "cuda:0 f32[1, 4096, 4096]"
    # t559 = prims.convert_element_type(t558, dtypes.bfloat16)  # t559: "cuda:0 bf16[1, 4096, 4096]"
  del t397, t226
  return (t559, None, None, t589, t591, t587, t585, t583, t227, t410, t507)
# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)
# t536: "cuda:0 f32[]"
# t511: "cuda:0 f32[1, 4096, 4096]"
# t508: "cuda:0 f32[1, 4096, 4096]"
# t500: "cuda:0 bf16[1, 4096, 4096]"
# t504: "cuda:0 f32[1, 4096]"
# t_norm_weight: "cuda:0 bf16[4096]"
# t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
# t480: "cuda:0 bf16[1, 4096, 14336]"
# t578: "cuda:0 bf16[1, 4096, 14336]"
# t579: "cuda:0 bf16[1, 4096, 14336]"
# t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
# t406: "cuda:0 bf16[1, 4096, 4096]"
# t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
# t403: "cuda:0 bf16[1, 4096, 4096]"
# t407: "cuda:0 f32[1, 4096]"
# t: "cuda:0 bf16[4096]"
# t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
# t606: "cuda:0 bf16[1, 4096, 4096]"
# t331: "cuda:0 bf16[1, 32, 4096, 128]"
# t354: "cuda:0 bf16[1, 32, 4096, 128]"
# t369: "cuda:0 bf16[1, 32, 4096, 128]"
# t374: "cuda:0 bf16[1, 32, 4096, 128]"
# t372: "cuda:0 f32[1, 32, 4096, 1]"
# t373: "cuda:0 i64[]"
# t375: "cuda:0 i64[]"
# t602: "cuda:0 f32[1, 1, 4096, 128]"
# t603: "cuda:0 f32[1, 1, 4096, 128]"
# t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
# t223: "cuda:0 bf16[1, 4096, 4096]"
# x: "cuda:0 bf16[1, 4096, 4096]"
# t224: "cuda:0 f32[1, 4096]"
# weight: "cuda:0 bf16[4096]"
# t517: "cuda:0 f32[1, 4096, 4096]"
# t520: "cuda:0 f32[1, 4096, 4096]"
# t607: "cuda:0 f32[1, 4096, 4096]"
# t510: "cuda:0 bf16[1, 4096, 4096]"
# t506: "cuda:0 bf16[1, 4096, 4096]"
# t507: "cuda:0 bf16[4096]"
# t485: "cuda:0 bf16[4096, 4096]"
# t582: "cuda:0 bf16[4096, 14336]"
# t608: "cuda:0 bf16[1, 4096, 14336]"
# t609: "cuda:0 bf16[4096, 4096]"
# t610: "cuda:0 bf16[4096, 4096]"
# t611: "cuda:0 bf16[4096, 14336]"
# t583: "cuda:0 bf16[4096, 14336]"
# t475: "cuda:0 bf16[1, 4096, 14336]"
# t469: "cuda:0 bf16[1, 4096, 14336]"
# t422: "cuda:0 bf16[4096, 14336]"
# t584: "cuda:0 bf16[4096, 4096]"
# t612: "cuda:0 bf16[1, 4096, 4096]"
# t613: "cuda:0 bf16[4096, 14336]"
# t614: "cuda:0 bf16[14336, 4096]"
# t615: "cuda:0 bf16[4096, 4096]"
# t585: "cuda:0 bf16[14336, 4096]"
# t616: "cuda:0 bf16[4096, 14336]"
# t586: "cuda:0 bf16[4096, 4096]"
# t617: "cuda:0 bf16[1, 4096, 4096]"
# t618: "cuda:0 bf16[14336, 4096]"
# t587: "cuda:0 bf16[14336, 4096]"
# t541: "cuda:0 bf16[1, 4096, 4096]"
# t409: "cuda:0 bf16[1, 4096, 4096]"
# t410: "cuda:0 bf16[4096]"
# t397: "cuda:0 bf16[1, 4096, 4096]"
# t388: "cuda:0 bf16[4096, 4096]"
# t588: "cuda:0 bf16[4096, 4096]"
# t619: "cuda:0 bf16[1, 4096, 4096]"
# t620: "cuda:0 bf16[4096, 4096]"
# t621: "cuda:0 bf16[4096, 4096]"
# t622: "cuda:0 bf16[4096, 4096]"
# t589: "cuda:0 bf16[4096, 4096]"
# t623: "cuda:0 bf16[1, 4096, 32, 128]"
# t624: "cuda:0 bf16[1, 32, 4096, 128]"
# t377: "cuda:0 bf16[1, 32, 4096, 128]"
# t378: "cuda:0 bf16[1, 32, 4096, 128]"
# t379: "cuda:0 bf16[1, 32, 4096, 128]"
# t362: "cuda:0 bf16[1, 8, 4096, 128]"
# t340: "cuda:0 bf16[1, 8, 4096, 128]"
# t337: "cuda:0 bf16[1, 8, 4096, 128]"
# t333: "cuda:0 bf16[1, 32, 4096, 128]"
# t305: "cuda:0 bf16[1, 8, 4096, 128]"
# t549: "cuda:0 bf16[1, 8, 4096, 128]"
# t272: "cuda:0 bf16[1, 32, 4096, 128]"
# t243: "cuda:0 bf16[1, 4096, 6144]"
# t230: "cuda:0 bf16[4096, 6144]"
# t590: "cuda:0 bf16[4096, 4096]"
# t625: "cuda:0 bf16[1, 4096, 4096]"
# t626: "cuda:0 bf16[4096, 6144]"
# t627: "cuda:0 bf16[6144, 4096]"
# t628: "cuda:0 bf16[4096, 4096]"
# t591: "cuda:0 bf16[6144, 4096]"
# t226: "cuda:0 bf16[1, 4096, 4096]"
# t227: "cuda:0 bf16[4096]"
# t559: "cuda:0 bf16[1, 4096, 4096]"
