#!/usr/bin/env bash
# segkit segments on the GPU host: the GPU test (nvFuser's dump vs segkit's segments, per-segment repros)
# and one real report (HTML, and its picture as PNG) for the Llama-3-8B GQA qkv split + RoPE forward.
# Writes $OUT/segments/{segments.log, report.html, segments.png}. About 2-3 minutes.
set -uo pipefail
source .gpu/activate.sh
D="$OUT/segments"; mkdir -p "$D"; LOG="$D/segments.log"
T=qkv_split_rope_fwd:Llama-3-8B_bs2
{
  echo "== pytest tests/gpu/test_segments_gpu.py"
  python -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_segments_gpu.py 2>&1 | tail -25
  echo "== segkit segments $T --emit-dir --plot"
  python -m segkit_cli segments "$T" --emit-dir /tmp/segkit-seg --plot /tmp/segkit-seg/picture --reps 10 2>&1
  cp /tmp/segkit-seg/picture.png "$D/segments.png"
  echo "== segkit report $T"
  python -m segkit_cli report "$T" -o "$D/report.html" 2>&1 | tail -5
} > "$LOG" 2>&1
echo "summary (full log: $LOG):"
grep -E "passed|failed|error|segment\(s\) on|why not one kernel|segmentation cost|MISMATCH|: ok against|wrote" "$LOG" | head -40
