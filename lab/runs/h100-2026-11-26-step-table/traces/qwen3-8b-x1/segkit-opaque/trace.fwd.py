# Constructed by Delete Last Used (took 1 milliseconds)
import torch
import torch.nn.functional
from thunder.executors.torchex import no_autocast

@torch.no_grad()
@no_autocast
def computation(x, cos, sin, t_blocks_0_attn_norm_k_weight, t, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t_blocks_0_norm_2_weight, t_norm_weight):
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # cos: "cuda:0 f32[1, 4096, 128]"
  # sin: "cuda:0 f32[1, 4096, 128]"
  # t_blocks_0_attn_norm_k_weight: "cuda:0 bf16[128]"
  # t: "cuda:0 bf16[128]"
  # t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
  # t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
  # t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[12288, 4096]"
  # t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[12288, 4096]"
  # t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 12288]"
  # weight: "cuda:0 bf16[4096]"
  # t_blocks_0_norm_2_weight: "cuda:0 bf16[4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t268, t269) = segkit_rms_norm_fwd(x, weight, 1e-06, False, 'outputs', False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t631 = torch.nn.functional.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"
    # t631 = ltorch.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"
      # t631 = prims.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"

  # site-packages/litgpt/model.py:479: 	        q, k, v = qkv.split((query_size, key_size, value_size), dim=-1)  # 3x(B, T, C*)
  (t647, t648, t649) = torch.split(t631, (4096, 1024, 1024), -1)
    # (t647, t648, t649) = ltorch.split(t631, (4096, 1024, 1024), -1)
      # t647 = prims.slice_prim(t631, [0, 0, 0], [1, 4096, 4096], [1, 1, 1])  # t647: "cuda:0 bf16[1, 4096, 4096]"
      # t648 = prims.slice_prim(t631, [0, 0, 4096], [1, 4096, 5120], [1, 1, 1])  # t648: "cuda:0 bf16[1, 4096, 1024]"
      # t649 = prims.slice_prim(t631, [0, 0, 5120], [1, 4096, 6144], [1, 1, 1])  # t649: "cuda:0 bf16[1, 4096, 1024]"
  del t631

  # site-packages/litgpt/model.py:490: 	        q = q.view(B, T, n_head, head_size)  # (B, T, nh_q, hs)
  t650 = torch_prims_reshape_impl(t647, (1, 4096, 32, 128))  # t650: "cuda:0 bf16[1, 4096, 32, 128]"
  del t647

  # site-packages/litgpt/model.py:491: 	        k = k.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t651 = torch_prims_reshape_impl(t648, (1, 4096, 8, 128))  # t651: "cuda:0 bf16[1, 4096, 8, 128]"
  del t648

  # site-packages/litgpt/model.py:492: 	        v = v.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t652 = torch_prims_reshape_impl(t649, (1, 4096, 8, 128))  # t652: "cuda:0 bf16[1, 4096, 8, 128]"
  del t649

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t653 = torch.permute(t650, (0, 2, 1, 3))  # t653: "cuda:0 bf16[1, 32, 4096, 128]"
    # t653 = ltorch.permute(t650, (0, 2, 1, 3))  # t653: "cuda:0 bf16[1, 32, 4096, 128]"
      # t653 = prims.transpose(t650, (0, 2, 1, 3))  # t653: "cuda:0 bf16[1, 32, 4096, 128]"
  del t650

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t654 = torch.permute(t651, (0, 2, 1, 3))  # t654: "cuda:0 bf16[1, 8, 4096, 128]"
    # t654 = ltorch.permute(t651, (0, 2, 1, 3))  # t654: "cuda:0 bf16[1, 8, 4096, 128]"
      # t654 = prims.transpose(t651, (0, 2, 1, 3))  # t654: "cuda:0 bf16[1, 8, 4096, 128]"
  del t651

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t655 = torch.permute(t652, (0, 2, 1, 3))  # t655: "cuda:0 bf16[1, 8, 4096, 128]"
    # t655 = ltorch.permute(t652, (0, 2, 1, 3))  # t655: "cuda:0 bf16[1, 8, 4096, 128]"
      # t655 = prims.transpose(t652, (0, 2, 1, 3))  # t655: "cuda:0 bf16[1, 8, 4096, 128]"
  del t652

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t307, t308) = segkit_rms_norm_fwd(t653, t, 1e-06, False, 'outputs', False)
  (t312, t313) = segkit_rms_norm_fwd(t654, t_blocks_0_attn_norm_k_weight, 1e-06, False, 'outputs', False)

  # site-packages/litgpt/model.py:510: 	            q_roped = apply_rope(q[..., :rope_n_elem], cos, sin)
  t656 = shallow_copy(t307)  # t656: "cuda:0 bf16[1, 32, 4096, 128]"

  # thunder_exec/recognize.py:178: 	            c, s = cos.view(*shape), sin.view(*shape)
  t657 = torch_prims_reshape_impl(cos, (1, 1, 4096, 128))  # t657: "cuda:0 f32[1, 1, 4096, 128]"
  t658 = torch_prims_reshape_impl(sin, (1, 1, 4096, 128))  # t658: "cuda:0 f32[1, 1, 4096, 128]"

  # thunder_exec/rope.py:134: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t325 = segkit_rope_fwd(t656, t657, t658, torch.bfloat16, 'outputs', False)  # t325: "cuda:0 bf16[1, 32, 4096, 128]"
  del t656

  # site-packages/litgpt/model.py:511: 	            k_roped = apply_rope(k[..., :rope_n_elem], cos, sin)
  t659 = shallow_copy(t312)  # t659: "cuda:0 bf16[1, 8, 4096, 128]"

  # thunder_exec/rope.py:134: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t358 = segkit_rope_fwd(t659, t657, t658, torch.bfloat16, 'outputs', False)  # t358: "cuda:0 bf16[1, 8, 4096, 128]"
  del t659
  [t386, t409, t424] = nvFusion0(t307, t325, t312, t358, t655)
    # t383 = prims.slice_prim(t307, [0, 0, 0, 0], [1, 32, 4096, 0], [1, 1, 1, 1])  # t383: "cuda:0 bf16[1, 32, 4096, 0]"
    # t386 = prims.cat([t325, t383], -1)  # t386: "cuda:0 bf16[1, 32, 4096, 128]"
    # t390 = prims.slice_prim(t312, [0, 0, 0, 0], [1, 8, 4096, 0], [1, 1, 1, 1])  # t390: "cuda:0 bf16[1, 8, 4096, 0]"
    # t393 = prims.cat([t358, t390], -1)  # t393: "cuda:0 bf16[1, 8, 4096, 128]"
    # t397 = prims.broadcast_in_dim(t393, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t397: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t403 = prims.broadcast_in_dim(t397, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t403: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t409 = prims.reshape(t403, (1, 32, 4096, 128))  # t409: "cuda:0 bf16[1, 32, 4096, 128]"
    # t412 = prims.broadcast_in_dim(t655, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t412: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t418 = prims.broadcast_in_dim(t412, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t418: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t424 = prims.reshape(t418, (1, 32, 4096, 128))  # t424: "cuda:0 bf16[1, 32, 4096, 128]"
  del t307, t325, t312, t358, t655

  # site-packages/litgpt/model.py:593: 	            y = F.scaled_dot_product_attention(
  (t429, t427, t428, t430) = segkit_cudnn_sdpa_fwd(t386, t409, t424, True, 0.08838834764831843)

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t660 = torch.permute(t429, (0, 2, 1, 3))  # t660: "cuda:0 bf16[1, 4096, 32, 128]"
    # t660 = ltorch.permute(t429, (0, 2, 1, 3))  # t660: "cuda:0 bf16[1, 4096, 32, 128]"
      # t660 = prims.transpose(t429, (0, 2, 1, 3))  # t660: "cuda:0 bf16[1, 4096, 32, 128]"
  t661 = torch_prims_reshape_impl(t660, (1, 4096, 4096))  # t661: "cuda:0 bf16[1, 4096, 4096]"
  del t660

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t632 = torch.nn.functional.linear(t661, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
    # t632 = ltorch.linear(t661, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
      # t632 = prims.linear(t661, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
  [t458] = nvFusion1(t632, x)
    # t450 = prims.convert_element_type(t632, dtypes.float32)  # t450: "cuda:0 f32[1, 4096, 4096]"
    # t453 = prims.convert_element_type(x, dtypes.float32)  # t453: "cuda:0 f32[1, 4096, 4096]"
    # t456 = prims.add(t450, t453)  # t456: "cuda:0 f32[1, 4096, 4096]"
    # t458 = prims.convert_element_type(t456, dtypes.bfloat16)  # t458: "cuda:0 bf16[1, 4096, 4096]"
  del t632

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t461, t462) = segkit_rms_norm_fwd(t458, t_blocks_0_norm_2_weight, 1e-06, False, 'outputs', False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t633 = torch.nn.functional.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
    # t633 = ltorch.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
      # t633 = prims.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
  t634 = torch.nn.functional.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
    # t634 = ltorch.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
      # t634 = prims.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
  [t535] = nvFusion2(t633, t634)
    # t484 = prims.convert_element_type(t633, dtypes.float32)  # t484: "cuda:0 f32[1, 4096, 12288]"
    # t485 = prims.neg(t484)  # t485: "cuda:0 f32[1, 4096, 12288]"
    # t486 = prims.exp(t485)  # t486: "cuda:0 f32[1, 4096, 12288]"
    # t487 = prims.add(1.0, t486)  # t487: "cuda:0 f32[1, 4096, 12288]"
    # t488 = prims.reciprocal(t487)  # t488: "cuda:0 f32[1, 4096, 12288]"
    # t492 = prims.mul(t484, t488)  # t492: "cuda:0 f32[1, 4096, 12288]"
    # t528 = prims.convert_element_type(t634, dtypes.float32)  # t528: "cuda:0 f32[1, 4096, 12288]"
    # t531 = prims.mul(t492, t528)  # t531: "cuda:0 f32[1, 4096, 12288]"
    # t535 = prims.convert_element_type(t531, dtypes.bfloat16)  # t535: "cuda:0 bf16[1, 4096, 12288]"

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t635 = torch.nn.functional.linear(t535, t_blocks_0_mlp_proj_weight, None)  # t635: "cuda:0 bf16[1, 4096, 4096]"
    # t635 = ltorch.linear(t535, t_blocks_0_mlp_proj_weight, None)  # t635: "cuda:0 bf16[1, 4096, 4096]"
      # t635 = prims.linear(t535, t_blocks_0_mlp_proj_weight, None)  # t635: "cuda:0 bf16[1, 4096, 4096]"
  [t555] = nvFusion3(t635, t458)
    # t547 = prims.convert_element_type(t635, dtypes.float32)  # t547: "cuda:0 f32[1, 4096, 4096]"
    # t550 = prims.convert_element_type(t458, dtypes.float32)  # t550: "cuda:0 f32[1, 4096, 4096]"
    # t553 = prims.add(t547, t550)  # t553: "cuda:0 f32[1, 4096, 4096]"
    # t555 = prims.convert_element_type(t553, dtypes.bfloat16)  # t555: "cuda:0 bf16[1, 4096, 4096]"
  del t635

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t558, t559) = segkit_rms_norm_fwd(t555, t_norm_weight, 1e-06, False, 'outputs', False)
  [t563] = nvFusion4(t558)
    # t563 = prims.convert_element_type(t558, dtypes.float32)  # t563: "cuda:0 f32[1, 4096, 4096]"
  del t558

  # benchmarks/model_cases.py:95: 	    return (y * y.detach().sin()).mean()
  t566 = torch.detach(t563)  # t566: "cuda:0 f32[1, 4096, 4096]"
  [t590] = nvFusion5(t566, t563)
    # t569 = prims.sin(t566)  # t569: "cuda:0 f32[1, 4096, 4096]"
    # t573 = prims.mul(t563, t569)  # t573: "cuda:0 f32[1, 4096, 4096]"
    # t577 = prims.shallow_copy(t573)  # t577: "cuda:0 f32[1, 4096, 4096]"
    # t579 = prims.sum(t577, (0, 1, 2))  # t579: "cuda:0 f32[]"
    # t583 = prims.div(t579, 16777216.0)  # t583: "cuda:0 f32[]"
    # t590 = prims.shallow_copy(t583)  # t590: "cuda:0 f32[]"
  return {'output': (t590,), 'flat_args': [x, cos, sin, t_blocks_0_attn_norm_k_weight, t, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t_blocks_0_norm_2_weight, t_norm_weight], 'flat_output': (t590,)}, ((t566, t563, t555, t559, t_norm_weight, t_blocks_0_mlp_proj_weight, t535, t633, t634, t_blocks_0_mlp_fc_2_weight, t461, t_blocks_0_mlp_fc_1_weight, t458, t462, t_blocks_0_norm_2_weight, t_blocks_0_attn_proj_weight, t661, t386, t409, t424, t429, t427, t428, t430, t657, t658, t654, t313, t_blocks_0_attn_norm_k_weight, t653, t308, t, t_blocks_0_attn_qkv_weight, t268, x, t269, weight), ())
# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)
# x: "cuda:0 bf16[1, 4096, 4096]"
# cos: "cuda:0 f32[1, 4096, 128]"
# sin: "cuda:0 f32[1, 4096, 128]"
# t_blocks_0_attn_norm_k_weight: "cuda:0 bf16[128]"
# t: "cuda:0 bf16[128]"
# t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
# t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
# t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[12288, 4096]"
# t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[12288, 4096]"
# t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 12288]"
# weight: "cuda:0 bf16[4096]"
# t_blocks_0_norm_2_weight: "cuda:0 bf16[4096]"
# t_norm_weight: "cuda:0 bf16[4096]"
# t268: "cuda:0 bf16[1, 4096, 4096]"
# t269: "cuda:0 f32[1, 4096]"
# t631: "cuda:0 bf16[1, 4096, 6144]"
# t647: "cuda:0 bf16[1, 4096, 4096]"
# t648: "cuda:0 bf16[1, 4096, 1024]"
# t649: "cuda:0 bf16[1, 4096, 1024]"
# t650: "cuda:0 bf16[1, 4096, 32, 128]"
# t651: "cuda:0 bf16[1, 4096, 8, 128]"
# t652: "cuda:0 bf16[1, 4096, 8, 128]"
# t653: "cuda:0 bf16[1, 32, 4096, 128]"
# t654: "cuda:0 bf16[1, 8, 4096, 128]"
# t655: "cuda:0 bf16[1, 8, 4096, 128]"
# t307: "cuda:0 bf16[1, 32, 4096, 128]"
# t308: "cuda:0 f32[1, 32, 4096]"
# t312: "cuda:0 bf16[1, 8, 4096, 128]"
# t313: "cuda:0 f32[1, 8, 4096]"
# t656: "cuda:0 bf16[1, 32, 4096, 128]"
# t657: "cuda:0 f32[1, 1, 4096, 128]"
# t658: "cuda:0 f32[1, 1, 4096, 128]"
# t325: "cuda:0 bf16[1, 32, 4096, 128]"
# t659: "cuda:0 bf16[1, 8, 4096, 128]"
# t358: "cuda:0 bf16[1, 8, 4096, 128]"
# t386: "cuda:0 bf16[1, 32, 4096, 128]"
# t409: "cuda:0 bf16[1, 32, 4096, 128]"
# t424: "cuda:0 bf16[1, 32, 4096, 128]"
# t429: "cuda:0 bf16[1, 32, 4096, 128]"
# t427: "cuda:0 f32[1, 32, 4096, 1]"
# t428: "cuda:0 i64[]"
# t430: "cuda:0 i64[]"
# t660: "cuda:0 bf16[1, 4096, 32, 128]"
# t661: "cuda:0 bf16[1, 4096, 4096]"
# t632: "cuda:0 bf16[1, 4096, 4096]"
# t458: "cuda:0 bf16[1, 4096, 4096]"
# t461: "cuda:0 bf16[1, 4096, 4096]"
# t462: "cuda:0 f32[1, 4096]"
# t633: "cuda:0 bf16[1, 4096, 12288]"
# t634: "cuda:0 bf16[1, 4096, 12288]"
# t535: "cuda:0 bf16[1, 4096, 12288]"
# t635: "cuda:0 bf16[1, 4096, 4096]"
# t555: "cuda:0 bf16[1, 4096, 4096]"
# t558: "cuda:0 bf16[1, 4096, 4096]"
# t559: "cuda:0 f32[1, 4096]"
# t563: "cuda:0 f32[1, 4096, 4096]"
# t566: "cuda:0 f32[1, 4096, 4096]"
# t590: "cuda:0 f32[]"
