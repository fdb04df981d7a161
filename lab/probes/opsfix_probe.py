"""Probe real nvFuser for the dtype rules segkit follows and the combinations it refuses.

For every sampled pointwise op and reduction x dtype (tests/op_samples.py SAMPLES), the samples are built
directly on ``nvfuser_direct`` (not through segkit's replay) and run; the log line gives nvFuser's output
dtypes next to the ones segkit records, or nvFuser's FULL error text. Every combination segkit refuses
(op_samples.UNCOMPILABLE) is built the same way: nvFuser must fail on it. A few combinations segkit
accepts without having seen them run (EXTRA) and the known-bug samples are probed too.

Usage (GPU host): python lab/probes/opsfix_probe.py LOG [BUDGET_S]; prints a summary last.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nvfuser_direct as nvf  # noqa: E402

from segkit import DataType  # noqa: E402
from segkit import ops as catalogue  # noqa: E402
from segkit.dtypes import from_torch  # noqa: E402
from tests.op_samples import (SAMPLES, UNCOMPILABLE, OpSamples, Sample, _nary, build_fusion,  # noqa: E402
                               error_text, layouts, values)

#: Op families whose dtype rules this probe checks (the rest kept their rules and passed on nvFuser).
PROBED = set(catalogue.UNARY) | set(catalogue.BINARY) | {
    "where", "lerp", "clamp", "threshold", "addcmul", "gcd", "erfcinv", "complex", "real", "imag", "isreal",
    "logical_right_shift", "bitwise_left_shift", "bitwise_right_shift", "sum", "prod", "max", "min"}
#: Combinations segkit accepts but no sample ran on nvFuser yet: integer inputs of ceil, floor, round and trunc
#: (CUDA's math functions, not runtime/helpers.cu, take them), and the 16-bit overloads helpers.cu does define
#: (abs, max, isfinite).
EXTRA = [(f"{op} (Int)", op, OpSamples((DataType.Int,), _nary(op, 1)))
         for op in ("ceil", "floor", "round", "trunc")]
EXTRA += [(f"{op} (Half)", op, OpSamples((DataType.Half,), _nary(op, 1))) for op in ("abs", "isfinite", "neg")]
EXTRA += [("max (Half)", "max", OpSamples((DataType.Half,), SAMPLES["max"].make))]


def _scatter_variants(dt):
    """The known-bug scatter sample's two differences from the passing one, one at a time."""
    x, xp = layouts((6, 5), dt)
    idx = torch.stack([torch.randperm(6)[:4] for _ in range(5)], 1)
    scalar = 2.0 if dt.is_float else 2
    return [Sample([xp, idx, values((4, 5), dt)], lambda fd, v: fd.ops.scatter(v[0], v[1], v[2], 0),
                   "permuted self, tensor src"),
            Sample([x, idx, scalar], lambda fd, v: fd.ops.scatter(v[0], v[1], fd.ops.cast(v[2], dtype=dt), dim=0),
                   "contiguous self, cast scalar src")]


def _nv(x):
    """segkit's spelling -> nvfuser_direct's: DataTypes by name, inside lists and tuples too."""
    if isinstance(x, DataType):
        return getattr(nvf.DataType, x.name)
    if isinstance(x, (list, tuple)):
        return type(x)(_nv(i) for i in x)
    return x


class _Ops:
    def __init__(self, ops):
        self._ops = ops

    def __getattr__(self, name):
        fn = getattr(self._ops, name)
        return lambda *a, **k: fn(*_nv(a), **{key: _nv(v) for key, v in k.items()})


class RealFd:
    """A real nvfuser_direct FusionDefinition that sample builders (written against segkit) can drive."""

    def __init__(self, fd):
        self.fd, self.ops = fd, _Ops(fd.ops)

    def define_scalar(self, *a, **k):
        return self.fd.define_scalar(*_nv(a), **{key: _nv(v) for key, v in k.items()})


def run_real(samples):
    """Build and run the samples on nvFuser directly; (output dtypes, None) or (None, full error text)."""
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for s in samples for x in s.inputs]
    try:
        with nvf.FusionDefinition() as fd:
            real = RealFd(fd)
            for s in samples:
                vals = [fd.from_pytorch(x.cuda()) if isinstance(x, torch.Tensor) else
                        fd.define_scalar(dtype=nvf.DataType.Bool if isinstance(x, bool) else
                                         nvf.DataType.Int if isinstance(x, int) else nvf.DataType.Double)
                        for x in s.inputs]
                outs = s.build(real, vals)
                for o in outs if isinstance(outs, (tuple, list)) else [outs]:
                    fd.add_output(o)
        outs = fd.execute(inputs)
        return [from_torch(o.dtype).name for o in outs], None
    except Exception as e:  # what nvFuser said, all of it
        return None, error_text(e)


def segkit_dtypes(samples):
    try:
        fd, _ = build_fusion(samples)
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"
    return [v.dtype.name for v in fd.fusion.outputs], None


#: Per job kind: (tally key, log text) when nvFuser fails it, and when nvFuser runs it.
_VERDICTS = {
    "refused": (("refusal_confirmed", "segkit refuses; nvFuser fails too (refusal confirmed):"),
                ("refusal_wrong", "segkit refuses, but nvFuser RAN it: the refusal is wrong")),
    "known_bug": (("known_bug_still_fails", "still fails:"), ("known_bug_fixed", "nvFuser RAN it now")),
    "extra": (("extra_error", "nvFuser ERROR:"), ("extra_ok", "nvFuser ran it")),
}


def verdict(kind: str, samples, got, err) -> tuple[str, str]:
    """(tally key, log text) for one probed job: nvFuser's dtypes against segkit's, or its full error."""
    if kind == "sampled":
        want, _ = segkit_dtypes(samples)
        if err:
            return "nvfuser_error", f"nvFuser ERROR (segkit records {want}):\n{err}"
        if got == want:
            return "agree", f"dtypes agree {got}"
        return "dtype_differs", f"DTYPE DIFFERS: nvFuser {got} vs segkit {want}"
    (err_key, err_text), (ok_key, ok_text) = _VERDICTS[kind]
    return (err_key, f"{err_text}\n{err}") if err else (ok_key, f"{ok_text} (outputs {got})")


def main() -> int:
    log_path = Path(sys.argv[1])
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 90.0
    start = time.monotonic()
    tally = {"agree": 0, "dtype_differs": 0, "nvfuser_error": 0, "refusal_confirmed": 0, "refusal_wrong": 0,
             "extra_ok": 0, "extra_error": 0, "known_bug_still_fails": 0, "known_bug_fixed": 0,
             "skipped_over_budget": 0}
    with log_path.open("w") as log:
        def emit(line: str) -> None:
            log.write(line + "\n")
            log.flush()

        emit(f"# nvfuser_direct {getattr(nvf, '__version__', '?')}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
        # most telling first, in case the budget runs out: refusals, known bugs, extras, then the 16-bit rules
        jobs = [("refused", op, dt, spec.make(dt)) for op, spec in sorted(UNCOMPILABLE.items()) for dt in spec.dtypes]
        jobs += [("known_bug", f"{op} sample {i} ({s.nvfuser_bug_at})", dt, [s])
                 for op, spec in sorted(SAMPLES.items()) for dt in spec.dtypes
                 for i, s in enumerate(spec.make(dt)) if s.nvfuser_bug_at]
        jobs += [("extra", f"scatter {s.name}", dt, [s]) for dt in (DataType.Float, DataType.Int)
                 for s in _scatter_variants(dt)]
        jobs += [("extra", key, dt, spec.make(dt)) for key, op, spec in EXTRA for dt in spec.dtypes]
        sampled = [("sampled", op, dt, [s for s in spec.make(dt) if not s.nvfuser_bug_at])
                   for op, spec in sorted(SAMPLES.items()) if op in PROBED for dt in spec.dtypes]
        jobs += sorted(sampled, key=lambda j: j[2] is not DataType.BFloat16)
        for kind, op, dt, samples in jobs:
            if time.monotonic() - start > budget:
                tally["skipped_over_budget"] += 1
                continue
            got, err = run_real(samples)
            key, text = verdict(kind, samples, got, err)
            tally[key] += 1
            emit(f"[{kind}] {op} {dt.name}: {text}")
        emit(f"# {tally} in {time.monotonic() - start:.0f} s")
    print("probe: " + ", ".join(f"{k} {v}" for k, v in tally.items()) + f" (full log: {log_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
