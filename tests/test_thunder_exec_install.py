"""Importing thunder_exec changes nothing outside segkit's own objects; ``thunder_exec.install()`` applies the
global patches (thunder_exec.patches) once, and ``executors()``, ``route()``, the first read of
``thunder_exec.segkit_ex`` and the first thunder.jit listing segkit_ex (by name or object) call it. Each case
runs in a fresh process: the patches are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT

# Thunder as thunder_exec finds it (Thunder's own modules imported first: they register their own lookasides), with
# stand-ins that make the nvfuser_direct compatibility fix and the alone pass apply on a CPU machine: nvfuser_direct
# importable and Thunder's nvFuser executor loaded, its nvfuserex_impl a module whose compute_contiguity the fix
# replaces and whose executor's fusion pass and rematerialize the alone pass wraps (thunder_exec.decide.alone).
PRELUDE = textwrap.dedent("""
    import importlib.machinery, sys, types
    import torch, torch.fx
    import thunder, thunder.torch as ltorch
    import thunder.executors.nvfuserex as nvfuserex
    import thunder.core.rematerialization as remat
    from thunder.core import jit_ext

    direct = types.ModuleType("nvfuser_direct")
    direct.__spec__ = importlib.machinery.ModuleSpec("nvfuser_direct", None)
    direct.compute_tensor_descriptor = lambda shape, stride: ([True] * len(shape), list(range(len(shape))))
    sys.modules["nvfuser_direct"] = direct
    impl = types.ModuleType("thunder.executors.nvfuserex_impl")
    impl.compute_contiguity = original_contiguity = object()

    class NvFuserExecutor:
        def fusion_pass(self, trace):
            return trace

    impl.ex = NvFuserExecutor()
    impl.rematerialize = original_remat = lambda trace: trace
    original_pass = impl.ex.fusion_pass
    sys.modules["thunder.executors.nvfuserex_impl"] = impl
    thunder.executors.nvfuserex_impl = impl
    nvfuserex.nvfuserex = "a loaded nvFuser executor"

    def state():
        return (dict(jit_ext._general_jit_lookaside_map), dict(ltorch._torch_to_thunder_function_map),
                list(sys.meta_path), impl.compute_contiguity, remat.apply_rematerialization_for_consumer,
                impl.ex.fusion_pass, impl.rematerialize)

    before = state()
""")


def _run(body: str) -> None:
    code = PRELUDE + textwrap.dedent(body) + "\nprint('ok')\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_importing_thunder_exec_patches_nothing_and_install_patches_once():
    _run("""
        import thunder_exec
        from thunder_exec import fx_claims, patches
        from thunder_exec.recognize import RecognizeOnImport

        assert state() == before, "importing thunder_exec changed Thunder's lookasides, torch map or sys.meta_path"
        assert not patches.installed()

        thunder_exec.install()
        lookasides, torch_map, meta_path, contiguity, consumer_remat, fusion_pass, rematerialize = after = state()
        assert contiguity is not original_contiguity and contiguity((2, 3), (3, 1)) == ((True, True), (0, 1))
        assert fusion_pass.thunder_original == original_pass and rematerialize.thunder_original is original_remat
        assert consumer_remat is not before[4] and consumer_remat.thunder_original is before[4]
        assert lookasides[fx_claims._ENTER] is fx_claims._enter_graph_module
        assert thunder_exec.rms_norm in lookasides and thunder_exec.qkv_split_rope in lookasides
        assert torch_map[torch.rms_norm] is ltorch.rms_norm
        assert isinstance(meta_path[0], RecognizeOnImport) and meta_path[1:] == before[2]
        assert patches.installed()

        thunder_exec.install()
        assert state() == after, "a second install() changed something more"
        assert thunder_exec.executors()[0] is thunder_exec.segkit_ex
        assert state() == after, "executors() after install() changed something more"
    """)


def test_executors_installs():
    _run("""
        import thunder_exec

        assert state() == before
        thunder_exec.executors()
        assert state()[3] is not original_contiguity and torch.rms_norm in state()[1]
    """)


def test_the_first_use_of_segkit_ex_installs():
    _run("""
        import thunder_exec
        from thunder_exec.base import segkit_ex

        assert state() == before, "importing the executor's own module changed something"
        assert thunder_exec.segkit_ex is segkit_ex
        assert state()[3] is not original_contiguity and torch.rms_norm in state()[1]
    """)


def test_the_first_jit_listing_segkit_installs_once_by_name_or_object():
    _run("""
        import thunder_exec
        from thunder_exec import patches, recognize

        def fn(x):
            return x * 2

        thunder.jit(fn, executors=["sdpa"])
        assert state() == before and not patches.installed(), "a jit without segkit_ex installed"
        thunder.jit(fn, executors=["segkit", "sdpa"])
        after = state()
        assert patches.installed() and after[3] is not original_contiguity and torch.rms_norm in after[1]
        assert isinstance(after[2][0], recognize.RecognizeOnImport)
        thunder.jit(fn, executors=[thunder.extend.get_executor("segkit")])
        assert state() == after, "a second jit installed something more"
    """)


def test_route_installs():
    _run("""
        import thunder_exec

        def my_norm(x, weight, eps):
            return x * weight

        thunder_exec.route(my_norm, "rms_norm")
        assert state()[3] is not original_contiguity and my_norm in jit_ext._general_jit_lookaside_map
    """)


def test_the_nvfusion_transforms_apply_only_the_compatibility_fix():
    _run("""
        import thunder_exec

        thunder_exec.CheckNvFusions()
        thunder_exec.ReuseNvFusions()
        lookasides, torch_map, meta_path, contiguity, consumer_remat, fusion_pass, rematerialize = state()
        assert contiguity is not original_contiguity
        assert (lookasides, torch_map, meta_path) == before[:3] and consumer_remat is before[4]
        assert (fusion_pass, rematerialize) == before[5:]
    """)


# One training step of a 2-layer litgpt Llama-3.2-1B (64 wide, fp32, CPU) jitted with EXECUTORS, in a fresh
# process: its claims (tests/model_zoo.claim_report) as one JSON line.
LITGPT_CLAIMS = textwrap.dedent("""
    import dataclasses, json, warnings
    import thunder, thunder_exec
    from tests import model_zoo
    from tests.test_thunder_exec_models import NORM_BW, NORM_FW, ROPE_BW, ROPE_FW

    EXECUTORS = {executors}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = model_zoo.claim_report("Llama-3.2-1B", "fp32", EXECUTORS, NORM_FW, NORM_BW, ROPE_FW, ROPE_BW, n_layer=2)
    shadowed = [str(w.message) for w in caught if "segkit_ex comes after" in str(w.message)]
    print(json.dumps({**dataclasses.asdict(r), "shadowed": shadowed}))
""")


def _litgpt_claims(executors: str) -> dict:
    import json

    code = LITGPT_CLAIMS.replace("{executors}", executors)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_segkit_by_name_claims_what_executors_claims():
    """Names only, as launchers pass them ("segkit" and Thunder's defaults), or the executor Thunder looks up by
    name, in a fresh process: every norm and RoPE of the litgpt model claimed, forward and backward, exactly as
    ``executors()`` claims them in another fresh process."""
    by_object = _litgpt_claims("thunder_exec.executors()")
    counts = ("norms", "attentions", "norms_fw", "norms_bw", "ropes_fw", "ropes_bw")
    assert by_object["norms_fw"] == by_object["norms_bw"] == by_object["norms"] == 5, by_object
    assert by_object["ropes_fw"] == by_object["ropes_bw"] == 2 * by_object["attentions"] == 4, by_object
    for names in ('["segkit", "sdpa", "torchcompile_xentropy"]',
                  '[thunder.extend.get_executor("segkit"), "sdpa", "torchcompile_xentropy"]'):
        by_name = _litgpt_claims(names)
        assert [by_name[k] for k in counts] == [by_object[k] for k in counts], (names, by_name, by_object)
        assert by_name["grad_err"] <= 1e-5 and by_name["loss_err"] <= 1e-5 and not by_name["shadowed"], by_name
