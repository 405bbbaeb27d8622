"""Benchmark of the chunk boundary analysis (`ragdiag.chunks.analyse_chunks`).

Data: the sample corpus (``sample_data/corpus/documents.jsonl``, 241 documents) re-cut
many times -- fixed-size windows of 40 to 200 words and structure-aware chunks of 60 to
240 target words, each variant under its own document ids -- until `--chunks` chunk
records exist (100,000 by default). Realistic text (contracts, tickets, product sheets,
tables, lists, German and English), realistic boundary defects, no repetition of one
document's chunking.

Timed: one call of `analyse_chunks` over the in-memory records (only the fields the check
selects), best and median of `--reps` runs, in three token modes:

* ``auto`` (the default the check uses): tiktoken cl100k on the first 10,000 chunks, then on
  every 20th chunk and every chunk whose estimate lies within 0.7-1.4x of the tiny/oversized
  thresholds; the rest estimated by a model fitted on the exact counts;
* ``exact``: tiktoken on every chunk;
* ``estimate``: no tokenizer.

Reported: chunks/s (wall), CPU microseconds per chunk (both threads; 1e6 / that is the
single-core rate without any overlap of the two threads), the 1-minute load average before
each run (the machine is shared), exactly counted chunks and the estimate's median relative
error.

    python benchmarks/bench_chunks.py [--chunks 100000] [--reps 3] [--out benchmarks/results/chunks.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from ragdiag.chunks import ChunkFields, analyse_chunks, token_counter  # noqa: E402
from ragdiag.sample.chunking import fixed_size, structure_aware  # noqa: E402

FIELDS = ChunkFields().select()


def corpus_records(n_chunks: int) -> list[dict[str, Any]]:
    docs = [json.loads(line) for line in (REPO / "ragdiag" / "sample" / "data" / "corpus" / "documents.jsonl").open()]
    out: list[dict[str, Any]] = []
    variant = 0
    fixed = [40, 60, 90, 120, 160, 200]
    aware = [60, 90, 120, 180, 240]
    while len(out) < n_chunks:
        for d in docs:
            v = variant % (len(fixed) + len(aware))
            doc = {**d, "doc_id": f"{d['doc_id']}-v{variant}"}
            recs = fixed_size(doc, fixed[v]) if v < len(fixed) else \
                structure_aware(doc, aware[v - len(fixed)])
            out.extend({k: r.get(k) for k in FIELDS} for r in recs)
            if len(out) >= n_chunks:
                break
        variant += 1
    return out[:n_chunks]


def run(records: list[dict[str, Any]], mode: str, reps: int) -> dict[str, Any]:
    kw: dict[str, Any] = {"auto": {}, "exact": {"exact_tokens": True},
                          "estimate": {"tokenizer": "estimate"}}[mode]
    walls, cpus, loads = [], [], []
    report = None
    for _ in range(reps):
        loads.append(os.getloadavg()[0])
        t0, c0 = time.perf_counter(), time.process_time()
        report = analyse_chunks(records, **kw)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    n = len(records)
    assert report is not None
    return {
        "mode": mode, "chunks": n, "reps": reps,
        "best_chunks_per_s": round(n / min(walls)), "median_chunks_per_s": round(n / statistics.median(walls)),
        "cpu_us_per_chunk": round(statistics.median(cpus) / n * 1e6, 1),
        "load_avg_1min": [round(x, 2) for x in loads],
        "tokens_exact": report.tokens_exact, "token_estimate_error": report.token_estimate_error,
        "tokens_p50": report.tokens["p50"], "tiny": report.tiny, "oversized": report.oversized,
        "mid_sentence_end_share": round(report.mid_sentence_end_share or 0, 4),
        "split_table_share": round(report.split_table_share or 0, 4),
        "near_duplicate_share": round(report.near_duplicate_share or 0, 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="auto,exact,estimate")
    ap.add_argument("--out", default=str(HERE / "results" / "chunks.json"))
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    records = corpus_records(args.chunks)
    print(f"built {len(records):,} chunk records in {time.perf_counter() - t0:.1f} s", flush=True)
    token_counter()  # load the encoding outside the timed runs
    results = []
    for mode in args.modes.split(","):
        res = run(records, mode, args.reps)
        results.append(res)
        print(json.dumps(res), flush=True)
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "processor": platform.processor() or platform.machine()},
           "results": results}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print("| mode | chunks | best chunks/s | median chunks/s | CPU µs/chunk | 1e6 / CPU µs | exact tokens "
          "| load (1 min) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['mode']} | {r['chunks']:,} | {r['best_chunks_per_s']:,} | {r['median_chunks_per_s']:,} "
              f"| {r['cpu_us_per_chunk']} | {round(1e6 / r['cpu_us_per_chunk']):,} | {r['tokens_exact']:,} | "
              f"{', '.join(str(x) for x in r['load_avg_1min'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
