"""The step table's method (benchmarks/model_step.py: first step, grads against eager, paired interleaved rounds) on
litgpt's whole ``GPT`` for Llama-3.2-1B cut to N blocks: a stand-in for the whole-model row where two Thunder
variants' first steps do not fit one device call at 16 blocks (lab run h200x2-2026-11-30-whole-gpt).

Usage (repo root, GPU): python lab/probes/gpt_blocks_step.py N_LAYER VARIANTS OUT_PREFIX [ROUNDS]
    writes OUT_PREFIX.md and OUT_PREFIX.json as model_step's --out / --json do
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    from benchmarks import model_step, model_table
    from gpt_host import gpt_case  # this script's folder is first on sys.path

    n_layer, names, prefix = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    case = gpt_case(n_layer)
    known = {v.name: v for v in model_step.VARIANTS + model_step.load_variants(  # the campaign controls too
        Path(__file__).resolve().parents[1] / "campaigns" / "step_controls.json")}
    variants = [known[n] for n in names]
    opts = model_step.Options(iters=10, rounds=rounds, case_limit_s=560.0)
    rows = []

    def keep(row) -> None:
        at = next((i for i, r in enumerate(rows) if r.variant == row.variant), None)
        if at is None:
            rows.append(row)
        else:
            rows[at] = row
        model_table.write(model_table.document(rows, [case], variants, opts, "cuda"), prefix + ".md",
                          prefix + ".json")

    model_step.run_case(case, variants, "cuda", opts, on_row=keep)
    print(model_table.markdown(model_table.document(rows, [case], variants, opts, "cuda")))


if __name__ == "__main__":
    main()
