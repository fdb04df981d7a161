"""The op catalogue: one entry per nvFuser op segkit can record; every pass reads an op from here, never by name.

Modules, each importing only those above it in this list:

* ``catalogue``: the core: :class:`OpDef` (signature, shape/dtype rule, torch reference, and the facts passes
  read), ``CATALOGUE``, ``register`` and the helpers shape rules share;
* ``promotion``: nvFuser's type promotion, which types the pointwise ops;
* ``view_layouts``: how each view op carries its input's layout (alias analysis);
* the families, each registering its entries when imported: ``pointwise`` (and cast), ``reduce`` (reductions and
  the ``mean`` composite), ``shape`` (view ops, pad, cat, select, size queries), ``creation`` (full, iota),
  ``indexing`` (gather / scatter / embedding, scans, sort, topk, triu), ``matmul`` (matmul, linear,
  grouped_mm, attention), ``random`` (uniform, normal, rand_like, randn_like), ``legacy`` (the legacy frontend's
  ops nvfuser_direct dropped, recorded as catalogue ops: tensor_sizes, at, add_alpha, sub_alpha).

Importing this package imports every family, so ``CATALOGUE`` is complete; the names below are the ones
callers use. ``REFUSED`` lists the nvFuser ops segkit deliberately does not record, with the reason.
"""

from __future__ import annotations

from segkit.ops import creation, indexing, legacy, matmul, pointwise, random, reduce, shape  # noqa: F401  (registers)
from segkit.ops.catalogue import (CATALOGUE, COMPOSITES, HINTS, REFUSED, REQUIRED, InferError, OpDef, Out,
                                  RunContext, get, is_segment_boundary, norm_dim, norm_dims, reductions,
                                  register, static, static_shape)
from segkit.ops.pointwise import BINARY, NO_INTEGRAL_KERNEL, NO_REDUCED_FLOAT_KERNEL, UNARY

__all__ = [
    "BINARY", "CATALOGUE", "COMPOSITES", "HINTS", "NO_INTEGRAL_KERNEL", "NO_REDUCED_FLOAT_KERNEL", "REFUSED",
    "REQUIRED", "UNARY", "InferError", "OpDef", "Out", "RunContext", "get", "is_segment_boundary", "norm_dim",
    "norm_dims", "reductions", "register", "static", "static_shape",
]
