"""Reduction reuse on the GPU host: the rewritten fp8 fusions (2-D and the seed's 3-D) and every builder variant
compute the reference on nvFuser (segments and kernels recorded); thunder_exec.ReuseNvFusions rewrites Thunder's
real nvFusion region and returns eager's answer; the benchmarks' post-grad pass fires inside Inductor."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import fusions
import segkit
import thunder
import thunder_exec
from fusions import torch_models as tm
from segkit.reuse import reuse_reductions

pytestmark = pytest.mark.gpu

SPEC = fusions.get("fp8_amax")


def _exact(got, want) -> bool:
    return all(torch.equal(g.cpu(), w.cpu().float()) for g, w in zip(got, want))


@pytest.mark.parametrize("shape", ["4096x4096", "seed_12x34x56"])
@pytest.mark.parametrize("amaxes", [("row", "all"), ("row", "col", "all")])
def test_rewritten_fp8_fusion_is_exact_on_nvfuser(record, shape, amaxes):
    cfg = replace(SPEC.config(shape), amaxes=amaxes)
    fd = SPEC.build(cfg)
    inp = SPEC.make_inputs(cfg, device="cuda")
    runs = {"before": segkit.run_nvfuser(fd, list(inp.values()))}
    for inner_outer in (None, "outer", "inner"):
        new = reuse_reductions(fd, inner_outer=inner_outer).apply()
        runs[f"after{'+inner_outer=' + inner_outer if inner_outer else ''}"] = segkit.run_nvfuser(new, list(inp.values()))
    record({"test": "reuse", "shape": shape, "amaxes": amaxes,
            **{k: {"groups": r.groups, "kernels": r.kernel_count} for k, r in runs.items()}})
    want = SPEC.reference(inp, cfg)
    for name, run in runs.items():
        assert _exact(run.outputs, want), name


@pytest.mark.parametrize("shape", ["4096x4096", "seed_12x34x56"])
@pytest.mark.parametrize("variant", ["inner_outer", "inner_outer_rows", "two_stage"])
def test_fp8_variants_are_exact_on_nvfuser(record, shape, variant):
    cfg = replace(SPEC.config(shape), variant=variant)
    inp = SPEC.make_inputs(cfg, device="cuda")
    run = segkit.run_nvfuser(SPEC.build(cfg), list(inp.values()))
    record({"test": "fp8_variant", "shape": shape, "variant": variant, "groups": run.groups,
            "kernels": run.kernel_count})
    assert _exact(run.outputs, SPEC.reference(inp, cfg))


@pytest.mark.parametrize("shape, amaxes, chunk, width, rows, vec", [
    ("4096x4096", ("row", "col", "all"), 64, 256, 8, 8),
    ("seed_12x34x56", ("col", "row"), 12, 56, 2, 4),  # (408, 56): one tile across (Q = 1), 14 threads per row
    ("seed_12x34x56", ("all", "row", "col"), 408, 56, 2, 4),  # one CTA (P = Q = 1): no partials left for stage 2
])
@pytest.mark.parametrize("unroll", [1, 2])
@pytest.mark.parametrize("bits", [False, True])
def test_fp8_tiles_are_exact_and_deterministic_on_nvfuser(shape, amaxes, chunk, width, rows, vec, unroll, bits):
    """The hand-scheduled one-read amax (fusions/fp8_amax_tiles.py), in floats and on bf16 bits: max is exact, so
    bit-equal to float64."""
    from fusions.fp8_amax_bit_tiles import AmaxBitTiles
    from fusions.fp8_amax_tiles import AmaxTiles, TileSchedule

    cfg = replace(SPEC.config(shape), amaxes=amaxes)
    sched = TileSchedule(chunk, width, rows=rows, vec=vec, unroll=unroll)
    inp = SPEC.make_inputs(cfg, device="cuda")
    run = (AmaxBitTiles if bits else AmaxTiles)(cfg, sched)
    first = run.execute([inp["x"]])
    assert _exact(first, SPEC.reference(inp, cfg))
    assert all(torch.equal(a, b) for a, b in zip(first, run.execute([inp["x"]])))


@pytest.mark.parametrize("shape, amaxes, chunk, width", [
    ("4096x4096", ("row", "all"), 64, 1024),  # 4 row segments: stage 2 the row amax and the tensorwise one
    ("4096x4096", ("all",), 128, 256),
    ("seed_12x34x56", ("all", "row"), 12, 56),  # whole rows: stage 2 only the tensorwise amax
])
def test_fp8_bit_tiles_without_a_column_amax_are_exact_on_nvfuser(shape, amaxes, chunk, width):
    from fusions.fp8_amax_bit_tiles import AmaxBitTiles
    from fusions.fp8_amax_tiles import TileSchedule

    cfg = replace(SPEC.config(shape), amaxes=amaxes)
    inp = SPEC.make_inputs(cfg, device="cuda")
    run = AmaxBitTiles(cfg, TileSchedule(chunk, width, rows=4 if width > 56 else 2, vec=8 if width > 56 else 4,
                                         unroll=2))
    assert _exact(run.execute([inp["x"]]), SPEC.reference(inp, cfg))


@pytest.mark.parametrize("shape, amaxes, tail", [
    ("16384x8192", ("row", "all"), (1024, 4, 4)),  # 16384 row amaxes: one step of the CTA
    ("8192x28672", ("all", "row"), (1024, 4, 4)),  # 8192: half of a step predicated off
    ("16384x8192", ("all",), (256, 2, 4)),  # 8 steps
    ("seed_12x34x56", ("row", "all"), (1024, 4, 4)),
    ("seed_12x34x56", ("row", "all"), (128, 2, 1)),
])
def test_fp8_bits_are_exact_on_nvfuser(shape, amaxes, tail):
    from fusions.fp8_amax_bits import AmaxBits, OneCta

    cfg = replace(SPEC.config(shape), amaxes=amaxes)
    inp = SPEC.make_inputs(cfg, device="cuda")
    inp["x"][5, 3] = -float("inf")  # a row's amax and the tensorwise one an infinity
    run = AmaxBits(cfg, OneCta(*tail))
    assert _exact(run.execute([inp["x"]]), SPEC.reference(inp, cfg))


def test_thunder_region_is_rewritten_and_right():
    fn = tm.fp8_amaxes(("row", "col", "all"))
    x = torch.randn(12, 34, 56, device="cuda").bfloat16()
    transform = thunder_exec.ReuseNvFusions()
    jf = thunder.jit(fn, transforms=[transform])
    for _ in range(2):  # the first call decides, the second runs the rewritten fusion
        got = jf(x)
        assert all(torch.equal(g, w) for g, w in zip(got, fn(x)))
    assert any("now reads" in p for p in transform.rewrites.plans.values()), transform.rewrites.plans


def test_inductor_post_grad_pass_fires():
    from benchmarks.fx_reuse import compile_with_amax_reuse

    torch._dynamo.reset()
    fn = tm.fp8_amaxes(("row", "all"))
    x = torch.randn(64, 256, device="cuda").bfloat16()
    compiled, reuse = compile_with_amax_reuse(fn)
    # a cache hit (another process compiled this graph with the pass, e.g. the benchmark) skips the post-grad passes
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        got = compiled(x)
    assert all(torch.equal(g, w) for g, w in zip(got, fn(x)))
    assert reuse.rewrites == 1
