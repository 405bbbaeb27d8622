"""Benchmark of the local hybrid target (`ragdiag.targets.local.LocalTarget`).

What is measured, per corpus size (each size runs in a fresh subprocess so that RSS
figures do not mix):

* index build: `LocalTarget.build` (BM25, the HNSW graph, persisting; vectors given), the
  first query, RSS growth (psutil) and on-disk size;
* query latency of one hybrid request, text + one vector field (k=50), top 10, no semantic
  ranking, query vectors precomputed (query embedding excluded), HNSW and exhaustive;
  the target's per-query stage caches are cleared before every timed query, so each one
  does the full work (a "repeat" row shows the cached path separately); HNSW again on the
  same index reopened from disk with `LocalTarget.open`;
* the same queries through a straightforward pipeline: rank_bm25.BM25Okapi (lowercase +
  split) -> numpy argsort top 1000 -> FAISS IndexFlatIP top 50 -> RRF(60) in Python -> top 10;
  with the top-10 overlap between the two;
* at real-vector sizes only: HNSW recall@10 of the vector leg against exact search.

Data: the Vaswani (NPL) collection in ../shared/data/vaswani. Up to 10,000 documents are
real texts with real all-MiniLM-L6-v2 vectors (embedded once, cached in $RAGDIAG_CACHE,
default benchmarks/.work/cache). Larger sizes are synthetic, see `synthetic_corpus`.

    python benchmarks/bench_local_target.py [--sizes 10000,100000]
        [--out benchmarks/results/local_target.json] [--reps 5]

FAISS runs with one OpenMP thread for the timed single queries (faiss.omp_set_num_threads(1));
index builds use all cores.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VASWANI = REPO.parent / "shared" / "data" / "vaswani"
WORK = HERE / ".work"
REAL_MAX = 10_000  # documents with real embeddings
DIM = 384
NOISE_SIGMA = 0.02  # per-dimension gaussian noise of the synthetic vectors (before renormalising)
RESAMPLE_FRACTION = 0.10  # share of a copied text's words resampled from the corpus
SEED = 20240601

_DOC = re.compile(r"<DOC>\s*<DOCNO>\s*(\d+)\s*</DOCNO>(.*?)</DOC>", re.S)
_TOP = re.compile(r"<num>\s*(\d+)\s*</num>\s*<title>(.*?)</title>", re.S)


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------

def load_docs(root: Path = VASWANI) -> list[tuple[str, str]]:
    """(docno, text) in file order, whitespace collapsed."""
    raw = (root / "corpus" / "doc-text.trec").read_text(encoding="utf-8")
    return [(m.group(1), " ".join(m.group(2).split())) for m in _DOC.finditer(raw)]


def load_topics(root: Path = VASWANI) -> list[tuple[str, str]]:
    """(topic id, lowercased title): the 93 Vaswani topics."""
    raw = (root / "query-text.trec").read_text(encoding="utf-8")
    return [(m.group(1), " ".join(m.group(2).split()).lower()) for m in _TOP.finditer(raw)]


def load_qrels(root: Path = VASWANI) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in (root / "qrels").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            out.setdefault(parts[0], set()).add(parts[2])
    return out


def real_vectors(docs: list[tuple[str, str]], topics: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, dict]:
    """MiniLM vectors of the documents and topics, through the embedder's on-disk cache."""
    from ragdiag.encoders import default_embedder

    emb = default_embedder()
    t0 = time.perf_counter()
    qv = emb.embed([t for _, t in topics])
    dv = emb.embed([t for _, t in docs], progress=True)
    info = {"model_id": emb.model_id, "seconds": round(time.perf_counter() - t0, 2),
            "model_loaded": bool(getattr(emb, "loaded", False))}
    return dv.astype(np.float32), qv.astype(np.float32), info


def synthetic_corpus(base_docs: list[tuple[str, str]], base_vecs: np.ndarray, size: int,
                     seed: int = SEED) -> tuple[list[tuple[str, str]], np.ndarray]:
    """`size` documents made from the real base documents.

    Document i is a copy of base document j = i mod len(base). Copy 0 is the real document
    with its real vector. Copy c >= 1 (key "<docno>-<c>") has round(10%) (at least 1) of its
    words replaced by words drawn from the base corpus's word stream (unigram frequencies,
    so BM25 statistics stay realistic) and as vector the real vector plus N(0, 0.02^2) noise
    per dimension, renormalised (cosine to the original about 0.93).
    """
    rng = np.random.default_rng(seed)
    stream = np.array([w for _, t in base_docs for w in t.split()], dtype=object)
    nb = len(base_docs)
    docs: list[tuple[str, str]] = []
    src = np.arange(size) % nb
    for i in range(size):
        docno, text = base_docs[src[i]]
        c = i // nb
        if c == 0:
            docs.append((docno, text))
            continue
        words = text.split()
        r = max(1, round(RESAMPLE_FRACTION * len(words)))
        pos = rng.choice(len(words), size=min(r, len(words)), replace=False)
        new = stream[rng.integers(0, len(stream), size=len(pos))]
        for p, w in zip(pos, new, strict=True):
            words[p] = w
        docs.append((f"{docno}-{c}", " ".join(words)))
    vecs = base_vecs[src].copy()
    synth = src.size > nb
    if synth:
        noise = rng.standard_normal((size - nb, base_vecs.shape[1]), dtype=np.float32) * NOISE_SIGMA
        vecs[nb:] += noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return docs, vecs.astype(np.float32)


# ---------------------------------------------------------------------------------------
# measuring helpers
# ---------------------------------------------------------------------------------------

def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


class PeakRSS:
    """Samples RSS every 20 ms in a thread; `.peak` is the highest value seen (MB)."""

    def __enter__(self) -> PeakRSS:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mb())

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss_mb())


def dir_mb(path: Path) -> dict[str, float]:
    out = {}
    for p in sorted(path.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(path))] = round(p.stat().st_size / 2**20, 2)
    out["total"] = round(sum(out.values()), 2)
    return out


def stats_ms(samples: list[float], per_pass: int | None = None) -> dict[str, float]:
    """p50/p95/mean over every sample; with `per_pass` (queries per pass, samples in pass
    order) also the p50 of each query's fastest pass, which is robust to other processes."""
    a = np.asarray(samples) * 1000
    out = {"p50": round(float(np.percentile(a, 50)), 3), "p95": round(float(np.percentile(a, 95)), 3),
           "mean": round(float(a.mean()), 3), "min": round(float(a.min()), 3),
           "max": round(float(a.max()), 3), "n": int(a.size)}
    if per_pass and a.size % per_pass == 0:
        out["p50_best_of_passes"] = round(float(np.percentile(a.reshape(-1, per_pass).min(axis=0), 50)), 3)
    return out


def clear_stage_caches(target: Any) -> None:
    """Empty the target's per-query memo caches (text leg, vector leg, rerank).

    LocalTarget memoises the keyword and vector legs per query text/vector; without this a
    repeated query would only measure dictionary lookups.
    """
    for name, val in vars(target).items():
        if name.endswith("_cache") and isinstance(val, OrderedDict | dict):
            val.clear()


# ---------------------------------------------------------------------------------------
# the straightforward baseline
# ---------------------------------------------------------------------------------------

class Baseline:
    """rank_bm25.BM25Okapi + FAISS IndexFlatIP + RRF(60) in Python."""

    def __init__(self, keys: list[str], texts: list[str], vecs: np.ndarray) -> None:
        import faiss
        from rank_bm25 import BM25Okapi

        self.keys = keys
        self.bm25 = BM25Okapi([t.lower().split() for t in texts])
        self.index = faiss.IndexFlatIP(vecs.shape[1])
        self.index.add(vecs)

    def search(self, text: str, qvec: np.ndarray, top: int = 10) -> list[str]:
        scores = self.bm25.get_scores(text.lower().split())
        order = np.argsort(-scores)[:1000]
        order = order[scores[order] > 0]
        _, ids = self.index.search(qvec[None, :], 50)
        fused: dict[str, float] = {}
        for ranked in ([self.keys[i] for i in order], [self.keys[i] for i in ids[0] if i >= 0]):
            for rank, key in enumerate(ranked, 1):
                fused[key] = fused.get(key, 0.0) + 1.0 / (60 + rank)
        return sorted(fused, key=lambda k: -fused[k])[:top]


# ---------------------------------------------------------------------------------------
# one size (runs in its own process)
# ---------------------------------------------------------------------------------------

def bench_schema() -> Any:
    from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile

    return IndexSchema(
        name="bench",
        fields=(
            Field("key", STRING, key=True, filterable=True),
            Field("content", STRING, searchable=True),
            Field("vec", VECTOR, dimensions=DIM, vector_profile="vec-hnsw", retrievable=False),
        ),
        vector_profiles=(VectorSearchProfile(name="vec-hnsw", algorithm="hnsw-1", kind="hnsw",
                                             metric="cosine", m=16, ef_construction=200,
                                             ef_search=128),),
    )


def run_size(size: int, reps: int, baseline_reps: int, profile_out: Path | None) -> dict[str, Any]:
    import faiss

    import ragdiag.targets.local as local
    from ragdiag.model import SearchRequest, VectorQuery
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget

    res: dict[str, Any] = {"size": size, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    all_docs = load_docs()
    topics = load_topics()
    qrels = load_qrels()
    base_docs = all_docs[:min(size, REAL_MAX)]
    base_vecs, qvecs, emb_info = real_vectors(base_docs, topics)
    res["embedding"] = emb_info
    if size <= REAL_MAX:
        docs, vecs = base_docs, base_vecs
        res["data"] = (f"first {size} Vaswani documents, real {emb_info['model_id']} vectors; "
                       f"93 Vaswani topics with real query vectors")
        real = True
    else:
        t0 = time.perf_counter()
        docs, vecs = synthetic_corpus(base_docs, base_vecs, size)
        res["synthesis_s"] = round(time.perf_counter() - t0, 2)
        res["data"] = (f"{size} documents synthesised from the first {REAL_MAX} Vaswani documents "
                       f"(copy 0 real; copies 1.. with {RESAMPLE_FRACTION:.0%} of words resampled "
                       f"from the corpus word stream, vector = real vector + N(0, {NOISE_SIGMA}^2) "
                       f"per dimension, renormalised); 93 Vaswani topics with real query vectors")
        real = False
    res["real_vectors"] = real
    keys = [k for k, _ in docs]
    texts = [t for _, t in docs]
    records = [{"key": k, "content": t} for k, t in docs]
    del all_docs

    # ---- build ---------------------------------------------------------------------
    index_dir = WORK / f"index-{size}"
    shutil.rmtree(index_dir, ignore_errors=True)  # LocalTarget.build keeps a stale .hnsw otherwise
    spec = LocalIndexSpec(name="bench", schema=bench_schema(), vector_sources={"vec": ("content",)})
    bm25_s = [0.0]
    orig_build = local.KeywordField.build

    def timed_build(texts: Any) -> Any:
        t = time.perf_counter()
        out = orig_build(texts)
        bm25_s[0] += time.perf_counter() - t
        return out

    gc.collect()
    rss0 = rss_mb()
    local.KeywordField.build = timed_build
    try:
        with PeakRSS() as peak:
            t0 = time.perf_counter()
            target = LocalTarget.build(records, spec, index_dir=index_dir, vectors={"vec": vecs},
                                       progress=False, semantic=False)
            build_s = time.perf_counter() - t0
    finally:
        local.KeywordField.build = orig_build
    gc.collect()
    rss1 = rss_mb()
    disk_build = dir_mb(index_dir)

    def request(i: int, exhaustive: bool) -> Any:
        return SearchRequest(search=topics[i][1], top=10, vector_queries=(
            VectorQuery(fields=("vec",), vector=qvecs[i], k=50, exhaustive=exhaustive),))

    hnsw_reqs = [request(i, False) for i in range(len(topics))]
    exh_reqs = [request(i, True) for i in range(len(topics))]

    # first non-exhaustive query builds the HNSW graph (all cores), first exhaustive the flat index
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    with PeakRSS() as peak_h:
        t0 = time.perf_counter()
        target.search(hnsw_reqs[0])
        hnsw_first_s = time.perf_counter() - t0
    rss2 = rss_mb()
    t0 = time.perf_counter()
    target.search(exh_reqs[0])
    flat_first_s = time.perf_counter() - t0
    rss3 = rss_mb()
    res["build"] = {
        "build_s": round(build_s, 2), "bm25_s": round(bm25_s[0], 2),
        "rest_s (records, normalising, pickling, saving)": round(build_s - bm25_s[0], 2),
        "first_hnsw_query_s (builds and saves HNSW)": round(hnsw_first_s, 2),
        "first_exhaustive_query_s (builds flat index)": round(flat_first_s, 3),
        "rss_before_mb": round(rss0, 1),
        "rss_delta_build_mb": round(rss1 - rss0, 1),
        "rss_peak_delta_build_mb": round(peak.peak - rss0, 1),
        "rss_delta_hnsw_mb": round(rss2 - rss1, 1),
        "rss_peak_delta_hnsw_mb": round(peak_h.peak - rss1, 1),
        "rss_delta_flat_mb": round(rss3 - rss2, 1),
        "rss_total_delta_mb": round(rss3 - rss0, 1),
        "disk_after_build_mb": disk_build,
        "disk_with_hnsw_mb": dir_mb(index_dir),
    }
    t0 = time.perf_counter()
    reopened = LocalTarget.open(index_dir)
    res["build"]["open_s"] = round(time.perf_counter() - t0, 2)

    # ---- query latency ---------------------------------------------------------------
    faiss.omp_set_num_threads(1)

    def timed(reqs: list[Any], n_reps: int, clear: bool = True,
              tgt: Any = None) -> tuple[list[float], dict, list[Any]]:
        tgt = target if tgt is None else tgt
        lat: list[float] = []
        stages: dict[str, list[float]] = {}
        traces = []
        for rep in range(n_reps):
            for req in reqs:
                if clear:
                    clear_stage_caches(tgt)
                t = time.perf_counter()
                tr = tgt.search(req)
                lat.append(time.perf_counter() - t)
                if rep == 0:
                    traces.append(tr)
                for k, v in tr.timings_ms.items():
                    stages.setdefault(k, []).append(v)
        return lat, {k: round(float(np.mean(v)), 3) for k, v in stages.items()}, traces

    lat_q: dict[str, Any] = {}
    timed(hnsw_reqs, 1)  # warm-up
    lat, st, hnsw_traces = timed(hnsw_reqs, reps)
    lat_q["ragdiag_hnsw"] = {**stats_ms(lat, len(topics)), "stages_mean_ms": st}
    timed(exh_reqs, 1)
    lat, st, exh_traces = timed(exh_reqs, reps)
    lat_q["ragdiag_exhaustive"] = {**stats_ms(lat, len(topics)), "stages_mean_ms": st}
    timed(hnsw_reqs, 1, clear=False)  # fills the stage caches: every leg is now memoised
    lat, st, _ = timed(hnsw_reqs, reps, clear=False)
    lat_q["ragdiag_hnsw_repeat_cached"] = {**stats_ms(lat, len(topics)), "stages_mean_ms": st}
    # the usual case after the first run: the index is opened from disk (unpickled BM25,
    # HNSW read from vectors/vec.hnsw)
    timed(hnsw_reqs, 1, tgt=reopened)
    lat, st, re_traces = timed(hnsw_reqs, reps, tgt=reopened)
    lat_q["ragdiag_hnsw_reopened"] = {**stats_ms(lat, len(topics)), "stages_mean_ms": st}
    res["reopened_same_top10_as_built"] = float(np.mean(
        [[h.key for h in a.hits] == [h.key for h in b.hits]
         for a, b in zip(re_traces, hnsw_traces, strict=True)]))
    del reopened, re_traces
    gc.collect()

    if profile_out is not None:
        import cProfile
        import io
        import pstats

        prof = cProfile.Profile()
        for req in hnsw_reqs:
            clear_stage_caches(target)
            prof.enable()
            target.search(req)
            prof.disable()
        buf = io.StringIO()
        ps = pstats.Stats(prof, stream=buf).sort_stats("cumulative")
        ps.print_stats(30)
        ps.sort_stats("tottime").print_stats(20)
        profile_out.parent.mkdir(parents=True, exist_ok=True)
        profile_out.write_text(f"# cProfile of {len(hnsw_reqs)} HNSW hybrid queries at {size} docs "
                               f"(stage caches cleared)\n" + buf.getvalue())

    # ---- baseline ---------------------------------------------------------------------
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    gc.collect()
    rssb = rss_mb()
    t0 = time.perf_counter()
    base = Baseline(keys, texts, vecs)
    base_build_s = time.perf_counter() - t0
    res["baseline_build"] = {"build_s": round(base_build_s, 2),
                             "rss_delta_mb": round(rss_mb() - rssb, 1)}
    faiss.omp_set_num_threads(1)
    for i, (_, text) in enumerate(topics):  # warm-up
        base.search(text, qvecs[i])
    blat: list[float] = []
    base_top: list[list[str]] = []
    for rep in range(baseline_reps):
        for i, (_, text) in enumerate(topics):
            t = time.perf_counter()
            top = base.search(text, qvecs[i])
            blat.append(time.perf_counter() - t)
            if rep == 0:
                base_top.append(top)
    lat_q["baseline_rank_bm25_faiss_rrf"] = stats_ms(blat, len(topics))
    res["latency_ms"] = lat_q
    b50 = lat_q["baseline_rank_bm25_faiss_rrf"]["p50"]
    bmean = lat_q["baseline_rank_bm25_faiss_rrf"]["mean"]
    res["speedup"] = {
        mode: {"p50": round(b50 / lat_q[mode]["p50"], 1), "mean": round(bmean / lat_q[mode]["mean"], 1)}
        for mode in ("ragdiag_hnsw", "ragdiag_exhaustive", "ragdiag_hnsw_reopened")}

    # ---- agreement -------------------------------------------------------------------
    def overlap(a: list[list[str]], b: list[list[str]]) -> dict[str, float]:
        ov = [len(set(x) & set(y)) / max(1, len(y)) for x, y in zip(a, b, strict=True)]
        same = [x == y for x, y in zip(a, b, strict=True)]
        return {"mean_overlap": round(float(np.mean(ov)), 3), "identical_lists": round(float(np.mean(same)), 3)}

    exh_top = [[h.key for h in tr.hits] for tr in exh_traces]
    hnsw_top = [[h.key for h in tr.hits] for tr in hnsw_traces]
    agree: dict[str, Any] = {
        "top10_ragdiag_exhaustive_vs_baseline": overlap(exh_top, base_top),
        "top10_ragdiag_hnsw_vs_baseline": overlap(hnsw_top, base_top),
        "top10_ragdiag_hnsw_vs_exhaustive": overlap(hnsw_top, exh_top),
    }
    # per leg: FAISS flat top 50 must coincide; BM25 top 10 differs (bm25s Lucene + stemming +
    # stopwords vs rank_bm25 Okapi on lowercase split)
    vec_b, txt_b = [], []
    for i, (_, text) in enumerate(topics):
        _, ids = base.index.search(qvecs[i][None, :], 50)
        vec_b.append([keys[j] for j in ids[0]])
        sc = base.bm25.get_scores(text.lower().split())
        o = np.argsort(-sc)[:10]
        txt_b.append([keys[j] for j in o if sc[j] > 0])
    agree["vector_leg_top50_exhaustive_vs_faiss_flat"] = overlap(
        [list(tr.vectors[0].keys) for tr in exh_traces], vec_b)
    agree["text_leg_top10_bm25s_vs_rank_bm25"] = overlap(
        [list(tr.text.keys[:10]) if tr.text else [] for tr in exh_traces], txt_b)
    res["agreement"] = agree

    if real:
        # HNSW recall of the vector leg against exact search, on real vectors only
        r10 = [len(set(h.vectors[0].keys[:10]) & set(e.vectors[0].keys[:10])) / 10
               for h, e in zip(hnsw_traces, exh_traces, strict=True)]
        r50 = [len(set(h.vectors[0].keys) & set(e.vectors[0].keys)) / 50
               for h, e in zip(hnsw_traces, exh_traces, strict=True)]
        res["hnsw_recall"] = {"recall@10": round(float(np.mean(r10)), 4),
                              "recall@50": round(float(np.mean(r50)), 4),
                              "efSearch": 128, "M": 16, "efConstruction": 200}
        # sanity: precision@10 against the Vaswani qrels (docs beyond the subset never appear)
        def p10(tops: list[list[str]]) -> float:
            return round(float(np.mean([len(set(t[:10]) & qrels.get(tid, set())) / 10
                                        for t, (tid, _) in zip(tops, topics, strict=True)])), 4)
        res["precision@10_qrels"] = {"ragdiag_hnsw": p10(hnsw_top), "ragdiag_exhaustive": p10(exh_top),
                                     "baseline": p10(base_top)}
    res["rss_end_mb"] = round(rss_mb(), 1)
    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return res


# ---------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    import faiss
    import psutil

    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib.metadata import version

    import bm25s
    import rank_bm25  # noqa: F401

    return {"cpus": os.cpu_count(), "cpu": cpu, "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "numpy": np.__version__, "faiss": faiss.__version__,
            "bm25s": bm25s.__version__, "rank_bm25": version("rank-bm25"),
            "platform": platform.platform()}


def fmt(s: dict[str, float]) -> str:
    return f"{s['p50']:.2f} / {s['p95']:.2f} / {s['mean']:.2f}"


def markdown(results: list[dict[str, Any]]) -> str:
    cols = [f"{r['size']:,} ({'real' if r['real_vectors'] else 'synthetic'})" for r in results]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, f: Any) -> None:
        vals = []
        for r in results:
            try:
                vals.append(f(r))
            except (KeyError, TypeError):
                vals.append("–")
        rows.append((label, vals))

    L = "latency_ms"
    row("ragdiag hybrid, HNSW: p50 / p95 / mean ms", lambda r: fmt(r[L]["ragdiag_hnsw"]))
    row("ragdiag hybrid, exhaustive: p50 / p95 / mean ms", lambda r: fmt(r[L]["ragdiag_exhaustive"]))
    row("ragdiag hybrid, HNSW, index reopened from disk: p50 / p95 / mean ms",
        lambda r: fmt(r[L]["ragdiag_hnsw_reopened"]))
    row("baseline rank_bm25 + FAISS flat + RRF: p50 / p95 / mean ms",
        lambda r: fmt(r[L]["baseline_rank_bm25_faiss_rrf"]))
    row("p50 of each query's fastest pass, ms: HNSW / reopened / exhaustive / baseline",
        lambda r: " / ".join(f"{r[L][m]['p50_best_of_passes']:.2f}" for m in (
            "ragdiag_hnsw", "ragdiag_hnsw_reopened", "ragdiag_exhaustive", "baseline_rank_bm25_faiss_rrf")))
    row("speed-up vs baseline, HNSW (p50 / mean)",
        lambda r: f"{r['speedup']['ragdiag_hnsw']['p50']}x / {r['speedup']['ragdiag_hnsw']['mean']}x")
    row("speed-up vs baseline, HNSW reopened (p50 / mean)",
        lambda r: f"{r['speedup']['ragdiag_hnsw_reopened']['p50']}x / "
                  f"{r['speedup']['ragdiag_hnsw_reopened']['mean']}x")
    row("speed-up vs baseline, exhaustive (p50 / mean)",
        lambda r: f"{r['speedup']['ragdiag_exhaustive']['p50']}x / {r['speedup']['ragdiag_exhaustive']['mean']}x")
    row("ragdiag stage means, HNSW: text / vector / fusion / materialise ms",
        lambda r: " / ".join(f"{r[L]['ragdiag_hnsw']['stages_mean_ms'][k]:.2f}"
                             for k in ("text", "vector", "fusion", "materialise")))
    row("ragdiag stage means, HNSW reopened: text / vector / fusion / materialise ms",
        lambda r: " / ".join(f"{r[L]['ragdiag_hnsw_reopened']['stages_mean_ms'][k]:.2f}"
                             for k in ("text", "vector", "fusion", "materialise")))
    row("ragdiag repeated query (stage caches warm): p50 ms",
        lambda r: f"{r[L]['ragdiag_hnsw_repeat_cached']['p50']:.2f}")
    row("top-10 overlap ragdiag exhaustive vs baseline (identical lists)",
        lambda r: f"{r['agreement']['top10_ragdiag_exhaustive_vs_baseline']['mean_overlap']:.2f} "
                  f"({r['agreement']['top10_ragdiag_exhaustive_vs_baseline']['identical_lists']:.2f})")
    row("top-10 overlap ragdiag HNSW vs exhaustive",
        lambda r: f"{r['agreement']['top10_ragdiag_hnsw_vs_exhaustive']['mean_overlap']:.3f}")
    row("HNSW recall@10 / @50 of the vector leg (real vectors only)",
        lambda r: f"{r['hnsw_recall']['recall@10']:.3f} / {r['hnsw_recall']['recall@50']:.3f}")
    row("LocalTarget.build s (of which BM25)", lambda r: f"{r['build']['build_s']} ({r['build']['bm25_s']})")
    row("first HNSW query s (lazy HNSW build + save)",
        lambda r: f"{r['build']['first_hnsw_query_s (builds and saves HNSW)']}")
    row("LocalTarget.open s", lambda r: f"{r['build']['open_s']}")
    row("RSS growth: build / + HNSW / + flat / total MB",
        lambda r: f"{r['build']['rss_delta_build_mb']} / {r['build']['rss_delta_hnsw_mb']} / "
                  f"{r['build']['rss_delta_flat_mb']} / {r['build']['rss_total_delta_mb']}")
    row("RSS peak during build (above start) MB", lambda r: f"{r['build']['rss_peak_delta_build_mb']}")
    row("index on disk: after build / with HNSW MB",
        lambda r: f"{r['build']['disk_after_build_mb']['total']} / {r['build']['disk_with_hnsw_mb']['total']}")
    row("baseline build s (BM25Okapi + IndexFlatIP)", lambda r: f"{r['baseline_build']['build_s']}")
    row("load average (1 min) at start / end of the size's run",
        lambda r: f"{r['loadavg_start'][0]} / {r['loadavg_end'][0]}")
    out = ["| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    out += [f"| {label} | " + " | ".join(v) + " |" for label, v in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--out", default=str(HERE / "results" / "local_target.json"))
    ap.add_argument("--reps", type=int, default=5, help="timed passes over the 93 topics")
    ap.add_argument("--baseline-reps", type=int, default=None, help="default: --reps")
    ap.add_argument("--profile", action="store_true",
                    help="also write a cProfile of the HNSW queries next to --out")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("RAGDIAG_CACHE", str(WORK / "cache"))
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    breps = args.baseline_reps or args.reps
    out = Path(args.out)

    if args.worker:
        prof = out.with_name(out.stem + f"_profile_{args.worker}.txt") if args.profile else None
        res = run_size(args.worker, args.reps, breps, prof)
        Path(args.worker_out).write_text(json.dumps(res, indent=2))
        return 0

    if not VASWANI.is_dir():
        print(f"Vaswani collection not found at {VASWANI}", file=sys.stderr)
        return 2
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    WORK.mkdir(parents=True, exist_ok=True)
    results = []
    t_all = time.perf_counter()
    for size in sizes:
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False, dir=WORK) as fh:
            tmp = Path(fh.name)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(size), "--worker-out", str(tmp),
               "--reps", str(args.reps), "--baseline-reps", str(breps), "--out", str(out)]
        if args.profile:
            cmd.append("--profile")
        print(f"== {size} documents", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        res = json.loads(tmp.read_text())
        tmp.unlink()
        res["wall_s"] = round(time.perf_counter() - t0, 1)
        results.append(res)
        print(f"   done in {res['wall_s']} s", file=sys.stderr, flush=True)
    doc = {
        "benchmark": "local hybrid target",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "settings": {"reps": args.reps, "baseline_reps": breps, "topics": 93, "top": 10, "k": 50,
                     "faiss_query_threads": 1, "hnsw": {"M": 16, "efConstruction": 200, "efSearch": 128},
                     "stage_caches_cleared_before_each_timed_query": True,
                     "query_embedding": "excluded (precomputed)"},
        "total_wall_s": round(time.perf_counter() - t_all, 1),
        "results": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))
    print(markdown(results))
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
