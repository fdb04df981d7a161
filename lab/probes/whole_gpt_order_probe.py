"""Does stock Thunder's whole-model row fail because of what ran before it in the process?

The step table's `llama3.2-1b-gpt` case once failed for the `thunder` variant ("InterpreterError: Encountered
exception AssertionError: Frame stack inconsistency while tracing GPTLoss(") in a process that had run torch.compile
and its CUDA graphs first, while the same variant ran when it came first in its process. This probe runs the case cut
to a few blocks through the step table's own `run_case`, with the variants in the order given, in one process, and
prints each row's step time and note (a failure is a row):

    python lab/probes/whole_gpt_order_probe.py [--blocks 2] [--T 512] [--variants compile-graphs,thunder]
                                               [--patched]

`--patched` installs every segkit_ex patch before the case is built, as building a case did before the step table's
stock variants ran Thunder's three fixes alone.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.model_cases import CASES  # noqa: E402
from benchmarks.model_step import VARIANTS, Options, run_case  # noqa: E402
from segkit.cli import argtypes, entry  # noqa: E402
from segkit.cli.parser import Parser  # noqa: E402


def build_parser() -> Parser:
    """The probe's command line (built through segkit.cli, as every entry point is)."""
    p = Parser(prog="python lab/probes/whole_gpt_order_probe.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", type=argtypes.positive_int, default=2, help="the GPT's blocks (default 2)")
    p.add_argument("--T", type=argtypes.positive_int, default=512, help="sequence length (default 512)")
    p.add_argument("--variants", type=argtypes.name, default="compile-graphs,thunder",
                   help="the step table's variants, in the order run (default compile-graphs,thunder)")
    p.add_argument("--patched", action="store_true", help="install every segkit_ex patch before the case is built")
    p.set_defaults(func=_probe)
    return p


def _probe(args) -> int:
    if args.patched:
        import thunder_exec

        thunder_exec.install()
    base = next(c for c in CASES if c.name == "llama3.2-1b-gpt")
    case = dataclasses.replace(base, name=f"{base.name}-{args.blocks}b", T=args.T,
                               overrides={**base.overrides, "n_layer": args.blocks})
    by_name = {v.name: v for v in VARIANTS}
    unknown = [n for n in args.variants.split(",") if n not in by_name]
    if unknown:
        raise ValueError(f"--variants: unknown {', '.join(unknown)}; known: {', '.join(by_name)}")
    rows = run_case(case, [by_name[n] for n in args.variants.split(",")], "cuda", Options(iters=3, warmup=1))
    for r in rows:
        print(json.dumps({"probe": "whole_gpt_order", "patched": args.patched, "variant": r.variant, "ms": r.ms,
                          "grad_err": r.grad_err, "note": r.note, "torch": torch.__version__}))
    return 0


def main(argv: list[str] | None = None) -> int:
    return entry.run(build_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
