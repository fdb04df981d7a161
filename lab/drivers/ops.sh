#!/usr/bin/env bash
# The op-level differential test on the GPU host, after a probe of nvFuser's own dtypes and errors.
# 1. lab/probes/opsfix_probe.py: every sampled pointwise op / reduction x dtype built directly on nvfuser_direct:
#    nvFuser's output dtypes next to segkit's, full error texts, and every combination segkit refuses
#    (nvFuser must fail on it) -> $OUT/ops/probe.log (at most ~80 s; refusals, known bugs and extras first).
# 2. tests/gpu/test_ops_gpu.py: every catalogue op on nvFuser against the reference interpreter
#    -> $OUT/ops/pytest.log and $OUT/ops/summary.json (full error texts). Prints the tallies last.
# Under 5 minutes in all (both steps have their own budget and timeout: OPS_PROBE_S, OPS_TEST_S seconds).
source .gpu/activate.sh
mkdir -p "$OUT/ops"
timeout $(( ${OPS_PROBE_S:-60} + 20 )) python lab/probes/opsfix_probe.py "$OUT/ops/probe.log" ${OPS_PROBE_S:-60} > "$OUT/ops/probe.out" 2>&1
probe_rc=$?
SEGKIT_OPS_BUDGET_S=${OPS_TEST_S:-180} SEGKIT_OPS_SUMMARY="$OUT/ops/summary.json" timeout $(( ${OPS_TEST_S:-180} + 20 )) python -m pytest -m gpu -q \
    -p no:cacheprovider tests/gpu/test_ops_gpu.py -rfX --durations=5 > "$OUT/ops/pytest.log" 2>&1
rc=$?
grep -E "^(FAILED|XPASS)|passed|failed" "$OUT/ops/pytest.log" | tail -30
python - "$OUT/ops/summary.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except OSError:
    sys.exit("no summary written (the run stopped early: see pytest.log)")
print(s["summary"], "on", s["device"])
for op, problems in s["failed"].items():
    print(f"  {op}: {len(problems)} failing sample(s); first: {problems[0][:300]}")
for key, why in s.get("known_nvfuser_bugs", {}).items():
    print(f"  known nvFuser bug, {key}: {why.splitlines()[0][:200]}")
PY
tail -3 "$OUT/ops/probe.out"; grep -cE "DTYPE DIFFERS|refusal is wrong|RAN it now" "$OUT/ops/probe.log" | sed 's/^/probe findings to act on: /'
rm -f "$OUT/ops/probe.out"
[ $probe_rc -eq 0 ] || echo "probe exited $probe_rc"
exit $rc
