"""What determinism costs: float64 vs float32 embeddings, single- vs multi-threaded HNSW builds.

    .venv/bin/python benchmarks/bench_determinism.py [--reps 5] [--threads 1] [--build-threads 2]
                                                     [--out benchmarks/results/determinism.json]

Two measurements, each a paired comparison within one run (the variants interleaved in a
fresh random order in every repetition after an untimed warm-up, so a change in the shared
machine's load hits both alike; the load-independent figure is the median of the per-
repetition ratios):

1. **Embedding**: `Embedder` with ``compute_dtype="float64"`` (ragdiag's default: the model in
   float64, `ragdiag.encoders.numerics`) against ``"float32"``, on the sample's questions and
   60-word passages (`bench_embed.py`'s text sets), no cache, batch 32. Also: how many grid
   components the float32 path puts elsewhere than the float64 one (the share of the vectors
   that would differ had ragdiag kept float32 on the grid).
2. **HNSW build** (index format 6): the sample index's ``content_vector`` (3,290 grid vectors,
   384-d, m = 16, efConstruction = 200 as its schema says) built the way `build_hnsw` does
   (one OpenMP thread: one insertion after the other) against the same adds on
   ``--build-threads`` threads (FAISS's parallel insertion). Also: whether repeated builds
   give the same file (the reason for the single thread).

Needs the sample index in the cache (`ragdiag sample index` or any sample audit builds it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench_embed import _load, passages, queries  # noqa: E402


def _sample_vectors() -> tuple[np.ndarray, int, int]:
    """The sample index's content vectors (a copy) and the field's (m, efConstruction)."""
    from ragdiag.encoders.embedder import resolve_cache_dir

    folders = sorted((resolve_cache_dir(None) / "indexes").glob("muster-structured-*@format6"))
    if not folders:
        raise SystemExit("no format-6 sample index in the cache: run `ragdiag audit` once first")
    folder = folders[-1]
    from ragdiag.targets.local.vector import VectorField

    field = VectorField.load(folder / "vectors", "content_vector", 128)
    schema = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
    params = schema["vectorSearch"]["algorithms"][0]["hnswParameters"]
    return np.array(field.vectors, dtype=np.float32), int(params["m"]), int(params["efConstruction"])


def _build(arr: np.ndarray, m: int, efc: int, threads: int, path: Path) -> tuple[float, str]:
    """`build_hnsw`'s adds on `threads` OpenMP threads; (seconds, sha256 of the file)."""
    import faiss

    from ragdiag.targets.local.vector import BUILD_CHUNK

    idx = faiss.IndexHNSWFlat(arr.shape[1], max(4, m), faiss.METRIC_INNER_PRODUCT)
    idx.hnsw.efConstruction = efc
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        for start in range(0, arr.shape[0], BUILD_CHUNK):
            idx.add(np.ascontiguousarray(arr[start:start + BUILD_CHUNK]))
        seconds = time.perf_counter() - t0
    finally:
        faiss.omp_set_num_threads(before)
    faiss.write_index(idx, str(path))
    return seconds, hashlib.sha256(path.read_bytes()).hexdigest()


def bench_embeddings(reps: int, threads: int, rng: random.Random) -> dict:
    from ragdiag.encoders import default_embedder

    embs = {}
    for dtype in ("float64", "float32"):
        emb = default_embedder(use_cache=False, compute_dtype=dtype)
        emb.lru_size = 0
        emb.threads = threads
        emb.embed_one("load the model")
        embs[dtype] = emb
    sets = {"queries": queries(256), "passages": passages(128)}
    rates: dict[str, dict[str, list[float]]] = {s: {d: [] for d in embs} for s in sets}
    grids: dict[str, dict[str, np.ndarray]] = {s: {} for s in sets}
    for name, texts in sets.items():
        for dtype, emb in embs.items():  # warm-up, untimed; keeps the vectors for the comparison
            grids[name][dtype] = emb.embed(texts, batch_size=32)
        for rep in range(reps):
            order = list(embs)
            rng.shuffle(order)
            for dtype in order:
                t0 = time.perf_counter()
                embs[dtype].embed(texts, batch_size=32)
                rates[name][dtype].append(len(texts) / (time.perf_counter() - t0))
            print(f"embed {name} rep {rep + 1}/{reps} (load {_load():.1f}): " + ", ".join(
                f"{d} {rates[name][d][-1]:.1f}/s" for d in embs), flush=True)
    table = {}
    for name, texts in sets.items():
        r64, r32 = rates[name]["float64"], rates[name]["float32"]
        diff = grids[name]["float64"] != grids[name]["float32"]
        table[name] = {"texts": len(texts),
                       "float64_texts_per_s": round(statistics.median(r64), 1),
                       "float32_texts_per_s": round(statistics.median(r32), 1),
                       "median_ratio_float32_to_float64": round(statistics.median(
                           b / a for a, b in zip(r64, r32, strict=True)), 3),
                       "grid_components_differing": int(diff.sum()),
                       "grid_components": int(diff.size),
                       "vectors_differing": int(diff.any(axis=1).sum())}
    return {"threads": threads, "batch_size": 32, "table": table, "raw": rates}


def bench_hnsw(reps: int, build_threads: int, rng: random.Random) -> dict:
    from ragdiag.targets.local.vector import build_hnsw

    arr, m, efc = _sample_vectors()
    variants = {"1 thread": 1, f"{build_threads} threads": build_threads}
    seconds: dict[str, list[float]] = {v: [] for v in variants}
    hashes: dict[str, set[str]] = {v: set() for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ragdiag_hash = build_hnsw(arr, m, efc, folder / "ragdiag.hnsw", progress=False, label="bench")
        for t in variants.values():  # warm-up
            _build(arr, m, efc, t, folder / "warm.hnsw")
        for rep in range(reps):
            order = list(variants)
            rng.shuffle(order)
            for v in order:
                s, h = _build(arr, m, efc, variants[v], folder / f"{rep}.hnsw")
                seconds[v].append(s)
                hashes[v].add(h)
            print(f"hnsw rep {rep + 1}/{reps} (load {_load():.1f}): " + ", ".join(
                f"{v} {seconds[v][-1]:.2f}s" for v in variants), flush=True)
    single, multi = seconds["1 thread"], seconds[f"{build_threads} threads"]
    return {"vectors": int(arr.shape[0]), "dim": int(arr.shape[1]), "m": m, "ef_construction": efc,
            "median_s": {v: round(statistics.median(s), 3) for v, s in seconds.items()},
            "median_ratio_1thread_to_multi": round(statistics.median(
                a / b for a, b in zip(single, multi, strict=True)), 3),
            "distinct_files": {v: len(h) for v, h in hashes.items()},
            "single_thread_equals_build_hnsw": hashes["1 thread"] == {ragdiag_hash},
            "raw": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads for the embedder")
    ap.add_argument("--build-threads", type=int, default=2, help="OpenMP threads of the parallel HNSW build")
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "determinism.json"))
    args = ap.parse_args()
    import faiss
    import torch

    rng = random.Random(args.seed)
    load_before = _load()
    hnsw = bench_hnsw(args.reps, args.build_threads, rng)
    embed = bench_embeddings(args.reps, args.threads, rng)
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "torch": torch.__version__,
                       "faiss": faiss.__version__},
           "reps": args.reps, "load_1min_before": round(load_before, 2), "load_1min_after": round(_load(), 2),
           "embedding": embed, "hnsw": hnsw}
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"embedding": embed["table"], "hnsw": {k: v for k, v in hnsw.items() if k != "raw"}},
                     indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
