"""Host wall per call, nanoGPT layer norm forward: bare fd.execute vs segkit's layers vs Thunder, then where
Thunder + segkit_ex spends its time (cProfile). Log: lab/runs/h200-2026-11-21-tuning/."""
import torch
import torch.nn.functional as F

import fusions
from segkit.nvfuser.timing import wall_us
from segkit.nvfuser.run import compiled
from fusions import runner as runtime
from thunder_exec.norms import _ln_fwd_impl

spec = fusions.get("layernorm_fwd")
cfg = spec.config("nanogpt", torch.bfloat16)
inp = spec.make_inputs(cfg, device="cuda")
x, w, b = inp["x"], inp["weight"], inp["bias"]
nvfd = compiled(spec.build(cfg))
args = list(inp.values())
rows = {}
rows["bare fd.execute"] = lambda: nvfd.execute(args)
rows["run_spec none"] = lambda: runtime.run_spec("layernorm_fwd", cfg, args, "none")
rows["run_spec outputs"] = lambda: runtime.run_spec("layernorm_fwd", cfg, args, "outputs")
rows["_ln_fwd_impl"] = lambda: _ln_fwd_impl(x, w, b, cfg.eps, "outputs", False)
import thunder
import thunder_exec

thunder_exec.install()  # stock Thunder too: its nvFuser fusions need the nvfuser_direct compatibility fix
fn = lambda x, w, b: F.layer_norm(x, (cfg.hidden,), w, b, cfg.eps)
rows["eager"] = lambda: fn(x, w, b)
rows["thunder"] = (lambda j: lambda: j(x, w, b))(thunder.jit(fn))
rows["thunder+segkit_ex"] = (lambda j: lambda: j(x, w, b))(thunder.jit(fn, executors=thunder_exec.executors()))
rows["thunder+segkit_ex none"] = (lambda j: lambda: j(x, w, b))(
    thunder.jit(fn, executors=thunder_exec.executors(), segkit_bookend="none"))
for name, call in rows.items():
    for _ in range(5):
        call()
    print(f"WALL {name:26s} " + " ".join(f"{wall_us(call, 200):7.1f}" for _ in range(3)), flush=True)
j = thunder.jit(fn, executors=thunder_exec.executors())
j(x, w, b)
print(thunder.last_traces(j)[-1])
import cProfile, pstats
pr = cProfile.Profile()
pr.enable()
for _ in range(500):
    j(x, w, b)
torch.cuda.synchronize()
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
