"""The seed's reduction reuse as a torch user writes it: an Inductor post-grad custom pass (the kind torchao
registered for float8, pytorch/pytorch#136267) that rewrites ``aten.amax(x, wide)`` to reduce the narrowest
``aten.amax(x, narrow)`` with ``narrow`` a proper subset of ``wide``. The benchmarks compile with it so that
segkit is compared with the best torch.compile a user can get, not only with the stock one."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

AMAX = torch.ops.aten.amax.default


def _dims(node: torch.fx.Node) -> tuple[torch.fx.Node, frozenset[int], bool]:
    src = node.args[0]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", [])
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    ndim = src.meta["val"].ndim
    return src, frozenset(d % ndim for d in dims) if dims else frozenset(range(ndim)), bool(keepdim)


class AmaxReuse(CustomGraphPass):
    """Post-grad pass: each wider amax of a value reads the narrowest amax of the same value that covers it."""

    def __init__(self) -> None:
        self.rewrites = 0  # how many amax nodes the pass rewrote (the benchmark records it: proof that it fired)

    def uuid(self) -> str:
        return "segkit-benchmarks-amax-reuse-1"

    def __call__(self, graph: torch.fx.Graph) -> None:
        groups: dict[torch.fx.Node, list[tuple[torch.fx.Node, frozenset[int], bool]]] = {}
        for n in graph.nodes:
            if n.op == "call_function" and n.target is AMAX:
                src, dims, keepdim = _dims(n)
                groups.setdefault(src, []).append((n, dims, keepdim))
        for members in groups.values():
            for n, dims, keepdim in members:
                covers = [m for m in members if m[1] < dims]
                if covers:
                    narrow = max(covers, key=lambda c: (len(c[1]), -c[0].meta["val"].numel()))
                    self._rewrite(graph, n, dims, keepdim, *narrow)
        graph.lint()

    def _rewrite(self, graph, n, dims, keepdim, m, mdims, mkeep) -> None:
        order = {node: i for i, node in enumerate(graph.nodes)}
        if order[m] > order[n]:
            n.prepend(m)  # m reads only the shared source, which comes before n
        rest = sorted(dims - mdims)
        if not mkeep:
            rest = [d - sum(x < d for x in mdims) for d in rest]
        with graph.inserting_before(n):
            out = self._call(graph, AMAX, (m, rest, mkeep))
            if mkeep and not keepdim:
                out = self._call(graph, torch.ops.aten.squeeze.dims, (out, sorted(dims)))
            elif keepdim and not mkeep:
                for d in sorted(dims):
                    out = self._call(graph, torch.ops.aten.unsqueeze.default, (out, d))
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        self.rewrites += 1

    @staticmethod
    def _call(graph: torch.fx.Graph, target, args) -> torch.fx.Node:
        node = graph.call_function(target, args)
        vals = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        with vals[0].fake_mode:
            node.meta["val"] = target(*vals)
        return node


def compile_with_amax_reuse(fn: Callable) -> tuple[Callable, AmaxReuse]:
    """``torch.compile(fn)`` with the pass installed, and the pass (its ``rewrites`` say whether it fired)."""
    reuse = AmaxReuse()
    return torch.compile(fn, dynamic=False, options={"post_grad_custom_post_pass": reuse}), reuse
