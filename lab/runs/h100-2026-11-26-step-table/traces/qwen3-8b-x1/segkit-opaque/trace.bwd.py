# Constructed by Delete Last Used (took 3 milliseconds)
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
  t591, = cotangents
  # t591: "cuda:0 f32[]"
  clear_mutable_collection(cotangents)
  del cotangents
  t566, t563, t555, t559, t_norm_weight, t_blocks_0_mlp_proj_weight, t535, t633, \
  t634, t_blocks_0_mlp_fc_2_weight, t461, t_blocks_0_mlp_fc_1_weight, t458, t462, \
  t_blocks_0_norm_2_weight, t_blocks_0_attn_proj_weight, t661, t386, t409, t424, \
  t429, t427, t428, t430, t657, t658, t654, t313, t_blocks_0_attn_norm_k_weight, \
  t653, t308, t, t_blocks_0_attn_qkv_weight, t268, x, t269, weight, = C0
  # t566: "cuda:0 f32[1, 4096, 4096]"
  # t563: "cuda:0 f32[1, 4096, 4096]"
  # t555: "cuda:0 bf16[1, 4096, 4096]"
  # t559: "cuda:0 f32[1, 4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"
  # t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 12288]"
  # t535: "cuda:0 bf16[1, 4096, 12288]"
  # t633: "cuda:0 bf16[1, 4096, 12288]"
  # t634: "cuda:0 bf16[1, 4096, 12288]"
  # t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[12288, 4096]"
  # t461: "cuda:0 bf16[1, 4096, 4096]"
  # t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[12288, 4096]"
  # t458: "cuda:0 bf16[1, 4096, 4096]"
  # t462: "cuda:0 f32[1, 4096]"
  # t_blocks_0_norm_2_weight: "cuda:0 bf16[4096]"
  # t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
  # t661: "cuda:0 bf16[1, 4096, 4096]"
  # t386: "cuda:0 bf16[1, 32, 4096, 128]"
  # t409: "cuda:0 bf16[1, 32, 4096, 128]"
  # t424: "cuda:0 bf16[1, 32, 4096, 128]"
  # t429: "cuda:0 bf16[1, 32, 4096, 128]"
  # t427: "cuda:0 f32[1, 32, 4096, 1]"
  # t428: "cuda:0 i64[]"
  # t430: "cuda:0 i64[]"
  # t657: "cuda:0 f32[1, 1, 4096, 128]"
  # t658: "cuda:0 f32[1, 1, 4096, 128]"
  # t654: "cuda:0 bf16[1, 8, 4096, 128]"
  # t313: "cuda:0 f32[1, 8, 4096]"
  # t_blocks_0_attn_norm_k_weight: "cuda:0 bf16[128]"
  # t653: "cuda:0 bf16[1, 32, 4096, 128]"
  # t308: "cuda:0 f32[1, 32, 4096]"
  # t: "cuda:0 bf16[128]"
  # t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
  # t268: "cuda:0 bf16[1, 4096, 4096]"
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # t269: "cuda:0 f32[1, 4096]"
  # weight: "cuda:0 bf16[4096]"
  clear_mutable_collection(C0)
  del C0
  [t572, t575] = nvFusion6(t591, t566, t563)
    # t585 = prims.div(t591, 16777216.0)  # t585: "cuda:0 f32[]"
    # t581 = prims.broadcast_in_dim(t585, [1, 1, 1], [])  # t581: "cuda:0 f32[1, 1, 1]"
    # t582 = prims.broadcast_in_dim(t581, (1, 4096, 4096), (0, 1, 2))  # t582: "cuda:0 f32[1, 4096, 4096]"
    # t571 = prims.cos(t566)  # t571: "cuda:0 f32[1, 4096, 4096]"
    # t576 = prims.mul(t563, t582)  # t576: "cuda:0 f32[1, 4096, 4096]"
    # t569 = prims.sin(t566)  # t569: "cuda:0 f32[1, 4096, 4096]"
    # t572 = prims.mul(t576, t571)  # t572: "cuda:0 f32[1, 4096, 4096]"
    # t575 = prims.mul(t569, t582)  # t575: "cuda:0 f32[1, 4096, 4096]"
  del t591, t566
  (t662,) = detach_vjp(((t563,), {}), t572)
  del t563, t572
  [t565] = nvFusion7(t575, t662)
    # t592 = prims.add(t575, t662)  # t592: "cuda:0 f32[1, 4096, 4096]"
    # t565 = prims.convert_element_type(t592, dtypes.bfloat16)  # t565: "cuda:0 bf16[1, 4096, 4096]"
  del t575, t662
  (t561, t562) = segkit_rms_norm_bwd(t565, t555, t559, t_norm_weight, 1e-06, False, 'outputs', False)
  del t565, t555, t559, t_norm_weight
  [t561, t540] = nvFusion8(t561)
    # t540 = prims.reshape(t561, (4096, 4096))  # t540: "cuda:0 bf16[4096, 4096]"
  t637 = torch.matmul(t540, t_blocks_0_mlp_proj_weight)  # t637: "cuda:0 bf16[4096, 12288]"
    # t637 = ltorch.matmul(t540, t_blocks_0_mlp_proj_weight)  # t637: "cuda:0 bf16[4096, 12288]"
      # t637 = prims.matmul(t540, t_blocks_0_mlp_proj_weight)  # t637: "cuda:0 bf16[4096, 12288]"
  del t540, t_blocks_0_mlp_proj_weight
  t663 = torch.reshape(t637, (1, 4096, 12288))  # t663: "cuda:0 bf16[1, 4096, 12288]"
    # t663 = ltorch.reshape(t637, (1, 4096, 12288))  # t663: "cuda:0 bf16[1, 4096, 12288]"
      # t663 = prims.reshape(t637, (1, 4096, 12288))  # t663: "cuda:0 bf16[1, 4096, 12288]"
  del t637
  t664 = torch.reshape(t561, (-1, 4096))  # t664: "cuda:0 bf16[4096, 4096]"
    # t664 = ltorch.reshape(t561, (-1, 4096))  # t664: "cuda:0 bf16[4096, 4096]"
      # t664 = prims.reshape(t561, (4096, 4096))  # t664: "cuda:0 bf16[4096, 4096]"
  t665 = torch.permute(t664, (1, 0))  # t665: "cuda:0 bf16[4096, 4096]"
    # t665 = ltorch.permute(t664, (1, 0))  # t665: "cuda:0 bf16[4096, 4096]"
      # t665 = prims.transpose(t664, (1, 0))  # t665: "cuda:0 bf16[4096, 4096]"
  del t664
  t666 = torch.reshape(t535, (-1, 12288))  # t666: "cuda:0 bf16[4096, 12288]"
    # t666 = ltorch.reshape(t535, (-1, 12288))  # t666: "cuda:0 bf16[4096, 12288]"
      # t666 = prims.reshape(t535, (4096, 12288))  # t666: "cuda:0 bf16[4096, 12288]"
  del t535
  t638 = torch.matmul(t665, t666)  # t638: "cuda:0 bf16[4096, 12288]"
    # t638 = ltorch.matmul(t665, t666)  # t638: "cuda:0 bf16[4096, 12288]"
      # t638 = prims.matmul(t665, t666)  # t638: "cuda:0 bf16[4096, 12288]"
  del t665, t666
  [t530, t524, t477] = nvFusion9(t633, t663, t634)
    # t495 = prims.convert_element_type(t633, dtypes.float32)  # t495: "cuda:0 f32[1, 4096, 12288]"
    # t496 = prims.neg(t495)  # t496: "cuda:0 f32[1, 4096, 12288]"
    # t499 = prims.exp(t496)  # t499: "cuda:0 f32[1, 4096, 12288]"
    # t502 = prims.add(1.0, t499)  # t502: "cuda:0 f32[1, 4096, 12288]"
    # t505 = prims.div(1.0, t502)  # t505: "cuda:0 f32[1, 4096, 12288]"
    # t486 = prims.exp(t496)  # t486: "cuda:0 f32[1, 4096, 12288]"
    # t512 = prims.sub(1.0, t505)  # t512: "cuda:0 f32[1, 4096, 12288]"
    # t487 = prims.add(1.0, t486)  # t487: "cuda:0 f32[1, 4096, 12288]"
    # t488 = prims.reciprocal(t487)  # t488: "cuda:0 f32[1, 4096, 12288]"
    # t537 = prims.convert_element_type(t663, dtypes.float32)  # t537: "cuda:0 f32[1, 4096, 12288]"
    # t528 = prims.convert_element_type(t634, dtypes.float32)  # t528: "cuda:0 f32[1, 4096, 12288]"
    # t516 = prims.mul(t495, t512)  # t516: "cuda:0 f32[1, 4096, 12288]"
    # t533 = prims.mul(t528, t537)  # t533: "cuda:0 f32[1, 4096, 12288]"
    # t492 = prims.mul(t495, t488)  # t492: "cuda:0 f32[1, 4096, 12288]"
    # t519 = prims.add(1.0, t516)  # t519: "cuda:0 f32[1, 4096, 12288]"
    # t509 = prims.mul(t533, t505)  # t509: "cuda:0 f32[1, 4096, 12288]"
    # t534 = prims.mul(t492, t537)  # t534: "cuda:0 f32[1, 4096, 12288]"
    # t530 = prims.convert_element_type(t534, dtypes.bfloat16)  # t530: "cuda:0 bf16[1, 4096, 12288]"
    # t523 = prims.mul(t509, t519)  # t523: "cuda:0 f32[1, 4096, 12288]"
    # t477 = prims.reshape(t530, (4096, 12288))  # t477: "cuda:0 bf16[4096, 12288]"
    # t524 = prims.convert_element_type(t523, dtypes.bfloat16)  # t524: "cuda:0 bf16[1, 4096, 12288]"
  del t633, t663, t634
  t639 = torch.matmul(t477, t_blocks_0_mlp_fc_2_weight)  # t639: "cuda:0 bf16[4096, 4096]"
    # t639 = ltorch.matmul(t477, t_blocks_0_mlp_fc_2_weight)  # t639: "cuda:0 bf16[4096, 4096]"
      # t639 = prims.matmul(t477, t_blocks_0_mlp_fc_2_weight)  # t639: "cuda:0 bf16[4096, 4096]"
  del t477, t_blocks_0_mlp_fc_2_weight
  t667 = torch.reshape(t639, (1, 4096, 4096))  # t667: "cuda:0 bf16[1, 4096, 4096]"
    # t667 = ltorch.reshape(t639, (1, 4096, 4096))  # t667: "cuda:0 bf16[1, 4096, 4096]"
      # t667 = prims.reshape(t639, (1, 4096, 4096))  # t667: "cuda:0 bf16[1, 4096, 4096]"
  del t639
  t668 = torch.reshape(t530, (-1, 12288))  # t668: "cuda:0 bf16[4096, 12288]"
    # t668 = ltorch.reshape(t530, (-1, 12288))  # t668: "cuda:0 bf16[4096, 12288]"
      # t668 = prims.reshape(t530, (4096, 12288))  # t668: "cuda:0 bf16[4096, 12288]"
  del t530
  t669 = torch.permute(t668, (1, 0))  # t669: "cuda:0 bf16[12288, 4096]"
    # t669 = ltorch.permute(t668, (1, 0))  # t669: "cuda:0 bf16[12288, 4096]"
      # t669 = prims.transpose(t668, (1, 0))  # t669: "cuda:0 bf16[12288, 4096]"
  del t668
  t670 = torch.reshape(t461, (-1, 4096))  # t670: "cuda:0 bf16[4096, 4096]"
    # t670 = ltorch.reshape(t461, (-1, 4096))  # t670: "cuda:0 bf16[4096, 4096]"
      # t670 = prims.reshape(t461, (4096, 4096))  # t670: "cuda:0 bf16[4096, 4096]"
  del t461
  t640 = torch.matmul(t669, t670)  # t640: "cuda:0 bf16[12288, 4096]"
    # t640 = ltorch.matmul(t669, t670)  # t640: "cuda:0 bf16[12288, 4096]"
      # t640 = prims.matmul(t669, t670)  # t640: "cuda:0 bf16[12288, 4096]"
  del t669
  t671 = torch.reshape(t524, (-1, 12288))  # t671: "cuda:0 bf16[4096, 12288]"
    # t671 = ltorch.reshape(t524, (-1, 12288))  # t671: "cuda:0 bf16[4096, 12288]"
      # t671 = prims.reshape(t524, (4096, 12288))  # t671: "cuda:0 bf16[4096, 12288]"
  del t524
  t641 = torch.matmul(t671, t_blocks_0_mlp_fc_1_weight)  # t641: "cuda:0 bf16[4096, 4096]"
    # t641 = ltorch.matmul(t671, t_blocks_0_mlp_fc_1_weight)  # t641: "cuda:0 bf16[4096, 4096]"
      # t641 = prims.matmul(t671, t_blocks_0_mlp_fc_1_weight)  # t641: "cuda:0 bf16[4096, 4096]"
  del t_blocks_0_mlp_fc_1_weight
  t672 = torch.reshape(t641, (1, 4096, 4096))  # t672: "cuda:0 bf16[1, 4096, 4096]"
    # t672 = ltorch.reshape(t641, (1, 4096, 4096))  # t672: "cuda:0 bf16[1, 4096, 4096]"
      # t672 = prims.reshape(t641, (1, 4096, 4096))  # t672: "cuda:0 bf16[1, 4096, 4096]"
  del t641
  t673 = torch.permute(t671, (1, 0))  # t673: "cuda:0 bf16[12288, 4096]"
    # t673 = ltorch.permute(t671, (1, 0))  # t673: "cuda:0 bf16[12288, 4096]"
      # t673 = prims.transpose(t671, (1, 0))  # t673: "cuda:0 bf16[12288, 4096]"
  del t671
  t642 = torch.matmul(t673, t670)  # t642: "cuda:0 bf16[12288, 4096]"
    # t642 = ltorch.matmul(t673, t670)  # t642: "cuda:0 bf16[12288, 4096]"
      # t642 = prims.matmul(t673, t670)  # t642: "cuda:0 bf16[12288, 4096]"
  del t673, t670
  [t596] = nvFusion10(t667, t672)
    # t593 = prims.convert_element_type(t667, dtypes.float32)  # t593: "cuda:0 f32[1, 4096, 4096]"
    # t594 = prims.convert_element_type(t672, dtypes.float32)  # t594: "cuda:0 f32[1, 4096, 4096]"
    # t595 = prims.add(t593, t594)  # t595: "cuda:0 f32[1, 4096, 4096]"
    # t596 = prims.convert_element_type(t595, dtypes.bfloat16)  # t596: "cuda:0 bf16[1, 4096, 4096]"
  del t667, t672
  (t464, t465) = segkit_rms_norm_bwd(t596, t458, t462, t_blocks_0_norm_2_weight, 1e-06, False, 'outputs', False)
  del t596, t458, t462, t_blocks_0_norm_2_weight
  [t452, t443] = nvFusion11(t561, t464)
    # t598 = prims.convert_element_type(t464, dtypes.float32)  # t598: "cuda:0 f32[1, 4096, 4096]"
    # t597 = prims.convert_element_type(t561, dtypes.float32)  # t597: "cuda:0 f32[1, 4096, 4096]"
    # t599 = prims.add(t597, t598)  # t599: "cuda:0 f32[1, 4096, 4096]"
    # t452 = prims.convert_element_type(t599, dtypes.bfloat16)  # t452: "cuda:0 bf16[1, 4096, 4096]"
    # t443 = prims.reshape(t452, (4096, 4096))  # t443: "cuda:0 bf16[4096, 4096]"
  del t561, t464
  t643 = torch.matmul(t443, t_blocks_0_attn_proj_weight)  # t643: "cuda:0 bf16[4096, 4096]"
    # t643 = ltorch.matmul(t443, t_blocks_0_attn_proj_weight)  # t643: "cuda:0 bf16[4096, 4096]"
      # t643 = prims.matmul(t443, t_blocks_0_attn_proj_weight)  # t643: "cuda:0 bf16[4096, 4096]"
  del t443, t_blocks_0_attn_proj_weight
  t674 = torch.reshape(t643, (1, 4096, 4096))  # t674: "cuda:0 bf16[1, 4096, 4096]"
    # t674 = ltorch.reshape(t643, (1, 4096, 4096))  # t674: "cuda:0 bf16[1, 4096, 4096]"
      # t674 = prims.reshape(t643, (1, 4096, 4096))  # t674: "cuda:0 bf16[1, 4096, 4096]"
  del t643
  t675 = torch.reshape(t452, (-1, 4096))  # t675: "cuda:0 bf16[4096, 4096]"
    # t675 = ltorch.reshape(t452, (-1, 4096))  # t675: "cuda:0 bf16[4096, 4096]"
      # t675 = prims.reshape(t452, (4096, 4096))  # t675: "cuda:0 bf16[4096, 4096]"
  t676 = torch.permute(t675, (1, 0))  # t676: "cuda:0 bf16[4096, 4096]"
    # t676 = ltorch.permute(t675, (1, 0))  # t676: "cuda:0 bf16[4096, 4096]"
      # t676 = prims.transpose(t675, (1, 0))  # t676: "cuda:0 bf16[4096, 4096]"
  del t675
  t677 = torch.reshape(t661, (-1, 4096))  # t677: "cuda:0 bf16[4096, 4096]"
    # t677 = ltorch.reshape(t661, (-1, 4096))  # t677: "cuda:0 bf16[4096, 4096]"
      # t677 = prims.reshape(t661, (4096, 4096))  # t677: "cuda:0 bf16[4096, 4096]"
  del t661
  t644 = torch.matmul(t676, t677)  # t644: "cuda:0 bf16[4096, 4096]"
    # t644 = ltorch.matmul(t676, t677)  # t644: "cuda:0 bf16[4096, 4096]"
      # t644 = prims.matmul(t676, t677)  # t644: "cuda:0 bf16[4096, 4096]"
  del t676, t677
  t678 = torch_prims_reshape_impl(t674, (1, 4096, 32, 128))  # t678: "cuda:0 bf16[1, 4096, 32, 128]"
  del t674
  t679 = torch.permute(t678, (0, 2, 1, 3))  # t679: "cuda:0 bf16[1, 32, 4096, 128]"
    # t679 = ltorch.permute(t678, (0, 2, 1, 3))  # t679: "cuda:0 bf16[1, 32, 4096, 128]"
      # t679 = prims.transpose(t678, (0, 2, 1, 3))  # t679: "cuda:0 bf16[1, 32, 4096, 128]"
  del t678
  (t432, t433, t434) = segkit_cudnn_sdpa_bwd(t679, t386, t409, t424, t429, t427, t428, t430, True, 0.08838834764831843)
  del t679, t386, t409, t424, t429, t427, t428, t430
  [t417, t395, t392, t388, t385] = nvFusion12(t434, t433, t432)
    # t426 = prims.reshape(t434, (1, 8, 4, 4096, 128))  # t426: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t420 = prims.convert_element_type(t426, dtypes.float32)  # t420: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t421 = prims.sum(t420, (0, 2))  # t421: "cuda:0 f32[8, 4096, 128]"
    # t422 = prims.convert_element_type(t421, dtypes.bfloat16)  # t422: "cuda:0 bf16[8, 4096, 128]"
    # t423 = prims.broadcast_in_dim(t422, [1, 8, 1, 4096, 128], [1, 3, 4])  # t423: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t414 = prims.convert_element_type(t423, dtypes.float32)  # t414: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t415 = prims.sum(t414, (0, 2))  # t415: "cuda:0 f32[8, 4096, 128]"
    # t416 = prims.convert_element_type(t415, dtypes.bfloat16)  # t416: "cuda:0 bf16[8, 4096, 128]"
    # t417 = prims.broadcast_in_dim(t416, [1, 8, 4096, 128], [1, 2, 3])  # t417: "cuda:0 bf16[1, 8, 4096, 128]"
    # t411 = prims.reshape(t433, (1, 8, 4, 4096, 128))  # t411: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t405 = prims.convert_element_type(t411, dtypes.float32)  # t405: "cuda:0 f32[1, 8, 4, 4096, 128]"
    # t406 = prims.sum(t405, (0, 2))  # t406: "cuda:0 f32[8, 4096, 128]"
    # t407 = prims.convert_element_type(t406, dtypes.bfloat16)  # t407: "cuda:0 bf16[8, 4096, 128]"
    # t408 = prims.broadcast_in_dim(t407, [1, 8, 1, 4096, 128], [1, 3, 4])  # t408: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t399 = prims.convert_element_type(t408, dtypes.float32)  # t399: "cuda:0 f32[1, 8, 1, 4096, 128]"
    # t400 = prims.sum(t399, (0, 2))  # t400: "cuda:0 f32[8, 4096, 128]"
    # t401 = prims.convert_element_type(t400, dtypes.bfloat16)  # t401: "cuda:0 bf16[8, 4096, 128]"
    # t402 = prims.broadcast_in_dim(t401, [1, 8, 4096, 128], [1, 2, 3])  # t402: "cuda:0 bf16[1, 8, 4096, 128]"
    # t395 = prims.slice_prim(t402, [0, 0, 0, 0], [1, 8, 4096, 128], [1, 1, 1, 1])  # t395: "cuda:0 bf16[1, 8, 4096, 128]"
    # t396 = prims.full((1, 8, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t396: "cuda:0 bf16[1, 8, 4096, 0]"
    # t392 = prims.pad(t396, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t392: "cuda:0 bf16[1, 8, 4096, 128]"
    # t388 = prims.slice_prim(t432, [0, 0, 0, 0], [1, 32, 4096, 128], [1, 1, 1, 1])  # t388: "cuda:0 bf16[1, 32, 4096, 128]"
    # t389 = prims.full((1, 32, 4096, 0), 0, device=devices.Device("cuda:0"), dtype=dtypes.bfloat16)  # t389: "cuda:0 bf16[1, 32, 4096, 0]"
    # t385 = prims.pad(t389, 0.0, ((0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 128, 0)))  # t385: "cuda:0 bf16[1, 32, 4096, 128]"
  del t434, t433, t432
  t360 = segkit_rope_bwd(t395, t657, t658, torch.bfloat16, 'outputs', False)  # t360: "cuda:0 bf16[1, 8, 4096, 128]"
  del t395
  [t604] = nvFusion13(t392, t360)
    # t601 = prims.convert_element_type(t392, dtypes.float32)  # t601: "cuda:0 f32[1, 8, 4096, 128]"
    # t602 = prims.convert_element_type(t360, dtypes.float32)  # t602: "cuda:0 f32[1, 8, 4096, 128]"
    # t603 = prims.add(t601, t602)  # t603: "cuda:0 f32[1, 8, 4096, 128]"
    # t604 = prims.convert_element_type(t603, dtypes.bfloat16)  # t604: "cuda:0 bf16[1, 8, 4096, 128]"
  del t392, t360
  t327 = segkit_rope_bwd(t388, t657, t658, torch.bfloat16, 'outputs', False)  # t327: "cuda:0 bf16[1, 32, 4096, 128]"
  del t388, t657, t658
  [t610] = nvFusion14(t385, t327)
    # t607 = prims.convert_element_type(t385, dtypes.float32)  # t607: "cuda:0 f32[1, 32, 4096, 128]"
    # t608 = prims.convert_element_type(t327, dtypes.float32)  # t608: "cuda:0 f32[1, 32, 4096, 128]"
    # t609 = prims.add(t607, t608)  # t609: "cuda:0 f32[1, 32, 4096, 128]"
    # t610 = prims.convert_element_type(t609, dtypes.bfloat16)  # t610: "cuda:0 bf16[1, 32, 4096, 128]"
  del t385, t327
  (t315, t316) = segkit_rms_norm_bwd(t604, t654, t313, t_blocks_0_attn_norm_k_weight, 1e-06, False, 'outputs', False)
  del t604, t654, t313, t_blocks_0_attn_norm_k_weight
  (t310, t311) = segkit_rms_norm_bwd(t610, t653, t308, t, 1e-06, False, 'outputs', False)
  del t610, t653, t308, t
  [t288, t275] = nvFusion15(t417, t315, t310)
    # t306 = prims.transpose(t417, (0, 2, 1, 3))  # t306: "cuda:0 bf16[1, 4096, 8, 128]"
    # t303 = prims.transpose(t315, (0, 2, 1, 3))  # t303: "cuda:0 bf16[1, 4096, 8, 128]"
    # t300 = prims.transpose(t310, (0, 2, 1, 3))  # t300: "cuda:0 bf16[1, 4096, 32, 128]"
    # t297 = prims.reshape(t306, (1, 4096, 1024))  # t297: "cuda:0 bf16[1, 4096, 1024]"
    # t294 = prims.reshape(t303, (1, 4096, 1024))  # t294: "cuda:0 bf16[1, 4096, 1024]"
    # t291 = prims.reshape(t300, (1, 4096, 4096))  # t291: "cuda:0 bf16[1, 4096, 4096]"
    # t288 = prims.cat([t291, t294, t297], -1)  # t288: "cuda:0 bf16[1, 4096, 6144]"
    # t275 = prims.reshape(t288, (4096, 6144))  # t275: "cuda:0 bf16[4096, 6144]"
  del t417, t315, t310
  t645 = torch.matmul(t275, t_blocks_0_attn_qkv_weight)  # t645: "cuda:0 bf16[4096, 4096]"
    # t645 = ltorch.matmul(t275, t_blocks_0_attn_qkv_weight)  # t645: "cuda:0 bf16[4096, 4096]"
      # t645 = prims.matmul(t275, t_blocks_0_attn_qkv_weight)  # t645: "cuda:0 bf16[4096, 4096]"
  del t275, t_blocks_0_attn_qkv_weight
  t680 = torch.reshape(t645, (1, 4096, 4096))  # t680: "cuda:0 bf16[1, 4096, 4096]"
    # t680 = ltorch.reshape(t645, (1, 4096, 4096))  # t680: "cuda:0 bf16[1, 4096, 4096]"
      # t680 = prims.reshape(t645, (1, 4096, 4096))  # t680: "cuda:0 bf16[1, 4096, 4096]"
  del t645
  t681 = torch.reshape(t288, (-1, 6144))  # t681: "cuda:0 bf16[4096, 6144]"
    # t681 = ltorch.reshape(t288, (-1, 6144))  # t681: "cuda:0 bf16[4096, 6144]"
      # t681 = prims.reshape(t288, (4096, 6144))  # t681: "cuda:0 bf16[4096, 6144]"
  del t288
  t682 = torch.permute(t681, (1, 0))  # t682: "cuda:0 bf16[6144, 4096]"
    # t682 = ltorch.permute(t681, (1, 0))  # t682: "cuda:0 bf16[6144, 4096]"
      # t682 = prims.transpose(t681, (1, 0))  # t682: "cuda:0 bf16[6144, 4096]"
  del t681
  t683 = torch.reshape(t268, (-1, 4096))  # t683: "cuda:0 bf16[4096, 4096]"
    # t683 = ltorch.reshape(t268, (-1, 4096))  # t683: "cuda:0 bf16[4096, 4096]"
      # t683 = prims.reshape(t268, (4096, 4096))  # t683: "cuda:0 bf16[4096, 4096]"
  del t268
  t646 = torch.matmul(t682, t683)  # t646: "cuda:0 bf16[6144, 4096]"
    # t646 = ltorch.matmul(t682, t683)  # t646: "cuda:0 bf16[6144, 4096]"
      # t646 = prims.matmul(t682, t683)  # t646: "cuda:0 bf16[6144, 4096]"
  del t682, t683
  (t271, t272) = segkit_rms_norm_bwd(t680, x, t269, weight, 1e-06, False, 'outputs', False)
  del t680, x, t269, weight
  [t614] = nvFusion16(t452, t271)
    # t611 = prims.convert_element_type(t452, dtypes.float32)  # t611: "cuda:0 f32[1, 4096, 4096]"
    # t612 = prims.convert_element_type(t271, dtypes.float32)  # t612: "cuda:0 f32[1, 4096, 4096]"
    # t613 = prims.add(t611, t612)  # t613: "cuda:0 f32[1, 4096, 4096]"
    # t614 = prims.convert_element_type(t613, dtypes.bfloat16)  # t614: "cuda:0 bf16[1, 4096, 4096]"
  del t452, t271
  return (t614, None, None, t316, t311, t644, t646, t642, t640, t638, t272, t465, t562)
# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)
# t591: "cuda:0 f32[]"
# t566: "cuda:0 f32[1, 4096, 4096]"
# t563: "cuda:0 f32[1, 4096, 4096]"
# t555: "cuda:0 bf16[1, 4096, 4096]"
# t559: "cuda:0 f32[1, 4096]"
# t_norm_weight: "cuda:0 bf16[4096]"
# t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 12288]"
# t535: "cuda:0 bf16[1, 4096, 12288]"
# t633: "cuda:0 bf16[1, 4096, 12288]"
# t634: "cuda:0 bf16[1, 4096, 12288]"
# t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[12288, 4096]"
# t461: "cuda:0 bf16[1, 4096, 4096]"
# t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[12288, 4096]"
# t458: "cuda:0 bf16[1, 4096, 4096]"
# t462: "cuda:0 f32[1, 4096]"
# t_blocks_0_norm_2_weight: "cuda:0 bf16[4096]"
# t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
# t661: "cuda:0 bf16[1, 4096, 4096]"
# t386: "cuda:0 bf16[1, 32, 4096, 128]"
# t409: "cuda:0 bf16[1, 32, 4096, 128]"
# t424: "cuda:0 bf16[1, 32, 4096, 128]"
# t429: "cuda:0 bf16[1, 32, 4096, 128]"
# t427: "cuda:0 f32[1, 32, 4096, 1]"
# t428: "cuda:0 i64[]"
# t430: "cuda:0 i64[]"
# t657: "cuda:0 f32[1, 1, 4096, 128]"
# t658: "cuda:0 f32[1, 1, 4096, 128]"
# t654: "cuda:0 bf16[1, 8, 4096, 128]"
# t313: "cuda:0 f32[1, 8, 4096]"
# t_blocks_0_attn_norm_k_weight: "cuda:0 bf16[128]"
# t653: "cuda:0 bf16[1, 32, 4096, 128]"
# t308: "cuda:0 f32[1, 32, 4096]"
# t: "cuda:0 bf16[128]"
# t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
# t268: "cuda:0 bf16[1, 4096, 4096]"
# x: "cuda:0 bf16[1, 4096, 4096]"
# t269: "cuda:0 f32[1, 4096]"
# weight: "cuda:0 bf16[4096]"
# t572: "cuda:0 f32[1, 4096, 4096]"
# t575: "cuda:0 f32[1, 4096, 4096]"
# t662: "cuda:0 f32[1, 4096, 4096]"
# t565: "cuda:0 bf16[1, 4096, 4096]"
# t561: "cuda:0 bf16[1, 4096, 4096]"
# t562: "cuda:0 bf16[4096]"
# t540: "cuda:0 bf16[4096, 4096]"
# t637: "cuda:0 bf16[4096, 12288]"
# t663: "cuda:0 bf16[1, 4096, 12288]"
# t664: "cuda:0 bf16[4096, 4096]"
# t665: "cuda:0 bf16[4096, 4096]"
# t666: "cuda:0 bf16[4096, 12288]"
# t638: "cuda:0 bf16[4096, 12288]"
# t530: "cuda:0 bf16[1, 4096, 12288]"
# t524: "cuda:0 bf16[1, 4096, 12288]"
# t477: "cuda:0 bf16[4096, 12288]"
# t639: "cuda:0 bf16[4096, 4096]"
# t667: "cuda:0 bf16[1, 4096, 4096]"
# t668: "cuda:0 bf16[4096, 12288]"
# t669: "cuda:0 bf16[12288, 4096]"
# t670: "cuda:0 bf16[4096, 4096]"
# t640: "cuda:0 bf16[12288, 4096]"
# t671: "cuda:0 bf16[4096, 12288]"
# t641: "cuda:0 bf16[4096, 4096]"
# t672: "cuda:0 bf16[1, 4096, 4096]"
# t673: "cuda:0 bf16[12288, 4096]"
# t642: "cuda:0 bf16[12288, 4096]"
# t596: "cuda:0 bf16[1, 4096, 4096]"
# t464: "cuda:0 bf16[1, 4096, 4096]"
# t465: "cuda:0 bf16[4096]"
# t452: "cuda:0 bf16[1, 4096, 4096]"
# t443: "cuda:0 bf16[4096, 4096]"
# t643: "cuda:0 bf16[4096, 4096]"
# t674: "cuda:0 bf16[1, 4096, 4096]"
# t675: "cuda:0 bf16[4096, 4096]"
# t676: "cuda:0 bf16[4096, 4096]"
# t677: "cuda:0 bf16[4096, 4096]"
# t644: "cuda:0 bf16[4096, 4096]"
# t678: "cuda:0 bf16[1, 4096, 32, 128]"
# t679: "cuda:0 bf16[1, 32, 4096, 128]"
# t432: "cuda:0 bf16[1, 32, 4096, 128]"
# t433: "cuda:0 bf16[1, 32, 4096, 128]"
# t434: "cuda:0 bf16[1, 32, 4096, 128]"
# t417: "cuda:0 bf16[1, 8, 4096, 128]"
# t395: "cuda:0 bf16[1, 8, 4096, 128]"
# t392: "cuda:0 bf16[1, 8, 4096, 128]"
# t388: "cuda:0 bf16[1, 32, 4096, 128]"
# t385: "cuda:0 bf16[1, 32, 4096, 128]"
# t360: "cuda:0 bf16[1, 8, 4096, 128]"
# t604: "cuda:0 bf16[1, 8, 4096, 128]"
# t327: "cuda:0 bf16[1, 32, 4096, 128]"
# t610: "cuda:0 bf16[1, 32, 4096, 128]"
# t315: "cuda:0 bf16[1, 8, 4096, 128]"
# t316: "cuda:0 bf16[128]"
# t310: "cuda:0 bf16[1, 32, 4096, 128]"
# t311: "cuda:0 bf16[128]"
# t288: "cuda:0 bf16[1, 4096, 6144]"
# t275: "cuda:0 bf16[4096, 6144]"
# t645: "cuda:0 bf16[4096, 4096]"
# t680: "cuda:0 bf16[1, 4096, 4096]"
# t681: "cuda:0 bf16[4096, 6144]"
# t682: "cuda:0 bf16[6144, 4096]"
# t683: "cuda:0 bf16[4096, 4096]"
# t646: "cuda:0 bf16[6144, 4096]"
# t271: "cuda:0 bf16[1, 4096, 4096]"
# t272: "cuda:0 bf16[4096]"
# t614: "cuda:0 bf16[1, 4096, 4096]"
