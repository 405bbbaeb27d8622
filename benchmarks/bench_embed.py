"""Query-embedding batch size: all-MiniLM-L6-v2 over the sample's query texts, batch sizes interleaved.

The texts are what an audit of the sample embeds before its searches (the vector-query and
semantic texts of every goldset question through every profile of both policies). Each
round embeds all of them once per batch size, in a rotating order, with the embedder's
disk cache off, so every text reaches the model; the figure per batch size is the median
over rounds, and the ratio to the fastest is taken within each round.

    python benchmarks/bench_embed.py [--rounds 5] [--sizes 4,8,16,32,64] [--limit 400]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def plan_texts() -> list[str]:
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    ctx = build_context(load_config(sample_dir() / "audit.toml"), progress=False)
    texts: dict[str, None] = {}
    for req in ctx.plan_requests():
        for vq in req.vector_queries:
            if vq.text:
                texts[vq.text] = None
        if req.is_semantic and req.effective_semantic_text:
            texts[req.effective_semantic_text] = None
    return list(texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="4,8,16,32,64")
    ap.add_argument("--limit", type=int, default=400, help="texts per round (0: all of the plan's)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "embed.json"))
    args = ap.parse_args()
    from ragdiag.encoders import default_embedder

    texts = plan_texts()
    if args.limit:
        texts = texts[::max(1, len(texts) // args.limit)][:args.limit]  # spread over the plan
    emb = default_embedder(use_cache=False)
    emb.embed(texts[:32], batch_size=16)  # load the model
    sizes = [int(s) for s in args.sizes.split(",")]
    times: dict[int, list[float]] = {b: [] for b in sizes}
    ratios: dict[int, list[float]] = {b: [] for b in sizes}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = sizes[r % len(sizes):] + sizes[:r % len(sizes)]
        this: dict[int, float] = {}
        for b in order:
            emb.clear_lru()
            t = time.perf_counter()
            emb.embed(texts, batch_size=b)
            this[b] = time.perf_counter() - t
            times[b].append(this[b])
        best = min(this.values())
        for b in sizes:
            ratios[b].append(this[b] / best)
        load.append(os.getloadavg()[0])
    res = {"texts": len(texts), "rounds": args.rounds, "load_1min": [round(x, 2) for x in load],
           "by_batch": {b: {"median_s": round(statistics.median(times[b]), 3),
                            "texts_per_s": round(len(texts) / statistics.median(times[b]), 1),
                            "median_ratio_to_fastest_in_round": round(statistics.median(ratios[b]), 3)}
                        for b in sizes}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
