"""A newcomer's two commands on a real IR collection: `ragdiag init --beir`, then `ragdiag audit`.

The Vaswani (NPL) collection (11,429 physics abstracts, 93 topics, 2,083 judgments) is
converted to a BEIR folder here (corpus.jsonl with `_id` and `text`, queries.jsonl with the
lower-cased topic titles, qrels/test.tsv), then run as a user would run it, each step a
subprocess with a fresh RAGDIAG_CACHE (so the first audit embeds the corpus):

1. ``ragdiag init OUT --beir BEIR`` (timed);
2. ``ragdiag audit OUT/audit.toml`` as written (route default = hybrid), timed: init plus this
   audit is the time from nothing to the first findings;
3. the same folder with ``[routes] default`` switched to ``keyword`` and to ``vector`` (the
   edit the drafted profiles.toml tells the user to make), ``--checks goldset``.

The goldset check's nDCG@10, recall@50 and MRR of each leg are set next to an independent
run: bm25s (Lucene BM25, English stemming and stop words) for keyword, FAISS HNSW on the
graph file ragdiag built for vector, `compare.Strong` (both plus numpy weighted RRF) for
hybrid, each ranked 50 deep and scored with pytrec_eval against the original qrels.

    python benchmarks/bench_init.py [--out benchmarks/results/bench_init.json] [--work DIR]

Reads ../shared/data/vaswani (benchmarks only; tests never do).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
LEGS = ("hybrid", "keyword", "vector")
DEPTH = 50  # the goldset check ranks 50 deep


def to_beir(beir: Path) -> dict[str, int]:
    """Vaswani's TREC files as a BEIR folder."""
    from bench_local_target import load_docs, load_topics
    from compare import VASWANI

    (beir / "qrels").mkdir(parents=True)
    docs, topics = load_docs(VASWANI), load_topics(VASWANI)
    with (beir / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with (beir / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text in topics:
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    rows = ["query-id\tcorpus-id\tscore"]
    for line in (VASWANI / "qrels").read_text().splitlines():
        if line.strip():
            qid, _it, doc, rel = line.split()
            rows.append(f"{qid}\t{doc}\t{rel}")
    (beir / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return {"documents": len(docs), "topics": len(topics), "judgments": len(rows) - 1}


CPU: dict[str, float] = {}  # CPU seconds (user + system) of each timed subprocess: the load-independent figure


def ragdiag(*args: str, env: dict[str, str], cwd: Path, label: str) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragdiag", *args], env=env, capture_output=True, text=True,
                          cwd=cwd)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[label] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ragdiag {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return wall


def leg_config(out: Path, leg: str) -> Path:
    """The written folder with [routes] default switched to `leg`, as the README tells a user."""
    if leg == "hybrid":
        return out / "audit.toml"
    policy = (out / "profiles.toml").read_text().replace('default = "hybrid"', f'default = "{leg}"')
    assert f'default = "{leg}"' in policy
    (out / f"profiles-{leg}.toml").write_text(policy)
    config = (out / "audit.toml").read_text().replace('profiles = "profiles.toml"', f'profiles = "profiles-{leg}.toml"')
    (out / f"audit-{leg}.toml").write_text(config)
    return out / f"audit-{leg}.toml"


def goldset_metrics(findings: Path) -> dict[str, float]:
    data = json.loads(findings.read_text())
    gold = next(f for f in data["findings"] if f["check_id"] == "goldset")
    return {m: round(gold["metrics"][m], 4) for m in ("ndcg@10", "recall@50", "mrr")}


def independent(out: Path, cache: Path) -> dict[str, dict[str, float]]:
    """bm25s / FAISS / RRF over the same documents, pytrec_eval against the original qrels."""
    import compare
    import faiss
    import numpy as np
    import pytrec_eval
    import yaml
    from compare import VASWANI, Strong

    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    goldset = {c["id"]: c["question"] for c in yaml.safe_load((out / "goldset.yaml").read_text())}
    os.environ["RAGDIAG_CACHE"] = str(cache)
    from ragdiag.sample.system import sample_embedder

    qids = list(goldset)
    qvecs = sample_embedder().embed([goldset[q] for q in qids])
    faiss.omp_set_num_threads(1)
    compare.TOP = DEPTH
    strong = Strong([r["key"] for r in records], [r["content"] for r in records],
                    next(cache.rglob("content_vector.hnsw")))

    def keyword(text: str, _qv: np.ndarray) -> list[str]:
        q = [i for i in strong.tok.tokenize([text], update_vocab=False, return_as="ids", show_progress=False)[0]
             if i != 0]
        s = strong.bm25.get_scores(q)
        cand = np.flatnonzero(s > 0)
        return strong.keys[strong.top(cand, s[cand], DEPTH)].tolist()

    def vector(_text: str, qv: np.ndarray) -> list[str]:
        d, i = strong.hnsw.search(qv[None, :], compare.K, params=strong.params)
        v = i[0][i[0] >= 0]
        return strong.keys[v[np.lexsort((strong.key_rank[v], -d[0][i[0] >= 0]))]].tolist()

    qrels: dict[str, dict[str, int]] = {}
    for line in (VASWANI / "qrels").read_text().splitlines():
        if line.strip():
            qid, _it, doc, rel = line.split()
            if int(rel) > 0:
                qrels.setdefault(qid, {})[doc] = max(int(rel), qrels.get(qid, {}).get(doc, 0))
    out_metrics = {}
    for leg, fn in (("hybrid", strong.search), ("keyword", keyword), ("vector", vector)):
        run = {}
        for qid, qv in zip(qids, qvecs, strict=True):
            keys = fn(goldset[qid], np.asarray(qv, dtype=np.float32))
            run[qid] = {k: float(DEPTH - r) for r, k in enumerate(keys)}
        ev = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in qids}, {"ndcg_cut.10", "recall.50", "recip_rank"})
        res = ev.evaluate(run)
        out_metrics[leg] = {name: round(float(np.mean([v[m] for v in res.values()])), 4) for name, m in (
            ("ndcg@10", "ndcg_cut_10"), ("recall@50", "recall_50"), ("mrr", "recip_rank"))}
    return out_metrics


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results" / "bench_init.json"))
    ap.add_argument("--work", help="keep the folders here (default: a temporary folder, removed)")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-init-"))
    beir, out, cache = work / "vaswani-beir", work / "audit", work / "cache"
    for p in (beir, out, cache):
        shutil.rmtree(p, ignore_errors=True)
    env = {**os.environ, "RAGDIAG_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}  # this checkout
    result: dict = {"load_start": round(os.getloadavg()[0], 2), "collection": to_beir(beir)}
    t_init = ragdiag("init", str(out), "--beir", str(beir), "--quiet", env=env, cwd=work, label="init")
    print(f"init: {t_init:.1f} s", flush=True)
    walls, ours = {}, {}
    for leg in LEGS:
        config = leg_config(out, leg)
        findings = work / f"findings-{leg}.json"
        extra = [] if leg == "hybrid" else ["--checks", "goldset"]
        walls[leg] = ragdiag("audit", str(config), "--json", str(findings), "--fail-on", "never", "--quiet", *extra,
                             env=env, cwd=work, label=f"audit {leg}")
        ours[leg] = goldset_metrics(findings)
        print(f"audit {leg}: {walls[leg]:.1f} s  {ours[leg]}", flush=True)
    t_warm = ragdiag("audit", str(out / "audit.toml"), "--json", str(work / "findings-warm.json"), "--fail-on",
                     "never", "--quiet", env=env, cwd=work, label="warm audit")
    theirs = independent(out, cache)
    result.update({
        "init_s": round(t_init, 1), "first_audit_s": round(walls["hybrid"], 1),
        "init_to_first_findings_s": round(t_init + walls["hybrid"], 1), "warm_full_audit_s": round(t_warm, 1),
        "goldset_only_audit_s": {leg: round(walls[leg], 1) for leg in LEGS[1:]},
        "cpu_s": dict(CPU), "first_audit_over_warm": round(walls["hybrid"] / t_warm, 1),
        "ragdiag": ours, "independent": theirs,
        "max_abs_difference": max(abs(ours[leg][m] - theirs[leg][m]) for leg in LEGS for m in ours[leg]),
        "load_end": round(os.getloadavg()[0], 2)})
    print(json.dumps(result, indent=2))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
