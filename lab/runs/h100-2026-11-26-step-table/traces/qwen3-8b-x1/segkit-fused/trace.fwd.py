# Constructed by Delete Last Used (took 0 milliseconds)
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
  [t268] = nvFusion0(x, weight)
    # (t268, t269) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(x, weight, 1e-06, False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t631 = torch.nn.functional.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"
    # t631 = ltorch.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"
      # t631 = prims.linear(t268, t_blocks_0_attn_qkv_weight, None)  # t631: "cuda:0 bf16[1, 4096, 6144]"
  [t386, t409, t424] = nvFusion1(t631, t, t_blocks_0_attn_norm_k_weight, cos, sin)
    # t282 = prims.slice_prim(t631, [0, 0, 0], [1, 4096, 4096], [1, 1, 1])  # t282: "cuda:0 bf16[1, 4096, 4096]"
    # t283 = prims.slice_prim(t631, [0, 0, 4096], [1, 4096, 5120], [1, 1, 1])  # t283: "cuda:0 bf16[1, 4096, 1024]"
    # t284 = prims.slice_prim(t631, [0, 0, 5120], [1, 4096, 6144], [1, 1, 1])  # t284: "cuda:0 bf16[1, 4096, 1024]"
    # t289 = prims.reshape(t282, (1, 4096, 32, 128))  # t289: "cuda:0 bf16[1, 4096, 32, 128]"
    # t292 = prims.reshape(t283, (1, 4096, 8, 128))  # t292: "cuda:0 bf16[1, 4096, 8, 128]"
    # t295 = prims.reshape(t284, (1, 4096, 8, 128))  # t295: "cuda:0 bf16[1, 4096, 8, 128]"
    # t298 = prims.transpose(t289, (0, 2, 1, 3))  # t298: "cuda:0 bf16[1, 32, 4096, 128]"
    # t301 = prims.transpose(t292, (0, 2, 1, 3))  # t301: "cuda:0 bf16[1, 8, 4096, 128]"
    # t304 = prims.transpose(t295, (0, 2, 1, 3))  # t304: "cuda:0 bf16[1, 8, 4096, 128]"
    # (t307, t308) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t298, t, 1e-06, False)
    # (t312, t313) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t301, t_blocks_0_attn_norm_k_weight, 1e-06, False)
    # t317 = prims.shallow_copy(t307)  # t317: "cuda:0 bf16[1, 32, 4096, 128]"
    # t319 = prims.reshape(cos, (1, 1, 4096, 128))  # t319: "cuda:0 f32[1, 1, 4096, 128]"
    # t322 = prims.reshape(sin, (1, 1, 4096, 128))  # t322: "cuda:0 f32[1, 1, 4096, 128]"
    # t325 = thunder_exec.fusible.segkit_nv_rope_fwd(t317, t319, t322, torch.bfloat16)  # t325: "cuda:0 bf16[1, 32, 4096, 128]"
    # t350 = prims.shallow_copy(t312)  # t350: "cuda:0 bf16[1, 8, 4096, 128]"
    # t358 = thunder_exec.fusible.segkit_nv_rope_fwd(t350, t319, t322, torch.bfloat16)  # t358: "cuda:0 bf16[1, 8, 4096, 128]"
    # t383 = prims.slice_prim(t307, [0, 0, 0, 0], [1, 32, 4096, 0], [1, 1, 1, 1])  # t383: "cuda:0 bf16[1, 32, 4096, 0]"
    # t386 = prims.cat([t325, t383], -1)  # t386: "cuda:0 bf16[1, 32, 4096, 128]"
    # t390 = prims.slice_prim(t312, [0, 0, 0, 0], [1, 8, 4096, 0], [1, 1, 1, 1])  # t390: "cuda:0 bf16[1, 8, 4096, 0]"
    # t393 = prims.cat([t358, t390], -1)  # t393: "cuda:0 bf16[1, 8, 4096, 128]"
    # t397 = prims.broadcast_in_dim(t393, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t397: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t403 = prims.broadcast_in_dim(t397, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t403: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t409 = prims.reshape(t403, (1, 32, 4096, 128))  # t409: "cuda:0 bf16[1, 32, 4096, 128]"
    # t412 = prims.broadcast_in_dim(t304, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t412: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t418 = prims.broadcast_in_dim(t412, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t418: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t424 = prims.reshape(t418, (1, 32, 4096, 128))  # t424: "cuda:0 bf16[1, 32, 4096, 128]"

  # site-packages/litgpt/model.py:593: 	            y = F.scaled_dot_product_attention(
  (t429, t427, t428, t430) = segkit_cudnn_sdpa_fwd(t386, t409, t424, True, 0.08838834764831843)

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t647 = torch.permute(t429, (0, 2, 1, 3))  # t647: "cuda:0 bf16[1, 4096, 32, 128]"
    # t647 = ltorch.permute(t429, (0, 2, 1, 3))  # t647: "cuda:0 bf16[1, 4096, 32, 128]"
      # t647 = prims.transpose(t429, (0, 2, 1, 3))  # t647: "cuda:0 bf16[1, 4096, 32, 128]"
  t648 = torch_prims_reshape_impl(t647, (1, 4096, 4096))  # t648: "cuda:0 bf16[1, 4096, 4096]"
  del t647

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t632 = torch.nn.functional.linear(t648, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
    # t632 = ltorch.linear(t648, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
      # t632 = prims.linear(t648, t_blocks_0_attn_proj_weight, None)  # t632: "cuda:0 bf16[1, 4096, 4096]"
  [t458, t461] = nvFusion2(t632, x, t_blocks_0_norm_2_weight)
    # t450 = prims.convert_element_type(t632, dtypes.float32)  # t450: "cuda:0 f32[1, 4096, 4096]"
    # t453 = prims.convert_element_type(x, dtypes.float32)  # t453: "cuda:0 f32[1, 4096, 4096]"
    # t456 = prims.add(t450, t453)  # t456: "cuda:0 f32[1, 4096, 4096]"
    # t458 = prims.convert_element_type(t456, dtypes.bfloat16)  # t458: "cuda:0 bf16[1, 4096, 4096]"
    # (t461, t462) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t458, t_blocks_0_norm_2_weight, 1e-06, False)
  del t632

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t633 = torch.nn.functional.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
    # t633 = ltorch.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
      # t633 = prims.linear(t461, t_blocks_0_mlp_fc_1_weight, None)  # t633: "cuda:0 bf16[1, 4096, 12288]"
  t634 = torch.nn.functional.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
    # t634 = ltorch.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
      # t634 = prims.linear(t461, t_blocks_0_mlp_fc_2_weight, None)  # t634: "cuda:0 bf16[1, 4096, 12288]"
  [t535] = nvFusion3(t633, t634)
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
  [t555, t563] = nvFusion4(t635, t458, t_norm_weight)
    # t547 = prims.convert_element_type(t635, dtypes.float32)  # t547: "cuda:0 f32[1, 4096, 4096]"
    # t550 = prims.convert_element_type(t458, dtypes.float32)  # t550: "cuda:0 f32[1, 4096, 4096]"
    # t553 = prims.add(t547, t550)  # t553: "cuda:0 f32[1, 4096, 4096]"
    # t555 = prims.convert_element_type(t553, dtypes.bfloat16)  # t555: "cuda:0 bf16[1, 4096, 4096]"
    # (t558, t559) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t555, t_norm_weight, 1e-06, False)
    # t563 = prims.convert_element_type(t558, dtypes.float32)  # t563: "cuda:0 f32[1, 4096, 4096]"
  del t635

  # benchmarks/model_cases.py:95: 	    return (y * y.detach().sin()).mean()
  t566 = torch.detach(t563)  # t566: "cuda:0 f32[1, 4096, 4096]"
  [t590] = nvFusion5(t566, t563)
    # t569 = prims.sin(t566)  # t569: "cuda:0 f32[1, 4096, 4096]"
    # t573 = prims.mul(t563, t569)  # t573: "cuda:0 f32[1, 4096, 4096]"
    # t577 = prims.shallow_copy(t573)  # t577: "cuda:0 f32[1, 4096, 4096]"
    # t579 = prims.sum(t577, (0, 1, 2))  # t579: "cuda:0 f32[]"
    # t583 = prims.div(t579, 16777216.0)  # t583: "cuda:0 f32[]"
    # t590 = prims.shallow_copy(t583)  # t590: "cuda:0 f32[]"
  return {'output': (t590,), 'flat_args': [x, cos, sin, t_blocks_0_attn_norm_k_weight, t, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t_blocks_0_norm_2_weight, t_norm_weight], 'flat_output': (t590,)}, ((t566, t563, t555, t_norm_weight, t_blocks_0_mlp_proj_weight, t535, t633, t634, t_blocks_0_mlp_fc_2_weight, t461, t_blocks_0_mlp_fc_1_weight, t458, t_blocks_0_norm_2_weight, t_blocks_0_attn_proj_weight, t648, t386, t409, t424, t429, t427, t428, t430, sin, cos, t631, t_blocks_0_attn_norm_k_weight, t, t_blocks_0_attn_qkv_weight, t268, x, weight), ())
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
# t631: "cuda:0 bf16[1, 4096, 6144]"
# t386: "cuda:0 bf16[1, 32, 4096, 128]"
# t409: "cuda:0 bf16[1, 32, 4096, 128]"
# t424: "cuda:0 bf16[1, 32, 4096, 128]"
# t429: "cuda:0 bf16[1, 32, 4096, 128]"
# t427: "cuda:0 f32[1, 32, 4096, 1]"
# t428: "cuda:0 i64[]"
# t430: "cuda:0 i64[]"
# t647: "cuda:0 bf16[1, 4096, 32, 128]"
# t648: "cuda:0 bf16[1, 4096, 4096]"
# t632: "cuda:0 bf16[1, 4096, 4096]"
# t458: "cuda:0 bf16[1, 4096, 4096]"
# t461: "cuda:0 bf16[1, 4096, 4096]"
# t633: "cuda:0 bf16[1, 4096, 12288]"
# t634: "cuda:0 bf16[1, 4096, 12288]"
# t535: "cuda:0 bf16[1, 4096, 12288]"
# t635: "cuda:0 bf16[1, 4096, 4096]"
# t555: "cuda:0 bf16[1, 4096, 4096]"
# t563: "cuda:0 f32[1, 4096, 4096]"
# t566: "cuda:0 f32[1, 4096, 4096]"
# t590: "cuda:0 f32[]"
