"""Probe (GPU): stock Thunder's qkv split + RoPE at Llama-3-70B bs2 fails the benchmark's float64 check (gate runs
of 2026-11-29, k rel err 1.5). Where are the wrong elements, in which modes and at which T, and is it Thunder's
fusion definition or nvFuser's kernel? Each nvFusion region's definition is saved as a repro script and put
through ``segkit check`` (nvFuser against the reference interpreter on the same inputs).

    python lab/probes/thunder_rope70b_probe.py OUTDIR
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import torch

import fusions
from benchmarks import executors
from benchmarks.harness import diff
from fusions import torch_models as tm


def where_wrong(ref: torch.Tensor, got: torch.Tensor) -> dict:
    err = (got.double() - ref).abs()
    bad = err > 1e-2 * ref.abs().max()
    idx = bad.nonzero()
    out = {"wrong": int(bad.sum()), "of": bad.numel()}
    if len(idx):
        out |= {f"dim{d}": [int(idx[:, d].min()), int(idx[:, d].max()), len(idx[:, d].unique())]
                for d in range(idx.shape[1])}
    return out


def main(outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    spec = fusions.get("qkv_split_rope_fwd")
    base = spec.config("Llama-3-70B_bs2", torch.bfloat16)
    report = []
    for T in (base.block_size, 4096):
        cfg = dataclasses.replace(base, block_size=T)
        inputs = spec.make_inputs(cfg, device="cuda")
        refs = spec.reference(inputs, cfg)
        geom = (cfg.n_head, cfg.n_query_groups, cfg.head_size, cfg.rope_n_elem)
        for mode in ("inference", "forward"):
            jfn = executors._compile(lambda qkv, cos, sin: tm.qkv_split_rope(qkv, cos, sin, *geom), "thunder")
            qkv = inputs["qkv"].detach().requires_grad_(mode == "forward")
            with torch.no_grad() if mode == "inference" else torch.enable_grad():
                got = jfn(qkv, inputs["cos"], inputs["sin"])
            torch.cuda.synchronize()
            row = {"T": T, "B": cfg.batch, "mode": mode}
            for name, r, g in zip(spec.outputs, refs, got):
                d = diff(0, r, g.reshape(r.shape))
                row[name] = {"ok": d.ok, "rel_err": d.rel_err, "shape": list(g.shape), "stride": list(g.stride()),
                             **({} if d.ok else where_wrong(r, g.reshape(r.shape)))}
            import thunder

            trace = thunder.last_traces(jfn)[-1]
            stem = f"T{T}_{mode}"
            (outdir / f"{stem}_trace.py").write_text(str(trace))
            for bsym in trace.bound_symbols:
                for fname, wrapper in (getattr(bsym, "_call_ctx", None) or {}).items():
                    fd = getattr(wrapper, "last_used", None)
                    if fd is None:
                        continue
                    script = outdir / f"{stem}_{fname}.py"
                    script.write_text(repr(fd))
                    if T == base.block_size:
                        chk = subprocess.run([sys.executable, "-m", "segkit_cli", "check", str(script)],
                                             capture_output=True, text=True, timeout=300)
                        row.setdefault("check", {})[fname] = (chk.returncode, (chk.stdout + chk.stderr)[-1500:])
            report.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "check"}), flush=True)
            for fname, (rc, text) in row.get("check", {}).items():
                print(f"--- segkit check {stem}_{fname}: exit {rc}\n{text}", flush=True)
            del got, jfn
        del inputs, refs
        torch.cuda.empty_cache()
    (outdir / "report.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
