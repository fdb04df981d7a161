"""A gate suite phase at a glance, for a device call's tail: counts, the tests not passed, and from the GPU memory
log the waits, the out-of-memory re-runs, the tests that left memory behind and the largest needs.

    python lab/probes/gate_suite_summary.py OUT/gate
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(folder: str) -> int:
    d = Path(folder)
    sweep = json.loads((d / "gpu_tests.json").read_text())["sweep"]
    print(sweep["counts"], "wall", sweep["launcher"]["wall_s"], "s")
    for test, v in sweep["outcomes"].items():
        if v["outcome"] not in ("passed", "skipped", "xfailed"):
            print(v["outcome"], test)
    rows = [json.loads(line) for line in (d / "gpu_memory.jsonl").read_text().splitlines()]
    print(f"memory log: {len(rows)} tests, waited > 1 s: {sum(r['waited_s'] > 1 for r in rows)}, "
          f"longest wait {max(r['waited_s'] for r in rows)} s")
    for r in rows:
        if "oom_rerun_alone" in r or "holders" in r:
            print("  ", r["test"][-100:], "rerun alone after", r.get("oom_rerun_alone"), "s; held",
                  r["held_at_start_gib"], "->", r["left_after_gib"], json.dumps(r.get("holders"))[:300])
    for r in sorted(rows, key=lambda r: -r["need_gib"])[:10]:
        print(f"   need {r['need_gib']:.1f} declared {r['declared_gib']:.1f} {r['test'][-100:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
