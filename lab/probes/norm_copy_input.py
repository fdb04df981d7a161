"""Which input of segkit's opaque norm backward torch copies into row order, in Qwen3-0.6B's step with the q / k norm
backward opaque (the small-norms run saw a strided copy per call, launched from a reshape of the input views).

Wraps thunder_exec.norms._shaped to report every tensor it cannot view as the runner's shape (its shape and
strides tell x, a slice of the qkv projection, from dy), then runs the step table for the case:

    SEGKIT_TUNING_TABLE=lab/runs/h200x2-2026-11-29-small-norms-tune/tunings.json \\
        python lab/probes/norm_copy_input.py --case qwen3-0.6b-x2 --variants segkit-auto --iters 2 --warmup 1
"""

import runpy
import sys
from collections import Counter

import thunder_exec.norms as norms

_shaped = norms._shaped
copies: Counter = Counter()


def _reporting(t, shape):
    if t.shape != shape:
        try:
            t.view(shape)
        except RuntimeError:
            copies[(tuple(t.shape), tuple(t.stride()), tuple(shape))] += 1
    return _shaped(t, shape)


norms._shaped = _reporting  # _rms_bwd_impl looks it up at each call
sys.argv = ["model_step.py", *sys.argv[1:]]
try:
    runpy.run_path("benchmarks/model_step.py", run_name="__main__")
finally:
    for key, n in copies.items():
        print(f"not viewable as rows: {key} x{n}", file=sys.stderr)
