#!/usr/bin/env bash
# The GPU test suite sharded over every GPU of the host (benchmarks.sweep: one pinned pytest per GPU, merged):
#
#   SUITE_LIMIT_S=480 bash scripts/gpu/suite_sharded.sh [TEST PATHS]     (default: tests, i.e. every gpu test)
#
# Shards are balanced by the per-case durations of the last committed whole-suite run (SUITE_DURATIONS).
#
# Writes $OUT/gpu_tests.json (the merged sweep record: per-case outcome and device, durations, per-shard timing),
# $OUT/sweep.log and $OUT/workdir.tgz (each shard's log), then prints the outcome counts, every case that did
# not pass, and each shard's time. The litgpt tests need litgpt staged: EXTRA_WHEELS="litgpt==0.5.13".
set -uo pipefail
source .gpu/activate.sh
export PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/segkit-out}"
W="$(mktemp -d)/gpu-suite"
mkdir -p "$OUT" "$W"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/gpus.txt"
LIMIT="${SUITE_LIMIT_S:-480}"
# balance the shards by the last committed whole-suite run's per-case durations (SUITE_DURATIONS=FILE, or "" for none)
DURATIONS="${SUITE_DURATIONS-benchmarks/results/h200x4-2026-11-26-issue36-gpu-suite/gpu_tests.json}"
BALANCE=()
[ -n "$DURATIONS" ] && [ -f "$DURATIONS" ] && BALANCE=(--durations "$DURATIONS")
PATHS=("$@")
[ ${#PATHS[@]} -eq 0 ] && PATHS=(tests)
timeout -k 10 $((LIMIT + 70)) python -m benchmarks.sweep --gpus all --time-limit "$LIMIT" --grace 20 "${BALANCE[@]}" \
  --workdir "$W" -o "$W/gpu_tests.json" -- -m gpu -p no:cacheprovider -rfE "${PATHS[@]}" > "$OUT/sweep.log" 2>&1
echo "sweep exit $? (0 complete, 3 incomplete, 1 a case failed)"
cp "$W/gpu_tests.json" "$OUT/" 2>/dev/null
tar czf "$OUT/workdir.tgz" -C "$(dirname "$W")" gpu-suite
tail -5 "$OUT/sweep.log"
python - "$W/gpu_tests.json" <<'PY'
import collections, json, sys
sweep = json.load(open(sys.argv[1]))["sweep"]
outcomes = sweep["outcomes"]
print("outcomes:", dict(collections.Counter(v["outcome"] for v in outcomes.values())),
      "not run:", sum(len(v) for v in sweep["not_run"].values()))
for case, v in sorted(outcomes.items()):
    if v["outcome"] not in ("passed", "skipped", "xfailed"):
        print(f"{v['outcome']:8} device {v['device']}  {case}")
for device, t in sweep["timing"].items():
    print(f"shard on device {device}: {t['cases_run']} cases, {t['wall_s']:.1f} s wall, "
          f"{t['to_first_case_s']:.1f} s to the first case")
PY
