#!/usr/bin/env bash
# GPU host: thunder_exec's GPU tests, then training steps of litgpt blocks (benchmarks/model_step.py).
# Needs litgpt's wheel staged: EXTRA_WHEELS="litgpt==0.5.13 pyyaml==6.0.3" bash ../shared/gpu/stage.sh
set -uo pipefail
source .gpu/activate.sh
LOG_DIR="${OUT:-/tmp}/models"
mkdir -p "$LOG_DIR"
{
  python -c "import benchmarks.model_step as m; m.import_litgpt(); print('litgpt.model imports')"
  timeout 80 python -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_thunder_exec_gpu.py 2>&1 | tail -15
  timeout 150 python benchmarks/model_step.py --out "$LOG_DIR/model_step.md" --iters 10
} > "$LOG_DIR/models.log" 2>&1
echo "== scripts/gpu/models.sh summary"
grep -E "passed|failed|error" "$LOG_DIR/models.log" | tail -3
cat "$LOG_DIR/model_step.md" 2>/dev/null || tail -20 "$LOG_DIR/models.log"
