#!/usr/bin/env bash
# The op-level differential test (branch ops) on the GPU host: every catalogue op on nvFuser against the
# reference interpreter. Writes $OUT/ops/pytest.log and $OUT/ops/summary.json; prints the tally last.
source .gpu/activate.sh
mkdir -p "$OUT/ops"
SEGKIT_OPS_SUMMARY="$OUT/ops/summary.json" timeout 480 python -m pytest -m gpu -q -p no:cacheprovider \
    tests/gpu/test_ops_gpu.py -rf --durations=10 > "$OUT/ops/pytest.log" 2>&1
rc=$?
grep -E "^FAILED|passed|failed" "$OUT/ops/pytest.log" | tail -40
python - "$OUT/ops/summary.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except OSError:
    sys.exit("no summary written (the run stopped early: see pytest.log)")
print(s["summary"], "on", s["device"])
for op, problems in s["failed"].items():
    print(f"  {op}: {len(problems)} failing sample(s); first: {problems[0][:300]}")
PY
exit $rc
