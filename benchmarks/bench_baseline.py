"""The optimizer on collections it was not built on, against every simple alternative.

Shared by bench_optimize.py --collections and bench_draft.py --collections:

- `system(name)`: the collection as `ragdiag init --beir` writes it (benchmarks/collections_data.py
  makes the BEIR folder), with the commented hybrid_semantic profile switched on, so the
  current policy (route default = hybrid) has four existing profiles: keyword, vector, hybrid,
  hybrid_semantic. Kept under $RAGDIAG_BENCH_DATA/work (outside the repository).
- `TunedFusion`: the baseline a good engineer writes with today's libraries in ~40 lines:
  bm25s (Lucene BM25, the language's Snowball stemmer and stop words) over title + content,
  exact cosine search over the same MiniLM vectors the local index holds, weighted RRF
  (constant 60, 50 deep each), the vector weight chosen from a grid (0 = BM25 only ... inf =
  vector only) on the same train questions the optimizer searched on.
- `run_collections`: per collection and seed, `optimize_policy`, then on the same held-out
  questions nDCG@10 of the current policy, the proposal (or what the optimizer says to keep),
  the best existing profile (the oracle: the best on test) and the tuned fusion.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, math.inf)
DEPTH = 50


def work_dir() -> Path:
    from collections_data import DATA

    return DATA / "work"


def system(name: str) -> Path:
    """The init-drafted system of collection `name` (made once), hybrid_semantic switched on."""
    from collections_data import write_beir

    out = work_dir() / name
    if not (out / "audit.toml").exists():
        beir = write_beir(name, work_dir() / "beir")
        subprocess.run([sys.executable, "-m", "ragdiag", "init", str(out), "--beir", str(beir), "--quiet",
                        "--force"], check=True)
        prof = out / "profiles.toml"
        text = prof.read_text(encoding="utf-8")
        block = text[text.index("# [profiles.hybrid_semantic]"):]
        prof.write_text(text.replace(block, "\n".join(line[2:] if line.startswith("# ") else line
                                                      for line in block.splitlines()) + "\n"),
                        encoding="utf-8")
    return out


def context(name: str):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    return build_context(load_config(system(name) / "audit.toml"), progress=True)


class TunedFusion:
    """bm25s + exact vector search + weighted RRF over the local index's own records and vectors."""

    def __init__(self, target: Any, language: str) -> None:
        import bm25s
        import numpy as np
        import Stemmer

        self.np = np
        self.target = target
        n = len(target.vectors["content_vector"])
        self.keys = [str(target.record(i)["key"]) for i in range(n)]
        texts = [f"{target.record(i).get('title') or ''} {target.record(i).get('content') or ''}" for i in range(n)]
        self.stemmer = Stemmer.Stemmer("german" if language == "de" else "english")
        self.stop = "de" if language == "de" else "en"
        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize(texts, stopwords=self.stop, stemmer=self.stemmer, show_progress=False),
                        show_progress=False)
        vecs = np.asarray(target.vectors["content_vector"], dtype=np.float32)
        self.vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True).clip(1e-12)
        self._lists: dict[str, tuple[list[int], list[int]]] = {}

    def lists(self, question: str) -> tuple[list[int], list[int]]:
        hit = self._lists.get(question)
        if hit is not None:
            return hit
        np = self.np
        import bm25s

        tokens = bm25s.tokenize([question], stopwords=self.stop, stemmer=self.stemmer, show_progress=False)
        scores = self.bm25.get_scores(_ids_to_tokens(tokens))
        kw = [int(i) for i in np.argsort(-scores, kind="stable")[:DEPTH] if scores[i] > 0]
        q = np.asarray(self.target._text_vector(question), dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        vec = [int(i) for i in np.argsort(-(self.vecs @ q), kind="stable")[:DEPTH]]
        self._lists[question] = (kw, vec)
        return kw, vec

    def ranked(self, question: str, weight: float) -> list[str]:
        kw, vec = self.lists(question)
        if weight == 0:
            return [self.keys[i] for i in kw[:DEPTH]]
        if math.isinf(weight):
            return [self.keys[i] for i in vec[:DEPTH]]
        score: dict[int, float] = {}
        for r, i in enumerate(kw, 1):
            score[i] = score.get(i, 0.0) + 1.0 / (60 + r)
        for r, i in enumerate(vec, 1):
            score[i] = score.get(i, 0.0) + weight / (60 + r)
        order = sorted(score, key=lambda i: (-score[i], self.keys[i]))
        return [self.keys[i] for i in order[:DEPTH]]

    def per_query(self, cases: list[Any], qrels: dict, weight: float) -> dict[str, float]:
        from ragdiag.metrics import evaluate

        run = {c.id: self.ranked(c.question, weight) for c in cases}
        ev = evaluate(run, {c.id: qrels[c.id] for c in cases})
        return {q: v["ndcg@10"] for q, v in ev.per_query.items()}

    def tuned(self, train: list[Any], test: list[Any], qrels: dict) -> tuple[float, dict[str, float]]:
        """The weight best on `train` (ties: the smaller), and its per-question nDCG@10 on `test`."""
        best_w, best = WEIGHTS[0], -1.0
        for w in WEIGHTS:
            pq = self.per_query(train, qrels, w)
            v = sum(pq.values()) / max(1, len(pq))
            if v > best + 1e-12:
                best_w, best = w, v
        return best_w, self.per_query(test, qrels, best_w)


def _ids_to_tokens(tokenized: Any) -> list[str]:
    inv = {i: t for t, i in tokenized.vocab.items()}
    return [inv[i] for i in tokenized.ids[0]]


def _mean(values: dict[str, float], ids: list[str]) -> float | None:
    vals = [values[i] for i in ids if i in values]
    return round(sum(vals) / len(vals), 4) if vals else None


def run_one(name: str, seed: int) -> dict[str, Any]:
    from ragdiag.optimize import optimize_policy
    from ragdiag.optimize.run import _cases, _route_of
    from ragdiag.optimize.search import Evaluator
    from ragdiag.optimize.splits import final_split, resolve_folds, split_cases

    ctx = context(name)
    cases = _cases(ctx)
    qrels = ctx.goldset.qrels()
    route_of = _route_of(ctx.policy)
    folds = resolve_folds(None, len(cases))
    t0 = time.perf_counter()
    result = optimize_policy(ctx, seed=seed, folds=None, log=lambda m: None)
    wall = time.perf_counter() - t0
    d = result.data
    splits = split_cases(cases, route_of, seed=seed, folds=folds)
    by_id = {c.id: c for c in cases}
    test_ids = [i for s in splits for i in s.test]
    ev = Evaluator(ctx, ctx.policy)
    existing = {}
    for pname, prof in ctx.policy.profiles.items():
        e = ev.evaluate(prof, cases, phase="test")
        existing[pname] = _mean({q: v["ndcg@10"] for q, v in e.per_query.items()}, test_ids)
    best_name = max(existing, key=lambda k: (existing[k] or 0.0))
    fusion = TunedFusion(ctx.target, ctx.config.language if ctx.config else "en")
    fused: dict[str, float] = {}
    weights = []
    for s in splits:
        w, pq = fusion.tuned([by_id[i] for i in s.train + s.validation], [by_id[i] for i in s.test], qrels)
        weights.append(w)
        fused.update(pq)
    _ = final_split
    prop = d["proposed"]["test"]["ndcg@10"]
    dec = d.get("decision") or {}
    decision = dec.get("outcome", "proposed")
    # what the optimizer hands over: the proposal, the existing profile it names, or the current policy
    outcome = dec.get("test", {}).get("outcome", {}).get("ndcg@10", prop)
    tuned_hybrid = (d.get("alternatives") or {}).get("tuned_hybrid", {}).get("test", {}).get("ndcg@10")
    return {"collection": name, "seed": seed, "questions": len(cases), "folds": folds, "test_n": len(test_ids),
            "current": d["baseline"]["test"]["ndcg@10"], "proposed": prop, "outcome": outcome,
            "outcome_profile": dec.get("profile"), "tuned_hybrid": tuned_hybrid,
            "message": dec.get("message"),
            "best_existing": existing[best_name], "best_existing_profile": best_name, "existing": existing,
            "tuned_fusion": _mean(fused, test_ids), "fusion_weights": [None if math.isinf(w) else w for w in weights],
            "p_vs_current": d["p_value"], "changes": len(d["changes"]),
            "change_list": [f"{c['profile']}: {c['knob']} {c['from']} -> {c['to']}" for c in d["changes"]],
            "decision": decision, "candidates": d["proposed"]["candidates"], "requests": d["requests"],
            "wall_s": round(wall, 1), "load_1min": round(os.getloadavg()[0], 1)}


def run_collections(names: list[str], seeds: list[int], label: str) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        for seed in seeds:
            rows.append(run_one(name, seed))
            print(json.dumps(rows[-1]), flush=True)
    out = ROOT / "benchmarks" / "results" / f"optimize-collections-{label}.json"
    out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print("| collection | seed | test n | current | proposed | handed over (decision) | best existing (profile) "
          "| simple tuned hybrid (ragdiag) | tuned bm25s + vector | handed over - best existing | changes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")

    def f(v):
        return "-" if v is None else f"{v:.3f}"

    for r in rows:
        gap = None if r["outcome"] is None or r["best_existing"] is None else r["outcome"] - r["best_existing"]
        print(f"| {r['collection']} | {r['seed']} | {r['test_n']} | {f(r['current'])} | {f(r['proposed'])} | "
              f"{f(r['outcome'])} ({r['decision']}{' ' + r['outcome_profile'] if r['outcome_profile'] else ''}) | "
              f"{f(r['best_existing'])} ({r['best_existing_profile']}) | {f(r['tuned_hybrid'])} | "
              f"{f(r['tuned_fusion'])} | {'-' if gap is None else format(gap, '+.3f')} | {r['changes']} |")
    return rows
