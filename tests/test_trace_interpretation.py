"""What Thunder's interpreter steps through when segkit_ex claims a model's norms and RoPE: the replacements' own
lines (thunder_exec/recognize.py), never segkit's checks or entry functions, which run natively
(recognize.NATIVE_CHECKS / NATIVE_ENTRIES). Interpreted, they pulled Thunder's proxy internals into the
interpreter after them: a tiny litgpt model's trace stepped through 40% more instructions with segkit_ex than
without it. Counted from Thunder's interpreter log (``record_interpreter_history``), not timed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import torch

import thunder
import thunder_exec
from tests.conftest import ROOT

OWN = ("thunder_exec", "fusions", "segkit")


def _interpreted(fn, *args, executors) -> tuple[int, Counter, str]:
    """(instructions the interpreter ran, its lines per file of this project, the last forward trace) for the
    first call of ``fn`` jitted with ``executors``."""
    jf = thunder.jit(fn, executors=executors, debug_options=thunder.DebugOptions(record_interpreter_history=True))
    jf(*args)
    lines = Counter()
    for item in thunder.last_interpreter_log(jf):
        if isinstance(item, dict) and item.get("kind") == "Line":
            path = Path(item["filename"]).resolve()
            if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] in OWN:
                lines[path.relative_to(ROOT).as_posix()] += 1
    return len(thunder.last_interpreted_instructions(jf)), lines, thunder.last_traces(jf)[-1].python()


def test_a_claimed_litgpt_model_interprets_no_more_than_stock_thunder():
    """litgpt's GPT (Llama-3.2-1B's config class, tiny): both norms and both RoPEs claimed; the interpreter runs
    only the replacements' lines of this project, and fewer instructions than for stock Thunder, which
    interprets litgpt's own norm and RoPE code instead."""
    from litgpt.config import Config
    from litgpt.model import GPT

    torch.manual_seed(0)
    cfg = Config.from_name("Llama-3.2-1B", n_layer=1, n_embd=64, n_head=4, n_query_groups=2, intermediate_size=128,
                           padded_vocab_size=256, block_size=16)
    model = GPT(cfg)
    idx = torch.randint(0, 256, (1, 16))
    stock, stock_lines, _ = _interpreted(model, idx, executors=thunder.get_default_executors())
    ours, lines, trace = _interpreted(model, idx, executors=thunder_exec.executors())
    assert trace.count("segkit_rms_norm") >= 3 and trace.count("segkit_rope_fwd") >= 2, trace
    assert not stock_lines
    assert set(lines) == {"thunder_exec/recognize.py"}, lines
    assert ours <= stock, (ours, stock)


def test_hugging_face_replacements_run_their_checks_natively():
    """Llama's RMSNorm and apply_rotary_pos_emb under autocast's dtypes (bf16 q / k, fp32 tables: the promoted
    dtype found on meta tensors): claimed, with no line of segkit's checks or entries interpreted."""
    from transformers.models.llama import modeling_llama as llama

    thunder_exec.executors()  # recognizes libraries imported after thunder_exec
    norm = llama.LlamaRMSNorm(32, eps=1e-6)
    x = torch.randn(2, 5, 32)
    _, lines, trace = _interpreted(norm, x, executors=thunder_exec.executors())
    assert "segkit_rms_norm" in trace and set(lines) <= {"thunder_exec/recognize.py"}, (lines, trace)

    q, k = torch.randn(2, 4, 5, 16).bfloat16(), torch.randn(2, 2, 5, 16).bfloat16()
    angle = torch.arange(5.0)[None, :, None] * torch.rand(1, 1, 16)
    cos, sin = angle.cos().expand(2, -1, -1), angle.sin().expand(2, -1, -1)
    _, lines, trace = _interpreted(llama.apply_rotary_pos_emb, q, k, cos, sin, executors=thunder_exec.executors())
    assert trace.count("segkit_rope_fwd") == 2 and set(lines) <= {"thunder_exec/recognize.py"}, (lines, trace)
