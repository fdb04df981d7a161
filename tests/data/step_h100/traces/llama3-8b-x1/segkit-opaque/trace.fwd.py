# Constructed by Delete Last Used (took 1 milliseconds)
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

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t223, t224) = segkit_rms_norm_fwd(x, weight, 1e-05, False, 'outputs', False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t576 = torch.nn.functional.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"
    # t576 = ltorch.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"
      # t576 = prims.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"

  # site-packages/litgpt/model.py:479: 	        q, k, v = qkv.split((query_size, key_size, value_size), dim=-1)  # 3x(B, T, C*)
  (t592, t593, t594) = torch.split(t576, (4096, 1024, 1024), -1)
    # (t592, t593, t594) = ltorch.split(t576, (4096, 1024, 1024), -1)
      # t592 = prims.slice_prim(t576, [0, 0, 0], [1, 4096, 4096], [1, 1, 1])  # t592: "cuda:0 bf16[1, 4096, 4096]"
      # t593 = prims.slice_prim(t576, [0, 0, 4096], [1, 4096, 5120], [1, 1, 1])  # t593: "cuda:0 bf16[1, 4096, 1024]"
      # t594 = prims.slice_prim(t576, [0, 0, 5120], [1, 4096, 6144], [1, 1, 1])  # t594: "cuda:0 bf16[1, 4096, 1024]"
  del t576

  # site-packages/litgpt/model.py:490: 	        q = q.view(B, T, n_head, head_size)  # (B, T, nh_q, hs)
  t595 = torch_prims_reshape_impl(t592, (1, 4096, 32, 128))  # t595: "cuda:0 bf16[1, 4096, 32, 128]"
  del t592

  # site-packages/litgpt/model.py:491: 	        k = k.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t596 = torch_prims_reshape_impl(t593, (1, 4096, 8, 128))  # t596: "cuda:0 bf16[1, 4096, 8, 128]"
  del t593

  # site-packages/litgpt/model.py:492: 	        v = v.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
  t597 = torch_prims_reshape_impl(t594, (1, 4096, 8, 128))  # t597: "cuda:0 bf16[1, 4096, 8, 128]"
  del t594

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t598 = torch.permute(t595, (0, 2, 1, 3))  # t598: "cuda:0 bf16[1, 32, 4096, 128]"
    # t598 = ltorch.permute(t595, (0, 2, 1, 3))  # t598: "cuda:0 bf16[1, 32, 4096, 128]"
      # t598 = prims.transpose(t595, (0, 2, 1, 3))  # t598: "cuda:0 bf16[1, 32, 4096, 128]"
  del t595

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t599 = torch.permute(t596, (0, 2, 1, 3))  # t599: "cuda:0 bf16[1, 8, 4096, 128]"
    # t599 = ltorch.permute(t596, (0, 2, 1, 3))  # t599: "cuda:0 bf16[1, 8, 4096, 128]"
      # t599 = prims.transpose(t596, (0, 2, 1, 3))  # t599: "cuda:0 bf16[1, 8, 4096, 128]"
  del t596

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t600 = torch.permute(t597, (0, 2, 1, 3))  # t600: "cuda:0 bf16[1, 8, 4096, 128]"
    # t600 = ltorch.permute(t597, (0, 2, 1, 3))  # t600: "cuda:0 bf16[1, 8, 4096, 128]"
      # t600 = prims.transpose(t597, (0, 2, 1, 3))  # t600: "cuda:0 bf16[1, 8, 4096, 128]"
  del t597

  # site-packages/litgpt/model.py:510: 	            q_roped = apply_rope(q[..., :rope_n_elem], cos, sin)
  t601 = shallow_copy(t598)  # t601: "cuda:0 bf16[1, 32, 4096, 128]"

  # thunder_exec/recognize.py:178: 	            c, s = cos.view(*shape), sin.view(*shape)
  t602 = torch_prims_reshape_impl(cos, (1, 1, 4096, 128))  # t602: "cuda:0 f32[1, 1, 4096, 128]"
  t603 = torch_prims_reshape_impl(sin, (1, 1, 4096, 128))  # t603: "cuda:0 f32[1, 1, 4096, 128]"

  # thunder_exec/rope.py:134: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t270 = segkit_rope_fwd(t601, t602, t603, torch.bfloat16, 'outputs', False)  # t270: "cuda:0 bf16[1, 32, 4096, 128]"
  del t601

  # site-packages/litgpt/model.py:511: 	            k_roped = apply_rope(k[..., :rope_n_elem], cos, sin)
  t604 = shallow_copy(t599)  # t604: "cuda:0 bf16[1, 8, 4096, 128]"

  # thunder_exec/rope.py:134: 	    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
  t303 = segkit_rope_fwd(t604, t602, t603, torch.bfloat16, 'outputs', False)  # t303: "cuda:0 bf16[1, 8, 4096, 128]"
  del t604
  [t331, t354, t369] = nvFusion0(t598, t270, t599, t303, t600)
    # t328 = prims.slice_prim(t598, [0, 0, 0, 0], [1, 32, 4096, 0], [1, 1, 1, 1])  # t328: "cuda:0 bf16[1, 32, 4096, 0]"
    # t331 = prims.cat([t270, t328], -1)  # t331: "cuda:0 bf16[1, 32, 4096, 128]"
    # t335 = prims.slice_prim(t599, [0, 0, 0, 0], [1, 8, 4096, 0], [1, 1, 1, 1])  # t335: "cuda:0 bf16[1, 8, 4096, 0]"
    # t338 = prims.cat([t303, t335], -1)  # t338: "cuda:0 bf16[1, 8, 4096, 128]"
    # t342 = prims.broadcast_in_dim(t338, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t342: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t348 = prims.broadcast_in_dim(t342, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t348: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t354 = prims.reshape(t348, (1, 32, 4096, 128))  # t354: "cuda:0 bf16[1, 32, 4096, 128]"
    # t357 = prims.broadcast_in_dim(t600, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t357: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t363 = prims.broadcast_in_dim(t357, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t363: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t369 = prims.reshape(t363, (1, 32, 4096, 128))  # t369: "cuda:0 bf16[1, 32, 4096, 128]"
  del t598, t270, t599, t303, t600

  # site-packages/litgpt/model.py:593: 	            y = F.scaled_dot_product_attention(
  (t374, t372, t373, t375) = segkit_cudnn_sdpa_fwd(t331, t354, t369, True, 0.08838834764831843)

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t605 = torch.permute(t374, (0, 2, 1, 3))  # t605: "cuda:0 bf16[1, 4096, 32, 128]"
    # t605 = ltorch.permute(t374, (0, 2, 1, 3))  # t605: "cuda:0 bf16[1, 4096, 32, 128]"
      # t605 = prims.transpose(t374, (0, 2, 1, 3))  # t605: "cuda:0 bf16[1, 4096, 32, 128]"
  t606 = torch_prims_reshape_impl(t605, (1, 4096, 4096))  # t606: "cuda:0 bf16[1, 4096, 4096]"
  del t605

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t577 = torch.nn.functional.linear(t606, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
    # t577 = ltorch.linear(t606, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
      # t577 = prims.linear(t606, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
  [t403] = nvFusion1(t577, x)
    # t395 = prims.convert_element_type(t577, dtypes.float32)  # t395: "cuda:0 f32[1, 4096, 4096]"
    # t398 = prims.convert_element_type(x, dtypes.float32)  # t398: "cuda:0 f32[1, 4096, 4096]"
    # t401 = prims.add(t395, t398)  # t401: "cuda:0 f32[1, 4096, 4096]"
    # t403 = prims.convert_element_type(t401, dtypes.bfloat16)  # t403: "cuda:0 bf16[1, 4096, 4096]"
  del t577

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t406, t407) = segkit_rms_norm_fwd(t403, t, 1e-05, False, 'outputs', False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t578 = torch.nn.functional.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
    # t578 = ltorch.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
      # t578 = prims.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
  t579 = torch.nn.functional.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
    # t579 = ltorch.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
      # t579 = prims.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
  [t480] = nvFusion2(t578, t579)
    # t429 = prims.convert_element_type(t578, dtypes.float32)  # t429: "cuda:0 f32[1, 4096, 14336]"
    # t430 = prims.neg(t429)  # t430: "cuda:0 f32[1, 4096, 14336]"
    # t431 = prims.exp(t430)  # t431: "cuda:0 f32[1, 4096, 14336]"
    # t432 = prims.add(1.0, t431)  # t432: "cuda:0 f32[1, 4096, 14336]"
    # t433 = prims.reciprocal(t432)  # t433: "cuda:0 f32[1, 4096, 14336]"
    # t437 = prims.mul(t429, t433)  # t437: "cuda:0 f32[1, 4096, 14336]"
    # t473 = prims.convert_element_type(t579, dtypes.float32)  # t473: "cuda:0 f32[1, 4096, 14336]"
    # t476 = prims.mul(t437, t473)  # t476: "cuda:0 f32[1, 4096, 14336]"
    # t480 = prims.convert_element_type(t476, dtypes.bfloat16)  # t480: "cuda:0 bf16[1, 4096, 14336]"

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t580 = torch.nn.functional.linear(t480, t_blocks_0_mlp_proj_weight, None)  # t580: "cuda:0 bf16[1, 4096, 4096]"
    # t580 = ltorch.linear(t480, t_blocks_0_mlp_proj_weight, None)  # t580: "cuda:0 bf16[1, 4096, 4096]"
      # t580 = prims.linear(t480, t_blocks_0_mlp_proj_weight, None)  # t580: "cuda:0 bf16[1, 4096, 4096]"
  [t500] = nvFusion3(t580, t403)
    # t492 = prims.convert_element_type(t580, dtypes.float32)  # t492: "cuda:0 f32[1, 4096, 4096]"
    # t495 = prims.convert_element_type(t403, dtypes.float32)  # t495: "cuda:0 f32[1, 4096, 4096]"
    # t498 = prims.add(t492, t495)  # t498: "cuda:0 f32[1, 4096, 4096]"
    # t500 = prims.convert_element_type(t498, dtypes.bfloat16)  # t500: "cuda:0 bf16[1, 4096, 4096]"
  del t580

  # thunder_exec/executor.py:298: 	    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
  (t503, t504) = segkit_rms_norm_fwd(t500, t_norm_weight, 1e-05, False, 'outputs', False)
  [t508] = nvFusion4(t503)
    # t508 = prims.convert_element_type(t503, dtypes.float32)  # t508: "cuda:0 f32[1, 4096, 4096]"
  del t503

  # benchmarks/model_cases.py:95: 	    return (y * y.detach().sin()).mean()
  t511 = torch.detach(t508)  # t511: "cuda:0 f32[1, 4096, 4096]"
  [t535] = nvFusion5(t511, t508)
    # t514 = prims.sin(t511)  # t514: "cuda:0 f32[1, 4096, 4096]"
    # t518 = prims.mul(t508, t514)  # t518: "cuda:0 f32[1, 4096, 4096]"
    # t522 = prims.shallow_copy(t518)  # t522: "cuda:0 f32[1, 4096, 4096]"
    # t524 = prims.sum(t522, (0, 1, 2))  # t524: "cuda:0 f32[]"
    # t528 = prims.div(t524, 16777216.0)  # t528: "cuda:0 f32[]"
    # t535 = prims.shallow_copy(t528)  # t535: "cuda:0 f32[]"
  return {'output': (t535,), 'flat_args': [x, cos, sin, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t, t_norm_weight], 'flat_output': (t535,)}, ((t511, t508, t500, t504, t_norm_weight, t_blocks_0_mlp_proj_weight, t480, t578, t579, t_blocks_0_mlp_fc_2_weight, t406, t_blocks_0_mlp_fc_1_weight, t403, t407, t, t_blocks_0_attn_proj_weight, t606, t331, t354, t369, t374, t372, t373, t375, t602, t603, t_blocks_0_attn_qkv_weight, t223, x, t224, weight), ())
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
# t223: "cuda:0 bf16[1, 4096, 4096]"
# t224: "cuda:0 f32[1, 4096]"
# t576: "cuda:0 bf16[1, 4096, 6144]"
# t592: "cuda:0 bf16[1, 4096, 4096]"
# t593: "cuda:0 bf16[1, 4096, 1024]"
# t594: "cuda:0 bf16[1, 4096, 1024]"
# t595: "cuda:0 bf16[1, 4096, 32, 128]"
# t596: "cuda:0 bf16[1, 4096, 8, 128]"
# t597: "cuda:0 bf16[1, 4096, 8, 128]"
# t598: "cuda:0 bf16[1, 32, 4096, 128]"
# t599: "cuda:0 bf16[1, 8, 4096, 128]"
# t600: "cuda:0 bf16[1, 8, 4096, 128]"
# t601: "cuda:0 bf16[1, 32, 4096, 128]"
# t602: "cuda:0 f32[1, 1, 4096, 128]"
# t603: "cuda:0 f32[1, 1, 4096, 128]"
# t270: "cuda:0 bf16[1, 32, 4096, 128]"
# t604: "cuda:0 bf16[1, 8, 4096, 128]"
# t303: "cuda:0 bf16[1, 8, 4096, 128]"
# t331: "cuda:0 bf16[1, 32, 4096, 128]"
# t354: "cuda:0 bf16[1, 32, 4096, 128]"
# t369: "cuda:0 bf16[1, 32, 4096, 128]"
# t374: "cuda:0 bf16[1, 32, 4096, 128]"
# t372: "cuda:0 f32[1, 32, 4096, 1]"
# t373: "cuda:0 i64[]"
# t375: "cuda:0 i64[]"
# t605: "cuda:0 bf16[1, 4096, 32, 128]"
# t606: "cuda:0 bf16[1, 4096, 4096]"
# t577: "cuda:0 bf16[1, 4096, 4096]"
# t403: "cuda:0 bf16[1, 4096, 4096]"
# t406: "cuda:0 bf16[1, 4096, 4096]"
# t407: "cuda:0 f32[1, 4096]"
# t578: "cuda:0 bf16[1, 4096, 14336]"
# t579: "cuda:0 bf16[1, 4096, 14336]"
# t480: "cuda:0 bf16[1, 4096, 14336]"
# t580: "cuda:0 bf16[1, 4096, 4096]"
# t500: "cuda:0 bf16[1, 4096, 4096]"
# t503: "cuda:0 bf16[1, 4096, 4096]"
# t504: "cuda:0 f32[1, 4096]"
# t508: "cuda:0 f32[1, 4096, 4096]"
# t511: "cuda:0 f32[1, 4096, 4096]"
# t535: "cuda:0 f32[]"
