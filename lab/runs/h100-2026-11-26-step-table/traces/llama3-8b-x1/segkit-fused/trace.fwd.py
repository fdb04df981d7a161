# Constructed by Delete Last Used (took 0 milliseconds)
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
  [t223] = nvFusion0(x, weight)
    # (t223, t224) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(x, weight, 1e-05, False)

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t576 = torch.nn.functional.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"
    # t576 = ltorch.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"
      # t576 = prims.linear(t223, t_blocks_0_attn_qkv_weight, None)  # t576: "cuda:0 bf16[1, 4096, 6144]"
  [t331, t354, t369] = nvFusion1(t576, cos, sin)
    # t237 = prims.slice_prim(t576, [0, 0, 0], [1, 4096, 4096], [1, 1, 1])  # t237: "cuda:0 bf16[1, 4096, 4096]"
    # t238 = prims.slice_prim(t576, [0, 0, 4096], [1, 4096, 5120], [1, 1, 1])  # t238: "cuda:0 bf16[1, 4096, 1024]"
    # t239 = prims.slice_prim(t576, [0, 0, 5120], [1, 4096, 6144], [1, 1, 1])  # t239: "cuda:0 bf16[1, 4096, 1024]"
    # t244 = prims.reshape(t237, (1, 4096, 32, 128))  # t244: "cuda:0 bf16[1, 4096, 32, 128]"
    # t247 = prims.reshape(t238, (1, 4096, 8, 128))  # t247: "cuda:0 bf16[1, 4096, 8, 128]"
    # t250 = prims.reshape(t239, (1, 4096, 8, 128))  # t250: "cuda:0 bf16[1, 4096, 8, 128]"
    # t253 = prims.transpose(t244, (0, 2, 1, 3))  # t253: "cuda:0 bf16[1, 32, 4096, 128]"
    # t256 = prims.transpose(t247, (0, 2, 1, 3))  # t256: "cuda:0 bf16[1, 8, 4096, 128]"
    # t259 = prims.transpose(t250, (0, 2, 1, 3))  # t259: "cuda:0 bf16[1, 8, 4096, 128]"
    # t262 = prims.shallow_copy(t253)  # t262: "cuda:0 bf16[1, 32, 4096, 128]"
    # t264 = prims.reshape(cos, (1, 1, 4096, 128))  # t264: "cuda:0 f32[1, 1, 4096, 128]"
    # t267 = prims.reshape(sin, (1, 1, 4096, 128))  # t267: "cuda:0 f32[1, 1, 4096, 128]"
    # t270 = thunder_exec.fusible.segkit_nv_rope_fwd(t262, t264, t267, torch.bfloat16)  # t270: "cuda:0 bf16[1, 32, 4096, 128]"
    # t295 = prims.shallow_copy(t256)  # t295: "cuda:0 bf16[1, 8, 4096, 128]"
    # t303 = thunder_exec.fusible.segkit_nv_rope_fwd(t295, t264, t267, torch.bfloat16)  # t303: "cuda:0 bf16[1, 8, 4096, 128]"
    # t328 = prims.slice_prim(t253, [0, 0, 0, 0], [1, 32, 4096, 0], [1, 1, 1, 1])  # t328: "cuda:0 bf16[1, 32, 4096, 0]"
    # t331 = prims.cat([t270, t328], -1)  # t331: "cuda:0 bf16[1, 32, 4096, 128]"
    # t335 = prims.slice_prim(t256, [0, 0, 0, 0], [1, 8, 4096, 0], [1, 1, 1, 1])  # t335: "cuda:0 bf16[1, 8, 4096, 0]"
    # t338 = prims.cat([t303, t335], -1)  # t338: "cuda:0 bf16[1, 8, 4096, 128]"
    # t342 = prims.broadcast_in_dim(t338, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t342: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t348 = prims.broadcast_in_dim(t342, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t348: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t354 = prims.reshape(t348, (1, 32, 4096, 128))  # t354: "cuda:0 bf16[1, 32, 4096, 128]"
    # t357 = prims.broadcast_in_dim(t259, [1, 8, 1, 4096, 128], [0, 1, 3, 4])  # t357: "cuda:0 bf16[1, 8, 1, 4096, 128]"
    # t363 = prims.broadcast_in_dim(t357, (1, 8, 4, 4096, 128), (0, 1, 2, 3, 4))  # t363: "cuda:0 bf16[1, 8, 4, 4096, 128]"
    # t369 = prims.reshape(t363, (1, 32, 4096, 128))  # t369: "cuda:0 bf16[1, 32, 4096, 128]"
  del t576

  # site-packages/litgpt/model.py:593: 	            y = F.scaled_dot_product_attention(
  (t374, t372, t373, t375) = segkit_cudnn_sdpa_fwd(t331, t354, t369, True, 0.08838834764831843)

  # site-packages/thunder/torch/experimental/dtensor_torch_and_prims.py:69: 	            return single_device_symbol(*args, **kwargs)
  t592 = torch.permute(t374, (0, 2, 1, 3))  # t592: "cuda:0 bf16[1, 4096, 32, 128]"
    # t592 = ltorch.permute(t374, (0, 2, 1, 3))  # t592: "cuda:0 bf16[1, 4096, 32, 128]"
      # t592 = prims.transpose(t374, (0, 2, 1, 3))  # t592: "cuda:0 bf16[1, 4096, 32, 128]"
  t593 = torch_prims_reshape_impl(t592, (1, 4096, 4096))  # t593: "cuda:0 bf16[1, 4096, 4096]"
  del t592

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t577 = torch.nn.functional.linear(t593, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
    # t577 = ltorch.linear(t593, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
      # t577 = prims.linear(t593, t_blocks_0_attn_proj_weight, None)  # t577: "cuda:0 bf16[1, 4096, 4096]"
  [t403, t406] = nvFusion2(t577, x, t)
    # t395 = prims.convert_element_type(t577, dtypes.float32)  # t395: "cuda:0 f32[1, 4096, 4096]"
    # t398 = prims.convert_element_type(x, dtypes.float32)  # t398: "cuda:0 f32[1, 4096, 4096]"
    # t401 = prims.add(t395, t398)  # t401: "cuda:0 f32[1, 4096, 4096]"
    # t403 = prims.convert_element_type(t401, dtypes.bfloat16)  # t403: "cuda:0 bf16[1, 4096, 4096]"
    # (t406, t407) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t403, t, 1e-05, False)
  del t577

  # /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134: 	        return F.linear(input, self.weight, self.bias)
  t578 = torch.nn.functional.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
    # t578 = ltorch.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
      # t578 = prims.linear(t406, t_blocks_0_mlp_fc_1_weight, None)  # t578: "cuda:0 bf16[1, 4096, 14336]"
  t579 = torch.nn.functional.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
    # t579 = ltorch.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
      # t579 = prims.linear(t406, t_blocks_0_mlp_fc_2_weight, None)  # t579: "cuda:0 bf16[1, 4096, 14336]"
  [t480] = nvFusion3(t578, t579)
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
  [t500, t508] = nvFusion4(t580, t403, t_norm_weight)
    # t492 = prims.convert_element_type(t580, dtypes.float32)  # t492: "cuda:0 f32[1, 4096, 4096]"
    # t495 = prims.convert_element_type(t403, dtypes.float32)  # t495: "cuda:0 f32[1, 4096, 4096]"
    # t498 = prims.add(t492, t495)  # t498: "cuda:0 f32[1, 4096, 4096]"
    # t500 = prims.convert_element_type(t498, dtypes.bfloat16)  # t500: "cuda:0 bf16[1, 4096, 4096]"
    # (t503, t504) = thunder_exec.fusible.segkit_nv_rms_norm_fwd(t500, t_norm_weight, 1e-05, False)
    # t508 = prims.convert_element_type(t503, dtypes.float32)  # t508: "cuda:0 f32[1, 4096, 4096]"
  del t580

  # benchmarks/model_cases.py:95: 	    return (y * y.detach().sin()).mean()
  t511 = torch.detach(t508)  # t511: "cuda:0 f32[1, 4096, 4096]"
  [t535] = nvFusion5(t511, t508)
    # t514 = prims.sin(t511)  # t514: "cuda:0 f32[1, 4096, 4096]"
    # t518 = prims.mul(t508, t514)  # t518: "cuda:0 f32[1, 4096, 4096]"
    # t522 = prims.shallow_copy(t518)  # t522: "cuda:0 f32[1, 4096, 4096]"
    # t524 = prims.sum(t522, (0, 1, 2))  # t524: "cuda:0 f32[]"
    # t528 = prims.div(t524, 16777216.0)  # t528: "cuda:0 f32[]"
    # t535 = prims.shallow_copy(t528)  # t535: "cuda:0 f32[]"
  return {'output': (t535,), 'flat_args': [x, cos, sin, t_blocks_0_attn_proj_weight, t_blocks_0_attn_qkv_weight, t_blocks_0_mlp_fc_1_weight, t_blocks_0_mlp_fc_2_weight, t_blocks_0_mlp_proj_weight, weight, t, t_norm_weight], 'flat_output': (t535,)}, ((t511, t508, t500, t_norm_weight, t_blocks_0_mlp_proj_weight, t480, t578, t579, t_blocks_0_mlp_fc_2_weight, t406, t_blocks_0_mlp_fc_1_weight, t403, t, t_blocks_0_attn_proj_weight, t593, t331, t354, t369, t374, t372, t373, t375, sin, cos, t_blocks_0_attn_qkv_weight, t223, x, weight), ())
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
# t576: "cuda:0 bf16[1, 4096, 6144]"
# t331: "cuda:0 bf16[1, 32, 4096, 128]"
# t354: "cuda:0 bf16[1, 32, 4096, 128]"
# t369: "cuda:0 bf16[1, 32, 4096, 128]"
# t374: "cuda:0 bf16[1, 32, 4096, 128]"
# t372: "cuda:0 f32[1, 32, 4096, 1]"
# t373: "cuda:0 i64[]"
# t375: "cuda:0 i64[]"
# t592: "cuda:0 bf16[1, 4096, 32, 128]"
# t593: "cuda:0 bf16[1, 4096, 4096]"
# t577: "cuda:0 bf16[1, 4096, 4096]"
# t403: "cuda:0 bf16[1, 4096, 4096]"
# t406: "cuda:0 bf16[1, 4096, 4096]"
# t578: "cuda:0 bf16[1, 4096, 14336]"
# t579: "cuda:0 bf16[1, 4096, 14336]"
# t480: "cuda:0 bf16[1, 4096, 14336]"
# t580: "cuda:0 bf16[1, 4096, 4096]"
# t500: "cuda:0 bf16[1, 4096, 4096]"
# t508: "cuda:0 f32[1, 4096, 4096]"
# t511: "cuda:0 f32[1, 4096, 4096]"
# t535: "cuda:0 f32[]"
