"""Single kernels to look inside (ncu, NVFUSER_DUMP) and the fp8 tile grid beyond the tune's chunks: the probes
behind benchmarks/results/h100-2026-11-26/ and h200-2026-11-26/.

    ncu -k regex:nvfuser --launch-count 1 --section SpeedOfLight ... \\
        python benchmarks/explore/kernel_probes.py tiles 8192x28672 256        # fp8 stage 1, 4 rows, unroll 4
    NVFUSER_DUMP=cuda_kernel python benchmarks/explore/kernel_probes.py rope_stage2 Llama-3-70B_bs2
    python benchmarks/explore/kernel_probes.py tiles_grid [--bf16] SHAPE ...   # cold-L2 kernel time per schedule

``tiles`` and ``rope_stage2`` run their fusion twice and time nothing (ncu and CUPTI do not share a process);
``tiles_grid`` checks each schedule against the float64 reference before timing it. ``--bf16`` adds the stage-1
reductions written in bf16 (abs and max are exact there; each partial cast to fp32 once); ``--bits`` the tiles
on bf16 bits (``fp8_amax_tiles.AmaxBitTiles``).
"""
import sys

import torch

import fusions
from benchmarks.workloads import case_data
from fusions import fp8_amax_tiles as FT
from fusions.rope_bwd_sums_then_cat import SumsThenCat
from fusions.spec import dt, nv_dtype
from segkit.nvf import compiled
from segkit.timing import kernel_breakdown

AMAX = fusions.get("fp8_amax")


def stage1_bf16(fd, cfg, s: FT.TileSchedule) -> None:
    """``fp8_amax_tiles.define_stage1`` with the reductions in x's dtype."""
    P, Q = cfg.lead // s.chunk, cfg.cols // s.width
    x = fd.define_tensor(shape=[P, s.chunk, Q, s.width], contiguity=[True] * 4, dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a, f32 = fd.ops.abs(x), dt(fd, "Float")
    if "row" in cfg.amaxes:
        fd.add_output(fd.ops.cast(fd.ops.max(a, dims=[3]), dtype=f32))
    fd.add_output(fd.ops.cast(fd.ops.max(a, dims=[1]), dtype=f32))


class Bf16Tiles(FT.AmaxTiles):
    defines = (stage1_bf16, FT.define_stage2)


def tiles(shape: str, chunk: str, rows: str = "4", unroll: str = "4") -> None:
    cfg = AMAX.config(shape)
    x = AMAX.make_inputs(cfg, device="cuda")["x"]
    run = FT.AmaxTiles(cfg, FT.TileSchedule(int(chunk), 256, rows=int(rows), vec=8, unroll=int(unroll)))
    for _ in range(2):
        run.execute([x])
    torch.cuda.synchronize()


def rope_stage2(config: str) -> None:
    cfg, inputs, _, _ = case_data("qkv_split_rope_bwd", config, torch.bfloat16)
    two = SumsThenCat(cfg)
    args = list(inputs.values())
    (sums,) = compiled(two.stages[0]).execute(two.stage1_args(args))
    second = two.stage2_args(args, sums)
    for _ in range(2):
        compiled(two.stages[1]).execute(second)
    torch.cuda.synchronize()


def tiles_grid(*argv: str) -> None:
    kinds = (FT.AmaxTiles,) + ((Bf16Tiles,) if "--bf16" in argv else ()) + ((FT.AmaxBitTiles,) if "--bits" in argv else ())
    for shape in (a for a in argv if not a.startswith("--")):
        cfg = AMAX.config(shape)
        x = AMAX.make_inputs(cfg, device="cuda")["x"]
        refs = AMAX.reference({"x": x}, cfg)
        res = []
        for kind in kinds:
            for chunk in (32, 64, 128, 256, 512):
                for rows, unroll in ((4, 4), (4, 2), (8, 2), (2, 4)):
                    tag = f"{shape} {kind.__name__} chunk {chunk} rows {rows} unroll {unroll}"
                    try:
                        run = kind(cfg, FT.TileSchedule(chunk, 256, rows=rows, vec=8, unroll=unroll))
                        if not all(torch.equal(o.double(), r) for o, r in zip(run.execute([x]), refs)):
                            print(f"WRONG {tag}", flush=True)
                            continue
                        ks = kernel_breakdown(lambda: run.execute([x]), 15)
                    except Exception as e:
                        print(f"FAIL {tag}: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}", flush=True)
                        continue
                    us = sum(k.us for k in ks)
                    res.append((us, tag))
                    print(f"RES {tag} {us:.1f} us (stage 1 {ks[0].us:.1f}, {len(ks)} kernels)", flush=True)
        for us, tag in sorted(res)[:6]:
            print(f"BEST {tag} {us:.1f} us", flush=True)


if __name__ == "__main__":
    {"tiles": tiles, "rope_stage2": rope_stage2, "tiles_grid": tiles_grid}[sys.argv[1]](*sys.argv[2:])
