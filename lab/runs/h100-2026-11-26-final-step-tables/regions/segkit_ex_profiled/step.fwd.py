# Constructed by segkit CallRanges (a profiler range per call)
import torch
import torch.nn.functional
from thunder.executors.torchex import no_autocast

@torch.no_grad()
@no_autocast
def computation(x, cos, sin, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t, t_norm_weight):
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # cos: "cuda:0 f32[1, 4096, 128]"
  # sin: "cuda:0 f32[1, 4096, 128]"
  # t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
  # t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
  # t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
  # t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
  # t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
  # weight: "cuda:0 bf16[4096]"
  # t: "cuda:0 bf16[4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"
  segkit_range_enter("(t221, t222) = segkit_rms_norm_fwd(x, weight, 1e-05, False, 'outputs', False)")

  # ./thunder_exec/executor.py:296: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t221, t222) = segkit_rms_norm_fwd(x, weight, 1e-05, False, 'outputs', False)
  segkit_range_exit()
  segkit_range_enter('t566 = torch.nn.functional.linear(t221, t_blocks_0_attn_qkv_weight, None)')

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t566 = torch.nn.functional.linear(t221, t_blocks_0_attn_qkv_weight, None)  # t566: "cuda:0 bf16[1, 4096, 6144]"
    # t566 = ltorch.linear(t221, t_blocks_0_attn_qkv_weight, None)  # t566: "cuda:0 bf16[1, 4096, 6144]"
      # t566 = prims.linear(t221, t_blocks_0_attn_qkv_weight, None)  # t566: "cuda:0 bf16[1, 4096, 6144]"
  segkit_range_exit()
  segkit_range_enter('(t581, t582, t583) = torch.split(t566, (4096, 1024, 1024), -1)')

  # /tmp/gpu-site/litgpt/model.py:479: 	        q, k, v = qkv.split((query_size, key_size, value_size), dim=-1)  # 3x(B, T, C*)
  (t581, t582, t583) = torch.split(t566, (4096, 1024, 1024), -1)
    # (t581, t582, t583) = ltorch.split(t566, (4096, 1024, 1024), -1)
      # t581 = prims.slice_prim(t566, [0, 0, 0], [1, 4096, 4096], [1, 1, 1])  # t581: "cuda:0 bf16[1, 4096, 4096]"
      # t582 = prims.slice_prim(t566, [0, 0, 4096], [1, 4096, 5120], [1, 1, 1])  # t582: "cuda:0 bf16[1, 4096, 1024]"
      # t583 = prims.slice_prim(t566, [0, 0, 5120], [1, 4096, 6144], [1, 1, 1])  # t583: "cuda:0 bf16[1, 4096, 1024]"
  segkit_range_exit()
  del t566
  segkit_range_enter('t584 = torch_prims_reshape_impl(t581, (1, 4096, 32, 128))')

  # /tmp/gpu-site/litgpt/model.py:490: 	        q = q.view(B, T, n_head, head_size)  # (B, T, nh_q, hs)
  t584 = torch_prims_reshape_impl(t581, (1, 4096, 32, 128))  # t584: "cuda:0 bf16[1, 4096, 32, 128]"
  segkit_range_exit()
  del t581
  segkit_range_enter('t585 = torch_prims_reshape_impl(t582, (1, 4096, 8, 128))')

  # /tmp/gpu-site/litgpt/model.py:491: 	        k = k.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t585 = torch_prims_reshape_impl(t582, (1, 4096, 8, 128))  # t585: "cuda:0 bf16[1, 4096, 8, 128]"
  segkit_range_exit()
  del t582
  segkit_range_enter('t586 = torch_prims_reshape_impl(t583, (1, 4096, 8, 128))')

  # /tmp/gpu-site/litgpt/model.py:492: 	        v = v.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t586 = torch_prims_reshape_impl(t583, (1, 4096, 8, 128))  # t586: "cuda:0 bf16[1, 4096, 8, 128]"
  segkit_range_exit()
  del t583
  segkit_range_enter('t587 = torch.permute(t584, (0, 2, 1, 3))')

  # /tmp/gpu-site/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t587 = torch.permute(t584, (0, 2, 1, 3))  # t587: "cuda:0 bf16[1, 32, 4096, 128]"
    # t587 = ltorch.permute(t584, (0, 2, 1, 3))  # t587: "cuda:0 bf16[1, 32, 4096, 128]"
      # t587 = prims.transpose(t584, (0, 2, 1, 3))  # t587: "cuda:0 bf16[1, 32, 4096, 128]"
  segkit_range_exit()
  del t584
  segkit_range_enter('t588 = torch.permute(t585, (0, 2, 1, 3))')

  # /tmp/gpu-site/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t588 = torch.permute(t585, (0, 2, 1, 3))  # t588: "cuda:0 bf16[1, 8, 4096, 128]"
    # t588 = ltorch.permute(t585, (0, 2, 1, 3))  # t588: "cuda:0 bf16[1, 8, 4096, 128]"
      # t588 = prims.transpose(t585, (0, 2, 1, 3))  # t588: "cuda:0 bf16[1, 8, 4096, 128]"
  segkit_range_exit()
  del t585
  segkit_range_enter('t589 = torch.permute(t586, (0, 2, 1, 3))')

  # /tmp/gpu-site/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t589 = torch.permute(t586, (0, 2, 1, 3))  # t589: "cuda:0 bf16[1, 8, 4096, 128]"
    # t589 = ltorch.permute(t586, (0, 2, 1, 3))  # t589: "cuda:0 bf16[1, 8, 4096, 128]"
      # t589 = prims.transpose(t586, (0, 2, 1, 3))  # t589: "cuda:0 bf16[1, 8, 4096, 128]"
  segkit_range_exit()
  del t586
  segkit_range_enter('t590 = shallow_copy(t587)')

  # /tmp/gpu-site/litgpt/model.py:510: 	            q_roped = apply_rope(q[..., :rope_n_elem], cos, sin)
  t590 = shallow_copy(t587)  # t590: "cuda:0 bf16[1, 32, 4096, 128]"
  segkit_range_exit()
  segkit_range_enter('t591 = torch_prims_reshape_impl(cos, (1, 1, 4096, 128))')

  # ./thunder_exec/recognize.py:178: 	            c, s = cos.view(*shape), sin.view(*shape)
  t591 = torch_prims_reshape_impl(cos, (1, 1, 4096, 128))  # t591: "cuda:0 f32[1, 1, 4096, 128]"
  segkit_range_exit()
  segkit_range_enter('t592 = torch_prims_reshape_impl(sin, (1, 1, 4096, 128))')

  # ./thunder_exec/recognize.py:178: 	            c, s = cos.view(*shape), sin.view(*shape)
  t592 = torch_prims_reshape_impl(sin, (1, 1, 4096, 128))  # t592: "cuda:0 f32[1, 1, 4096, 128]"
  segkit_range_exit()
  segkit_range_enter("t268 = segkit_rope_fwd(t590, t591, t592, torch.bfloat16, 'outputs', False)")

  # ./thunder_exec/rope.py:140: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t268 = segkit_rope_fwd(t590, t591, t592, torch.bfloat16, 'outputs', False)  # t268: "cuda:0 bf16[1, 32, 4096, 128]"
  segkit_range_exit()
  del t590
  segkit_range_enter('t593 = shallow_copy(t588)')

  # /tmp/gpu-site/litgpt/model.py:511: 	            k_roped = apply_rope(k[..., :rope_n_elem], cos, sin)
  t593 = shallow_copy(t588)  # t593: "cuda:0 bf16[1, 8, 4096, 128]"
  segkit_range_exit()
  segkit_range_enter("t301 = segkit_rope_fwd(t593, t591, t592, torch.bfloat16, 'outputs', False)")

  # ./thunder_exec/rope.py:140: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t301 = segkit_rope_fwd(t593, t591, t592, torch.bfloat16, 'outputs', False)  # t301: "cuda:0 bf16[1, 8, 4096, 128]"
  segkit_range_exit()
  del t593
  segkit_range_enter('[t352, t367, t370] = nvFusion0(t587, t268, t588, t301, t589)')
  [t352, t367, t370] = nvFusion0(t587, t268, t588, t301, t589)
    # t326 = prims.slice_prim(t587, [0, 0, 0, 0], [1, 32, 4096, 0], [1, 1, 1, 1])  # t326: "cuda:0 bf16[1, 32, 4096, 0]"
    # t329 = prims.cat([t268, t326], -1)  # t329: "cuda:0 bf16[1, 32, 4096, 128]"
    # t333 = prims.slice_prim(t588, [0, 0, 0, 0], [1, 8, 4096, 0], [1, 1, 1, 1])  # t333: "cuda:0 bf16[1, 8, 4096, 0]"
    # t336 = prims.cat([t301, t333], -1)  # t336: "cuda:0 bf16[1, 8, 4096, 128]"
    # t340 = prims.broadcast_in_dim(t336, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t340: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t346 = prims.broadcast_in_dim(t340, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t346: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t352 = prims.reshape(t346, (1, 32, 4096, 128))  # t352: "cuda:0 bf16[1, 32, 4096, 128]"
    # t355 = prims.broadcast_in_dim(t589, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t355: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t361 = prims.broadcast_in_dim(t355, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t361: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t367 = prims.reshape(t361, (1, 32, 4096, 128))  # t367: "cuda:0 bf16[1, 32, 4096, 128]"
    # t370 = prims.stride_order(t329, (3, 1, 2, 0))  # t370: "cuda:0 bf16[1, 32, 4096, 128]"
  segkit_range_exit()
  del t587, t268, t588, t301, t589
  segkit_range_enter('(t373, t371, t372, t374) = segkit_cudnn_sdpa_fwd(t370, t352, t367, True, 0.08838834764831843)')

  # /tmp/gpu-site/litgpt/model.py:593: 	            y = F.scaled_dot_product_attention(
  (t373, t371, t372, t374) = segkit_cudnn_sdpa_fwd(t370, t352, t367, True, 0.08838834764831843)
  segkit_range_exit()
  segkit_range_enter('t594 = torch.permute(t373, (0, 2, 1, 3))')

  # /tmp/gpu-site/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t594 = torch.permute(t373, (0, 2, 1, 3))  # t594: "cuda:0 bf16[1, 4096, 32, 128]"
    # t594 = ltorch.permute(t373, (0, 2, 1, 3))  # t594: "cuda:0 bf16[1, 4096, 32, 128]"
      # t594 = prims.transpose(t373, (0, 2, 1, 3))  # t594: "cuda:0 bf16[1, 4096, 32, 128]"
  segkit_range_exit()
  segkit_range_enter('t595 = torch_prims_reshape_impl(t594, (1, 4096, 4096))')

  # /tmp/gpu-site/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t595 = torch_prims_reshape_impl(t594, (1, 4096, 4096))  # t595: "cuda:0 bf16[1, 4096, 4096]"
  segkit_range_exit()
  del t594
  segkit_range_enter('t567 = torch.nn.functional.linear(t595, t_blocks_0_attn_proj_weight, None)')

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t567 = torch.nn.functional.linear(t595, t_blocks_0_attn_proj_weight, None)  # t567: "cuda:0 bf16[1, 4096, 4096]"
    # t567 = ltorch.linear(t595, t_blocks_0_attn_proj_weight, None)  # t567: "cuda:0 bf16[1, 4096, 4096]"
      # t567 = prims.linear(t595, t_blocks_0_attn_proj_weight, None)  # t567: "cuda:0 bf16[1, 4096, 4096]"
  segkit_range_exit()
  segkit_range_enter('[t402] = nvFusion1(t567, x)')
  [t402] = nvFusion1(t567, x)
    # t394 = prims.convert_element_type(t567, dtypes.float32)  # t394: "cuda:0 f32[1, 4096, 4096]"
    # t397 = prims.convert_element_type(x, dtypes.float32)  # t397: "cuda:0 f32[1, 4096, 4096]"
    # t400 = prims.add(t394, t397)  # t400: "cuda:0 f32[1, 4096, 4096]"
    # t402 = prims.convert_element_type(t400, dtypes.bfloat16)  # t402: "cuda:0 bf16[1, 4096, 4096]"
  segkit_range_exit()
  del t567
  segkit_range_enter("(t405, t406) = segkit_rms_norm_fwd(t402, t, 1e-05, False, 'outputs', False)")

  # ./thunder_exec/executor.py:296: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t405, t406) = segkit_rms_norm_fwd(t402, t, 1e-05, False, 'outputs', False)
  segkit_range_exit()
  segkit_range_enter('t568 = torch.nn.functional.linear(t405, t_blocks_0_mlp_fc_1_weight, None)')

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t568 = torch.nn.functional.linear(t405, t_blocks_0_mlp_fc_1_weight, None)  # t568: "cuda:0 bf16[1, 4096, 14336]"
    # t568 = ltorch.linear(t405, t_blocks_0_mlp_fc_1_weight, None)  # t568: "cuda:0 bf16[1, 4096, 14336]"
      # t568 = prims.linear(t405, t_blocks_0_mlp_fc_1_weight, None)  # t568: "cuda:0 bf16[1, 4096, 14336]"
  segkit_range_exit()
  segkit_range_enter('t569 = torch.nn.functional.linear(t405, t_blocks_0_mlp_fc_2_weight, None)')

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t569 = torch.nn.functional.linear(t405, t_blocks_0_mlp_fc_2_weight, None)  # t569: "cuda:0 bf16[1, 4096, 14336]"
    # t569 = ltorch.linear(t405, t_blocks_0_mlp_fc_2_weight, None)  # t569: "cuda:0 bf16[1, 4096, 14336]"
      # t569 = prims.linear(t405, t_blocks_0_mlp_fc_2_weight, None)  # t569: "cuda:0 bf16[1, 4096, 14336]"
  segkit_range_exit()
  segkit_range_enter('[t479] = nvFusion2(t568, t569)')
  [t479] = nvFusion2(t568, t569)
    # t428 = prims.convert_element_type(t568, dtypes.float32)  # t428: "cuda:0 f32[1, 4096, 14336]"
    # t429 = prims.neg(t428)  # t429: "cuda:0 f32[1, 4096, 14336]"
    # t430 = prims.exp(t429)  # t430: "cuda:0 f32[1, 4096, 14336]"
    # t431 = prims.add(1.0, t430)  # t431: "cuda:0 f32[1, 4096, 14336]"
    # t432 = prims.reciprocal(t431)  # t432: "cuda:0 f32[1, 4096, 14336]"
    # t436 = prims.mul(t428, t432)  # t436: "cuda:0 f32[1, 4096, 14336]"
    # t472 = prims.convert_element_type(t569, dtypes.float32)  # t472: "cuda:0 f32[1, 4096, 14336]"
    # t475 = prims.mul(t436, t472)  # t475: "cuda:0 f32[1, 4096, 14336]"
    # t479 = prims.convert_element_type(t475, dtypes.bfloat16)  # t479: "cuda:0 bf16[1, 4096, 14336]"
  segkit_range_exit()
  segkit_range_enter('t570 = torch.nn.functional.linear(t479, t_blocks_0_mlp_proj_weight, None)')

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t570 = torch.nn.functional.linear(t479, t_blocks_0_mlp_proj_weight, None)  # t570: "cuda:0 bf16[1, 4096, 4096]"
    # t570 = ltorch.linear(t479, t_blocks_0_mlp_proj_weight, None)  # t570: "cuda:0 bf16[1, 4096, 4096]"
      # t570 = prims.linear(t479, t_blocks_0_mlp_proj_weight, None)  # t570: "cuda:0 bf16[1, 4096, 4096]"
  segkit_range_exit()
  segkit_range_enter('[t499] = nvFusion3(t570, t402)')
  [t499] = nvFusion3(t570, t402)
    # t491 = prims.convert_element_type(t570, dtypes.float32)  # t491: "cuda:0 f32[1, 4096, 4096]"
    # t494 = prims.convert_element_type(t402, dtypes.float32)  # t494: "cuda:0 f32[1, 4096, 4096]"
    # t497 = prims.add(t491, t494)  # t497: "cuda:0 f32[1, 4096, 4096]"
    # t499 = prims.convert_element_type(t497, dtypes.bfloat16)  # t499: "cuda:0 bf16[1, 4096, 4096]"
  segkit_range_exit()
  del t570
  segkit_range_enter("(t502, t503) = segkit_rms_norm_fwd(t499, t_norm_weight, 1e-05, False, 'outputs', False)")

  # ./thunder_exec/executor.py:296: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t502, t503) = segkit_rms_norm_fwd(t499, t_norm_weight, 1e-05, False, 'outputs', False)
  segkit_range_exit()
  segkit_range_enter('[t527] = nvFusion4(t502)')
  [t527] = nvFusion4(t502)
    # t507 = prims.convert_element_type(t502, dtypes.float32)  # t507: "cuda:0 f32[1, 4096, 4096]"
    # t510 = prims.sin(t507)  # t510: "cuda:0 f32[1, 4096, 4096]"
    # t514 = prims.shallow_copy(t510)  # t514: "cuda:0 f32[1, 4096, 4096]"
    # t516 = prims.sum(t514, (0, 1, 2))  # t516: "cuda:0 f32[]"
    # t520 = prims.div(t516, 16777216.0)  # t520: "cuda:0 f32[]"
    # t527 = prims.shallow_copy(t520)  # t527: "cuda:0 f32[]"
  segkit_range_exit()
  return {'output': (t527,), 'flat_args': [x, cos, sin, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t, t_norm_weight], 'flat_output': (t527,)}, ((t502, t499, t503, t_norm_weight, t_blocks_0_mlp_proj_weight, t479, t568, t569, t_blocks_0_mlp_fc_2_weight, t405, t_blocks_0_mlp_fc_1_weight, t402, t406, t, t_blocks_0_attn_proj_weight, t595, t370, t352, t367, t373, t371, t372, t374, t591, t592, t_blocks_0_attn_qkv_weight, t221, x, t222, weight), ())
# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)
# x: "cuda:0 bf16[1, 4096, 4096]"
# cos: "cuda:0 f32[1, 4096, 128]"
# sin: "cuda:0 f32[1, 4096, 128]"
# t_blocks_0_attn_proj_weight: "cuda:0 bf16[4096, 4096]"
# t_blocks_0_attn_qkv_weight: "cuda:0 bf16[6144, 4096]"
# t_blocks_0_mlp_fc_1_weight: "cuda:0 bf16[14336, 4096]"
# t_blocks_0_mlp_fc_2_weight: "cuda:0 bf16[14336, 4096]"
# t_blocks_0_mlp_proj_weight: "cuda:0 bf16[4096, 14336]"
# weight: "cuda:0 bf16[4096]"
# t: "cuda:0 bf16[4096]"
# t_norm_weight: "cuda:0 bf16[4096]"
# t221: "cuda:0 bf16[1, 4096, 4096]"
# t222: "cuda:0 f32[1, 4096]"
# t566: "cuda:0 bf16[1, 4096, 6144]"
# t581: "cuda:0 bf16[1, 4096, 4096]"
# t582: "cuda:0 bf16[1, 4096, 1024]"
# t583: "cuda:0 bf16[1, 4096, 1024]"
# t584: "cuda:0 bf16[1, 4096, 32, 128]"
# t585: "cuda:0 bf16[1, 4096, 8, 128]"
# t586: "cuda:0 bf16[1, 4096, 8, 128]"
# t587: "cuda:0 bf16[1, 32, 4096, 128]"
# t588: "cuda:0 bf16[1, 8, 4096, 128]"
# t589: "cuda:0 bf16[1, 8, 4096, 128]"
# t590: "cuda:0 bf16[1, 32, 4096, 128]"
# t591: "cuda:0 f32[1, 1, 4096, 128]"
# t592: "cuda:0 f32[1, 1, 4096, 128]"
# t268: "cuda:0 bf16[1, 32, 4096, 128]"
# t593: "cuda:0 bf16[1, 8, 4096, 128]"
# t301: "cuda:0 bf16[1, 8, 4096, 128]"
# t352: "cuda:0 bf16[1, 32, 4096, 128]"
# t367: "cuda:0 bf16[1, 32, 4096, 128]"
# t370: "cuda:0 bf16[1, 32, 4096, 128]"
# t373: "cuda:0 bf16[1, 32, 4096, 128]"
# t371: "cuda:0 f32[1, 32, 4096, 1]"
# t372: "cuda:0 i64[]"
# t374: "cuda:0 i64[]"
# t594: "cuda:0 bf16[1, 4096, 32, 128]"
# t595: "cuda:0 bf16[1, 4096, 4096]"
# t567: "cuda:0 bf16[1, 4096, 4096]"
# t402: "cuda:0 bf16[1, 4096, 4096]"
# t405: "cuda:0 bf16[1, 4096, 4096]"
# t406: "cuda:0 f32[1, 4096]"
# t568: "cuda:0 bf16[1, 4096, 14336]"
# t569: "cuda:0 bf16[1, 4096, 14336]"
# t479: "cuda:0 bf16[1, 4096, 14336]"
# t570: "cuda:0 bf16[1, 4096, 4096]"
# t499: "cuda:0 bf16[1, 4096, 4096]"
# t502: "cuda:0 bf16[1, 4096, 4096]"
# t503: "cuda:0 f32[1, 4096]"
# t527: "cuda:0 f32[]"
