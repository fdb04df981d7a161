"""Exploration behind fusions._norm.bwd_tuning: nvFuser schedules for norm backward, cold-L2 time (CUDA
events) and correctness against the default schedule's outputs.

    python lab/explore/norm_bwd_schedules.py SHAPE,... [SHAPE,...]   default vs ws_normalization
                                                                            (+ manual tweaks on the 2nd list)
    python lab/explore/norm_bwd_schedules.py grid|regs|safe          the sweeps of the committed logs

Logs of the runs on an H200: lab/runs/h200-2026-11-21-tuning/norm_bwd_*.log (made by this
script before it was restructured to share one Case and segkit.nvfuser.tuned.override; on 132 SMs and the logged
shapes the parameters it sets are the same).
"""
import sys
import time
from dataclasses import dataclass

import torch
from nvfuser_direct import schedule, SchedulerType

from lab.explore.common import build, close, norm_case, schedule_manually
from benchmarks.harness import event_us
from segkit.tuning import NvTuning
from segkit.nvfuser.tuned import override

SMS = torch.cuda.get_device_properties(0).multi_processor_count


@dataclass
class Case:
    """One norm backward workload: inputs, bytes floor (us) and the default schedule's outputs to compare to."""

    kind: str
    shape: str

    def __post_init__(self):
        self.spec, self.cfg, self.inputs, self.floor = norm_case(self.kind, "bwd", self.shape)
        self.default = build(self.spec, self.cfg)
        self.ref = self.default.execute(self.inputs)

    def report(self, tag, us, ok=True, extra=""):
        print(f"RES {self.kind:9s} {self.shape:22s} {tag:28s} {us:9.1f} us  {100*self.floor/us:5.1f}% floor  ok={ok} "
              f"{extra}", flush=True)

    def run_default(self, reps=15):
        self.report("default", event_us(lambda: self.default.execute(self.inputs), reps))

    def run_ws(self, tag="ws_normalization", reps=15):
        fw = build(self.spec, self.cfg)
        out = fw.execute(self.inputs, _enable_options=["ws_normalization"])
        self.report(tag, event_us(lambda: fw.execute(self.inputs, _enable_options=["ws_normalization"]), reps),
                    close(out, self.ref))

    def run_manual(self, tag, vectorize=None, maxrregcount=None, gdimy=None, bdimy=None, reps=9, repeat=1):
        """nvFuser's inner-outer heuristics with segkit.nvfuser.tuned.override's replacements (+ bdimy); ok only if
        ``repeat`` runs all match the default schedule. Returns (us, ok), or None when nvFuser refuses."""
        def tweak(p):
            override(p, NvTuning("explore", scheduler="inner_outer_persistent", vectorize=vectorize,
                                 maxrregcount=maxrregcount), SMS)
            for name, value in (("gdimy", gdimy), ("bdimy", bdimy)):
                if value is not None:
                    setattr(p.lparams, name, value)

        try:
            fd, p = schedule_manually(self.spec, self.cfg, self.inputs, SchedulerType.inner_outer_persistent, tweak)
            ok = all(close(fd.manual_execute(self.inputs, p), self.ref) for _ in range(repeat))
            us = event_us(lambda: fd.manual_execute(self.inputs, p), reps)
        except Exception as e:
            print("fail", self.kind, self.shape, tag, str(e).splitlines()[0][-120:] if str(e) else repr(e))
            return None
        self.report(tag, us, ok, f"g={p.lparams.gdimy} b=({p.lparams.bdimx},{p.lparams.bdimy})")
        return us, ok


def grid(kind, shape, vects, bdimys, ks):
    case = Case(kind, shape)
    case.run_default()
    best = None
    for v in vects:
        for b in bdimys:
            for k in ks:
                got = case.run_manual(f"vect={v} bdimy={b} gdimy={SMS * k}", vectorize=v, bdimy=b, gdimy=SMS * k)
                if got and got[1] and (best is None or got[0] < best[0]):
                    best = (got[0], v, b, k)
    print("BEST", kind, shape, best, f"{100*case.floor/best[0]:.1f}% floor" if best else "")


def regs(kind, shape, combos, regs_list):
    case = Case(kind, shape)
    for r in regs_list:
        for b, g in combos:
            case.run_manual(f"reg={r} bdimy={b} gdimy={g}", maxrregcount=r or None, bdimy=b, gdimy=g)


def safe(kind, shape, vects, regs_list, gs, repeat=5):
    case = Case(kind, shape)
    case.run_default(reps=9)
    case.run_ws("ws", reps=9)
    for v in vects:
        for r in regs_list:
            for g in gs:
                case.run_manual(f"v={v} reg={r} b=1 g={g}", vectorize=v, maxrregcount=r or None, gdimy=g, repeat=repeat)


def shapes(names, manual):
    """Default vs ws_normalization; on the ``manual`` shapes also single-parameter tweaks of the heuristic."""
    for kind in ("rmsnorm", "layernorm"):
        for shape in names:
            case = Case(kind, shape)
            case.run_default()
            case.run_ws()
            if shape not in manual:
                continue
            p0 = schedule.compute_heuristics(build(case.spec, case.cfg).fusion, SchedulerType.inner_outer_persistent,
                                             case.inputs)
            print(str(p0)[:3000])
            base_g = p0.lparams.gdimy
            t0 = time.time()
            case.run_manual("manual copy", reps=15)
            for g in sorted({base_g // 2, base_g * 2, SMS * 4, SMS * 8, SMS * 16, SMS * 24}):
                case.run_manual(f"manual gdimy={g}", gdimy=g, reps=15)
            for v in (4, 2):
                case.run_manual(f"manual vect={v}", vectorize=v, reps=15)
            for b in (2, 4):
                case.run_manual(f"manual bdimy={b}", bdimy=b, reps=15)
            case.run_manual("manual maxrreg=255", maxrregcount=255, reps=15)
            print(f"manual variants {time.time() - t0:.1f} s")


if sys.argv[1] == "safe":
    for kind in ("rmsnorm", "layernorm"):
        safe(kind, "mixorder_576000x384", (8, 4), (0, 48, 40, 32), (1056, 2112, 3168, 4224))
        safe(kind, "sweep_65536x1024", (8,), (40, 32), (2112, 3168))
        safe(kind, "sweep_65536x256", (8,), (40, 32), (2112, 3168, 4224))
elif sys.argv[1] == "regs":
    for kind in ("rmsnorm", "layernorm"):
        regs(kind, "mixorder_576000x384", [(2, 1056), (4, 1056), (2, 2112), (8, 528), (4, 2112)], (0, 64, 48, 40))
        regs(kind, "sweep_65536x256", [(8, 528), (4, 1056), (8, 1056), (16, 264), (16, 528)], (0, 64, 40))
elif sys.argv[1] == "grid":
    for kind in ("rmsnorm", "layernorm"):
        grid(kind, "mixorder_576000x384", (8, 4), (1, 2, 4, 8), (2, 4, 6, 8))
        grid(kind, "sweep_65536x1024", (8,), (1, 2, 4, 8), (2, 4, 6, 8))
        grid(kind, "sweep_65536x256", (8,), (1, 2, 4, 8), (2, 4, 6, 8))
else:
    shapes(sys.argv[1].split(","), set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set())
