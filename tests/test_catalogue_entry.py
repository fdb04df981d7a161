"""One place per op: a new catalogue entry is all alias analysis, bookend, the minimizer, printing and replay
need; nothing else names ops."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition, ops
from segkit.minimize import rebuild
from segkit.replay import replay


def test_every_view_op_says_how_it_carries_layouts():
    for name, opdef in ops.CATALOGUE.items():
        if opdef.meta:
            assert opdef.view_layout is not None, f"{name} is a view op without OpDef.view_layout"
        for attr in opdef.size_attrs:
            assert attr in dict(opdef.attrs), f"{name}.size_attrs names {attr!r}, not one of its attributes"


#: An op-name switch: ``op.name == "sum"``, ``x.definition.name != "pad"``, ``op.name in ("max", "min")``, or a
#: bare ``name == "slice"`` for the names passes once switched on.
_OP_NAME_SWITCH = re.compile(r"""(\.name\s*(==|!=|in)\s*["'(\[{])|(name\s*==\s*["'](slice|pad|size|mean)["'])""")


def _op_name_switches(root: Path) -> list[str]:
    """``path: match`` for every op-name switch in a module under ``root`` outside the catalogue (``ops/``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if (root / "ops") in path.parents:
            continue
        found += [f"{path.relative_to(root)}: {m.group(0)}" for m in _OP_NAME_SWITCH.finditer(path.read_text())]
    return found


def test_no_module_outside_the_catalogue_keys_behaviour_on_op_names():
    root = Path(segkit.__file__).parent
    assert len(list(root.rglob("*.py"))) > 40  # the whole library is scanned, subpackages included
    found = _op_name_switches(root)
    assert not found, f"modules switch on op names (state the fact in the catalogue's OpDef instead): {found}"


@pytest.mark.parametrize("switch", ['if op.name == "x":', "if op.definition.name != 'pad':",
                                    'if op.name in ("max", "min"):', 'if name == "slice":'])
def test_the_op_name_lint_catches_a_planted_switch(tmp_path, switch):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "shape.py").write_text(f"{switch}\n    pass\n")  # the catalogue may switch on names
    assert _op_name_switches(tmp_path) == []
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "planted.py").write_text(f"def f(op):\n    {switch}\n        pass\n")
    assert _op_name_switches(tmp_path) == [f"fuzz/planted.py: {_OP_NAME_SWITCH.search(switch).group(0)}"]


@pytest.fixture
def widen(monkeypatch):
    """A made-up view op registered for one test: a reshape named "widen" whose ``shape`` is a size attr."""
    def infer(a):
        shape = tuple(ops.static_shape(a["shape"], "shape"))
        return [ops.Out(a["arg"].dtype, shape, tuple(s == 1 for s in shape), (False,) * len(shape))]

    entry = ops.OpDef("widen", ("arg",), (("shape", ops.REQUIRED),), infer,
                      lambda a, ctx: a["arg"].reshape([int(s) for s in a["shape"]]), meta=True,
                      view_layout=lambda op, x, lay: lay, size_attrs=("shape",))
    monkeypatch.setitem(ops.CATALOGUE, "widen", entry)
    return entry


def test_a_new_entry_reaches_every_pass(widen):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
        w = fd.ops.widen(x, shape=[8, 4])
        fd.add_output(fd.ops.exp(w))
    assert segkit.find_aliases(fd) == {w: x}                       # alias analysis reads meta + view_layout
    assert "fd.ops.widen(tv0, shape=[8, 4])" in segkit.emit_repro(fd, [torch.randn(4, 8)])  # printing
    smaller = rebuild(fd, sizes={8: 2})                           # the minimizer rewrites its size attribute
    assert smaller.fusion.outputs[0].shape == (2, 4)
    calls = []

    class Spy:  # any replay target sees the op through its catalogue entry
        def input(self, v): return v.name
        def constant(self, v): return v.name
        def literal(self, v): return v.value
        def atom(self, x): return x
        def call(self, op, opdef, args, kwargs):
            calls.append((op.name, args, kwargs))
            return tuple(o.name for o in op.outputs)
        def output(self, h, alias_input=None): calls.append(("output", h))

    replay(fd.fusion, Spy())
    assert calls[0] == ("widen", ["tv0"], {"shape": [8, 4]}) and calls[-1] == ("output", "tv2")
    x_ = torch.randn(4, 8)
    torch.testing.assert_close(fd.execute([x_])[0], x_.reshape(8, 4).exp())


def test_passes_read_reductions_and_segment_boundaries_from_the_entry(monkeypatch):
    """Reduction reuse regroups by ``OpDef.reduction_kind`` and bookend stops at ``OpDef.segment_boundary``, not
    by op name: entries copied from max and segment_set under new names behave like them."""
    monkeypatch.setitem(ops.CATALOGUE, "greatest", dataclasses.replace(ops.CATALOGUE["max"], name="greatest"))
    monkeypatch.setitem(ops.CATALOGUE, "fence", dataclasses.replace(ops.CATALOGUE["segment_set"], name="fence"))
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.greatest(x, dims=[1]))
        fd.add_output(fd.ops.greatest(x, dims=[0, 1]))
    plan = segkit.reuse_reductions(fd)
    assert [(r.kind, r.dims, r.narrow_dims) for r in plan.reuses] == [("greatest", (0, 1), (1,))]

    def cuts(op: str) -> list:
        """The outputs policy's cuts where ``op`` stands between a computed value and the view that is output."""
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
            z = getattr(fd.ops, op)(fd.ops.exp(fd.ops.permute(x, dims=[1, 0])))
            fd.add_output(fd.ops.reshape(z, new_shape=[32]))
        return [(c.tensor.name, [u.name for u in c.users]) for c in segkit.bookend(fd, "outputs").cuts]

    assert cuts("set") == [("tv2", ["set"])] and cuts("segment_set") == cuts("fence") == []


def test_inner_outer_reuse_clips_with_the_entrys_own_comparison(monkeypatch):
    """The row/column pairing of segkit.reuse clips with the comparison the entry names (``extremum_beats``), not
    one chosen by op name: a copy of max under a new name clips with ``gt`` and still computes the same values."""
    monkeypatch.setitem(ops.CATALOGUE, "greatest", dataclasses.replace(ops.CATALOGUE["max"], name="greatest"))
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[6, 10], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.greatest(x, dims=[1]))
        fd.add_output(fd.ops.greatest(x, dims=[0]))
    plan = segkit.reuse_reductions(fd, inner_outer="outer")
    assert [p.kind for p in plan.pairs] == ["greatest"] and "where(src > row, row, src)" in plan.describe()
    new = plan.apply()
    assert [op.name for op in new.fusion.ops].count("gt") == 1 and "lt" not in [op.name for op in new.fusion.ops]
    inputs = segkit.random_inputs(fd)
    for want, got in zip(segkit.run_reference(fd, inputs), segkit.run_reference(new, inputs)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
