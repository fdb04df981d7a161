"""Single kernels to look inside (ncu, NVFUSER_DUMP) and the fp8 tile grid beyond the tune's chunks: the probes
behind lab/runs/h100-2026-11-26/ and h200-2026-11-26/.

    ncu -k regex:nvfuser --launch-count 1 --section SpeedOfLight ... \\
        python lab/explore/kernel_probes.py tiles 8192x28672 256        # fp8 stage 1, 4 rows, unroll 4
    NVFUSER_DUMP=cuda_kernel python lab/explore/kernel_probes.py rope_stage2 Llama-3-70B_bs2
    python lab/explore/kernel_probes.py tiles_grid [--bf16] [--bits] [--lohi] [--no-floats] [--chunks=64,128]
        [--widths=256,1024] [--amaxes=row,all] [--few-steps] SHAPE ...   # cold-L2 kernel time per schedule
    python lab/explore/kernel_probes.py stage2 SHAPE CHUNK   # the bit tiles' stage-2 kernels by name
    python lab/explore/kernel_probes.py row_all SHAPE ...   # tensorwise + rowwise: reuse pass vs on x's bits
    python lab/explore/kernel_probes.py one_cta N ...   # the bits formulation's one-CTA max, CTA shapes

``tiles`` and ``rope_stage2`` run their fusion twice and time nothing (ncu and CUPTI do not share a process);
``tiles_grid`` checks each schedule against the float64 reference before timing it. ``--bf16`` adds the stage-1
reductions written in bf16 (abs and max are exact there; each partial cast to fp32 once); ``--bits`` the tiles
on bf16 bits (``fp8_amax_bit_tiles.AmaxBitTiles``); ``--lohi`` the bit tiles as they were before their column
partials were packed (stage 2 reassembling even and odd columns).
"""
import sys
from dataclasses import replace

import torch

import fusions
from benchmarks.workloads import case_data
from fusions import amax_staged as AS
from fusions import fp8_amax_bit_tiles as FBT
from fusions import fp8_amax_tiles as FT
from fusions.fp8_amax_bits import AmaxBits
from fusions.rope_bwd_sums_then_cat import SumsThenCat
from fusions.spec import dt, nv_dtype
from segkit.nvfuser.run import compiled
from segkit.nvfuser.timing import kernel_breakdown

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


def lohi_stage1(fd, cfg, s: FT.TileSchedule) -> None:
    """The bit tiles' stage 1 before 2026-11-26 (for a side-by-side run): unshifted row segments, and the even and
    odd columns' partials as two int32 outputs."""
    P, Q, W2 = cfg.lead // s.chunk, cfg.cols // s.width, s.width // 2
    v = fd.define_tensor(shape=[P, s.chunk, Q, W2], contiguity=[True] * 4, dtype=dt(fd, "Int32"))
    lo, hi = AS.abs_bits(fd, v)
    fd.add_output(fd.ops.max(fd.ops.maximum(lo, hi), dims=[3]))
    fd.add_output(fd.ops.max(lo, dims=[1]))
    fd.add_output(fd.ops.max(hi, dims=[1]))


def lohi_stage2(fd, cfg, s: FT.TileSchedule) -> None:
    """...and its stage 2: the columns reassembled (cols / 2, 2) by an iota select, everything shifted there."""
    P, Q, C2 = cfg.lead // s.chunk, cfg.cols // s.width, cfg.cols // 2
    i32, c16 = dt(fd, "Int32"), AS.i32(fd, 16)
    part = fd.define_tensor(shape=[cfg.lead, Q], contiguity=[True, True], dtype=i32)
    fd.add_output(fd.ops.bitwise_left_shift(fd.ops.max(part, dims=[1]), c16))
    lo, hi = (fd.ops.max(fd.define_tensor(shape=[P, C2], contiguity=[True, True], dtype=i32), dims=[0]) for _ in "lh")
    odd = fd.ops.broadcast_in_dim(fd.ops.iota(2, dtype=i32), shape=[C2, 2], broadcast_dims=[1])
    both = fd.ops.where(fd.ops.eq(odd, AS.i32(fd, 0)), fd.ops.broadcast_in_dim(lo, shape=[C2, 2], broadcast_dims=[0]),
                        fd.ops.broadcast_in_dim(hi, shape=[C2, 2], broadcast_dims=[0]))
    fd.add_output(fd.ops.bitwise_left_shift(both, c16))
    fd.add_output(fd.ops.bitwise_left_shift(fd.ops.max(fd.ops.maximum(lo, hi), dims=[0]), c16))


class LoHiBitTiles(FBT.AmaxBitTiles):
    """Rowwise + columnwise + tensorwise only."""

    defines = (lohi_stage1, lohi_stage2)

    def stage2_args(self, first):
        return [first[0].reshape(self.cfg.lead, self.segments)] + [t.reshape(t.shape[0], -1) for t in first[1:]]

    def assemble(self, inputs, first, second):
        shapes = (inputs[0].shape[:-1], (self.cfg.cols,), ())
        out = dict(zip(("row", "col", "all"), (t.view(torch.float32).reshape(s) for t, s in zip(second, shapes))))
        return [out[n] for n in self.cfg.amaxes]


def stage2(shape: str, chunk: str) -> None:
    """The bit tiles' stage 2 (rowwise + columnwise + tensorwise, 256 columns, 4 rows, unroll 4) on nvFuser's
    schedule, each kernel by name and time, and NVFUSER_DUMP's segmented fusion when set."""
    cfg = AMAX.config(shape)
    x = AMAX.make_inputs(cfg, device="cuda")["x"]
    run = FBT.AmaxBitTiles(cfg, FT.TileSchedule(int(chunk), 256, rows=4, vec=8, unroll=4))
    run.execute([x])
    args = [t.contiguous() for t in run.stage2_args(run._stages[0].manual_execute(run.stage1_args([x])))]
    for k in kernel_breakdown(lambda: run._stages[1].execute(args), 15):
        print(f"RES stage2 {shape} chunk {chunk}: {k.name} {k.us:.1f} us", flush=True)


def row_all(*shapes: str) -> None:
    """Tensorwise + rowwise on nvFuser's own schedulers: the reuse pass's fusion (|x| in fp32, the tensorwise amax
    from the rows) against the same on x's bits (x viewed int32 pairs, integer max, the row's bits << 16), and
    the bits formulation (fusions/fp8_amax_bits.py: the tensorwise amax in one CTA)."""
    from segkit.frontend import FusionDefinition
    from segkit.reuse import reuse_reductions

    for shape in shapes:
        cfg = replace(AMAX.config(shape), amaxes=("row", "all"))
        x = AMAX.make_inputs(cfg, device="cuda")["x"]
        refs = AMAX.reference({"x": x}, cfg)
        with FusionDefinition() as fd:
            v = fd.define_tensor(shape=[cfg.lead, cfg.cols // 2], contiguity=[True, True], dtype=dt(fd, "Int32"))
            c16 = AS.i32(fd, 16)
            m = fd.ops.max(fd.ops.maximum(*AS.abs_bits(fd, v)), dims=[1])
            fd.add_output(fd.ops.bitwise_left_shift(m, c16))
            fd.add_output(fd.ops.bitwise_left_shift(fd.ops.max(m, dims=[0]), c16))
        bits, reuse = compiled(fd), compiled(reuse_reductions(AMAX.build(cfg)).apply())
        xv = x.view(torch.int32).view(cfg.lead, cfg.cols // 2)
        one_cta = AmaxBits(cfg)
        for name, fn, view in (("reuse pass", lambda: reuse.execute([x]), lambda o: o),
                               ("bits", lambda: bits.execute([xv]), lambda o: [t.view(torch.float32) for t in o]),
                               ("bits + one CTA", lambda: one_cta.execute([x]), lambda o: o)):
            outs = view(fn())
            ok = all(torch.equal(o.double().reshape(r.shape), r) for o, r in zip(outs, refs))
            ks = kernel_breakdown(fn, 15)
            print(f"RES row_all {shape} {name}: {'exact' if ok else 'WRONG'} {sum(k.us for k in ks):.1f} us "
                  f"({' + '.join(f'{k.us:.1f}' for k in ks)})", flush=True)


def one_cta(*sizes: str) -> None:
    """The bits formulation's tensorwise amax (fusions/fp8_amax_bits.py, one CTA) at each ``sizes`` (row counts)
    in several shapes of CTA: threads, unroll, vec."""
    from fusions.fp8_amax_bits import OneCta, define_max
    from segkit.frontend import FusionDefinition
    from segkit.nvfuser.run import to_nvfuser

    for n in map(int, sizes):
        x = torch.randint(0, 0x7F800000, (n,), dtype=torch.int32, device="cuda")
        for shape in ((1024, 4, 4), (1024, 2, 4), (512, 4, 4), (512, 8, 4), (256, 8, 4), (256, 4, 4), (128, 8, 4)):
            with FusionDefinition() as fd:
                define_max(fd, n)
            nvfd = to_nvfuser(fd)
            OneCta(*shape).schedule(nvfd, n)
            ok = torch.equal(nvfd.manual_execute([x])[0], x.max())
            us = sum(k.us for k in kernel_breakdown(lambda: nvfd.manual_execute([x]), 25))
            print(f"RES one_cta n {n} threads, unroll, vec {shape}: {'exact' if ok else 'WRONG'} {us:.2f} us", flush=True)


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
    kinds = (() if "--no-floats" in argv else (FT.AmaxTiles,)) + ((Bf16Tiles,) if "--bf16" in argv else ()) + \
        ((LoHiBitTiles,) if "--lohi" in argv else ()) + ((FBT.AmaxBitTiles,) if "--bits" in argv else ())
    steps = ((4, 4), (4, 2), (8, 2), (2, 4)) if "--few-steps" not in argv else ((4, 4), (2, 4), (8, 2))
    option = {a.split("=")[0]: a.split("=")[1].split(",") for a in argv if a.startswith("--") and "=" in a}
    widths = tuple(int(w) for w in option.get("--widths", ["256"]))
    chunks = tuple(int(c) for c in option.get("--chunks", ["32", "64", "128", "256", "512"]))
    for shape in (a for a in argv if not a.startswith("--")):
        cfg = replace(AMAX.config(shape), amaxes=tuple(option.get("--amaxes", AMAX.config(shape).amaxes)))
        x = AMAX.make_inputs(cfg, device="cuda")["x"]
        refs = AMAX.reference({"x": x}, cfg)
        res = []
        for kind in kinds:
            for chunk, width in ((c, w) for c in chunks for w in widths):
                for rows, unroll in steps:
                    tag = f"{shape} {kind.__name__} chunk {chunk} width {width} rows {rows} unroll {unroll}"
                    try:
                        run = kind(cfg, FT.TileSchedule(chunk, width, rows=rows, vec=8, unroll=unroll))
                        if not all(torch.equal(o.double(), r) for o, r in zip(run.execute([x]), refs)):
                            print(f"WRONG {tag}", flush=True)
                            continue
                        ks = kernel_breakdown(lambda: run.execute([x]), 15)
                    except Exception as e:
                        print(f"FAIL {tag}: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}", flush=True)
                        continue
                    us = sum(k.us for k in ks)
                    res.append((us, tag))
                    print(f"RES {tag} {us:.1f} us ({len(ks)} kernels: {' + '.join(f'{k.us:.1f}' for k in ks)})", flush=True)
        for us, tag in sorted(res)[:6]:
            print(f"BEST {tag} {us:.1f} us", flush=True)


if __name__ == "__main__":
    {"tiles": tiles, "rope_stage2": rope_stage2, "tiles_grid": tiles_grid, "stage2": stage2,
     "row_all": row_all, "one_cta": one_cta}[sys.argv[1]](*sys.argv[2:])
