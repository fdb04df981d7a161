#!/usr/bin/env bash
# Run every standalone upstream script of a fuzz campaign directory on the GPU host (torch + nvfuser_direct
# only, no segkit on the path) and say which still show their finding (issue 22: "every finding's repro runs
# standalone with nvfuser_direct and shows the mismatch"). About a minute for 44 findings.
#
#   bash lab/drivers/fuzz_standalone.sh [DIR=lab/runs/fuzz-h100-2026-11-23]
#
# FUZZ_STANDALONE_SHARD=i/n runs every n-th script from the i-th (one shard per GPU, each pinned with
# CUDA_VISIBLE_DEVICES); its log and summary are named after the shard.
#
# A mismatch script shows its finding when it exits 1 (it printed what differs); an error or crash script
# when nvFuser raises (exit 1 with a traceback) or the process dies. Exit 0 means nvFuser now agrees.
set -uo pipefail
source .gpu/activate.sh
DIR="${1:-lab/runs/fuzz-h100-2026-11-23}"
DEST="${OUT:-/tmp/segkit-out}/fuzz_standalone"
mkdir -p "$DEST"
SHARD="${FUZZ_STANDALONE_SHARD:-0/1}"
I="${SHARD%/*}"; N="${SHARD#*/}"
SUFFIX=""; [ "$N" != 1 ] && SUFFIX="_${I}of${N}"
LOG="$DEST/log$SUFFIX.txt"
: > "$LOG"
ROWS=()
k=-1
for s in "$DIR"/f[0-9][0-9][0-9]_*_upstream.py; do
  k=$(( k + 1 )); (( k % N == I )) || continue
  name="$(basename "$s" _upstream.py)"
  # from an empty directory, with the staged wheels (nvfuser_direct) but not the project on the path
  ( cd "$(mktemp -d)" && PYTHONPATH=/tmp/gpu-site timeout -k 5 60 python "$OLDPWD/$s" ) >> "$LOG" 2>&1
  rc=$?
  echo "== $name exit $rc" >> "$LOG"
  kind="${name#*_}"
  case "$kind:$rc" in
    mismatch:1) verdict="shows the mismatch" ;;
    error:1|crash:1|crash:13[0-9]|crash:1[45][0-9]) verdict="shows the failure" ;;
    *:0) verdict="nvFuser agrees now" ;;
    *:124) verdict="timed out" ;;
    *) verdict="exit $rc (see log)" ;;
  esac
  ROWS+=("$name|$rc|$verdict")
done
{
  echo "== standalone scripts of $DIR on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  printf '%s\n' "${ROWS[@]}" | awk -F'|' '{printf "%-18s %-5s %s\n", $1, $2, $3}'
  printf '%s\n' "${ROWS[@]}" | awk -F'|' '{n[$3]++} END {for (k in n) printf "%d %s\n", n[k], k}'
} | tee "$DEST/summary$SUFFIX.txt"
