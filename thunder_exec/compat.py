"""Three narrow fixes of Thunder 0.2.6, applied by ``thunder_exec.install()`` (stock Thunder's runs too).

nvfuser_direct: make Thunder 0.2.6's stock nvFuser executor work with nvfuser_direct-only installs.

Thunder 0.2.6 imports ``nvfuser_direct`` for everything except one helper,
``compute_contiguity``, which still does ``from nvfuser import
compute_tensor_descriptor``. nvFuser >= 0.2.36 ships only ``nvfuser_direct``
(which has ``compute_tensor_descriptor``), so every stock nvFuser fusion
fails at its first call. Upstream fixed this after 0.2.6 (unreleased).

The fix here is deliberately narrow: it replaces that one Thunder function
with the same computation against ``nvfuser_direct``. It does nothing when
the legacy ``nvfuser`` module imports, when nvfuser_direct is missing, or
when Thunder did not enable its nvFuser executor (no CUDA).

Rematerialization: every fusion pass runs Thunder's ``rematerialize`` over all the trace's fusions (nvFuser's and
torch.compile's alike), which recomputes a producer fusion's value inside a consumer fusion by copying the bound
symbols that make it; a symbol with several outputs comes whole. litgpt's chunked cross entropy splits the targets,
``torchcompile_xentropy`` takes the split into its forward fusion, and the next pass (nvFuser's, on a GPU)
recomputes the first chunk inside the cross-entropy backward's fusion, which still takes the other chunks as inputs:
the fusion defines names it also takes, and rebuilding it fails ("Trying to add the name t222 to a trace, but that
name is already used"; ``apply_rematerialization_for_consumer`` is the same on upstream's main, 1e22aac). The fix
drops those inputs: the consumer computes them itself, with the same symbol (tests/test_thunder_remat.py).

CUDA graphs: ``CUDAGraphTransform``'s runner copies each argument into the buffer its graph captured unless the
argument is that very tensor object, static inputs included. A tensor saved for backward that is a view (the
forward graph's reshaped attention output, a k / v view of the qkv projection) is detached into a new object at
every step (``ThunderFunction.forward``), so the backward copied it onto its own memory at every replay: a launch
and a full read and write per saved view, in the host-bound turn from the forward graph to the backward graph. The
fix hands the runner its captured buffer wherever the argument is exactly that memory (pointer, dtype, shape and
strides): no copy, the same numbers (tests/test_thunder_cudagraph_alias.py).
"""

from __future__ import annotations

import functools
import importlib.util

import torch

_installed = False
_remat_installed = False
_cudagraph_installed = False


def _legacy_nvfuser_importable() -> bool:
    return importlib.util.find_spec("nvfuser") is not None


def install_nvfuser_direct_compat() -> bool:
    """Patch Thunder's ``compute_contiguity`` when it is needed; return whether it was patched."""
    global _installed
    if _installed:
        return True
    if _legacy_nvfuser_importable() or importlib.util.find_spec("nvfuser_direct") is None:
        return False
    import thunder.executors.nvfuserex as nvfuserex

    if nvfuserex.nvfuserex is None:  # no CUDA or nvFuser too old: Thunder did not load the impl
        return False
    import nvfuser_direct
    import thunder.executors.nvfuserex_impl as impl

    if not hasattr(nvfuser_direct, "compute_tensor_descriptor"):
        return False

    @functools.lru_cache(maxsize=2048)
    def compute_contiguity(shape, stride):
        """nvFuser's (contiguity, stride_order) for a strided tensor, via nvfuser_direct."""
        return tuple(tuple(x) for x in nvfuser_direct.compute_tensor_descriptor(shape, stride))

    impl.compute_contiguity = compute_contiguity
    _installed = True
    return True


def install_rematerialization_fix() -> bool:
    """Wrap Thunder's ``apply_rematerialization_for_consumer`` (once): the consumer it returns takes no input that
    its own bound symbols make. Return whether the wrapper is in place."""
    global _remat_installed
    if _remat_installed:
        return True
    import dataclasses

    import thunder.core.rematerialization as remat

    original = remat.apply_rematerialization_for_consumer

    @functools.wraps(original)
    def apply_rematerialization_for_consumer(producer, consumer, cut):
        new = original(producer, consumer, cut)
        made = {o.name for b in new.subsymbols for o in b.flat_proxy_outs}
        args = tuple(a for a in new.args if getattr(a, "name", None) not in made)
        return new if len(args) == len(new.args) else dataclasses.replace(new, args=args)

    apply_rematerialization_for_consumer.thunder_original = original
    remat.apply_rematerialization_for_consumer = apply_rematerialization_for_consumer
    _remat_installed = True
    return True


def _same_memory(captured, arg) -> bool:
    """``arg`` is exactly the memory of the captured buffer: copying it there would copy it onto itself."""
    return (captured is not arg and isinstance(arg, torch.Tensor) and isinstance(captured, torch.Tensor)
            and arg.data_ptr() == captured.data_ptr() and arg.dtype == captured.dtype
            and arg.shape == captured.shape and arg.stride() == captured.stride() and arg.device == captured.device)


def install_cudagraph_alias_fix() -> bool:
    """Wrap ``CUDAGraphRunner.call_cuda_graph`` (once): arguments that are their graph's captured buffers in memory
    are passed as those buffers, which the runner does not copy. The buffers are the last graph each fusion replayed
    (found by its outputs); a new graph (new shapes) is looked up again. Return whether the wrapper is in place."""
    global _cudagraph_installed
    if _cudagraph_installed:
        return True
    from thunder.transforms import cudagraph

    original = cudagraph.CUDAGraphRunner.call_cuda_graph

    @functools.wraps(original)
    def call_cuda_graph(self, fn_name, *args):
        last = self.__dict__.setdefault("_segkit_last_graph", {})
        captured_inputs, captured_outputs = last.get(fn_name, ((), None))
        if len(captured_inputs) == len(args):
            args = tuple(c if _same_memory(c, a) else a for c, a in zip(captured_inputs, args))
        outputs = original(self, fn_name, *args)
        if outputs is not captured_outputs:
            entry = next((e for k, e in self.cuda_graph_cache.items() if k[0] == fn_name and e[2] is outputs), None)
            if entry is not None:
                last[fn_name] = (entry[1], entry[2])
        return outputs

    call_cuda_graph.thunder_original = original
    cudagraph.CUDAGraphRunner.call_cuda_graph = call_cuda_graph
    _cudagraph_installed = True
    return True


def install_thunder_fixes() -> None:
    """The three fixes above, each once: what stock Thunder 0.2.6 needs here, none of segkit_ex's own patches
    (``thunder_exec.install()`` applies them first; the step table's stock Thunder rows apply them alone)."""
    install_nvfuser_direct_compat()
    install_rematerialization_fix()
    install_cudagraph_alias_fix()
