#!/usr/bin/env bash
# Issue 21's >= 32M-element norm backward bar on the GPU host: lab/campaigns/big_shapes.py (segkit tune on every norm
# backward config of >= 32M elements, bf16, each winner against the bytes floor), one process per visible GPU
# through `python -m sweep --each`, then one table of all of them.
#   BIG_BUDGET_S=40   seconds of candidates per case
#   BIG_LIMIT_S=480   no case starts after this (each GPU's process); the cases left are named in its log
#   BIG_CASES=...     SPEC:CONFIG,... instead of every case (e.g. the ones below 90% in an earlier run)
#   BIG_SPECS=rmsnorm_fwd,layernorm_fwd   the forward instead (issue 38); BIG_MIN=0 every size, not only >= 32M
# Writes $OUT/big/big_shapes.jsonl (every candidate of every case), $OUT/big/tunings.json (the winners, for
# SEGKIT_TUNING_TABLE or `segkit tune --merge`) and $OUT/big/big.log; prints the table last.
set -uo pipefail
source .gpu/activate.sh
export PYTHONUNBUFFERED=1
DEST="${OUT:-/tmp/segkit-out}/big"
mkdir -p "$DEST"
TMP="$(mktemp -d)"
exec > >(tee -a "$DEST/big.log") 2>&1
nvidia-smi --query-gpu=index,name --format=csv,noheader
timeout $(( ${BIG_LIMIT_S:-480} + 3 * ${BIG_BUDGET_S:-40} + 60 )) python -m sweep --gpus all --workdir "$TMP/w" \
  --each "python -m lab.campaigns.big_shapes --shard {shard}/{n} --budget ${BIG_BUDGET_S:-40} --time-limit ${BIG_LIMIT_S:-480} ${BIG_CASES:+--cases $BIG_CASES} ${BIG_SPECS:+--specs $BIG_SPECS} ${BIG_MIN:+--min-elements $BIG_MIN} --jsonl $TMP/big_{shard}.jsonl --out $TMP/tunings_{shard}.json"
echo "sweep exit $?"
for f in "$TMP"/w/shard*.log; do echo "--- $f"; grep -E "^(===|past|winner|  )" "$f" | tail -n 200; done
cat "$TMP"/big_*.jsonl > "$DEST/big_shapes.jsonl" 2>/dev/null
python -m segkit_cli tune --merge "$TMP"/tunings_*.json --out "$DEST/tunings.json" 2>&1 | tail -n 3
python -m lab.campaigns.big_shapes --table "$DEST/big_shapes.jsonl"
