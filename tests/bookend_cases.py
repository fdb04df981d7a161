"""The bookend cases from the issue (nvFuser's AliasTest shapes), as recorded fusions.

Each builder returns (fd, named values) so tests can state expectations by name.
"""

from __future__ import annotations


from segkit import DataType, FusionDefinition
from segkit.interp import random_inputs

F32 = DataType.Float


def _in(fd, shape, contiguity=None, dtype=F32):
    return fd.define_tensor(shape=shape, contiguity=contiguity or [True] * len(shape), dtype=dtype)


def case1():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3, 4])
        out = fd.ops.reshape(x, new_shape=[2, 12])
        fd.add_output(out)
    return fd, {"in": x, "out": out}


def case2():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3])
        t = fd.ops.reshape(x, new_shape=[6])
        b = fd.ops.broadcast(t, is_broadcast_dim=[True, False])
        o0 = fd.ops.expand(b, shape=[5, 6])
        o1 = fd.ops.add(t, t)
        fd.add_output(o0)
        fd.add_output(o1)
    return fd, {"t": t, "b": b, "o1": o1}


def case3():
    with FusionDefinition() as fd:
        x = _in(fd, [1024, 1024])
        t = fd.ops.reshape(x, new_shape=[1024 * 1024])
        s = fd.ops.set(t)
        fd.add_output(s)
        fd.add_output(fd.ops.add(t, 1.0))
    return fd, {"t": t, "s": s}


def case4():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3])
        s = fd.ops.slice(x, start_indices=[0, 0], end_indices=[2, 2])
        fd.add_output(s)
        fd.add_output(fd.ops.add(s, s))
    return fd, {"s": s}


def _case5(mul_p: bool):
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3, 5])
        a = fd.ops.add(x, x)
        r = fd.ops.reshape(a, new_shape=[6, 5])
        p = fd.ops.permute(r, dims=[1, 0])
        fd.add_output(r)
        fd.add_output(fd.ops.mul(p, p) if mul_p else p)
    return fd, {"a": a, "r": r, "p": p}


def case5():
    return _case5(False)


def case6():
    return _case5(True)


def case7():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3, 4])
        t0 = fd.ops.add(x, x)
        o0 = fd.ops.permute(t0, dims=[2, 0, 1])
        t1 = fd.ops.reshape(t0, new_shape=[6, 4])
        o1 = fd.ops.reshape(t1, new_shape=[24])
        o2 = fd.ops.mul(t1, t1)
        for o in (o0, o1, o2):
            fd.add_output(o)
    return fd, {"t0": t0, "t1": t1, "o0": o0, "o1": o1}


def case8():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3])
        o0 = fd.ops.permute(x, dims=[1, 0])
        o1 = fd.ops.add(fd.ops.mul(x, x), x)
        fd.add_output(o0)
        fd.add_output(o1)
    return fd, {"in": x, "o0": o0}


def case9():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3])
        t = fd.ops.add(x, x)
        outs = [fd.ops.reshape(t, new_shape=[6]), fd.ops.reshape(t, new_shape=[3, 2]), fd.ops.permute(t, dims=[1, 0])]
        for o in outs:
            fd.add_output(o)
    return fd, {"t": t, "outs": outs}


def case10():
    with FusionDefinition() as fd:
        x = _in(fd, [16, 128, 3072], dtype=DataType.BFloat16)
        outs = []
        for i in range(3):
            chunk = fd.ops.slice(x, start_indices=[0, 0, 1024 * i], end_indices=[16, 128, 1024 * (i + 1)])
            r = fd.ops.reshape(chunk, new_shape=[16, 128, 16, 64])
            outs.append(fd.ops.permute(r, dims=[0, 2, 1, 3]))
        for o in outs:
            fd.add_output(o)
    return fd, {"in": x, "outs": outs}


def case11():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3, 4], contiguity=[True, False, True])
        out = fd.ops.reshape(x, new_shape=[2, 12])
        fd.add_output(out)
    return fd, {"out": out}


def case12():
    with FusionDefinition() as fd:
        x = _in(fd, [4, 5, 6], contiguity=[True, True, None])  # dim 2: expanded (stride 0)
        bad = fd.ops.reshape(x, new_shape=[40, 3])
        good = fd.ops.reshape(x, new_shape=[20, -1])
        fd.add_output(bad)
        fd.add_output(good)
    return fd, {"in": x, "bad": bad, "good": good}


def case13():
    with FusionDefinition() as fd:
        x = _in(fd, [2, 3, 4])
        r0 = fd.ops.reshape(x, new_shape=[6, 4])
        r1 = fd.ops.reshape(x, new_shape=[6, 4])
        fd.add_output(fd.ops.mul(r0, r1))
    return fd, {"in": x}


#: Cases 1-10 as nvFuser's own pass sees them (policy "outputs").
OUTPUT_CASES = {f"case{i}": globals()[f"case{i}"] for i in range(1, 11)}



def inputs(fd, device: str = "cpu", seed: int = 0) -> list:
    """Random inputs matching the definitions (expanded dims get stride 0)."""
    return random_inputs(fd, device, seed)
