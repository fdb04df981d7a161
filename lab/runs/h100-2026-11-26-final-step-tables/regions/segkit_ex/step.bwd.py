# Constructed by Delete Last Used (took 2 milliseconds)
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
  t528, = cotangents
  # t528: "cuda:0 f32[]"
  clear_mutable_collection(cotangents)
  del cotangents
  t502, t499, t503, t_norm_weight, t_blocks_0_mlp_proj_weight, t479, t568, t569, \
  t_blocks_0_mlp_fc_2_weight, t405, t_blocks_0_mlp_fc_1_weight, t402, t406, t, \
  t_blocks_0_attn_proj_weight, t595, t370, t352, t367, t373, t371, t372, t374, \
  t591, t592, t_blocks_0_attn_qkv_weight, t221, x, t222, weight, = C0
  # t502: "cuda:0 bf16[1, 4096, 4096]"
  # t499: "cuda:0 bf16[1, 4096, 4096]"
  # t503: "cuda:0 f32[1, 4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"
  # t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
  # t479: "cuda:0 bf16[1, 4096, 14336]"
  # t568: "cuda:0 bf16[1, 4096, 14336]"
  # t569: "cuda:0 bf16[1, 4096, 14336]"
  # t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
  # t405: "cuda:0 bf16[1, 4096, 4096]"
  # t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
  # t402: "cuda:0 bf16[1, 4096, 4096]"
  # t406: "cuda:0 f32[1, 4096]"
  # t: "cuda:0 bf16[4096]"
  # t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
  # t595: "cuda:0 bf16[1, 4096, 4096]"
  # t370: "cuda:0 bf16[1, 32, 4096, 128]"
  # t352: "cuda:0 bf16[1, 32, 4096, 128]"
  # t367: "cuda:0 bf16[1, 32, 4096, 128]"
  # t373: "cuda:0 bf16[1, 32, 4096, 128]"
  # t371: "cuda:0 f32[1, 32, 4096, 1]"
  # t372: "cuda:0 i64[]"
  # t374: "cuda:0 i64[]"
  # t591: "cuda:0 f32[1, 1, 4096, 128]"
  # t592: "cuda:0 f32[1, 1, 4096, 128]"
  # t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
  # t221: "cuda:0 bf16[1, 4096, 4096]"
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # t222: "cuda:0 f32[1, 4096]"
  # weight: "cuda:0 bf16[4096]"
  clear_mutable_collection(C0)
  del C0
  [t509] = nvFusion5(t528, t502)
    # t522 = prims.div(t528, 16777216.0)  # t522: "cuda:0 f32[]"
    # t507 = prims.convert_element_type(t502, dtypes.float32)  # t507: "cuda:0 f32[1, 4096, 4096]"
    # t518 = prims.broadcast_in_dim(t522, [1, 1, 1], [])  # t518: "cuda:0 f32[1, 1, 1]"
    # t512 = prims.cos(t507)  # t512: "cuda:0 f32[1, 4096, 4096]"
    # t519 = prims.broadcast_in_dim(t518, (1, 4096, 4096), (0, 1, 2))  # t519: "cuda:0 f32[1, 4096, 4096]"
    # t513 = prims.mul(t519, t512)  # t513: "cuda:0 f32[1, 4096, 4096]"
    # t509 = prims.convert_element_type(t513, dtypes.bfloat16)  # t509: "cuda:0 bf16[1, 4096, 4096]"
  del t528, t502
  (t505, t506) = segkit_rms_norm_bwd(t509, t499, t503, t_norm_weight, 1e-05, False, 'outputs', False)
  del t509, t499, t503, t_norm_weight
  [t505, t484] = nvFusion6(t505)
    # t484 = prims.reshape(t505, (4096, 4096))  # t484: "cuda:0 bf16[4096, 4096]"
  t571 = torch.matmul(t484, t_blocks_0_mlp_proj_weight)  # t571: "cuda:0 bf16[4096, 14336]"
    # t571 = ltorch.matmul(t484, t_blocks_0_mlp_proj_weight)  # t571: "cuda:0 bf16[4096, 14336]"
      # t571 = prims.matmul(t484, t_blocks_0_mlp_proj_weight)  # t571: "cuda:0 bf16[4096, 14336]"
  del t484, t_blocks_0_mlp_proj_weight
  t596 = torch.reshape(t571, (1, 4096, 14336))  # t596: "cuda:0 bf16[1, 4096, 14336]"
    # t596 = ltorch.reshape(t571, (1, 4096, 14336))  # t596: "cuda:0 bf16[1, 4096, 14336]"
      # t596 = prims.reshape(t571, (1, 4096, 14336))  # t596: "cuda:0 bf16[1, 4096, 14336]"
  del t571
  t597 = torch.reshape(t505, (-1, 4096))  # t597: "cuda:0 bf16[4096, 4096]"
    # t597 = ltorch.reshape(t505, (-1, 4096))  # t597: "cuda:0 bf16[4096, 4096]"
      # t597 = prims.reshape(t505, (4096, 4096))  # t597: "cuda:0 bf16[4096, 4096]"
  t598 = torch.permute(t597, (1, 0))  # t598: "cuda:0 bf16[4096, 4096]"
    # t598 = ltorch.permute(t597, (1, 0))  # t598: "cuda:0 bf16[4096, 4096]"
      # t598 = prims.transpose(t597, (1, 0))  # t598: "cuda:0 bf16[4096, 4096]"
  del t597
  t599 = torch.reshape(t479, (-1, 14336))  # t599: "cuda:0 bf16[4096, 14336]"
    # t599 = ltorch.reshape(t479, (-1, 14336))  # t599: "cuda:0 bf16[4096, 14336]"
      # t599 = prims.reshape(t479, (4096, 14336))  # t599: "cuda:0 bf16[4096, 14336]"
  del t479
  t572 = torch.matmul(t598, t599)  # t572: "cuda:0 bf16[4096, 14336]"
    # t572 = ltorch.matmul(t598, t599)  # t572: "cuda:0 bf16[4096, 14336]"
      # t572 = prims.matmul(t598, t599)  # t572: "cuda:0 bf16[4096, 14336]"
  del t598, t599
  [t474, t468, t421] = nvFusion7(t568, t596, t569)
    # t439 = prims.convert_element_type(t568, dtypes.float32)  # t439: "cuda:0 f32[1, 4096, 14336]"
    # t440 = prims.neg(t439)  # t440: "cuda:0 f32[1, 4096, 14336]"
    # t443 = prims.exp(t440)  # t443: "cuda:0 f32[1, 4096, 14336]"
    # t446 = prims.add(1.0, t443)  # t446: "cuda:0 f32[1, 4096, 14336]"
    # t449 = prims.div(1.0, t446)  # t449: "cuda:0 f32[1, 4096, 14336]"
    # t430 = prims.exp(t440)  # t430: "cuda:0 f32[1, 4096, 14336]"
    # t456 = prims.sub(1.0, t449)  # t456: "cuda:0 f32[1, 4096, 14336]"
    # t431 = prims.add(1.0, t430)  # t431: "cuda:0 f32[1, 4096, 14336]"
    # t432 = prims.reciprocal(t431)  # t432: "cuda:0 f32[1, 4096, 14336]"
    # t481 = prims.convert_element_type(t596, dtypes.float32)  # t481: "cuda:0 f32[1, 4096, 14336]"
    # t472 = prims.convert_element_type(t569, dtypes.float32)  # t472: "cuda:0 f32[1, 4096, 14336]"
    # t460 = prims.mul(t439, t456)  # t460: "cuda:0 f32[1, 4096, 14336]"
    # t477 = prims.mul(t472, t481)  # t477: "cuda:0 f32[1, 4096, 14336]"
    # t436 = prims.mul(t439, t432)  # t436: "cuda:0 f32[1, 4096, 14336]"
    # t463 = prims.add(1.0, t460)  # t463: "cuda:0 f32[1, 4096, 14336]"
    # t453 = prims.mul(t477, t449)  # t453: "cuda:0 f32[1, 4096, 14336]"
    # t478 = prims.mul(t436, t481)  # t478: "cuda:0 f32[1, 4096, 14336]"
    # t474 = prims.convert_element_type(t478, dtypes.bfloat16)  # t474: "cuda:0 bf16[1, 4096, 14336]"
    # t467 = prims.mul(t453, t463)  # t467: "cuda:0 f32[1, 4096, 14336]"
    # t421 = prims.reshape(t474, (4096, 14336))  # t421: "cuda:0 bf16[4096, 14336]"
    # t468 = prims.convert_element_type(t467, dtypes.bfloat16)  # t468: "cuda:0 bf16[1, 4096, 14336]"
  del t568, t596, t569
  t573 = torch.matmul(t421, t_blocks_0_mlp_fc_2_weight)  # t573: "cuda:0 bf16[4096, 4096]"
    # t573 = ltorch.matmul(t421, t_blocks_0_mlp_fc_2_weight)  # t573: "cuda:0 bf16[4096, 4096]"
      # t573 = prims.matmul(t421, t_blocks_0_mlp_fc_2_weight)  # t573: "cuda:0 bf16[4096, 4096]"
  del t421, t_blocks_0_mlp_fc_2_weight
  t600 = torch.reshape(t573, (1, 4096, 4096))  # t600: "cuda:0 bf16[1, 4096, 4096]"
    # t600 = ltorch.reshape(t573, (1, 4096, 4096))  # t600: "cuda:0 bf16[1, 4096, 4096]"
      # t600 = prims.reshape(t573, (1, 4096, 4096))  # t600: "cuda:0 bf16[1, 4096, 4096]"
  del t573
  t601 = torch.reshape(t474, (-1, 14336))  # t601: "cuda:0 bf16[4096, 14336]"
    # t601 = ltorch.reshape(t474, (-1, 14336))  # t601: "cuda:0 bf16[4096, 14336]"
      # t601 = prims.reshape(t474, (4096, 14336))  # t601: "cuda:0 bf16[4096, 14336]"
  del t474
  t602 = torch.permute(t601, (1, 0))  # t602: "cuda:0 bf16[14336, 4096]"
    # t602 = ltorch.permute(t601, (1, 0))  # t602: "cuda:0 bf16[14336, 4096]"
      # t602 = prims.transpose(t601, (1, 0))  # t602: "cuda:0 bf16[14336, 4096]"
  del t601
  t603 = torch.reshape(t405, (-1, 4096))  # t603: "cuda:0 bf16[4096, 4096]"
    # t603 = ltorch.reshape(t405, (-1, 4096))  # t603: "cuda:0 bf16[4096, 4096]"
      # t603 = prims.reshape(t405, (4096, 4096))  # t603: "cuda:0 bf16[4096, 4096]"
  del t405
  t574 = torch.matmul(t602, t603)  # t574: "cuda:0 bf16[14336, 4096]"
    # t574 = ltorch.matmul(t602, t603)  # t574: "cuda:0 bf16[14336, 4096]"
      # t574 = prims.matmul(t602, t603)  # t574: "cuda:0 bf16[14336, 4096]"
  del t602
  t604 = torch.reshape(t468, (-1, 14336))  # t604: "cuda:0 bf16[4096, 14336]"
    # t604 = ltorch.reshape(t468, (-1, 14336))  # t604: "cuda:0 bf16[4096, 14336]"
      # t604 = prims.reshape(t468, (4096, 14336))  # t604: "cuda:0 bf16[4096, 14336]"
  del t468
  t575 = torch.matmul(t604, t_blocks_0_mlp_fc_1_weight)  # t575: "cuda:0 bf16[4096, 4096]"
    # t575 = ltorch.matmul(t604, t_blocks_0_mlp_fc_1_weight)  # t575: "cuda:0 bf16[4096, 4096]"
      # t575 = prims.matmul(t604, t_blocks_0_mlp_fc_1_weight)  # t575: "cuda:0 bf16[4096, 4096]"
  del t_blocks_0_mlp_fc_1_weight
  t605 = torch.reshape(t575, (1, 4096, 4096))  # t605: "cuda:0 bf16[1, 4096, 4096]"
    # t605 = ltorch.reshape(t575, (1, 4096, 4096))  # t605: "cuda:0 bf16[1, 4096, 4096]"
      # t605 = prims.reshape(t575, (1, 4096, 4096))  # t605: "cuda:0 bf16[1, 4096, 4096]"
  del t575
  t606 = torch.permute(t604, (1, 0))  # t606: "cuda:0 bf16[14336, 4096]"
    # t606 = ltorch.permute(t604, (1, 0))  # t606: "cuda:0 bf16[14336, 4096]"
      # t606 = prims.transpose(t604, (1, 0))  # t606: "cuda:0 bf16[14336, 4096]"
  del t604
  t576 = torch.matmul(t606, t603)  # t576: "cuda:0 bf16[14336, 4096]"
    # t576 = ltorch.matmul(t606, t603)  # t576: "cuda:0 bf16[14336, 4096]"
      # t576 = prims.matmul(t606, t603)  # t576: "cuda:0 bf16[14336, 4096]"
  del t606, t603
  [t532] = nvFusion8(t600, t605)
    # t529 = prims.convert_element_type(t600, dtypes.float32)  # t529: "cuda:0 f32[1, 4096, 4096]"
    # t530 = prims.convert_element_type(t605, dtypes.float32)  # t530: "cuda:0 f32[1, 4096, 4096]"
    # t531 = prims.add(t529, t530)  # t531: "cuda:0 f32[1, 4096, 4096]"
    # t532 = prims.convert_element_type(t531, dtypes.bfloat16)  # t532: "cuda:0 bf16[1, 4096, 4096]"
  del t600, t605
  (t408, t409) = segkit_rms_norm_bwd(t532, t402, t406, t, 1e-05, False, 'outputs', False)
  del t532, t402, t406, t
  [t396, t387] = nvFusion9(t505, t408)
    # t534 = prims.convert_element_type(t408, dtypes.float32)  # t534: "cuda:0 f32[1, 4096, 4096]"
    # t533 = prims.convert_element_type(t505, dtypes.float32)  # t533: "cuda:0 f32[1, 4096, 4096]"
    # t535 = prims.add(t533, t534)  # t535: "cuda:0 f32[1, 4096, 4096]"
    # t396 = prims.convert_element_type(t535, dtypes.bfloat16)  # t396: "cuda:0 bf16[1, 4096, 4096]"
    # t387 = prims.reshape(t396, (4096, 4096))  # t387: "cuda:0 bf16[4096, 4096]"
  del t505, t408
  t577 = torch.matmul(t387, t_blocks_0_attn_proj_weight)  # t577: "cuda:0 bf16[4096, 4096]"
    # t577 = ltorch.matmul(t387, t_blocks_0_attn_proj_weight)  # t577: "cuda:0 bf16[4096, 4096]"
      # t577 = prims.matmul(t387, t_blocks_0_attn_proj_weight)  # t577: "cuda:0 bf16[4096, 4096]"
  del t387, t_blocks_0_attn_proj_weight
  t607 = torch.reshape(t577, (1, 4096, 4096))  # t607: "cuda:0 bf16[1, 4096, 4096]"
    # t607 = ltorch.reshape(t577, (1, 4096, 4096))  # t607: "cuda:0 bf16[1, 4096, 4096]"
      # t607 = prims.reshape(t577, (1, 4096, 4096))  # t607: "cuda:0 bf16[1, 4096, 4096]"
  del t577
  t608 = torch.reshape(t396, (-1, 4096))  # t608: "cuda:0 bf16[4096, 4096]"
    # t608 = ltorch.reshape(t396, (-1, 4096))  # t608: "cuda:0 bf16[4096, 4096]"
      # t608 = prims.reshape(t396, (4096, 4096))  # t608: "cuda:0 bf16[4096, 4096]"
  t609 = torch.permute(t608, (1, 0))  # t609: "cuda:0 bf16[4096, 4096]"
    # t609 = ltorch.permute(t608, (1, 0))  # t609: "cuda:0 bf16[4096, 4096]"
      # t609 = prims.transpose(t608, (1, 0))  # t609: "cuda:0 bf16[4096, 4096]"
  del t608
  t610 = torch.reshape(t595, (-1, 4096))  # t610: "cuda:0 bf16[4096, 4096]"
    # t610 = ltorch.reshape(t595, (-1, 4096))  # t610: "cuda:0 bf16[4096, 4096]"
      # t610 = prims.reshape(t595, (4096, 4096))  # t610: "cuda:0 bf16[4096, 4096]"
  del t595
  t578 = torch.matmul(t609, t610)  # t578: "cuda:0 bf16[4096, 4096]"
    # t578 = ltorch.matmul(t609, t610)  # t578: "cuda:0 bf16[4096, 4096]"
      # t578 = prims.matmul(t609, t610)  # t578: "cuda:0 bf16[4096, 4096]"
  del t609, t610
  t611 = torch_prims_reshape_impl(t607, (1, 4096, 32, 128))  # t611: "cuda:0 bf16[1, 4096, 32, 128]"
  del t607
  t612 = torch.permute(t611, (0, 2, 1, 3))  # t612: "cuda:0 bf16[1, 32, 4096, 128]"
    # t612 = ltorch.permute(t611, (0, 2, 1, 3))  # t612: "cuda:0 bf16[1, 32, 4096, 128]"
      # t612 = prims.transpose(t611, (0, 2, 1, 3))  # t612: "cuda:0 bf16[1, 32, 4096, 128]"
  del t611
  (t376, t377, t378) = segkit_cudnn_sdpa_bwd(t612, t370, t352, t367, t373, t371, t372, t374, True, 0.08838834764831843)
  del t612, t370, t352, t367, t373, t371, t372, t374
  [t360, t338, t335, t331] = nvFusion10(t378, t377, t376)
    # t369 = prims.reshape(t378, (1, 8, 4, 4096, 128))  # t369: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t363 = prims.convert_element_type(t369, dtypes.float32)  # t363: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t364 = prims.sum(t363, (0, 2))  # t364: "cuda:0 f32[8, 4096, 128]"
    # t365 = prims.convert_element_type(t364, dtypes.bfloat16)  # t365: "cuda:0 bf16[8, 4096, 128]"
    # t366 = prims.broadcast_in_dim(t365, [1, 8, 1, 4096, 128], [1, 3, 4])  # t366: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t357 = prims.convert_element_type(t366, dtypes.float32)  # t357: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t358 = prims.sum(t357, (0, 2))  # t358: "cuda:0 f32[8, 4096, 128]"
    # t359 = prims.convert_element_type(t358, dtypes.bfloat16)  # t359: "cuda:0 bf16[8, 4096, 128]"
    # t360 = prims.broadcast_in_dim(t359, [1, 8, 4096, 128], [1, 2, 3])  # t360: "cuda:0 bf16[1, 8, 4096, 128]"
    # t354 = prims.reshape(t377, (1, 8, 4, 4096, 128))  # t354: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t348 = prims.convert_element_type(t354, dtypes.float32)  # t348: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t349 = prims.sum(t348, (0, 2))  # t349: "cuda:0 f32[8, 4096, 128]"
    # t350 = prims.convert_element_type(t349, dtypes.bfloat16)  # t350: "cuda:0 bf16[8, 4096, 128]"
    # t351 = prims.broadcast_in_dim(t350, [1, 8, 1, 4096, 128], [1, 3, 4])  # t351: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t342 = prims.convert_element_type(t351, dtypes.float32)  # t342: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t343 = prims.sum(t342, (0, 2))  # t343: "cuda:0 f32[8, 4096, 128]"
    # t344 = prims.convert_element_type(t343, dtypes.bfloat16)  # t344: "cuda:0 bf16[8, 4096, 128]"
    # t345 = prims.broadcast_in_dim(t344, [1, 8, 4096, 128], [1, 2, 3])  # t345: "cuda:0 bf16[1, 8, 4096, 128]"
    # t338 = prims.slice_prim(t345, [0, 0, 0, 0], [1, 8, 4096, 128], [1, 1, 1, 1])  # t338: "cuda:0 bf16[1, 8, 4096, 128]"
    # t339 = prims.full((1, 8, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t339: "cuda:0 bf16[1, 8, 4096, 0]"
    # t335 = prims.pad(t339, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t335: "cuda:0 bf16[1, 8, 4096, 128]"
    # t331 = prims.slice_prim(t376, [0, 0, 0, 0], [1, 32, 4096, 128], [1, 1, 1, 1])  # t331: "cuda:0 bf16[1, 32, 4096, 128]"
  del t378, t377, t376
  t303 = segkit_rope_bwd(t338, t591, t592, torch.bfloat16, 'outputs', False)  # t303: "cuda:0 bf16[1, 8, 4096, 128]"
  del t338
  [t540] = nvFusion11(t335, t303)
    # t537 = prims.convert_element_type(t335, dtypes.float32)  # t537: "cuda:0 f32[1, 8, 4096, 128]"
    # t538 = prims.convert_element_type(t303, dtypes.float32)  # t538: "cuda:0 f32[1, 8, 4096, 128]"
    # t539 = prims.add(t537, t538)  # t539: "cuda:0 f32[1, 8, 4096, 128]"
    # t540 = prims.convert_element_type(t539, dtypes.bfloat16)  # t540: "cuda:0 bf16[1, 8, 4096, 128]"
  del t335, t303
  t270 = segkit_rope_bwd(t331, t591, t592, torch.bfloat16, 'outputs', False)  # t270: "cuda:0 bf16[1, 32, 4096, 128]"
  del t331, t591, t592
  [t241, t228] = nvFusion12(t270, t360, t540)
    # t332 = prims.full((1, 32, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t332: "cuda:0 bf16[1, 32, 4096, 0]"
    # t328 = prims.pad(t332, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t328: "cuda:0 bf16[1, 32, 4096, 128]"
    # t544 = prims.convert_element_type(t270, dtypes.float32)  # t544: "cuda:0 f32[1, 32, 4096, 128]"
    # t543 = prims.convert_element_type(t328, dtypes.float32)  # t543: "cuda:0 f32[1, 32, 4096, 128]"
    # t545 = prims.add(t543, t544)  # t545: "cuda:0 f32[1, 32, 4096, 128]"
    # t546 = prims.convert_element_type(t545, dtypes.bfloat16)  # t546: "cuda:0 bf16[1, 32, 4096, 128]"
    # t259 = prims.transpose(t360, (0, 2, 1, 3))  # t259: "cuda:0 bf16[1, 4096, 8, 128]"
    # t256 = prims.transpose(t540, (0, 2, 1, 3))  # t256: "cuda:0 bf16[1, 4096, 8, 128]"
    # t253 = prims.transpose(t546, (0, 2, 1, 3))  # t253: "cuda:0 bf16[1, 4096, 32, 128]"
    # t250 = prims.reshape(t259, (1, 4096, 1024))  # t250: "cuda:0 bf16[1, 4096, 1024]"
    # t247 = prims.reshape(t256, (1, 4096, 1024))  # t247: "cuda:0 bf16[1, 4096, 1024]"
    # t244 = prims.reshape(t253, (1, 4096, 4096))  # t244: "cuda:0 bf16[1, 4096, 4096]"
    # t241 = prims.cat([t244, t247, t250], -1)  # t241: "cuda:0 bf16[1, 4096, 6144]"
    # t228 = prims.reshape(t241, (4096, 6144))  # t228: "cuda:0 bf16[4096, 6144]"
  del t270, t360, t540
  t579 = torch.matmul(t228, t_blocks_0_attn_qkv_weight)  # t579: "cuda:0 bf16[4096, 4096]"
    # t579 = ltorch.matmul(t228, t_blocks_0_attn_qkv_weight)  # t579: "cuda:0 bf16[4096, 4096]"
      # t579 = prims.matmul(t228, t_blocks_0_attn_qkv_weight)  # t579: "cuda:0 bf16[4096, 4096]"
  del t228, t_blocks_0_attn_qkv_weight
  t613 = torch.reshape(t579, (1, 4096, 4096))  # t613: "cuda:0 bf16[1, 4096, 4096]"
    # t613 = ltorch.reshape(t579, (1, 4096, 4096))  # t613: "cuda:0 bf16[1, 4096, 4096]"
      # t613 = prims.reshape(t579, (1, 4096, 4096))  # t613: "cuda:0 bf16[1, 4096, 4096]"
  del t579
  t614 = torch.reshape(t241, (-1, 6144))  # t614: "cuda:0 bf16[4096, 6144]"
    # t614 = ltorch.reshape(t241, (-1, 6144))  # t614: "cuda:0 bf16[4096, 6144]"
      # t614 = prims.reshape(t241, (4096, 6144))  # t614: "cuda:0 bf16[4096, 6144]"
  del t241
  t615 = torch.permute(t614, (1, 0))  # t615: "cuda:0 bf16[6144, 4096]"
    # t615 = ltorch.permute(t614, (1, 0))  # t615: "cuda:0 bf16[6144, 4096]"
      # t615 = prims.transpose(t614, (1, 0))  # t615: "cuda:0 bf16[6144, 4096]"
  del t614
  t616 = torch.reshape(t221, (-1, 4096))  # t616: "cuda:0 bf16[4096, 4096]"
    # t616 = ltorch.reshape(t221, (-1, 4096))  # t616: "cuda:0 bf16[4096, 4096]"
      # t616 = prims.reshape(t221, (4096, 4096))  # t616: "cuda:0 bf16[4096, 4096]"
  del t221
  t580 = torch.matmul(t615, t616)  # t580: "cuda:0 bf16[6144, 4096]"
    # t580 = ltorch.matmul(t615, t616)  # t580: "cuda:0 bf16[6144, 4096]"
      # t580 = prims.matmul(t615, t616)  # t580: "cuda:0 bf16[6144, 4096]"
  del t615, t616
  (t224, t225) = segkit_rms_norm_bwd(t613, x, t222, weight, 1e-05, False, 'outputs', False)
  del t613, x, t222, weight
  [t550] = nvFusion13(t396, t224)
    # t547 = prims.convert_element_type(t396, dtypes.float32)  # t547: "cuda:0 f32[1, 4096, 4096]"
    # t548 = prims.convert_element_type(t224, dtypes.float32)  # t548: "cuda:0 f32[1, 4096, 4096]"
    # t549 = prims.add(t547, t548)  # t549: "cuda:0 f32[1, 4096, 4096]"
    # t550 = prims.convert_element_type(t549, dtypes.bfloat16)  # t550: "cuda:0 bf16[1, 4096, 4096]"
  del t396, t224
  return (t550, None, None, t578, t580, t576, t574, t572, t225, t409, t506)
# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)
# t528: "cuda:0 f32[]"
# t502: "cuda:0 bf16[1, 4096, 4096]"
# t499: "cuda:0 bf16[1, 4096, 4096]"
# t503: "cuda:0 f32[1, 4096]"
# t_norm_weight: "cuda:0 bf16[4096]"
# t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
# t479: "cuda:0 bf16[1, 4096, 14336]"
# t568: "cuda:0 bf16[1, 4096, 14336]"
# t569: "cuda:0 bf16[1, 4096, 14336]"
# t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
# t405: "cuda:0 bf16[1, 4096, 4096]"
# t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
# t402: "cuda:0 bf16[1, 4096, 4096]"
# t406: "cuda:0 f32[1, 4096]"
# t: "cuda:0 bf16[4096]"
# t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
# t595: "cuda:0 bf16[1, 4096, 4096]"
# t370: "cuda:0 bf16[1, 32, 4096, 128]"
# t352: "cuda:0 bf16[1, 32, 4096, 128]"
# t367: "cuda:0 bf16[1, 32, 4096, 128]"
# t373: "cuda:0 bf16[1, 32, 4096, 128]"
# t371: "cuda:0 f32[1, 32, 4096, 1]"
# t372: "cuda:0 i64[]"
# t374: "cuda:0 i64[]"
# t591: "cuda:0 f32[1, 1, 4096, 128]"
# t592: "cuda:0 f32[1, 1, 4096, 128]"
# t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
# t221: "cuda:0 bf16[1, 4096, 4096]"
# x: "cuda:0 bf16[1, 4096, 4096]"
# t222: "cuda:0 f32[1, 4096]"
# weight: "cuda:0 bf16[4096]"
# t509: "cuda:0 bf16[1, 4096, 4096]"
# t505: "cuda:0 bf16[1, 4096, 4096]"
# t506: "cuda:0 bf16[4096]"
# t484: "cuda:0 bf16[4096, 4096]"
# t571: "cuda:0 bf16[4096, 14336]"
# t596: "cuda:0 bf16[1, 4096, 14336]"
# t597: "cuda:0 bf16[4096, 4096]"
# t598: "cuda:0 bf16[4096, 4096]"
# t599: "cuda:0 bf16[4096, 14336]"
# t572: "cuda:0 bf16[4096, 14336]"
# t474: "cuda:0 bf16[1, 4096, 14336]"
# t468: "cuda:0 bf16[1, 4096, 14336]"
# t421: "cuda:0 bf16[4096, 14336]"
# t573: "cuda:0 bf16[4096, 4096]"
# t600: "cuda:0 bf16[1, 4096, 4096]"
# t601: "cuda:0 bf16[4096, 14336]"
# t602: "cuda:0 bf16[14336, 4096]"
# t603: "cuda:0 bf16[4096, 4096]"
# t574: "cuda:0 bf16[14336, 4096]"
# t604: "cuda:0 bf16[4096, 14336]"
# t575: "cuda:0 bf16[4096, 4096]"
# t605: "cuda:0 bf16[1, 4096, 4096]"
# t606: "cuda:0 bf16[14336, 4096]"
# t576: "cuda:0 bf16[14336, 4096]"
# t532: "cuda:0 bf16[1, 4096, 4096]"
# t408: "cuda:0 bf16[1, 4096, 4096]"
# t409: "cuda:0 bf16[4096]"
# t396: "cuda:0 bf16[1, 4096, 4096]"
# t387: "cuda:0 bf16[4096, 4096]"
# t577: "cuda:0 bf16[4096, 4096]"
# t607: "cuda:0 bf16[1, 4096, 4096]"
# t608: "cuda:0 bf16[4096, 4096]"
# t609: "cuda:0 bf16[4096, 4096]"
# t610: "cuda:0 bf16[4096, 4096]"
# t578: "cuda:0 bf16[4096, 4096]"
# t611: "cuda:0 bf16[1, 4096, 32, 128]"
# t612: "cuda:0 bf16[1, 32, 4096, 128]"
# t376: "cuda:0 bf16[1, 32, 4096, 128]"
# t377: "cuda:0 bf16[1, 32, 4096, 128]"
# t378: "cuda:0 bf16[1, 32, 4096, 128]"
# t360: "cuda:0 bf16[1, 8, 4096, 128]"
# t338: "cuda:0 bf16[1, 8, 4096, 128]"
# t335: "cuda:0 bf16[1, 8, 4096, 128]"
# t331: "cuda:0 bf16[1, 32, 4096, 128]"
# t303: "cuda:0 bf16[1, 8, 4096, 128]"
# t540: "cuda:0 bf16[1, 8, 4096, 128]"
# t270: "cuda:0 bf16[1, 32, 4096, 128]"
# t241: "cuda:0 bf16[1, 4096, 6144]"
# t228: "cuda:0 bf16[4096, 6144]"
# t579: "cuda:0 bf16[4096, 4096]"
# t613: "cuda:0 bf16[1, 4096, 4096]"
# t614: "cuda:0 bf16[4096, 6144]"
# t615: "cuda:0 bf16[6144, 4096]"
# t616: "cuda:0 bf16[4096, 4096]"
# t580: "cuda:0 bf16[6144, 4096]"
# t224: "cuda:0 bf16[1, 4096, 4096]"
# t225: "cuda:0 bf16[4096]"
# t550: "cuda:0 bf16[1, 4096, 4096]"
