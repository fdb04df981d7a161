"""Capture the nvFuser repro scripts Thunder 0.2.6 emits for segkit's workloads (GPU host).

Usage: python scripts/capture_thunder_repros.py OUT_DIR

Each case is jitted with Thunder's stock executors and ``nv_save_fake_inputs``;
the forward and backward nvFusion regions' ``last_repro_script()`` are written
as ``OUT_DIR/<case>_<fwd|bwd>_<region>.py``. They become test fixtures in
tests/data/thunder/: the recording frontend must load every op they use.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import thunder
from fusions import torch_models as tm
from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.files import write_atomic
from thunder_exec.compat import install_nvfuser_direct_compat


def _cases():
    dev, bf16 = "cuda", torch.bfloat16

    def t(*shape, grad=True, dtype=bf16):
        return torch.randn(*shape, device=dev, dtype=dtype, requires_grad=grad)

    ln = torch.nn.LayerNorm(256, device=dev, dtype=bf16)
    rms = torch.nn.RMSNorm(256, eps=1e-6, device=dev, dtype=bf16)
    lit = tm.LitRMSNorm(256).to(dev, bf16)
    yield "layernorm_module", ln, (t(2, 64, 256),)
    yield "layernorm_functional", lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), (
        t(128, 256), t(256), t(256))
    yield "rmsnorm_module", rms, (t(2, 64, 256),)
    yield "rmsnorm_litgpt", lit, (t(2, 64, 256),)
    for name, (nh, ng, hs, rn) in {
        "rope_mha": (4, 4, 16, 16),
        "rope_gqa": (8, 2, 16, 16),
        "rope_partial": (4, 4, 20, 8),  # phi-2 style: rope on a prefix of the head
        "rope_llama3_8b": (32, 8, 128, 128),  # the GQA case with the wrong k (T=256)
    }.items():
        T = 256 if name == "rope_llama3_8b" else 32
        cos, sin = tm.rope_cache(T, rn, dev)
        mod = tm.QKVSplitRope(nh, ng, hs, rn)
        yield name, mod, (t(2, T, (nh + 2 * ng) * hs), cos.to(bf16), sin.to(bf16))
    yield "fp8_amax", tm.fp8_amax, (t(64, 256, grad=False),)


def _regions(trace):
    ctx = trace.python_ctx()
    for bsym in trace.bound_symbols:
        if bsym.sym.is_fusion and bsym.sym.name.startswith("nvFusion"):
            yield bsym.sym.name, ctx[bsym.sym.name]


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    install_nvfuser_direct_compat()
    for name, fn, args in _cases():
        jfn = thunder.jit(fn, nv_save_fake_inputs=True)
        res = jfn(*args)
        res = res if isinstance(res, tuple) else (res,)
        if any(r.requires_grad for r in res):
            torch.autograd.backward([r for r in res if r.requires_grad], [torch.randn_like(r) for r in res if r.requires_grad])
        traces = {"fwd": thunder.last_traces(jfn)[-1]}
        bwd = thunder.last_backward_traces(jfn)
        if bwd:
            traces["bwd"] = bwd[-1]
        for kind, trace in traces.items():
            for region, wrapper in _regions(trace):
                path = out / f"{name}_{kind}_{region}.py"
                write_atomic(path, wrapper.last_used.last_repro_script())
                print("wrote", path)


def build_parser() -> Parser:
    """The script's command line: OUT_DIR, new or empty (or this script's own)."""
    parser = Parser(prog="scripts/capture_thunder_repros.py", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=argtypes.output_dir_writing("*_fwd_*.py", "*_bwd_*.py"), metavar="OUT_DIR",
                        help="where the repro scripts go (OUT_DIR/<case>_<fwd|bwd>_<region>.py)")
    parser.set_defaults(func=lambda args: main(str(args.out)))
    return parser


if __name__ == "__main__":
    sys.exit(entry.run(build_parser, None))
