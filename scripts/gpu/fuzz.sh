#!/usr/bin/env bash
# The segkit fuzz campaign on the GPU host (issue 22), from the project root:
#
#   bash scripts/gpu/fuzz.sh [MINUTES=9] [SEED=1] [RESUME_DIR]
#
# MINUTES is what the whole script takes after set-up (the campaign gets MINUTES - 1, the re-check of
# every finding and the packing the rest), so the default fits one 10-minute GPU call. RESUME_DIR: a
# findings directory from an earlier run (unpacked findings.tar.gz) to continue: its cases, time,
# coverage and findings carry over, and generation goes on where that run's seed stopped.
# Writes $OUT/fuzz/summary.md (counts, cases/min, op coverage, findings table, replay table) and
# $OUT/fuzz/findings.tar.gz (repros with headers, standalone upstream scripts, index.json, the log).
set -uo pipefail
source .gpu/activate.sh
MINUTES="${1:-9}"
SEED="${2:-1}"
RESUME="${3:-}"
DEST="${OUT:-/tmp/segkit-out}/fuzz"
mkdir -p "$DEST"
if ! python -c "import hypothesis" 2>/dev/null; then
  echo "hypothesis is not installed here: stage it with EXTRA_WHEELS='hypothesis==6.170.15 sortedcontainers==2.4.0' bash ../shared/gpu/stage.sh" | tee "$DEST/summary.md"
  exit 2
fi
WORK="$(mktemp -d)/findings"
if [ -n "$RESUME" ]; then cp -r "$RESUME" "$WORK"; fi
LOG="$WORK.log"
CAMPAIGN=$(python -c "print(round(max(0.5, $MINUTES - 1), 2))")
WORKERS=$(python -c "import os; print(max(1, min(8, os.cpu_count() // 2)))")
echo "fuzz: $CAMPAIGN min campaign, seed $SEED, $WORKERS workers, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
timeout -k 30 "$(python -c "print(int($CAMPAIGN * 60 + 45))")" \
  python -m segkit_cli fuzz --minutes "$CAMPAIGN" --seed "$SEED" -o "$WORK" --workers "$WORKERS" \
  --case-timeout 45 --minimize-seconds 60 --max-elements 65536 ${RESUME:+--resume} > "$LOG" 2>&1
echo "fuzz exit code $?"
{
  echo
  echo "## Re-check of every finding (segkit fuzz --replay)"
  echo
  echo '```'
  timeout -k 5 50 python -m segkit_cli fuzz --replay "$WORK" 2>&1 | tail -n 300 || echo "replay stopped (time limit)"
  echo '```'
} >> "$WORK/summary.md"
cat "$LOG" >> "$WORK/fuzz.log"
cp "$WORK/summary.md" "$DEST/summary.md"
tar czf "$DEST/findings.tar.gz" -C "$(dirname "$WORK")" findings
awk '/^## Ops hit/{skip=1} /^## Re-check/{skip=0} !skip' "$DEST/summary.md" | head -80
