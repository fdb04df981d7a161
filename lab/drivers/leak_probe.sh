#!/usr/bin/env bash
# Issue 52, defect 2: which earlier test file leaves state that fails
# tests/gpu/test_fusible_gpu.py::test_tiny_llama_step_fused_into_nvfuser_regions in the same pytest process.
# One process per earlier file (and one with all four, the order the issue ran), in parallel on one GPU;
# logs to $OUT/leak_<file>.log, a table last.
set -uo pipefail
T=tests/gpu/test_fusible_gpu.py::test_tiny_llama_step_fused_into_nvfuser_regions
FILES="test_thunder_exec_gpu test_real_inputs_gpu test_segments_gpu test_attention_gpu"
LIMIT="${LEAK_LIMIT:-300}"
for f in $FILES; do
  timeout "$LIMIT" python -m pytest -m gpu -p no:cacheprovider -q --tb=short -rfE "tests/gpu/$f.py" "$T" \
    > "$OUT/leak_$f.log" 2>&1 &
done
timeout "$LIMIT" python -m pytest -m gpu -p no:cacheprovider -q --tb=short -rfE $(for f in $FILES; do echo "tests/gpu/$f.py"; done) \
  tests/gpu/test_fusible_gpu.py > "$OUT/leak_all.log" 2>&1 &
wait
for f in $FILES all; do echo "$f: $(tail -1 "$OUT/leak_$f.log")"; done
