"""ragdiag's local hybrid query against a strong hand-written pipeline and the floor, interleaved.

Three ways to answer one hybrid request (text + one vector field, k = 50, top 10, keyword
recall 1,000, RRF constant 60) over the same documents:

* **ragdiag**: `LocalTarget.search` on `SearchRequest(search=topic, vector_queries=(k=50,), top=10)`,
  its stage caches emptied before every timed query (each sample does the whole work);
* **strong**: what a good engineer writes today in ~30 lines (`Strong` below): bm25s
  (Lucene BM25, English stemming and stop words, the same settings as ragdiag) `get_scores`,
  numpy top 1,000, one FAISS HNSW search on *the same graph file* ragdiag built, numpy
  weighted RRF (`np.unique` + `np.bincount`), ties broken by document key like ragdiag;
* **floor**: bm25s scoring plus one HNSW search, nothing else (no top-k, no fusion).

Every timed round runs the three on the same query in a rotating order (A B C, B C A, ...),
so drift of the shared machine hits all three alike; ratios are taken per query and round,
then the median. Top-10 agreement compares ragdiag's and strong's lists per query.

Data: the Vaswani collection (11,429 real documents, 93 topics) with all-MiniLM-L6-v2
vectors (embedded once, cached as .npy under benchmarks/.work/), and 100,000 synthetic
documents made from it (`bench_local_target.synthetic_corpus`: copies with 10 % of words
resampled and noisy vectors). FAISS uses one thread for the timed queries.

    python benchmarks/compare.py [--sizes 11429,100000] [--reps 5] [--out benchmarks/results/compare.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if not os.environ.get("PYTHONPATH"):  # PYTHONPATH=<another checkout> times that checkout's ragdiag
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
VASWANI = Path(os.environ.get("VASWANI_DIR", ROOT.parent.parent / "shared" / "data" / "vaswani"))
if not VASWANI.is_dir():
    VASWANI = ROOT.parent / "shared" / "data" / "vaswani"
WORK = HERE / ".work"
K, TOP, RECALL, RRF = 50, 10, 1000, 60
PARTIAL = "--partial-vectors" in sys.argv
REAL_SHARE = None


# --------------------------------------------------------------------------- the strong pipeline
class Strong:
    """bm25s + FAISS HNSW + numpy weighted RRF, as a good engineer writes it (ties by key)."""

    def __init__(self, keys: list[str], texts: list[str], hnsw_path: Path, ef_search: int = 128) -> None:
        import bm25s
        import faiss
        import Stemmer

        self.tok = bm25s.tokenization.Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")
        self.bm25 = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        self.bm25.index(self.tok.tokenize(texts, return_as="ids", show_progress=False), show_progress=False)
        self.hnsw = faiss.read_index(str(hnsw_path))
        self.params = faiss.SearchParametersHNSW(efSearch=max(K, ef_search))
        self.keys = np.asarray(keys, dtype=object)
        self.key_rank = np.argsort(np.argsort(self.keys, kind="stable"), kind="stable").astype(np.int32)

    def top(self, rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
        if rows.size > k:  # the k best; every row tied with the k-th competes by key
            keep = scores >= scores[np.argpartition(-scores, k - 1)[k - 1]]
            rows, scores = rows[keep], scores[keep]
        return rows[np.lexsort((self.key_rank[rows], -scores))[:k]]

    def search(self, text: str, qvec: np.ndarray) -> list[str]:
        q = [i for i in self.tok.tokenize([text], update_vocab=False, return_as="ids",
                                          show_progress=False)[0] if i != 0]
        lists = []
        if q:
            s = self.bm25.get_scores(q)
            cand = np.flatnonzero(s > 0)
            lists.append(self.top(cand, s[cand], RECALL))
        d, i = self.hnsw.search(qvec[None, :], K, params=self.params)
        v = i[0][i[0] >= 0]
        lists.append(v[np.lexsort((self.key_rank[v], -d[0][i[0] >= 0]))])
        rows = np.concatenate(lists)
        contrib = np.concatenate([1.0 / (RRF + np.arange(1, len(x) + 1)) for x in lists])
        uniq, inv = np.unique(rows, return_inverse=True)
        fused = np.bincount(inv, weights=contrib)
        return self.keys[self.top(uniq, fused, TOP)].tolist()

    def floor(self, text: str, qvec: np.ndarray) -> None:
        """bm25s scoring and one HNSW search: what any hybrid query must at least do."""
        q = [i for i in self.tok.tokenize([text], update_vocab=False, return_as="ids",
                                          show_progress=False)[0] if i != 0]
        if q:
            self.bm25.get_scores(q)
        self.hnsw.search(qvec[None, :], K, params=self.params)


# --------------------------------------------------------------------------- data
def vaswani() -> tuple[list[tuple[str, str]], list[tuple[str, str]], np.ndarray, np.ndarray]:
    from bench_local_target import load_docs, load_topics

    docs = load_docs(VASWANI)
    topics = load_topics(VASWANI)
    WORK.mkdir(parents=True, exist_ok=True)
    dpath, qpath = WORK / "vaswani-docs-minilm.npy", WORK / "vaswani-topics-minilm.npy"
    if PARTIAL and not dpath.exists() and qpath.exists():
        return docs, topics, _partial_vectors(docs), np.load(qpath)
    if not (dpath.exists() and qpath.exists()):
        from ragdiag.encoders import default_embedder

        emb = default_embedder(WORK / "cache")
        np.save(qpath, emb.embed([t for _, t in topics]))
        np.save(dpath, emb.embed([t for _, t in docs], progress=True))
    return docs, topics, np.load(dpath), np.load(qpath)


def _partial_vectors(docs: list[tuple[str, str]]) -> np.ndarray:
    """`--partial-vectors`: the real MiniLM vectors of the documents already in the embedding
    cache; every other document gets the vector of a cached one (i mod count) plus N(0, 0.02^2)
    noise, renormalised (as `bench_local_target.synthetic_corpus` does), so a loaded machine need
    not embed all 11,429 first. The share of real vectors is printed and recorded."""
    from ragdiag.encoders import default_embedder

    emb = default_embedder(WORK / "cache")
    found = emb.cache.get_many(emb.cache_id, [t for _, t in docs])
    real = [v for v in found if v is not None]
    if not real:
        raise SystemExit("--partial-vectors: no document vector is cached yet")
    base = np.stack(real).astype(np.float64)
    rng = np.random.default_rng(7)
    out = np.empty((len(docs), base.shape[1]), dtype=np.float64)
    j = 0
    for i, v in enumerate(found):
        if v is not None:
            out[i] = v
        else:
            out[i] = base[j % len(base)] + rng.normal(0.0, 0.02, base.shape[1])
            j += 1
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    global REAL_SHARE
    REAL_SHARE = round(len(real) / len(docs), 3)
    print(f"--partial-vectors: {len(real)} of {len(docs)} document vectors real", file=sys.stderr)
    return out.astype(np.float32)


def schema() -> Any:
    from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile

    return IndexSchema(name="compare", fields=(
        Field("key", STRING, key=True, filterable=True),
        Field("content", STRING, searchable=True, analyzer="en.lucene"),  # as the peer: Snowball + 33 stop words
        Field("vec", VECTOR, dimensions=384, vector_profile="hnsw", retrievable=False)),
        vector_profiles=(VectorSearchProfile(name="hnsw", algorithm="hnsw-1", kind="hnsw", metric="cosine",
                                             m=16, ef_construction=200, ef_search=128),))


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000, q))


# --------------------------------------------------------------------------- one size
def run_size(size: int, reps: int) -> dict[str, Any]:
    import faiss
    from bench_local_target import synthetic_corpus

    from ragdiag.errors import TargetError
    from ragdiag.model import SearchRequest, VectorQuery
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget

    docs, topics, dvecs, qvecs = vaswani()
    if size > len(docs):
        docs, dvecs = synthetic_corpus(docs, dvecs, size)
    else:
        docs, dvecs = docs[:size], dvecs[:size]
    keys = [k for k, _ in docs]
    texts = [t for _, t in docs]
    out: dict[str, Any] = {"size": size, "real": size <= 11429, "load_start": os.getloadavg()[0]}
    index_dir = WORK / (f"compare-{size}" + ("-partial" if PARTIAL else ""))
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    target = None
    if (index_dir / "manifest.json").exists():
        t0 = time.perf_counter()
        try:
            target = LocalTarget.open(index_dir)
            out["open_s"] = round(time.perf_counter() - t0, 2)
        except TargetError:
            target = None  # an index of another format: rebuilt below
    if target is None:
        shutil.rmtree(index_dir, ignore_errors=True)
        t0 = time.perf_counter()
        target = LocalTarget.build([{"key": k, "content": t} for k, t in docs],
                                   LocalIndexSpec("compare", schema(), {"vec": ("content",)}),
                                   index_dir=index_dir, vectors={"vec": dvecs}, progress=True, semantic=False)
        out["build_s (BM25 + HNSW graph)"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    strong = Strong(keys, texts, index_dir / "vectors" / "vec.hnsw")
    out["strong_build_s (bm25s index, graph read)"] = round(time.perf_counter() - t0, 1)
    faiss.omp_set_num_threads(1)

    reqs = [SearchRequest(search=t, top=TOP, vector_queries=(
        VectorQuery(fields=("vec",), vector=tuple(float(x) for x in qvecs[i]), k=K),))
        for i, (_, t) in enumerate(topics)]

    def ragdiag(i: int) -> list[str]:
        return list(target.search(reqs[i]).keys)

    def clear() -> None:
        target.clear_stage_caches()

    runners = {"ragdiag": lambda i: ragdiag(i), "strong": lambda i: strong.search(topics[i][1], qvecs[i]),
               "floor": lambda i: strong.floor(topics[i][1], qvecs[i])}
    names = list(runners)
    lat: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}  # thread CPU time: robust to other jobs
    ratio_cpu: list[float] = []
    ratio_strong: list[float] = []
    ratio_floor: list[float] = []
    stages: dict[str, list[float]] = {}
    for i in range(len(topics)):  # warm-up
        clear()
        ragdiag(i)
        strong.search(topics[i][1], qvecs[i])
    for rep in range(reps):
        for i in range(len(topics)):
            order = names[(rep + i) % 3:] + names[:(rep + i) % 3]
            this, this_cpu = {}, {}
            for n in order:
                clear()
                c = time.thread_time()
                t = time.perf_counter()
                runners[n](i)
                this[n] = time.perf_counter() - t
                this_cpu[n] = time.thread_time() - c
                lat[n].append(this[n])
                cpu[n].append(this_cpu[n])
            ratio_strong.append(this["ragdiag"] / this["strong"])
            if this_cpu["strong"] > 0:
                ratio_cpu.append(this_cpu["ragdiag"] / this_cpu["strong"])
            ratio_floor.append(this["ragdiag"] / this["floor"])
    for i in range(len(topics)):
        clear()
        for k, v in target.search(reqs[i]).timings_ms.items():
            stages.setdefault(k, []).append(v)
    same = overlap = 0.0
    for i in range(len(topics)):
        clear()
        a, b = ragdiag(i), strong.search(topics[i][1], qvecs[i])
        same += a == b
        overlap += len(set(a) & set(b)) / max(1, len(b))
    out["latency_ms"] = {n: {"p50": round(pct(v, 50), 3), "p95": round(pct(v, 95), 3), "n": len(v)}
                         for n, v in lat.items()}
    out["cpu_ms"] = {n: {"p50": round(pct(v, 50), 3), "mean": round(float(np.mean(v)) * 1000, 3)}
                     for n, v in cpu.items()}
    out["cpu_ratio_ragdiag_to_strong"] = {
        "median_of_pairs": round(statistics.median(ratio_cpu), 3) if ratio_cpu else None,
        "of_means": round(float(np.mean(cpu["ragdiag"]) / np.mean(cpu["strong"])), 3)}
    out["ratio_ragdiag_to_strong"] = {"median": round(statistics.median(ratio_strong), 3),
                                      "p95": round(float(np.percentile(ratio_strong, 95)), 3)}
    out["ratio_ragdiag_to_floor"] = {"median": round(statistics.median(ratio_floor), 3)}
    out["ratio_strong_to_floor"] = {"median": round(statistics.median(
        [s / f for s, f in zip(lat["strong"], lat["floor"], strict=True)]), 3)}
    out["ragdiag_stage_mean_ms"] = {k: round(float(np.mean(v)), 3) for k, v in stages.items()}
    out["top10_identical_share"] = round(same / len(topics), 3)
    out["top10_mean_overlap"] = round(overlap / len(topics), 3)
    out["load_end"] = os.getloadavg()[0]
    out["real_vector_share"] = REAL_SHARE if PARTIAL else (1.0 if size <= 11429 else None)
    import ragdiag

    out["ragdiag_from"] = str(Path(ragdiag.__file__).parent)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="11429,100000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "compare.json"))
    ap.add_argument("--worker", type=int)
    ap.add_argument("--partial-vectors", action="store_true",
                    help="use the cached document vectors, the rest synthetic (see _partial_vectors)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.worker:
        print(json.dumps(run_size(args.worker, args.reps)))
        return
    import subprocess

    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        proc = subprocess.run([sys.executable, __file__, "--worker", str(size), "--reps", str(args.reps)]
                              + (["--partial-vectors"] if args.partial_vectors else []),
                              check=True, capture_output=True, text=True)
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1], indent=2), flush=True)
    doc = {"benchmark": "ragdiag local hybrid vs strong pipeline vs floor", "cpus": os.cpu_count(),
           "python": platform.python_version(), "reps": args.reps, "results": results}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
