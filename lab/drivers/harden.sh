#!/usr/bin/env bash
# Issue 19 on the GPU host: NaN/Inf compare semantics through nvFuser (segkit.check, both bookend
# realizations, `segkit check` / `segkit bookend`), legacy dtype=DataType.Null reductions replayed, and the
# bad-input suite when hypothesis is there (CPU tests, with nvFuser present). About 1 minute.
set -uo pipefail
source .gpu/activate.sh
LOG="$OUT/harden/log.txt"
mkdir -p "$OUT/harden"
python -m pytest -q -m gpu tests/gpu/test_harden_gpu.py -p no:cacheprovider >"$LOG" 2>&1
gpu_rc=$?
if python -c "import hypothesis" 2>/dev/null; then
  python -m pytest -q tests/test_bad_inputs.py -p no:cacheprovider >>"$LOG" 2>&1
  cpu_rc=$?
else  # hypothesis is not staged on the GPU host; the suite runs in CPU CI
  cpu_rc="not run (no hypothesis on this host)"
fi
echo "---- summary"
printf '%-40s %s\n' "tests/gpu/test_harden_gpu.py (-m gpu)" "rc=$gpu_rc $(grep -E '[0-9]+ (passed|failed)' "$LOG" | head -1)"
printf '%-40s %s\n' "tests/test_bad_inputs.py (with nvFuser)" "rc=$cpu_rc $(grep -E '[0-9]+ (passed|failed)' "$LOG" | tail -1)"
