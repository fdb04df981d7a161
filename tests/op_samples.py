"""Sample inputs for every catalogue op, opinfo style: the dtypes each op is checked in and, per dtype,
a few samples over shapes and layouts (contiguous, permuted strides, size-1 dims, odd sizes).

One table, ``SAMPLES``: op name -> OpSamples. tests/test_op_samples.py fails when a catalogue op has no
entry, so adding an op means adding its samples. The CPU tests run the samples on the reference
interpreter; tests/gpu/test_ops_gpu.py runs them on nvFuser as well and compares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit import DataType, FusionDefinition
from segkit.dtypes import from_torch

F32, F64, F16, BF16 = DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16
REDUCED = (BF16, F16)
I64, I32, B = DataType.Int, DataType.Int32, DataType.Bool
FLOATS = (F32, BF16)
ALL = (F32, BF16, I64)


@dataclass
class Sample:
    """Inputs (CPU tensors, or Python numbers that become fusion scalar inputs) and what to record on them."""

    inputs: list[Any]
    build: Callable[[FusionDefinition, list], Any]  # (fd, input Values) -> output Value(s)
    name: str = ""
    #: A known nvFuser bug this sample hits: the INTERNAL ASSERT location nvFuser's error names, and why.
    #: tests/gpu/test_ops_gpu.py keeps such samples out of the differential test and checks (strict xfail)
    #: that nvFuser still fails there, for that reason.
    nvfuser_bug_at: str = ""
    nvfuser_bug: str = ""


@dataclass
class OpSamples:
    dtypes: tuple[DataType, ...]
    make: Callable[[DataType], list[Sample]]
    tol: dict = field(default_factory=dict)  # torch dtype -> relative tolerance (segkit.compare's default else)


_GEN = torch.Generator().manual_seed(1234)


def values(shape, dtype: DataType, domain: str = "any") -> torch.Tensor:
    """A CPU tensor of ``dtype`` with values in ``domain``: any, pos (> 0.1), unit (|x| < 0.9), ge1,
    nonzero, small (ints in [0, 7]), special (with nan and +-inf)."""
    t = dtype.torch
    if dtype is B:
        return torch.rand(shape, generator=_GEN) > 0.5
    if not (t.is_floating_point or t.is_complex):
        lo, hi = {"pos": (1, 9), "nonzero": (1, 9), "small": (0, 8), "ge1": (1, 9)}.get(domain, (-9, 10))
        x = torch.randint(lo, hi, shape, generator=_GEN)
        if domain == "nonzero":
            x = x * (torch.randint(0, 2, shape, generator=_GEN) * 2 - 1)
        return x.to(t)
    x = torch.randn(shape, generator=_GEN, dtype=torch.float64)
    if domain == "pos":
        x = x.abs() + 0.1
    elif domain == "unit":
        x = torch.tanh(x) * 0.9
    elif domain == "near1":
        x = 1 + 0.1 * torch.tanh(x)
    elif domain == "ge1":
        x = x.abs() + 1.0
    elif domain == "nonzero":
        x = x + torch.sign(x) * 0.5
    elif domain == "special":
        flat = x.flatten()
        flat[:3] = torch.tensor([float("nan"), float("inf"), float("-inf")])
        x = flat.reshape(shape)
    return x.to(t)


def layouts(shape, dtype: DataType, domain: str = "any") -> list[torch.Tensor]:
    """The same logical shape in three layouts: contiguous, permuted (transposed strides) and, for rank 2,
    a size-1-dim variant of it."""
    contiguous = values(shape, dtype, domain)
    permuted = values(tuple(reversed(shape)), dtype, domain).permute(*reversed(range(len(shape))))
    return [contiguous, permuted]


SHAPES = [(5, 7), (3, 1, 6)]  # odd sizes, a size-1 dim


def _define(fd: FusionDefinition, x: Any):
    if isinstance(x, torch.Tensor):  # a GPU tensor of this layout at run time, so not from_pytorch's is_cpu
        return fd.define_tensor(sizes=list(x.shape), strides=list(x.stride()), dtype=from_torch(x.dtype))
    dt = DataType.Bool if isinstance(x, bool) else DataType.Int if isinstance(x, int) else DataType.Double
    return fd.define_scalar(dtype=dt)


def error_text(e: BaseException, limit: int = 30000) -> str:
    """An nvFuser error's full text, for logs: all lines, but past ``limit`` characters the middle (the
    generated kernel an NVRTC failure carries) is elided; the head names the assert, the tail holds NVRTC's log."""
    text = f"{type(e).__name__}: {str(e).strip()}"
    if len(text) <= limit:
        return text
    head, tail = text[: limit // 3], text[-(limit - limit // 3):]
    return f"{head}\n[... {len(text) - limit} characters of generated kernel elided ...]\n{tail}"


def build_fusion(samples: list[Sample]) -> tuple[FusionDefinition, list[Any]]:
    """One fusion holding every sample (their inputs and outputs side by side) and its inputs."""
    fd = FusionDefinition()
    inputs = []
    for s in samples:
        vals = [_define(fd, x) for x in s.inputs]
        outs = s.build(fd, vals)
        for o in outs if isinstance(outs, (tuple, list)) else [outs]:
            fd.add_output(o)
        inputs += s.inputs
    return fd, inputs


# --------------------------------------------------------------------------- generators
def _nary(op: str, n: int, domain: str = "any", second: str | None = None):
    """Elementwise ops over equal-shaped operands in every layout, plus a tensor-scalar call."""
    def make(dt: DataType) -> list[Sample]:
        out = []
        for shape, i in ((SHAPES[0], 0), (SHAPES[0], 1), (SHAPES[1], 0)):  # contiguous, permuted, size-1 dim
            xs = [layouts(shape, dt, domain if k == 0 or second is None else second)[(i + k) % 2] for k in range(n)]
            out.append(Sample(xs, lambda fd, v: getattr(fd.ops, op)(*v), f"{op}{shape}#{i}"))
        if n == 2:
            scalar = 3 if not (dt.is_float) else 1.5
            out.append(Sample([values((4, 3), dt, domain), scalar], lambda fd, v: getattr(fd.ops, op)(*v),
                              f"{op} tensor-scalar"))
        return out
    return make


def _reduce(op: str, compilable: bool = True):
    """The reduction overloads over two layouts. nvFuser cannot compile sum, prod or min reducing in a 16-bit
    float (segkit refuses them): there only the dtype= overload is sampled, and ``compilable=False`` gives
    the refused calls instead."""
    def make(dt: DataType) -> list[Sample]:
        x, xp = layouts((6, 5, 4), dt, ("near1" if dt.is_float else "pos") if op == "prod" else "any")
        calls = [lambda fd, v: getattr(fd.ops, op)(v[0], dims=[1]),
                 lambda fd, v: getattr(fd.ops, op)(v[0], dim=-1, keepdim=True),
                 lambda fd, v: getattr(fd.ops, op)(v[0])]
        if op in ("sum", "prod"):
            calls.append(lambda fd, v: getattr(fd.ops, op)(v[0], [0, 2], dtype=DataType.Double))
        numbered = list(enumerate(calls))
        if not compilable:
            numbered = numbered[:3]
        elif dt in REDUCED and op != "max":
            numbered = numbered[3:]
        return [Sample([t], c, f"{op}#{i}") for i, c in numbered for t in (x, xp)]
    return make


def _var(op: str):
    def make(dt: DataType) -> list[Sample]:
        x, xp = layouts((6, 5, 4), dt)
        if op == "welford":
            return [Sample([t], lambda fd, v: fd.ops.welford(v[0], dims=[1])) for t in (x, xp)]
        return [Sample([x], lambda fd, v: getattr(fd.ops, op)(v[0], dims=[1, 2])),
                Sample([xp], lambda fd, v: getattr(fd.ops, op)(v[0], dims=[0], correction=0, keepdim=True))]
    return make


def _one(fn, tensors):
    """A generator of one sample per layout of the tensors built by ``tensors(dt)``."""
    def make(dt: DataType) -> list[Sample]:
        return [Sample(list(ins), fn) for ins in tensors(dt)]
    return make


def _both(shape, domain="any"):
    return lambda dt: [[t] for t in layouts(shape, dt, domain)]


def _scan(op):
    return _one(lambda fd, v: getattr(fd.ops, op)(v[0], 1), lambda dt: [[t] for t in layouts((4, 9, 3), dt,
                                                                                                "pos" if op == "cumprod" else "any")])


def _index(n, high, dtype=torch.int64):
    return torch.randint(0, high, n if isinstance(n, tuple) else (n,), generator=_GEN).to(dtype)


def _samples_index_select(dt):
    x, xp = layouts((6, 5), dt)
    return [Sample([x, _index(4, 6)], lambda fd, v: fd.ops.index_select(v[0], v[1], dim=0)),
            Sample([xp, _index(7, 5, torch.int32)], lambda fd, v: fd.ops.index_select(v[0], v[1], 1))]


def _samples_gather(op):
    def make(dt):
        x, xp = layouts((6, 5), dt)
        small = (4, 5) if op == "take_along_axis" else (4, 3)
        return [Sample([x, _index(small, 6)], lambda fd, v: getattr(fd.ops, op)(v[0], v[1], 0)),
                Sample([xp, _index((6, 2), 5)], lambda fd, v: getattr(fd.ops, op)(v[0], v[1], dim=1))]
    return make


_SCATTER_BUG = {
    "csrc/fusion_segmenter.cpp:4015": "nvFuser 0.2.36 finds no scheduler for this scatter (NVF_ERROR 'Can not find "
    "a scheduler to schedule fusion segment'): its input has permuted strides, which the greedy scheduler "
    "rejects (csrc/scheduler/greedy.cpp: allocation domain must be the logical domain), and the scalar cast makes "
    "it two expressions, which ExprEval rejects (csrc/scheduler/expr_eval_sched.cpp)",
    "csrc/base.h:164": "nvFuser 0.2.36: cast of an Int scalar to Int is set() of a scalar (csrc/ops/arith.cpp "
    "castOp), which a later step downcasts to a TensorView (PolymorphicBase::as, csrc/base.h)",
}


def _samples_scatter(dt):
    x, xp = layouts((6, 5), dt)
    idx = torch.stack([torch.randperm(6, generator=_GEN)[:4] for _ in range(5)], 1)  # unique per column
    bug_at = "csrc/base.h:164" if dt is I64 else "csrc/fusion_segmenter.cpp:4015"
    return [Sample([x, idx, values((4, 5), dt)], lambda fd, v: fd.ops.scatter(v[0], v[1], v[2], 0)),
            Sample([xp, idx, 2.0 if dt.is_float else 2],
                   lambda fd, v: fd.ops.scatter(v[0], v[1], fd.ops.cast(v[2], dtype=dt), dim=0),
                   nvfuser_bug_at=bug_at, nvfuser_bug=_SCATTER_BUG[bug_at])]


def _samples_embedding(dt):
    w = values((10, 6), dt)
    return [Sample([_index((3, 4), 10), w], lambda fd, v: fd.ops.embedding_fwd(v[0], v[1])),
            Sample([_index(5, 10), w, 2], lambda fd, v: fd.ops.embedding_fwd(v[0], v[1], padding_idx=v[2]))]


def _samples_topk(dt):
    def call(dim, largest):
        return lambda fd, v: fd.ops.topk(v[0], fd.define_scalar(3, dtype=DataType.Int), dim=dim, largest=largest,
                                         sorted=True)
    x = torch.stack([torch.randperm(40, generator=_GEN)[:9] for _ in range(5)]).to(dt.torch)  # distinct per row
    return [Sample([x], call(-1, True)), Sample([x.t().contiguous().t()], call(1, False)),
            Sample([x.t().contiguous()], call(0, True))]


def _samples_argsort(dt):
    x = torch.stack([torch.randperm(40, generator=_GEN)[:9] for _ in range(5)]).to(dt.torch)
    return [Sample([x], lambda fd, v: fd.ops.argsort(v[0], 1)),
            Sample([x.t().contiguous().t()], lambda fd, v: fd.ops.argsort(v[0], dim=-1, descending=True)),
            Sample([x.t().contiguous()], lambda fd, v: fd.ops.argsort(v[0], 0, stable=True))]


def _samples_matmul(dt):
    return [Sample([values((5, 8), dt), values((8, 3), dt)], lambda fd, v: fd.ops.matmul(v[0], v[1])),
            Sample([values((2, 5, 8), dt), layouts((8, 3), dt)[1]], lambda fd, v: fd.ops.matmul(v[0], v[1])),
            Sample([values((8,), dt), values((2, 8, 3), dt)], lambda fd, v: fd.ops.matmul(v[0], v[1]))]


def _samples_linear(dt):
    return [Sample([values((5, 8), dt), values((3, 8), dt)], lambda fd, v: fd.ops.linear(v[0], v[1])),
            Sample([values((2, 5, 8), dt), layouts((3, 8), dt)[1], values((3,), dt)],
                   lambda fd, v: fd.ops.linear(v[0], v[1], bias=v[2]))]


def _samples_grouped_mm(dt):
    offs = torch.tensor([3, 8], dtype=torch.int32)
    return [Sample([values((4, 8), dt), values((8, 5), dt), offs], lambda fd, v: fd.ops.grouped_mm(*v)),
            Sample([values((2, 4, 8), dt), values((8, 6), dt), torch.tensor([2, 6], dtype=torch.int32)],
                   lambda fd, v: fd.ops.grouped_mm(*v)),
            Sample([values((6, 8), dt), values((2, 8, 5), dt), torch.tensor([2, 6], dtype=torch.int32)],
                   lambda fd, v: fd.ops.grouped_mm(*v))]


def _qkv(dt, l=8, s=8, e=16):
    return [values((2, 3, l, e), dt), values((2, 3, s, e), dt), values((2, 3, s, e), dt)]


def _samples_sdpfa_fwd(dt):
    # philox_seed / philox_offset are left out: they are nvFuser's RNG state, not values to compare
    return [Sample(_qkv(dt, 8, 16), lambda fd, v: fd.ops.sdpfa_fwd(*v)[:2]),
            Sample(_qkv(dt), lambda fd, v: fd.ops.sdpfa_fwd(*v, is_causal=True, scale=0.3)[:2]),
            Sample(_qkv(dt) + [values((1, 1, 8, 8), dt)],
                   lambda fd, v: fd.ops.sdpfa_fwd(v[0], v[1], v[2], bias=v[3])[0])]


def _samples_sdpfa_bwd(dt):
    def call(causal):
        def build(fd, v):
            out, lse, seed, off = fd.ops.sdpfa_fwd(v[0], v[1], v[2], is_causal=causal)
            return fd.ops.sdpfa_bwd(v[3], v[0], v[1], v[2], out, lse, None, causal, seed, off, None)
        return build
    return [Sample(_qkv(dt) + [values((2, 3, 8, 16), dt)], call(False)),
            Sample(_qkv(dt) + [values((2, 3, 8, 16), dt)], call(True))]


def _samples_cast(dt):
    targets = {F32: (BF16, F16, I64, DataType.Float8_e4m3fn), BF16: (F32, F64), I64: (F32, I32, B), B: (F32, I64)}
    x = values((5, 7), dt)
    return [Sample([x], lambda fd, v, t=t: fd.ops.cast(v[0], dtype=t)) for t in targets[dt]]


def _samples_meta(dt):
    x, xp = layouts((4, 6), dt)
    return {
        "broadcast": [Sample([t], lambda fd, v: fd.ops.broadcast(v[0], [True, False, False])) for t in (x, xp)],
        "broadcast_in_dim": [Sample([t], lambda fd, v: fd.ops.broadcast_in_dim(v[0], [3, 4, 6], [1, 2])) for t in (x, xp)],
        "expand": [Sample([values((4, 1), dt)], lambda fd, v: fd.ops.expand(v[0], [4, 5]))],
        "reshape": [Sample([t], lambda fd, v: fd.ops.reshape(v[0], [2, 12])) for t in (x, xp)],
        "permute": [Sample([t], lambda fd, v: fd.ops.permute(v[0], [1, 0])) for t in (x, xp)],
        "squeeze": [Sample([values((4, 1, 6), dt)], lambda fd, v: fd.ops.squeeze(v[0], [1]))],
        "slice": [Sample([t], lambda fd, v: fd.ops.slice(v[0], [1, 2], [3, 6])) for t in (x, xp)],
        "set": [Sample([t], lambda fd, v: fd.ops.set(v[0])) for t in (x, xp)],
        "segment_set": [Sample([t], lambda fd, v: fd.ops.segment_set(v[0])) for t in (x, xp)],
        "stride_order": [Sample([t], lambda fd, v: fd.ops.stride_order(v[0], [0, 1])) for t in (x, xp)],
        "pad": [Sample([t], lambda fd, v: fd.ops.pad(v[0], [1, 2, 0, 1])) for t in (x, xp)],
        "cat": [Sample([x, values((4, 3), dt)], lambda fd, v: fd.ops.cat([v[0], v[1]], dim=1)),
                Sample([xp, values((2, 6), dt)], lambda fd, v: fd.ops.cat([v[0], v[1]], 0))],
        "select": [Sample([t], lambda fd, v: fd.ops.select(v[0], fd.define_scalar(2, dtype=DataType.Int), dim=1))
                   for t in (x, xp)],
        "triu": [Sample([t], lambda fd, v, d=d: fd.ops.triu(v[0], d)) for t, d in ((x, 0), (xp, -1))],
        "size": [Sample([x], lambda fd, v: fd.ops.full([fd.ops.size(v[0], 1)], 2, dtype=dt))],
        "shape": [Sample([x], lambda fd, v: fd.ops.full(fd.ops.shape(v[0]), 3, dtype=dt))],
        "full": [Sample([], lambda fd, v: fd.ops.full([3, 5], 2, dtype=dt))],
    }


def _meta(name):
    return lambda dt: _samples_meta(dt)[name]


def _samples_iota(dt):
    if dt is F32:
        return [Sample([], lambda fd, v: fd.ops.iota(7, 0.5, 2.0, dtype=DataType.Float))]
    return [Sample([], lambda fd, v: fd.ops.iota(9)), Sample([5], lambda fd, v: fd.ops.iota(v[0], 3, 2, dtype=I64))]


def _samples_where(dt):
    return [Sample([values(s, B), *layouts(s, dt)], lambda fd, v: fd.ops.where(*v)) for s in SHAPES] + \
        [Sample([values((4, 3), B), values((4, 3), dt)], lambda fd, v: fd.ops.where(v[0], v[1], 0))]


def _samples_lerp(dt):
    return [Sample(list(layouts(s, dt)) + [values(s, dt, "unit")], lambda fd, v: fd.ops.lerp(*v)) for s in SHAPES]


def _samples_clamp(dt):
    lo, hi = (-0.5, 0.7) if dt.is_float else (-3, 4)
    return [Sample([t], lambda fd, v: fd.ops.clamp(v[0], lo, hi)) for t in layouts((5, 7), dt)]


def _samples_threshold(dt):
    th, val = (0.2, -5.0) if dt.is_float else (1, -5)
    return [Sample([t], lambda fd, v: fd.ops.threshold(v[0], th, val)) for t in layouts((5, 7), dt)]


def _samples_addcmul(dt):
    alpha = 0.5 if dt.is_float else 2
    return [Sample(list(layouts(s, dt)) + [values(s, dt)], lambda fd, v: fd.ops.addcmul(*v, alpha)) for s in SHAPES]


def _samples_complex(dt):
    def split(fd, v):
        z = fd.ops.complex(v[0], v[1])
        return fd.ops.real(z), fd.ops.imag(z), fd.ops.isreal(z)
    return [Sample(list(layouts(s, dt)), split) for s in SHAPES]


def _samples_real_imag(op):
    def make(dt):
        z = torch.complex(values((5, 7), F32), values((5, 7), F32)) if dt is DataType.ComplexFloat else values((5, 7), dt)
        if dt is DataType.ComplexFloat:
            z[0, 0] = complex(z[0, 0].real.item(), 0.0)  # one element with no imaginary part
        return [Sample([z], lambda fd, v: getattr(fd.ops, op)(v[0])),
                Sample([z.t().contiguous().t()], lambda fd, v: getattr(fd.ops, op)(v[0]))]
    return make


def _samples_shift(op):
    def make(dt):
        bits = 64 if dt is I64 else 32
        x = values((5, 7), dt)
        sh = torch.randint(0, bits, (5, 7), generator=_GEN).to(dt.torch)
        return [Sample([x, sh], lambda fd, v: getattr(fd.ops, op)(v[0], v[1])),
                Sample([x.t().contiguous().t(), 3], lambda fd, v: getattr(fd.ops, op)(v[0], v[1]))]
    return make


def _samples_random(op):
    def make(dt):
        if op in ("rand_like", "randn_like"):
            return [Sample([t], lambda fd, v: getattr(fd.ops, op)(v[0])) for t in layouts((33, 40), dt)]
        a, b = (0.0, 2.0) if op == "uniform" else (1.0, 0.5)
        return [Sample([], lambda fd, v: getattr(fd.ops, op)(a, b, [40, 50], dtype=dt)),
                Sample([a, b, 7, 0], lambda fd, v: getattr(fd.ops, op)(v[0], v[1], [64, 30], rng_seed=v[2],
                                                                        rng_offset=v[3], dtype=dt))]
    return make


_UNARY_DOMAINS = {
    "acos": "unit", "asin": "unit", "atanh": "unit", "erfinv": "unit", "acosh": "ge1", "log": "pos", "log2": "pos",
    "log10": "pos", "log1p": "pos", "sqrt": "pos", "rsqrt": "pos", "lgamma": "pos", "reciprocal": "nonzero",
    "isnan": "special", "isinf": "special", "isfinite": "special", "isneginf": "special", "isposinf": "special",
    "signbit": "special",
}
_INT_UNARY = {"abs", "neg", "sign", "relu", "isnan", "isinf", "isfinite", "isneginf", "isposinf"}
_BINARY_DOMAINS = {"div": "nonzero", "truediv": "nonzero", "fmod": "nonzero", "mod": "nonzero",
                   "remainder": "nonzero"}
_INT_BINARY = {"add", "sub", "mul", "div", "fmod", "mod", "remainder", "maximum", "minimum", "eq", "ne", "lt",
               "le", "gt", "ge"}


def _table() -> dict[str, OpSamples]:
    from segkit.ops import BINARY, NO_REDUCED_FLOAT_KERNEL, UNARY

    t: dict[str, OpSamples] = {}
    for op in UNARY:
        dtypes = ((F32,) if op in NO_REDUCED_FLOAT_KERNEL else FLOATS) + ((I64,) if op in _INT_UNARY else ())
        t[op] = OpSamples(dtypes, _nary(op, 1, _UNARY_DOMAINS.get(op, "any")))
    for op in ("logical_not",):
        t[op] = OpSamples((B, F32), _nary(op, 1))
    t["bitwise_not"] = OpSamples((I64, I32, B), _nary("bitwise_not", 1))
    t["erfcinv"] = OpSamples(FLOATS, lambda dt: [Sample([(values((5, 7), dt, "unit") + 1).to(dt.torch)],
                                                        lambda fd, v: fd.ops.erfcinv(v[0]))])
    for op in BINARY:
        dtypes = (I64, I32) if op == "mod" else FLOATS + ((I64,) if op in _INT_BINARY else ())  # mod: ints only
        second = _BINARY_DOMAINS.get(op)
        t[op] = OpSamples(dtypes, _nary(op, 2, "pos" if op == "pow" else "any", second))
    for op in ("logical_and", "logical_or"):
        t[op] = OpSamples((B,), _nary(op, 2))
    for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd"):
        t[op] = OpSamples((I64, I32), _nary(op, 2))
    t["nextafter"] = OpSamples((F32, F64), _nary("nextafter", 2))
    for op in ("bitwise_left_shift", "bitwise_right_shift", "logical_right_shift"):
        t[op] = OpSamples((I64, I32), _samples_shift(op))
    t["where"] = OpSamples(ALL, _samples_where)
    t["lerp"] = OpSamples(FLOATS, _samples_lerp)
    t["clamp"] = OpSamples((F32, I64), _samples_clamp)
    t["threshold"] = OpSamples((F32, I64), _samples_threshold)
    t["addcmul"] = OpSamples(ALL, _samples_addcmul)
    t["complex"] = OpSamples((F32, F64), _samples_complex)
    t["real"] = OpSamples((DataType.ComplexFloat, F32), _samples_real_imag("real"))
    t["imag"] = OpSamples((DataType.ComplexFloat,), _samples_real_imag("imag"))
    t["isreal"] = OpSamples((DataType.ComplexFloat, F32), _samples_real_imag("isreal"))
    t["cast"] = OpSamples((F32, BF16, I64, B), _samples_cast)
    for op in ("sum", "prod", "max", "min"):
        t[op] = OpSamples((F32, I64) if op == "min" else ALL, _reduce(op))
    for op in ("var", "var_mean", "welford"):
        t[op] = OpSamples((F32, F64), _var(op))  # nvFuser refuses var_mean of 16-bit floats
    for name in _samples_meta(F32):
        t[name] = OpSamples(ALL, _meta(name))
    t["iota"] = OpSamples((I64, F32), _samples_iota)
    for op in ("cumsum", "cumprod", "cummax", "cummin"):
        t[op] = OpSamples((F32, I64), _scan(op))
    t["index_select"] = OpSamples(ALL, _samples_index_select)
    t["gather"] = OpSamples(ALL, _samples_gather("gather"))
    t["take_along_axis"] = OpSamples(ALL, _samples_gather("take_along_axis"))
    t["scatter"] = OpSamples(ALL, _samples_scatter)
    t["embedding_fwd"] = OpSamples(FLOATS, _samples_embedding)
    t["topk"] = OpSamples((F32, I64), _samples_topk)
    t["argsort"] = OpSamples((F32, I64), _samples_argsort)
    t["matmul"] = OpSamples((F32, BF16), _samples_matmul, tol={torch.float32: 1e-4, torch.bfloat16: 2e-2})
    t["linear"] = OpSamples((F32, BF16), _samples_linear, tol={torch.float32: 1e-4, torch.bfloat16: 2e-2})
    t["grouped_mm"] = OpSamples((F32, BF16), _samples_grouped_mm, tol={torch.float32: 1e-4, torch.bfloat16: 2e-2})
    attn_tol = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}
    t["sdpfa_fwd"] = OpSamples((BF16, F16), _samples_sdpfa_fwd, tol=attn_tol)
    t["sdpfa_bwd"] = OpSamples((BF16, F16), _samples_sdpfa_bwd, tol=attn_tol)
    for op in ("uniform", "normal", "rand_like", "randn_like"):
        t[op] = OpSamples((F32, BF16), _samples_random(op))
    return t


SAMPLES = _table()


def _uncompilable() -> dict[str, OpSamples]:
    from segkit.ops import NO_INTEGRAL_KERNEL, NO_REDUCED_FLOAT_KERNEL, UNARY

    t = {op: OpSamples(REDUCED + ((I64, I32) if op in NO_INTEGRAL_KERNEL else ()),
                       _nary(op, 1, _UNARY_DOMAINS.get(op, "any")))
         for op in NO_REDUCED_FLOAT_KERNEL if op in UNARY}
    t["clamp"] = OpSamples(REDUCED, _samples_clamp)
    t["threshold"] = OpSamples(REDUCED, _samples_threshold)
    t["mod"] = OpSamples((F32, F64, BF16), _nary("mod", 2, "any", "nonzero"))
    for op in ("sum", "prod", "min"):
        t[op] = OpSamples(REDUCED, _reduce(op, compilable=False))
    t["var"] = OpSamples(REDUCED, _var("var"))
    return t


#: Op x dtype combinations nvFuser accepts but cannot compile, which segkit refuses while recording
#: (tests/test_nvfuser_dtype_rules.py checks the refusal; lab/probes/opsfix_probe.py runs them on nvFuser).
UNCOMPILABLE = _uncompilable()
