"""Claim the norm and RoPE regions models write, unedited: Thunder lookasides on the libraries' own functions.

For each function known here (litgpt's ``RMSNorm.forward`` and ``apply_rope``, Hugging Face's Llama-family
``*RMSNorm.forward`` and ``apply_rotary_pos_emb``, thunder_exec's own functions, and whatever ``route()``
adds), Thunder's interpreter runs a replacement instead while segkit_ex is among the executors: the replacement
checks, on the proxies, that segkit's fusions can take the call, and then calls segkit's entry symbol (claimed
by segkit_ex, forward and backward); otherwise it leaves a one-line note in the trace
(``# segkit_ex left litgpt RMSNorm to Thunder: ...``) and runs the original function, so Thunder's default
path takes it. Without segkit_ex among the executors the original runs, untouched.

Hugging Face copies a few reference functions into every model family ("Copied from"): a family's function is
recognized when its code is a reference's, instruction for instruction, so the families come with no list to
keep. The references (``_HF_NORMS``, ``_HF_ROPES``): Llama's RMSNorm and RoPE (Qwen, Mistral, Granite, ... 97
norms and 78 RoPEs in transformers 5.3), Gemma's ``(1 + weight)`` RMSNorm (Gemma 1-3, Qwen3-Next, ...) and
OLMo2's RMSNorm and RoPE, which multiply, or rotate, before casting back (OLMo 1-3, GPT-OSS, ...), and
Phi-3's partial-rotary RoPE.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass

import torch

from thunder.core import prims
from thunder.core.compile_data import get_compile_data
from thunder.core.interpreter import _interpret_call, interpreter_needs_wrap, unwrap
from thunder.core.jit_ext import (ensure_recursive_proxies, record_source_loc_in_symbol_header,
                                  register_general_jit_lookaside)

from fusions import torch_models
from thunder_exec.base import CLAIM_MODE, segkit_ex, warn_if_shadowed
from thunder_exec.claim_check import disagreement, output_dtypes
from thunder_exec.norms import norm_refusal, rms_norm, rms_norm_entry
from thunder_exec.qkv_rope import qkv_refusal, qkv_split_rope, qkv_split_rope_entry
from thunder_exec.rope import apply_rope_entry, promoted, rope_refusal


@dataclass(frozen=True)
class Recognized:
    """One library function segkit_ex takes over: ``make(original)`` is the replacement."""

    label: str
    target: Callable
    make: Callable[[Callable], Callable]


RECOGNIZED: dict[Callable, Recognized] = {}


def active() -> bool:
    """segkit_ex is among the executors of the thunder.jit being traced (and is not shadowed: a warning if it is)."""
    cd = get_compile_data()
    if cd is None or segkit_ex not in (cd.executors_list or ()):
        return False
    warn_if_shadowed(cd.executors_list)
    return True


def _copy(fn: Callable) -> Callable:
    """The same function as a new object, which the lookaside does not divert (the fallback runs it)."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def _note_printer(bsym, out_printables, arg_printables, kwarg_printables) -> str:
    return f"# {bsym.args[0]}"


# A comment that survives dead-code elimination, so the note reaches the execution trace.
note = segkit_ex.register_operator("segkit_note", meta=lambda text: None, fn=lambda text: None,
                                   tags=[prims.OpTags.DONT_DCE], python_printer=_note_printer)


def left_to_thunder(label: str, why: str, original: Callable, *args, **kwargs):
    """The trace's note, then the original function (interpreted by Thunder as it would have been); under a
    claim check (real tensors, no trace) only the original."""
    if not CLAIM_MODE.real:
        note(f"segkit_ex left {label} to Thunder: {why}")
    return original(*args, **kwargs)


def recognize(label: str, target: Callable, make: Callable[[Callable], Callable], check: bool = True) -> None:
    """Divert ``target`` to ``make(copy of target)`` in thunder.jit traces that use segkit_ex. With ``check``
    (the default) the replacement is trusted for a call only once it computed what ``target`` computes, with
    ``target``'s globals, on real tensors of the call's dtypes and shapes (thunder_exec.claim_check); otherwise
    ``target`` is left to Thunder with a note naming the difference. A replacement computes through the entry
    functions of thunder_exec.norms / rope / qkv_rope (``rms_norm_entry``, ``apply_rope_entry``,
    ``qkv_split_rope_entry``), which the check runs on the reference interpreter."""
    if target in RECOGNIZED:
        return
    original = _copy(target)
    replacement = make(original)

    def lookaside(*args, **kwargs):
        if not active():
            return _interpret_call(original, *args, **kwargs)
        why = disagreement(target, original, replacement, tuple(unwrap(a) for a in args),
                           {k: unwrap(v) for k, v in kwargs.items()}) if check else None
        if why is None:
            return _interpret_call(replacement, *args, **kwargs)

        def refused(*a, **k):
            return left_to_thunder(label, f"segkit's replacement disagrees with it: {why}", original, *a, **k)
        return _interpret_call(refused, *args, **kwargs)

    register_general_jit_lookaside(target)(lookaside)
    RECOGNIZED[target] = Recognized(label, target, make)


# --------------------------------------------------------------------------- replacements
def rms_norm_function(label: str, route: str | None = None):
    """fn(x, weight, eps) computing litgpt's RMSNorm."""
    def make(original):
        def replacement(x, weight, eps=1e-6):
            why = norm_refusal(x, weight, same_dtype=False)
            if why:
                return left_to_thunder(label, why, original, x, weight, eps)
            return rms_norm_entry(x, weight, eps, False, route)
        return replacement
    return make


# What a replacement calls that holds no user code: run natively, not through Thunder's interpreter, which would
# step through their bytecode and Thunder's proxy internals under them (the checks on the proxies, the dtype a
# function returns on meta tensors, and the entry functions, which call segkit's symbols as Thunder calls its own).
NATIVE_CHECKS = (norm_refusal, rope_refusal, qkv_refusal, promoted, output_dtypes)
NATIVE_ENTRIES = (rms_norm_entry, apply_rope_entry, qkv_split_rope_entry)


def run_natively(fn: Callable) -> None:
    """Run ``fn`` as plain Python inside Thunder's traces, not interpreted op by op (Thunder's interpreter runs even
    builtins such as ``zip`` as interpreted Python, slowly): for functions of proxies' shapes, dtypes and literals,
    with no user code to trace."""
    register_general_jit_lookaside(fn)(interpreter_needs_wrap(fn))


def run_as_symbols(diverted: Callable, fn: Callable) -> None:
    """Run ``fn`` natively where a trace calls ``diverted``, as Thunder runs the torch functions it maps to its
    symbols: the tensors proxied, the user's source line recorded in the symbol's header."""
    register_general_jit_lookaside(diverted)(
        ensure_recursive_proxies(interpreter_needs_wrap(record_source_loc_in_symbol_header(fn))))


def install_helpers() -> None:
    """Thunder lookasides that run ``NATIVE_CHECKS`` and ``NATIVE_ENTRIES`` natively where a replacement calls them
    (thunder_exec.install() adds them, not an import)."""
    for fn in NATIVE_CHECKS:
        run_natively(fn)
    for fn in NATIVE_ENTRIES:
        run_as_symbols(fn, fn)


def apply_rope_function(label: str, route: str | None = None):
    """fn(x, cos, sin) computing litgpt's apply_rope on tables that already broadcast against x; the result in
    the dtype fn returns (x's when it casts back, the promoted one when it does not), found on meta tensors."""
    def make(original):
        def replacement(x, cos, sin):
            why = rope_refusal(x, cos, sin)
            if why:
                return left_to_thunder(label, why, original, x, cos, sin)
            out = output_dtypes(original, (x, cos, sin))
            return apply_rope_entry(x, cos, sin, route, out[0] if out and out[0] is not None else None)
        return replacement
    return make


def qkv_split_rope_function(label: str, route: str | None = None):
    def make(original):
        def replacement(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem):
            args = (qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)
            why = qkv_refusal(*args)
            if why:
                return left_to_thunder(label, why, original, *args)
            return qkv_split_rope_entry(*args, route)
        return replacement
    return make


def _litgpt_rms_norm(original):
    def forward(self, x):
        why = norm_refusal(x, self.weight, same_dtype=False)
        if self.dim not in (-1, x.ndim - 1):
            why = f"normalizes dim {self.dim}"
        if why:
            return left_to_thunder("litgpt RMSNorm", why, original, self, x)
        return rms_norm_entry(x, self.weight, self.eps, self.add_unit_offset)
    return forward


def _litgpt_apply_rope(original):
    def apply_rope(x, cos, sin):
        if cos.dim() != 3 or cos.shape != sin.shape:
            return original(x, cos, sin)  # litgpt raises its own error
        c, s, dims_diff = cos, sin, x.dim() - cos.dim()
        if dims_diff > 0:  # litgpt's alignment: batch first, then the new dims, then (T, n)
            shape = cos.shape[0:1] + (1,) * dims_diff + cos.shape[1:]
            c, s = cos.view(*shape), sin.view(*shape)
        why = rope_refusal(x, c, s)
        if why:
            return left_to_thunder("litgpt apply_rope", why, original, x, cos, sin)
        return apply_rope_entry(x, c, s)
    return apply_rope


def _hf_rms_norm(original):
    """Llama's RMSNorm::

        hidden_states = hidden_states.to(torch.float32)
        hidden_states = hidden_states * torch.rsqrt(hidden_states.pow(2).mean(-1, keepdim=True) + eps)
        return self.weight * hidden_states.to(input_dtype)

    two roundings in bf16 / fp16 (the normalized x, then the product in the weight's dtype): segkit's norm with
    ``round_normed``. A weight of another dtype than x's promotes the result (fp32 for bf16 x): left to Thunder."""
    def forward(self, hidden_states):
        why = norm_refusal(hidden_states, self.weight)
        if why:
            return left_to_thunder("Hugging Face RMSNorm", why, original, self, hidden_states)
        return rms_norm_entry(hidden_states, self.weight, self.variance_epsilon, False, None, True)
    return forward


def _hf_float_weight_rms_norm(label: str, eps_attr: str):
    """The RMSNorms that multiply by the weight in float32 and cast once: litgpt's math (a 16-bit weight promotes
    exactly). OLMo2's (Helium's, ``(self.weight.to(torch.float32) * hidden_states)``, is the same)::

        hidden_states = hidden_states.to(torch.float32)
        hidden_states = hidden_states * torch.rsqrt(hidden_states.pow(2).mean(-1, keepdim=True) + eps)
        return (self.weight * hidden_states).to(input_dtype)

    and Moshi's, which casts the weight first::

        output = self._norm(x.float())                 # x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        output = output * self.weight.float()
        return output.type_as(x)
    """
    def make(original):
        def forward(self, x):
            why = norm_refusal(x, self.weight, same_dtype=False)
            if why:
                return left_to_thunder(label, why, original, self, x)
            return rms_norm_entry(x, self.weight, getattr(self, eps_attr))
        return forward
    return make


_hf_cast_after_rms_norm = _hf_float_weight_rms_norm("Hugging Face RMSNorm (OLMo2's)", "variance_epsilon")
_hf_weight_cast_rms_norm = _hf_float_weight_rms_norm("Hugging Face RMSNorm (Moshi's)", "eps")


def _hf_unit_offset_rms_norm(original):
    """Gemma's RMSNorm::

        output = self._norm(x.float())                 # x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)

    ``1.0 + self.weight.float()`` is computed as Gemma computes it (in float32, whatever the weight's dtype; its
    gradient flows back through Thunder's own ops), then segkit's norm with that float32 weight: the same math."""
    def forward(self, x):
        why = norm_refusal(x, self.weight, same_dtype=False)
        if why:
            return left_to_thunder("Hugging Face RMSNorm (Gemma's)", why, original, self, x)
        return rms_norm_entry(x, 1.0 + self.weight.float(), self.eps)
    return forward


def _hf_rope(cast_back: bool = False, partial: bool = False, negated_sin: bool = False):
    """Llama's apply_rotary_pos_emb (``q * cos + rotate_half(q) * sin``: the promoted dtype, fp32 for bf16 q with
    fp32 tables under autocast); ``cast_back``: OLMo2's (the same, then ``.to(q.dtype)``); ``partial``: Phi-3's,
    Llama's on the first ``cos.shape[-1]`` columns with the rest passed through::

        q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
        q_embed = torch.cat([(q_rot * cos) + (rotate_half(q_rot) * sin), q_pass], dim=-1)

    and GPT-NeoX's (other bytecode, the same computation), which names the rotated part first::

        q_embed = (q_rot * cos) + (rotate_half(q_rot) * sin)
        q_embed = torch.cat([q_embed, q_pass], dim=-1)

    ``torch.cat`` promotes the passed columns to the rotated part's (promoted) dtype, exactly. ``negated_sin``:
    nanochat's, Llama's code calling a ``rotate_half`` that flips the sign (``cat(x2, -x1)``): segkit's RoPE
    with ``-sin``, the same numbers (negation is exact)."""
    label = "Hugging Face apply_rotary_pos_emb" + (" (OLMo2's)" if cast_back else "") + \
        (" (Phi-3 / GPT-NeoX partial rotary)" if partial else "") + (" (nanochat's)" if negated_sin else "")

    def make(original):
        def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
            c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
            if negated_sin:
                s = -s
            n = cos.shape[-1]

            def rotated_part(t):
                return t[..., :n] if partial else t

            why = rope_refusal(rotated_part(q), c, s) or rope_refusal(rotated_part(k), c, s)
            if why:
                return left_to_thunder(label, why, original, q, k, cos, sin, unsqueeze_dim)
            out = []
            for t in (q, k):
                rotated = apply_rope_entry(rotated_part(t), c, s, None,
                                           t.dtype if cast_back else promoted(t.dtype, cos.dtype))
                out.append(torch.cat([rotated, t[..., n:].to(rotated.dtype)], dim=-1) if partial and n < t.shape[-1]
                           else rotated)
            return tuple(out)
        return apply_rotary_pos_emb
    return make


def _hf_interleaved_rope(original):
    """BLT's apply_rotary_pos_emb: Llama's code calling a ``rotate_half`` that rotates interleaved pairs
    (``stack([-x[..., 1::2], x[..., ::2]], -1).flatten(-2)``). With x's columns and the tables' put in
    even-then-odd order, that is segkit's half rotation, column for column; the result is put back in pair order.
    Only the order of the columns moves: the same numbers."""
    label = "Hugging Face apply_rotary_pos_emb (BLT's interleaved)"

    def halves(t):
        return torch.cat((t[..., ::2], t[..., 1::2]), dim=-1)

    def pairs(t):
        return t.reshape(*t.shape[:-1], 2, t.shape[-1] // 2).transpose(-1, -2).reshape(t.shape)

    def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
        c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
        why = rope_refusal(q, c, s) or rope_refusal(k, c, s)
        if why:
            return left_to_thunder(label, why, original, q, k, cos, sin, unsqueeze_dim)
        c, s = halves(c), halves(s)
        return tuple(pairs(apply_rope_entry(halves(t), c, s, None, promoted(t.dtype, cos.dtype))) for t in (q, k))
    return apply_rotary_pos_emb


def _hf_weightless_rms_norm(original):
    """nanochat's RMSNorm, without a weight::

        def _norm(self, x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        def forward(self, x): return self._norm(x.float()).type_as(x)

    segkit's norm with a float32 weight of ones (a product by 1 is exact), its gradient dropped."""
    def forward(self, x):
        why = norm_refusal(x, None)
        if why:
            return left_to_thunder("Hugging Face RMSNorm (nanochat's, no weight)", why, original, self, x)
        return rms_norm_entry(x, torch.ones(x.shape[-1], dtype=torch.float32, device=x.device), self.eps)
    return forward


# (reference family, its norm class, replacement) and (reference family, replacement of its apply_rotary_pos_emb)
_HF_NORMS = (("llama", "LlamaRMSNorm", _hf_rms_norm),
             ("gemma", "GemmaRMSNorm", _hf_unit_offset_rms_norm),
             ("olmo2", "Olmo2RMSNorm", _hf_cast_after_rms_norm),
             ("nanochat", "NanoChatRMSNorm", _hf_weightless_rms_norm),
             ("helium", "HeliumRMSNorm", _hf_cast_after_rms_norm),
             ("moshi", "MoshiRMSNorm", _hf_weight_cast_rms_norm))
_HF_ROPES = (("llama", _hf_rope()), ("olmo2", _hf_rope(cast_back=True)), ("phi3", _hf_rope(partial=True)),
             ("gpt_neox", _hf_rope(partial=True)), ("nanochat", _hf_rope(negated_sin=True)),
             ("nemotron", _hf_rope(partial=True)), ("bamba", _hf_rope(partial=True)), ("blt", _hf_interleaved_rope))


def _same_code(a: Callable, b: Callable, depth: int = 2) -> bool:
    """``a`` and ``b`` have the same code, instruction for instruction, and so do the functions they call
    through their module's globals (``rotate_half``: nanochat's flips the sign, BLT's interleaves), ``depth``
    calls deep."""
    ca, cb = getattr(a, "__code__", None), getattr(b, "__code__", None)
    if not (ca is not None and cb is not None and ca.co_code == cb.co_code and ca.co_names == cb.co_names
            and ca.co_consts == cb.co_consts and ca.co_varnames == cb.co_varnames):
        return False
    ga, gb = getattr(a, "__globals__", {}), getattr(b, "__globals__", {})
    for name in ca.co_names:
        fa, fb = ga.get(name), gb.get(name)
        if isinstance(fa, types.FunctionType) or isinstance(fb, types.FunctionType):
            if fa is not fb and (depth == 0 or not _same_code(fa, fb, depth - 1)):
                return False
    return True


def install_known(importing: str | None = None) -> list[str]:
    """Recognize the known functions of every library imported so far (thunder_exec.executors() calls this, so a
    library imported after thunder_exec is covered too); the labels of what is recognized. ``importing``: the
    module whose import just ran (the import hook's call), while the import system may be inside another one."""
    recognize("thunder_exec.rms_norm", rms_norm, rms_norm_function("thunder_exec.rms_norm"))
    recognize("thunder_exec.qkv_split_rope", qkv_split_rope, qkv_split_rope_function("thunder_exec.qkv_split_rope"))
    recognize("fusions.torch_models.qkv_split_rope", torch_models.qkv_split_rope,
              qkv_split_rope_function("fusions.torch_models.qkv_split_rope"))
    litgpt = sys.modules.get("litgpt.model")
    if litgpt is not None:
        recognize("litgpt RMSNorm", litgpt.RMSNorm.forward, _litgpt_rms_norm)
        recognize("litgpt apply_rope", litgpt.apply_rope, _litgpt_apply_rope)
    if any(_hf_modeling(n) for n in sys.modules):
        busy = _import_in_progress(importing)
        refs = {f: _reference_modeling(f, busy) for f in {f for f, *_ in (*_HF_NORMS, *_HF_ROPES)}}
        norms = [(getattr(refs[f], cls), make) for f, cls, make in _HF_NORMS if refs[f] is not None]
        ropes = [(refs[f].apply_rotary_pos_emb, make) for f, make in _HF_ROPES if refs[f] is not None]
        for name, module in list(sys.modules.items()):
            if not _hf_modeling(name) or module is None:
                continue
            fn = getattr(module, "apply_rotary_pos_emb", None)
            for ref, make in ropes:
                if fn is not None and _same_code(fn, ref):
                    recognize(f"{name}.apply_rotary_pos_emb", fn, make)
            for attr in list(vars(module).values()):
                if not (isinstance(attr, type) and attr.__name__.endswith("RMSNorm")):
                    continue
                for ref, make in norms:
                    if _same_methods(attr, ref):
                        recognize(f"{name}.{attr.__name__}", attr.forward, make)
    return [r.label for r in RECOGNIZED.values()]


def _same_methods(cls: type, ref: type) -> bool:
    """``cls`` computes what ``ref`` does: the same code for forward and for the ``_norm`` helper Gemma's calls."""
    return all(_same_code(getattr(cls, m, None), getattr(ref, m, None)) if hasattr(ref, m) else not hasattr(cls, m)
               for m in ("forward", "_norm"))


def _import_in_progress(importing: str | None) -> bool:
    """Whether a transformers module other than ``importing`` is still half-initialized (e.g. modeling_layers
    importing a family lazily): importing a reference family then would close an import cycle and fail the
    user's own import."""
    return any(n.startswith("transformers") and n != importing
               and getattr(getattr(m, "__spec__", None), "_initializing", False) for n, m in list(sys.modules.items()))


def _reference_modeling(family: str, busy: bool):
    """transformers' modeling module of a reference ``family``, which other families' copies are compared with:
    imported here unless an import is in progress (``busy``, :func:`_import_in_progress`); then it is used only
    if already loaded, and the outer module's own hook call, or executors(), recognizes the rest."""
    name = f"transformers.models.{family}.modeling_{family}"
    if not busy:
        try:
            return importlib.import_module(name)
        except ImportError:  # a transformers release without this family
            return None
    module = sys.modules.get(name)
    return None if module is None or getattr(module.__spec__, "_initializing", False) else module


def _hf_modeling(name: str) -> bool:
    """A Hugging Face model family's modeling module (transformers.models.<family>.modeling_<family>)."""
    return name.startswith("transformers.models.") and ".modeling_" in name


def _wants(name: str) -> bool:
    return name == "litgpt.model" or _hf_modeling(name)


class RecognizeOnImport(importlib.abc.MetaPathFinder):
    """Recognize a library's functions right after it is imported, whatever the order of imports and
    thunder_exec.executors() calls in the user's script."""

    def find_spec(self, name, path, target=None):
        if not _wants(name):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        exec_module = spec.loader.exec_module

        def exec_and_recognize(module):
            exec_module(module)
            install_known(importing=name)

        spec.loader.exec_module = exec_and_recognize  # this spec's own loader instance
        return spec


def install_import_hook() -> None:
    """Put ``RecognizeOnImport`` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, RecognizeOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, RecognizeOnImport())
