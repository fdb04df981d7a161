"""The output of the step table on N ranks (benchmarks/model_step_dist.py): its JSON document (model_table's
machine block with the world size, GPUs used and interconnect; the rows, each with its ``world_size``), the
markdown table, the merge of several world sizes' runs, and the weak-scaling table computed from their rows."""

from __future__ import annotations

import dataclasses

from benchmarks import model_table
from benchmarks.model_table import _num, _plain
from sweep.machine import KEY, machine_block

#: The rivals a row is set against: stock Thunder FSDP, and torch.compile + FSDP2.
REFERENCES = (("thunder-fsdp", "vs Thunder FSDP"), ("compile-fsdp2", "vs torch.compile + FSDP2"))
SEGKIT, STOCK = "segkit-fsdp", "thunder-fsdp"  # segkit_ex's gain over stock Thunder, per world size


def document(rows: list, cases: list, variants: list, opts, device: str, setting: dict) -> dict:
    """The JSON document of one run; ``setting``: world_size, backend, dtype, interconnect."""
    block = machine_block()
    world = setting["world_size"]
    block |= {"world_size": world, "gpu_count": world if device.startswith("cuda") else 0,
              "interconnect": setting["interconnect"]}
    return {KEY: block, "variants": {v.name: v.label for v in variants},
            "run": {"device": device, "iters": opts.iters, "warmup": opts.warmup, "rounds": opts.rounds,
                    "back_to_back": opts.back_to_back, "world_size": world, "backend": setting["backend"],
                    "step": f"grads set to None + forward + backward on each rank's own batch; {setting['dtype']}"},
            "cases": {c.name: c.note for c in cases},
            "rows": [{k: _plain(v) for k, v in dataclasses.asdict(r).items()} for r in rows]}


def merge(paths) -> dict:
    """Several runs (world sizes) as one document (model_table.merge: every run's machine block under
    ``machines`` where they differ), and their weak scaling."""
    doc = model_table.merge(paths)
    doc["scaling"] = weak_scaling(doc["rows"])
    return doc


def write(doc: dict, md_path: str | None, json_path: str | None) -> None:
    model_table.write(doc, None, json_path)
    if md_path:
        from segkit.files import write_atomic

        write_atomic(md_path, markdown(doc) + "\n")


def row_line(row) -> str:
    """One combined row as a progress line."""
    return (f"{row.case} | {row.variant} | {row.world_size} ranks | tokens/s per GPU {_num(row.tokens_per_s, '.1f')}"
            f" | ms {_num(row.ms, '.2f')} | err {_num(row.grad_err, '.1e')} | claims {row.claims} "
            f"agree {row.claims_agree} | {row.note}")


def _claims(r: dict) -> str:
    c = r.get("claims") or {}
    return f"norms {c['norm_fw']}/{c['norm_bw']}, RoPE {c['rope_fw']}/{c['rope_bw']}" if c else ""


def _ratio(ref: dict | None, r: dict) -> str:
    """model_table's paired ratio against ``ref``; empty on the reference's own row."""
    return "" if ref is r else model_table._ratio(ref, r)


def weak_scaling(rows: list[dict]) -> list[dict]:
    """Per (case, variant) and world size: tokens/s per GPU, and its efficiency, that over the same variant's at the
    smallest world size among ``rows`` (weak scaling: each rank's batch is the case's at every size; 1.0 is
    perfect); and segkit_ex's gain over stock Thunder FSDP at that size (``SEGKIT``'s tokens/s over ``STOCK``'s)."""
    tps: dict[tuple[str, str], dict[int, float]] = {}
    for r in rows:
        if r.get("tokens_per_s"):
            tps.setdefault((r["case"], r["variant"]), {})[r.get("world_size") or 1] = r["tokens_per_s"]
    out = []
    for (case, variant), by_world in tps.items():
        base_world = min(by_world)
        for world, value in sorted(by_world.items()):
            stock, ours = tps.get((case, STOCK), {}).get(world), tps.get((case, SEGKIT), {}).get(world)
            out.append({"case": case, "variant": variant, "world_size": world, "tokens_per_s": value,
                        "base_world_size": base_world, "efficiency": value / by_world[base_world],
                        "segkit_over_thunder": ours / stock if ours and stock else None})
    return out


def _scaling_markdown(scaling: list[dict]) -> str:
    lines = ["| case | variant | ranks | tokens/s per GPU | weak-scaling efficiency | segkit_ex / Thunder FSDP |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {s['case']} | {s['variant']} | {s['world_size']} | {s['tokens_per_s']:.1f} | "
              f"{s['efficiency']:.3f} (vs {s['base_world_size']} rank{'s' * (s['base_world_size'] != 1)}) | "
              f"{_num(s['segkit_over_thunder'], '.3f')} |" for s in scaling]
    return "\n".join(lines)


def markdown(doc: dict) -> str:
    """The table: one row per case, variant and world size; the vs columns are the rival's step ms over the row's
    at the same world size (above 1: faster)."""
    m, run = doc[KEY], doc.get("run", {})
    head = (f"GPU: {m.get('gpu')} x{m.get('gpu_count')} (driver {m.get('driver')}); {m.get('world_size')} ranks, "
            f"{run.get('backend')}, interconnect {m.get('interconnect')}; torch {m.get('torch')}; Thunder "
            f"{m.get('lightning-thunder')}; nvfuser_direct {m.get('nvfuser_direct')}; litgpt {m.get('litgpt')}; "
            f"{m.get('date')}; commit {m.get('commit')}\n\n"
            f"Step = {run.get('step', '')}; step ms: each rank's median of {run.get('iters')} after "
            f"{run.get('warmup')} warm-up steps (CUDA events, wall clock on CPU), the slowest rank's"
            + (f", median of {run.get('rounds')} rounds interleaved pass by pass" if (run.get('rounds') or 1) > 1
               else "")
            + "; tokens/s per GPU = each rank's tokens per step over it; peak GiB the highest rank's "
            "max_memory_allocated less what was allocated when the variant started; saved for bw = what one forward saves for its backward (the largest rank's); "
            "segkit claims per executed call, the minimum over ranks, 'agree' whether every rank claimed the same; "
            "grad error against single-process eager over every rank's batch on the first step, max over "
            "parameters of max |g - g_eager| / max |g_eager|, full grads gathered.\n\n")
    if "machines" in doc:
        head += "Runs: " + "; ".join(f"{x.get('world_size')} ranks {x.get('gpu')} {x.get('interconnect')} "
                                     f"{x.get('date')}" for x in doc["machines"]) + "\n\n"
    lines = ["| case | variant | ranks | tokens/s per GPU | step ms | " + " | ".join(h for _, h in REFERENCES)
             + " | peak GiB per rank | saved for bw GiB | segkit claims fw/bw | ranks agree | eager norms / "
             "attentions | max rel grad err | first step s | note |", "|---" * (9 + len(REFERENCES) + 5) + "|"]
    index = {(r["case"], r["variant"], r.get("world_size")): r for r in doc["rows"]}
    for r in doc["rows"]:
        refs = [_ratio(index.get((r["case"], v, r.get("world_size"))), r) for v, _ in REFERENCES]
        calls = r.get("eager_calls")
        lines.append(f"| {r['label']} | {r['variant']} | {r.get('world_size')} | {_num(r.get('tokens_per_s'), '.1f')} "
                     f"| {_num(r['ms'], '.2f')} | " + " | ".join(refs)
                     + f" | {_num(r['peak_gib'], '.2f')} | {_num(r.get('saved_gib'), '.3g')} | {_claims(r)} | "
                     f"{'' if r.get('claims_agree') is None else ('yes' if r['claims_agree'] else 'no')} | "
                     f"{'' if not calls else f'{calls[0]} / {calls[1]}'} | {_num(r['grad_err'], '.1e')} | "
                     f"{_num(r['first_step_s'], '.1f')} | {r['note']} |")
    legend = "Variants: " + "; ".join(f"{k} = {v}" for k, v in doc.get("variants", {}).items())
    out = head + "\n".join(lines) + "\n\n" + legend
    scaling = doc.get("scaling")
    if scaling and len({s["world_size"] for s in scaling}) > 1:
        out += ("\n\nWeak scaling (each rank's batch fixed): tokens/s per GPU over the same variant's at the "
                "smallest world size run\n\n" + _scaling_markdown(scaling))
    return out

