#!/usr/bin/env bash
# The GPU test suite file by file on the GPU host, within a time budget (the whole suite takes longer than one
# 10-minute device call, so a call runs a subset):
#
#   SUITE_BUDGET=540 bash scripts/gpu/suite.sh [tests/gpu/test_x_gpu.py ...]   (default: every tests/gpu file)
#
# Each file runs in its own pytest with the time left as its limit; its log goes into $OUT/suite/logs.tar.gz
# (the device returns few files) and a table (file, exit code, pytest's last line, seconds) is printed last and
# kept in $OUT/suite/summary.txt. A file not reached is listed as "not run".
set -uo pipefail
source .gpu/activate.sh
DIR="${OUT:-out}/suite"
LOGS="$(mktemp -d)/logs"
mkdir -p "$DIR" "$LOGS"
BUDGET="${SUITE_BUDGET:-540}"
FILES=("$@")
[ ${#FILES[@]} -eq 0 ] && FILES=(tests/gpu/test_*_gpu.py)
ROWS=()
for f in "${FILES[@]}"; do
  name="$(basename "$f" .py)"
  left=$(( BUDGET - SECONDS ))
  if (( left < 20 )); then ROWS+=("$name|-|not run (budget)|-"); continue; fi
  t0=$SECONDS
  timeout -k 10 -s INT "$left" python -m pytest -m gpu -q -p no:cacheprovider -rfE --durations=3 "$f" \
    > "$LOGS/$name.log" 2>&1
  rc=$?
  last="$(grep -E '(passed|failed|error|no tests ran)' "$LOGS/$name.log" | tail -1 | tr -d '=' | sed 's/^ *//')"
  ROWS+=("$name|$rc|${last:-see log}|$(( SECONDS - t0 ))")
done
tar czf "$DIR/logs.tar.gz" -C "$(dirname "$LOGS")" logs
{
  echo "== GPU suite on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) (${SECONDS}s)"
  printf '%s\n' "${ROWS[@]}" | awk -F'|' '{printf "%-28s %-4s %-60s %s\n", $1, $2, $3, $4}'
} | tee "$DIR/summary.txt"
