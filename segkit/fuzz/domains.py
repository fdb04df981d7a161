"""Generator steps for catalogue ops whose operands must lie in a domain: each step builds that domain inside
the fusion, so every case has one well-defined answer that the reference and nvFuser must agree on.

* integer and bitwise ops (bitwise_and/or/xor/not, shifts, logical_right_shift, gcd, mod) on Int/Int32
  tensors: shift amounts in [0, 7] (a left-shifted operand masked to [0, 255] first, so nothing
  overflows), gcd on non-negative operands, mod by a divisor that is odd by construction (``y & 7 | 1``);
* numerically wild math on its safe domain: erfinv on 0.9 * tanh(x), lgamma on |x| + 0.5, tan on
  1.2 * tanh(x) (away from the poles), sinh/cosh/exp2 on clamp(x, -10, 10), pow of a base clamped to
  [0.25, 4] to a bounded exponent, nextafter of two Float/Double tensors;
* clamp, threshold and addcmul with scalar bounds, threshold and alpha (nvFuser's signatures);
* indexing with indices in range by construction: an integer input masked to [0, 15] and reduced
  ``mod`` the indexed extent (gather, index_select, take_along_axis, embedding_fwd), or for scatter a
  permutation built from iota (``(i * k + s) mod n`` with k coprime to n, so no position is written twice);
* creation ops feeding compute: full (a fusion scalar fill value) and iota (a position ramp added along a dim);
* argsort and topk only where ties cannot change the answer: argsort's indices are consumed by
  take_along_axis on the sorted tensor itself (the sorted values are the same whichever tied index comes
  first) and never become outputs; topk (sorted=True) contributes its values only, never its indices.
  Both sort fresh Float/Double inputs, which hold no NaN (NaN placement is implementation-defined);
* complex from two Float/Double tensors, read back at once with real/imag (complex values are not
  compared: they never become outputs or feed other steps);
* size and shape: extents as Int scalars scaling a tensor.

Left out, and why:

* normal, uniform, rand_like, randn_like: random outputs; the reference cannot predict nvFuser's values, so
  a comparison could only be statistical (segkit.check's moments), far weaker than what fuzzing needs;
* sdpfa_fwd / sdpfa_bwd: nvFuser runs them as flash attention (Half/BFloat16, 4-d [N, H, L, E] with head
  sizes flash attention supports, a logsumexp and RNG state for the backward), which random cases rarely
  meet, and the CPU reference's math attention differs from it by more than the generic tolerances;
* grouped_mm: needs BFloat16 operands with aligned extents on sm90+ and offsets consistent with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from segkit.dtypes import DataType
from segkit.ir import Value

INTS = (DataType.Int, DataType.Int32)
FLOATS = (DataType.Float, DataType.Double)

#: Steps this module adds -> the catalogue ops each can emit (the generator's op coverage counts them).
DOMAIN_STEPS: dict[str, tuple[str, ...]] = {
    "integer": ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                "bitwise_right_shift", "logical_right_shift", "gcd", "mod"),
    "wild": ("erfinv", "lgamma", "tan", "sinh", "cosh", "exp2", "pow", "nextafter", "clamp", "tanh", "abs"),
    "clamp": ("clamp",), "threshold": ("threshold",), "addcmul": ("addcmul",),
    "index": ("gather", "index_select", "take_along_axis", "embedding_fwd", "bitwise_and", "mod"),
    "scatter": ("scatter", "iota", "mod"),
    "creation": ("full", "iota"),
    "sort": ("argsort", "take_along_axis", "topk"),
    "complex": ("complex", "real", "imag"),
    "extent": ("size", "shape"),
}

#: The numerically wild ops the "wild" step draws from (uniformly: the step as a whole is weighted low).
WILD_OPS = ("pow", "erfinv", "lgamma", "tan", "sinh", "cosh", "exp2", "nextafter")


class DomainSteps:
    """Mixed into the generator's builder, which provides draw, fd, pick, record, new_input, compute_view,
    operand_like and fits."""

    draw: Callable
    fd: Any

    def _float_x(self) -> Value | None:
        x = self.pick()
        return None if x is None else self.compute_view(x)

    def _int_x(self, shape: list[int] | None = None) -> Value:
        """A pool tensor of an integer dtype (of ``shape`` if given), else a new integer input."""
        x = self.pick(lambda v: v.dtype in INTS and (shape is None or list(v.shape) == shape))
        if x is None or self.draw(st.integers(0, 2)) == 0:
            x = self.new_input(shape, self.draw(st.sampled_from(INTS)))
        return x

    def _masked(self, x: Value, mask: int) -> Value:
        """``x & mask``: values in [0, mask] whatever x holds."""
        return self.record(self.fd.ops.bitwise_and(x, mask))

    # -- integer and bitwise ops --------------------------------------------------------------
    def integer(self) -> Value | None:
        x = self._int_x()
        ops = self.fd.ops
        name = self.draw(st.sampled_from(DOMAIN_STEPS["integer"]))
        if name == "bitwise_not":
            return self.record(ops.bitwise_not(x))
        tensor_rhs = self.draw(st.booleans())
        y = self._int_x(list(x.shape)) if tensor_rhs else None
        if y is not None and y.dtype is not x.dtype:  # one integer width: shifts and % as nvFuser computes them
            y = self.record(ops.cast(y, dtype=x.dtype))
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            return self.record(getattr(ops, name)(x, y if tensor_rhs else self.draw(st.sampled_from([1, 7, -4, 255]))))
        if name.endswith("shift"):
            amount = self._masked(y, 7) if tensor_rhs else self.draw(st.integers(0, 7))
            if name == "bitwise_left_shift":
                x = self._masked(x, 255)  # at most 255 << 7: no overflow in Int32
            return self.record(getattr(ops, name)(x, amount))
        if name == "gcd":
            return self.record(ops.gcd(self._masked(x, 63), self._masked(y, 63) if tensor_rhs else self.draw(
                st.sampled_from([0, 4, 6, 9]))))
        divisor = (self.record(ops.bitwise_or(self._masked(y, 7), 1)) if tensor_rhs
                   else self.draw(st.sampled_from([1, 3, 5, -3, 7])))
        return self.record(ops.mod(x, divisor))  # C's %, as nvFuser and the reference's fmod compute it

    # -- numerically wild math on its safe domain -----------------------------------------------
    def wild(self) -> Value | None:
        x = self._float_x()
        if x is None:
            return None
        ops, draw = self.fd.ops, self.draw
        name = draw(st.sampled_from(WILD_OPS))
        if name == "erfinv":
            return self.record(ops.erfinv(self.record(ops.mul(self.record(ops.tanh(x)), 0.9))))
        if name == "lgamma":
            return self.record(ops.lgamma(self.record(ops.add(self.record(ops.abs(x)), 0.5))))
        if name == "tan":
            return self.record(ops.tan(self.record(ops.mul(self.record(ops.tanh(x)), 1.2))))
        if name in ("sinh", "cosh", "exp2"):
            return self.record(getattr(ops, name)(self.record(ops.clamp(x, -10.0, 10.0))))
        if name == "pow":
            base = self.record(ops.clamp(self.record(ops.abs(x)), 0.25, 4.0))
            if draw(st.booleans()):
                exponent: Any = draw(st.sampled_from([-2.0, -0.5, 0.5, 1.5, 2.0, 3.0, 2]))
            else:
                exponent = self.record(ops.mul(self.record(ops.tanh(self.operand_like(x))), 2.0))
            return self.record(ops.pow(base, exponent))
        other = self.operand_like(x)
        return self.record(ops.nextafter(x, other) if draw(st.booleans()) else ops.nextafter(other, x))

    def clamp(self) -> Value | None:
        x = self._float_x()
        if x is None:
            return None
        lo = self.draw(st.sampled_from([-1.0, -0.5, 0.0]))
        return self.record(self.fd.ops.clamp(x, lo, lo + self.draw(st.sampled_from([0.25, 1.0, 2.0]))))

    def threshold(self) -> Value | None:
        x = self._float_x()
        if x is None:
            return None
        return self.record(self.fd.ops.threshold(x, self.draw(st.sampled_from([0.0, 0.5, -1.0])),
                                                 self.draw(st.sampled_from([0.0, 2.0, -3.5]))))

    def addcmul(self) -> Value | None:
        x = self._float_x()
        if x is None:
            return None
        b, c = (self.operand_like(x) for _ in range(2))
        return self.record(self.fd.ops.addcmul(x, b, c, self.draw(st.sampled_from([1.0, 0.5, -2.0]))))

    # -- indexing with in-range indices ---------------------------------------------------------
    def _indices(self, shape: list[int], extent: int) -> Value:
        """An Int/Int32 tensor of ``shape`` with values in [0, extent): integers masked, then mod extent."""
        raw = self._int_x(shape)
        return self.record(self.fd.ops.mod(self._masked(raw, 15), extent))

    def index(self) -> Value | None:
        name = self.draw(st.sampled_from(["gather", "index_select", "take_along_axis", "embedding_fwd"]))
        ops, draw = self.fd.ops, self.draw
        if name == "embedding_fwd":
            vocab, width = draw(st.sampled_from([1, 5, 16, 33])), draw(st.sampled_from([1, 4, 8, 17]))
            shape = list(draw(st.lists(st.sampled_from([1, 2, 3, 7, 16]), min_size=1, max_size=3)))
            if not self.fits(shape + [width]):
                return None
            weight = self.compute_view(self.new_input([vocab, width], draw(st.sampled_from(FLOATS))))
            return self.record(ops.embedding_fwd(self._indices(shape, vocab), weight))
        # the indexed dim is a real (not broadcast) one: its extent bounds the indices
        x = self.pick(lambda v: any(s > 0 and not b for s, b in zip(v.shape, v.broadcast)))
        if x is None:
            return None
        d = draw(st.sampled_from([i for i in range(x.ndim) if x.shape[i] > 0 and not x.broadcast[i]]))
        n, m = x.shape[d], draw(st.sampled_from([1, 2, 3, 5, 8, 16]))
        if name == "index_select":
            shape = [m]
        else:
            shape = list(x.shape)
            shape[d] = m
            if name == "gather":  # gather's index may be smaller than arg in the other dims too
                shape = [s if i == d or s == 1 or draw(st.integers(0, 2)) else draw(st.integers(1, s))
                         for i, s in enumerate(shape)]
        out_shape = [m if i == d else s for i, s in enumerate(x.shape)] if name == "index_select" else shape
        if not self.fits(out_shape):
            return None
        return self.record(getattr(ops, name)(x, self._indices(shape, n), dim=d))

    def scatter(self) -> Value | None:
        """scatter along a dim with a permutation per row (iota-built): every position written exactly once."""
        x = self.pick(lambda v: any(s > 1 and not b for s, b in zip(v.shape, v.broadcast)))
        if x is None:
            return None
        ops, draw = self.fd.ops, self.draw
        d = draw(st.sampled_from([i for i in range(x.ndim) if x.shape[i] > 1 and not x.broadcast[i]]))
        n = x.shape[d]
        k = draw(st.sampled_from([k for k in (1, 2, 3, 5, 7) if math.gcd(k, n) == 1]))
        perm = self.record(ops.mod(ops.iota(n, start=draw(st.integers(0, n - 1)), step=k, dtype=DataType.Int), n))
        index = perm
        if x.ndim > 1:
            index = self.record(ops.broadcast_in_dim(perm, shape=list(x.shape), broadcast_dims=[d]))
        src = self.new_input(list(x.shape), x.dtype)
        return self.record(ops.scatter(x, index, src, dim=d))

    # -- creation ops feeding compute -----------------------------------------------------------
    def creation(self) -> Value | None:
        x = self._float_x()
        if x is None:
            return None
        ops, draw = self.fd.ops, self.draw
        if draw(st.booleans()):
            fill = self.fd.define_scalar(draw(st.sampled_from([0.0, 1.5, -2.0])), dtype=x.dtype)
            made = self.record(ops.full(list(x.shape), fill, x.dtype))
        else:
            d = draw(st.integers(0, x.ndim - 1))
            ramp = self.record(ops.iota(x.shape[d], start=draw(st.sampled_from([0.0, -1.0])),
                                        step=draw(st.sampled_from([0.5, 1.0, 0.125])), dtype=x.dtype))
            made = self.record(ops.broadcast_in_dim(ramp, shape=list(x.shape), broadcast_dims=[d]))
        return self.record(getattr(ops, draw(st.sampled_from(["add", "mul", "sub"])))(x, made))

    # -- sorting, where ties cannot change the answer --------------------------------------------
    def sort(self) -> Value | None:
        draw = self.draw
        shape = [draw(st.sampled_from([1, 2, 3, 5, 8])), draw(st.sampled_from([2, 3, 7, 16, 33, 64]))]
        if draw(st.booleans()):
            shape = shape[::-1]
        d = draw(st.integers(0, 1))
        if shape[d] < 2:
            d = 1 - d
        # a fresh input (no NaN), never stride-0 along the sorted dim
        x = self.compute_view(self.new_input(shape, draw(st.sampled_from(FLOATS + (DataType.BFloat16,))),
                                             expand={d: False}))
        ops = self.fd.ops
        if draw(st.booleans()):
            idx = ops.argsort(x, dim=d, descending=draw(st.booleans()), stable=draw(st.booleans()))
            return self.record(ops.take_along_axis(x, idx, dim=d))  # the sorted values: tie-insensitive
        k = self.fd.define_scalar(draw(st.integers(1, shape[d])), dtype=DataType.Int)
        values, _ = ops.topk(x, k, dim=d, largest=draw(st.booleans()), sorted=True)
        self.pool.append(values)  # the values only: which of tied elements' indices comes first is not defined
        return values

    # -- complex, read back at once ---------------------------------------------------------------
    def complex(self) -> Value | None:
        x = self.pick(lambda v: v.dtype in FLOATS)
        if x is None:
            return None
        ops = self.fd.ops
        y = self.operand_like(x)
        if y.dtype is not x.dtype or list(y.shape) != list(x.shape):
            y = self.record(ops.neg(x))
        c = ops.complex(x, y)
        part = self.draw(st.sampled_from(["real", "imag", "both"]))
        if part == "both":
            return self.record(ops.sub(ops.real(c), ops.imag(c)))
        return self.record(getattr(ops, part)(c))

    def extent(self) -> Value | None:
        x = self.pick(lambda v: v.ndim >= 1)
        if x is None:
            return None
        d = self.draw(st.integers(0, x.ndim - 1))
        if self.draw(st.booleans()):
            s = self.fd.ops.size(x, dim=d)
        else:
            extents = self.fd.ops.shape(x)  # one Int scalar per dim (a single one for a 1-d tensor)
            s = extents[d] if isinstance(extents, tuple) else extents
        return self.record(self.fd.ops.mul(self.compute_view(x), s))
