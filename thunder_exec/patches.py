"""The changes thunder_exec makes outside its own objects, all in one place, applied by ``install()`` and never
by an import (``thunder_exec.install()``; ``executors()``, ``route()``, the first read of ``thunder_exec.segkit_ex``
and the first thunder.jit listing segkit_ex, by object or by name, call it: thunder_exec.base.FirstUse):

* Thunder 0.2.6's ``compute_contiguity`` against nvfuser_direct where only nvfuser_direct is installed
  (thunder_exec.compat; also applied alone by CheckNvFusions / ReuseNvFusions, which run Thunder's own fusions);
* Thunder 0.2.6's rematerialization: a consumer fusion that recomputes a producer's multi-output symbol (a split)
  takes none of that symbol's outputs as inputs (thunder_exec.compat);
* Thunder 0.2.6's CUDA graph runner: an argument that is exactly its graph's captured buffer in memory (a saved
  view, detached anew at every step) is not copied onto itself at every replay (thunder_exec.compat);
* Thunder's nvFuser fusion pass: afterwards, a fused norm / RoPE call alone in its region runs as segkit_ex's
  opaque symbol where segkit's tuned kernel is faster, checked before the pass's rematerialization and after the
  pass (thunder_exec.decide.alone; segkit_fuse="auto" only);
* Thunder general-jit lookasides: on thunder_exec's ``output_dtypes`` helper (run, not traced), on the known
  library functions imported so far (litgpt's, Hugging Face's, thunder_exec's own: thunder_exec.recognize), and
  ThunderFX's (every GraphModule's entry, the pattern functions, ``torch.rms_norm``: thunder_exec.fx_claims);
* a Thunder general-jit lookaside on ``torch.nn.functional.scaled_dot_product_attention``: k / v repeated for
  grouped-query attention (litgpt's ``repeat_interleave``) or passed with ``enable_gqa=True`` reach segkit's cuDNN
  attention unrepeated (thunder_exec.gqa); without segkit_ex among the executors, Thunder's own mapping;
* ``torch.rms_norm`` mapped to ``thunder.torch.rms_norm`` for ThunderFX's splitter (thunder_exec.fx_claims);
* an import hook first on ``sys.meta_path`` that recognizes litgpt's and Hugging Face's functions as their modules
  are imported (thunder_exec.recognize).

Declaring the executor is not among them: ``segkit_ex`` and the symbols registered on it (thunder_exec.base and
the symbol files) exist from the import on.
"""

from __future__ import annotations

import thunder_exec.decide.alone as alone
import thunder_exec.compat as compat
import thunder_exec.fx_claims as fx_claims
import thunder_exec.gqa as gqa
import thunder_exec.recognize as recognize
from segkit.args import checked

_installed = False


@checked
def install() -> None:
    """Apply every patch above once; later calls change nothing (executors() still recognizes the libraries
    imported since, through recognize.install_known)."""
    global _installed
    if _installed:
        return
    compat.install_thunder_fixes()
    alone.install()
    recognize.install_helpers()
    gqa.install()
    fx_claims.install()
    recognize.install_known()
    recognize.install_import_hook()
    _installed = True


def installed() -> bool:
    return _installed
