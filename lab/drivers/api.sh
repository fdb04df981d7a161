#!/bin/bash
# branch api: the recorder's nvFuser semantics and the shared replay walker, on real nvFuser.
# Expected: ~1-2 minutes. Proves: to_nvfuser (now the single replay walker) still reproduces every Thunder
# fixture and spec fusion, and segkit's promotion / broadcasting / alias_input / stride_order / t.shape()
# semantics and a slice rejection agree with nvfuser_direct.
source .gpu/activate.sh
mkdir -p "$OUT/api"
python -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_api_gpu.py tests/gpu/test_replay_gpu.py \
    > "$OUT/api/pytest.log" 2>&1
rc=$?
echo "== api: GPU tests (tests/gpu/test_api_gpu.py, tests/gpu/test_replay_gpu.py)"
grep -E "passed|failed|error" "$OUT/api/pytest.log" | tail -3
exit $rc
