"""Embedding throughput per batch size with the bundled all-MiniLM-L6-v2 on this machine.

    .venv/bin/python benchmarks/bench_embed.py [--sizes 1,4,8,16,32,64] [--reps 5] [--threads 1]
                                               [--out benchmarks/results/embed.json]

Two kinds of text, both from the embedded sample: short queries (the goldset and
query-log questions, about 10 words) and 60-word passages (the sample corpus's paragraph
text cut into consecutive 60-word windows). Each pass embeds the whole set through
`Embedder.embed(texts, batch_size=b)` with no on-disk cache, so every text reaches the
model. The (threads, batch size) combinations run interleaved in a fresh random order in
every repetition (after one untimed warm-up pass each), so a change in the machine's
load hits all of them alike; the table gives the median rate over the repetitions, the
median of the paired ratio to batch size 64 (and, with several thread counts, to the
first thread count) within each repetition -- the load-independent figures -- and
process CPU milliseconds per text. `--threads` sets `Embedder.threads` (torch's
intra-op threads); the 1-minute load average is recorded before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def queries(limit: int) -> list[str]:
    """Distinct questions of the sample's goldset and query log."""
    from ragdiag.sample.system import sample_dir

    out: dict[str, None] = {}
    for line in (sample_dir() / "goldset.yaml").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("question:"):
            out[line.split(":", 1)[1].strip().strip("'\"")] = None
    for line in (sample_dir() / "query_log.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line).get("question")
        if q:
            out[q] = None
    return list(out)[:limit]


def passages(limit: int, words: int = 60) -> list[str]:
    """Consecutive `words`-word windows of the sample corpus's text blocks."""
    from ragdiag.sample.system import sample_dir

    stream: list[str] = []
    corpus = sample_dir() / "corpus" / "documents.jsonl"
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for section in doc.get("sections", []):
            for block in section.get("blocks", []):
                stream.extend(str(block.get("text", "")).split())
        if len(stream) >= limit * words:
            break
    out = [" ".join(stream[i:i + words]) for i in range(0, len(stream) - words + 1, words)]
    return list(dict.fromkeys(out))[:limit]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,4,8,16,32,64")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1",
                    help="torch intra-op threads, comma-separated (\"default\": torch's own, one per core)")
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--passages", type=int, default=128)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "embed.json"))
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]

    import torch

    default_threads = torch.get_num_threads()
    threads = [default_threads if x.strip() == "default" else int(x) for x in args.threads.split(",")]

    from ragdiag.encoders import default_embedder

    emb = default_embedder(use_cache=False)
    emb.lru_size = 0  # no on-disk cache and no LRU: every text of every pass reaches the model
    emb.embed_one("load the model")
    sets = {"queries": queries(args.queries), "passages": passages(args.passages)}
    tok = emb._model.tokenizer
    lengths = {name: statistics.median(len(tok(t)["input_ids"]) for t in texts)
               for name, texts in sets.items()}
    words = {name: statistics.median(len(t.split()) for t in texts) for name, texts in sets.items()}
    print(f"texts: { {k: len(v) for k, v in sets.items()} }, median words {words}, "
          f"median word pieces {lengths}; torch default threads {default_threads}", flush=True)

    rng = random.Random(args.seed)
    combos = [(t, b) for t in threads for b in sizes]
    results: dict[str, dict[str, dict[str, list[float]]]] = {
        name: {f"t{t}-b{b}": {"rate": [], "cpu_ms_per_text": []} for t, b in combos} for name in sets}
    load_before = _load()
    for name, texts in sets.items():
        for t, b in combos:  # warm-up, untimed
            emb.threads = t
            emb.embed(texts, batch_size=b)
        for rep in range(args.reps):
            order = combos[:]
            rng.shuffle(order)
            for t, b in order:
                emb.threads = t
                c0, t0 = time.process_time(), time.perf_counter()
                encoded = emb.n_encoded
                out = emb.embed(texts, batch_size=b)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                assert out.shape == (len(texts), emb.dim) and emb.n_encoded - encoded == len(texts)
                results[name][f"t{t}-b{b}"]["rate"].append(len(texts) / wall)
                results[name][f"t{t}-b{b}"]["cpu_ms_per_text"].append(1000 * cpu / len(texts))
            print(f"{name} rep {rep + 1}/{args.reps} (load {_load():.1f}): " + ", ".join(
                f"{k} {v['rate'][-1]:.1f}/s" for k, v in results[name].items()), flush=True)
    load_after = _load()

    ref = 64 if 64 in sizes else sizes[-1]
    table: dict[str, list[dict[str, float]]] = {}
    for name in sets:
        rows = []
        for t, b in combos:
            cell = results[name][f"t{t}-b{b}"]
            rates = cell["rate"]
            ratios = [r / q for r, q in zip(rates, results[name][f"t{t}-b{ref}"]["rate"], strict=True)]
            row = {"threads": t, "batch_size": b, "median_texts_per_s": round(statistics.median(rates), 1),
                   "best_texts_per_s": round(max(rates), 1),
                   f"median_ratio_to_b{ref}": round(statistics.median(ratios), 3),
                   "cpu_ms_per_text": round(statistics.median(cell["cpu_ms_per_text"]), 2)}
            if len(threads) > 1 and t != threads[0]:
                base = results[name][f"t{threads[0]}-b{b}"]["rate"]
                row[f"median_ratio_to_t{threads[0]}"] = round(statistics.median(
                    r / q for r, q in zip(rates, base, strict=True)), 3)
            rows.append(row)
        table[name] = rows
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "torch": torch.__version__, "torch_default_threads": default_threads,
                       "model": emb.model_id},
           "texts": {name: {"count": len(t), "median_words": words[name],
                            "median_word_pieces": lengths[name]} for name, t in sets.items()},
           "reps": args.reps, "load_1min_before": round(load_before, 2),
           "load_1min_after": round(load_after, 2), "table": table, "raw": results}
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for name, rows in table.items():
        extra = [k for k in rows[-1] if k.startswith("median_ratio_to_t")]
        print(f"\n{name}: | threads | batch | texts/s (median) | best | ratio to b{ref} (paired) | "
              + "".join(f"{k} | " for k in extra) + "CPU ms/text |")
        for r in rows:
            print(f"| {r['threads']} | {r['batch_size']} | {r['median_texts_per_s']} | "
                  f"{r['best_texts_per_s']} | {r[f'median_ratio_to_b{ref}']} | "
                  + "".join(f"{r.get(k, '')} | " for k in extra) + f"{r['cpu_ms_per_text']} |")
    print(f"\nload {load_before:.1f} -> {load_after:.1f}; written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
