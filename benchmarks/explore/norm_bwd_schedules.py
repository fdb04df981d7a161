"""Exploration behind fusions._norm.bwd_tuning: nvFuser schedules for norm backward, cold-L2 time (CUDA
events) and correctness against the default schedule's outputs.

    python benchmarks/explore/norm_bwd_schedules.py SHAPE,... [SHAPE,...]   default vs ws_normalization
                                                                            (+ manual tweaks on the 2nd list)
    python benchmarks/explore/norm_bwd_schedules.py grid|regs|safe          the sweeps of the committed logs

Logs of the runs on an H200: benchmarks/results/h200-2026-11-21-tuning/norm_bwd_*.log.
"""
import statistics
import sys
import time
import traceback

import torch
import nvfuser_direct as nvf
from nvfuser_direct import schedule, SchedulerType

import fusions
from benchmarks.harness import flush_l2, copy_bandwidth_gbs
from benchmarks.workloads import norm_bytes

GBS = copy_bandwidth_gbs()
print(f"copy bw {GBS:.0f} GB/s")


def build(kind, cfg):
    spec = fusions.get(f"{kind}_bwd")
    with nvf.FusionDefinition() as fd:
        spec.define(fd, cfg)
    return fd


def time_us(fn, reps=15):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        flush_l2()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)


def heur(fd, inputs):
    try:
        return schedule.compute_heuristics(fd.fusion, SchedulerType.inner_outer_persistent, inputs)
    except TypeError:
        return schedule.compute_heuristics(fd.fusion, inputs, SchedulerType.inner_outer_persistent)


def manual(kind, cfg, inputs, tweak):
    fd = build(kind, cfg)
    p = heur(fd, inputs)
    tweak(p)
    schedule.schedule(fd.fusion, SchedulerType.inner_outer_persistent, p)
    return fd, p


def _lp(p, **kw):
    lp = p.lparams
    for k, v in kw.items():
        try:
            setattr(lp, k, v)
        except Exception:
            cur = {a: getattr(lp, a) for a in ("gdimx", "gdimy", "gdimz", "bdimx", "bdimy", "bdimz")}
            cur.update(kw)
            lp = nvf.LaunchParams(*[cur[a] for a in ("gdimx", "gdimy", "gdimz", "bdimx", "bdimy", "bdimz")])
            break
    p.lparams = lp


def _vect(p, v, hidden):
    p.unroll_factor_inner_reduction = v
    p.vectorization_factor_tmp_gmem_write = min(4, v)
    p.vectorization_factor_outer = min(p.vectorization_factor_outer, v)
    _lp(p, bdimx=-(-hidden // (v * p.batches_per_block_inner_reduction)))


def _reg(p, n):
    c = p.cparams
    c.maxrregcount = n
    p.cparams = c


def close(a, b):
    return all(torch.allclose(x.float(), y.float(), rtol=2e-2, atol=2e-2) for x, y in zip(a, b))


def report(tag, kind, shape, us, floor, ok=True, extra=""):
    print(f"RES {kind:9s} {shape:22s} {tag:28s} {us:9.1f} us  {100*floor/us:5.1f}% floor  ok={ok} {extra}", flush=True)


def grid(kind, shape, vects, bdimys, ks):
    spec = fusions.get(f"{kind}_bwd")
    cfg = spec.config(shape, torch.bfloat16)
    inputs = list(spec.make_inputs(cfg, device="cuda").values())
    floor = norm_bytes(kind, "bwd", cfg) / GBS / 1e3
    fd = build(kind, cfg)
    ref = fd.execute(inputs)
    report("default", kind, shape, time_us(lambda: fd.execute(inputs)), floor)
    best = None
    for v in vects:
        for b in bdimys:
            for k in ks:
                def tw(p):
                    if v != p.unroll_factor_inner_reduction:
                        _vect(p, v, cfg.hidden)
                    _lp(p, bdimy=b, gdimy=132 * k)
                try:
                    fm, pm = manual(kind, cfg, inputs, tw)
                    out = fm.manual_execute(inputs, pm)
                    us = time_us(lambda: fm.manual_execute(inputs, pm), reps=9)
                    ok = close(out, ref)
                    report(f"vect={v} bdimy={b} gdimy={132*k}", kind, shape, us, floor, ok)
                    if ok and (best is None or us < best[0]):
                        best = (us, v, b, k)
                except Exception as e:
                    print("fail", kind, shape, v, b, k, str(e).splitlines()[0][-120:] if str(e) else repr(e))
    print("BEST", kind, shape, best, f"{100*floor/best[0]:.1f}% floor" if best else "")


def regs(kind, shape, combos, regs_list):
    spec = fusions.get(f"{kind}_bwd")
    cfg = spec.config(shape, torch.bfloat16)
    inputs = list(spec.make_inputs(cfg, device="cuda").values())
    floor = norm_bytes(kind, "bwd", cfg) / GBS / 1e3
    fd = build(kind, cfg)
    ref = fd.execute(inputs)
    for r in regs_list:
        for b, g in combos:
            def tw(p):
                _lp(p, bdimy=b, gdimy=g)
                if r:
                    _reg(p, r)
            try:
                fm, pm = manual(kind, cfg, inputs, tw)
                out = fm.manual_execute(inputs, pm)
                us = time_us(lambda: fm.manual_execute(inputs, pm), reps=9)
                report(f"reg={r} bdimy={b} gdimy={g}", kind, shape, us, floor, close(out, ref))
            except Exception as e:
                print("fail", kind, shape, r, b, g, str(e).splitlines()[0][-100:] if str(e) else repr(e))


def safe(kind, shape, vects, regs_list, gs, repeat=5):
    spec = fusions.get(f"{kind}_bwd")
    cfg = spec.config(shape, torch.bfloat16)
    inputs = list(spec.make_inputs(cfg, device="cuda").values())
    floor = norm_bytes(kind, "bwd", cfg) / GBS / 1e3
    fd = build(kind, cfg)
    ref = fd.execute(inputs)
    report("default", kind, shape, time_us(lambda: fd.execute(inputs), reps=9), floor)
    fw = build(kind, cfg)
    fw.execute(inputs, _enable_options=["ws_normalization"])
    report("ws", kind, shape, time_us(lambda: fw.execute(inputs, _enable_options=["ws_normalization"]), reps=9), floor)
    for v in vects:
        for r in regs_list:
            for g in gs:
                def tw(p):
                    if v != p.unroll_factor_inner_reduction:
                        _vect(p, v, cfg.hidden)
                    _lp(p, gdimy=g)
                    if r:
                        _reg(p, r)
                try:
                    fm, pm = manual(kind, cfg, inputs, tw)
                    oks = [close(fm.manual_execute(inputs, pm), ref) for _ in range(repeat)]
                    us = time_us(lambda: fm.manual_execute(inputs, pm), reps=9)
                    report(f"v={v} reg={r} b=1 g={g}", kind, shape, us, floor, all(oks))
                except Exception as e:
                    print("fail", kind, shape, v, r, g, str(e).splitlines()[0][-60:] if str(e) else repr(e))


if sys.argv[1] == "safe":
    for kind in ("rmsnorm", "layernorm"):
        safe(kind, "mixorder_576000x384", (8, 4), (0, 48, 40, 32), (1056, 2112, 3168, 4224))
        safe(kind, "sweep_65536x1024", (8,), (40, 32), (2112, 3168))
        safe(kind, "sweep_65536x256", (8,), (40, 32), (2112, 3168, 4224))
    sys.exit(0)

if sys.argv[1] == "regs":
    for kind in ("rmsnorm", "layernorm"):
        regs(kind, "mixorder_576000x384", [(2, 1056), (4, 1056), (2, 2112), (8, 528), (4, 2112)], (0, 64, 48, 40))
        regs(kind, "sweep_65536x256", [(8, 528), (4, 1056), (8, 1056), (16, 264), (16, 528)], (0, 64, 40))
    sys.exit(0)

if sys.argv[1] == "grid":
    for kind in ("rmsnorm", "layernorm"):
        grid(kind, "mixorder_576000x384", (8, 4), (1, 2, 4, 8), (2, 4, 6, 8))
        grid(kind, "sweep_65536x1024", (8,), (1, 2, 4, 8), (2, 4, 6, 8))
        grid(kind, "sweep_65536x256", (8,), (1, 2, 4, 8), (2, 4, 6, 8))
    sys.exit(0)

SHAPES = sys.argv[1].split(",")
MANUAL = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
for kind in ("rmsnorm", "layernorm"):
    for shape in SHAPES:
        spec = fusions.get(f"{kind}_bwd")
        cfg = spec.config(shape, torch.bfloat16)
        inputs = list(spec.make_inputs(cfg, device="cuda").values())
        floor = norm_bytes(kind, "bwd", cfg) / GBS / 1e3  # us
        fd = build(kind, cfg)
        ref = fd.execute(inputs)
        us = time_us(lambda: fd.execute(inputs))
        report("default", kind, shape, us, floor)
        try:
            fw = build(kind, cfg)
            out = fw.execute(inputs, _enable_options=["ws_normalization"])
            us = time_us(lambda: fw.execute(inputs, _enable_options=["ws_normalization"]))
            report("ws_normalization", kind, shape, us, floor, close(out, ref))
        except Exception as e:
            print("ws fail", kind, shape, str(e)[:300])
        if shape not in MANUAL:
            continue
        try:
            f0 = build(kind, cfg)
            p0 = heur(f0, inputs)
            print(str(p0)[:3000])
            print("attrs", [a for a in dir(p0) if not a.startswith("_")])
        except Exception:
            traceback.print_exc()
            continue
        def variants():
            base_g = p0.lparams.gdimy
            yield "copy", lambda p: None
            for g in sorted({base_g // 2, base_g * 2, 132 * 4, 132 * 8, 132 * 16, 132 * 24}):
                yield f"gdimy={g}", (lambda g: lambda p: _lp(p, gdimy=g))(g)
            for v in (4, 2):
                yield f"vect={v}", (lambda v: lambda p: _vect(p, v, cfg.hidden))(v)
            for b in (2, 4):
                yield f"bdimy={b}", (lambda b: lambda p: _lp(p, bdimy=b))(b)
            yield "maxrreg=255", lambda p: _reg(p, 255)
        for name, tw in variants():
            try:
                t0 = time.time()
                fm, pm = manual(kind, cfg, inputs, tw)
                out = fm.manual_execute(inputs, pm)
                us = time_us(lambda: fm.manual_execute(inputs, pm))
                report("manual " + name, kind, shape, us, floor, close(out, ref),
                       f"g={pm.lparams.gdimy} b=({pm.lparams.bdimx},{pm.lparams.bdimy}) {time.time()-t0:.1f}s")
            except Exception as e:
                print("manual fail", name, str(e).splitlines()[0][:300] if str(e) else repr(e))
