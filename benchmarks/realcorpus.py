"""An audit of a real IR collection that ragdiag did not write: Vaswani (NPL), 11,429 physics
abstracts, 93 topics, 2,083 graded judgments.

What a new user does: write the records and an Azure-shaped index definition, a policy of one
or two profiles, an audit config with the TREC qrels as goldset, and run `ragdiag audit` as a
subprocess. Then the verdicts are read against what is true of this system (no client code,
no query log, no security field, no filter, one route, abstracts as whole records), and the
goldset metrics are recomputed independently: the same hybrid request written with bm25s,
FAISS and numpy RRF (`compare.Strong`), scored with pytrec_eval, must give the metrics the
goldset check reports for the profile without semantic ranking.

    python benchmarks/realcorpus.py [--out benchmarks/results/realcorpus.json]

Reads ../shared/data/vaswani (benchmarks only; tests never do). Writes its inputs and the
index under benchmarks/.work/vaswani-audit/ (RAGDIAG_CACHE points there, so the first run
embeds the corpus once, a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
WORK = HERE / ".work" / "vaswani-audit"

POLICY = """\
[policy]
name = "vaswani"
description = "{description}"

[routes]
default = "hybrid"

[defaults]
search_fields = ["content"]
keyword_text = "verbatim"
top = 10
{semantic}
[profiles.hybrid]
description = "BM25 on the abstract and one vector query, k = 50"
  [[profiles.hybrid.vector_queries]]
  fields = ["content_vector"]
  k = 50
"""

CONFIG = """\
[audit]
name = "Vaswani (NPL) hybrid search"
client = "benchmark"
system = "Vaswani physics abstracts"

[target]
kind = "local"
records = "records.jsonl"
schema = "schema.json"
vector_sources = {{ content_vector = ["content"] }}

[inputs]
profiles = "{profiles}"
goldset = "qrels"
topics = "query-text.trec"
"""


def write_inputs() -> None:
    from compare import VASWANI, vaswani

    from ragdiag.model.schema import (
        STRING,
        VECTOR,
        Field,
        IndexSchema,
        SemanticConfiguration,
        VectorSearchProfile,
    )

    WORK.mkdir(parents=True, exist_ok=True)
    docs, _topics, _dv, _qv = vaswani()
    with (WORK / "records.jsonl").open("w", encoding="utf-8") as fh:
        for key, text in docs:
            fh.write(json.dumps({"key": key, "content": text}) + "\n")
    schema = IndexSchema(
        name="vaswani", fields=(
            Field("key", STRING, key=True, filterable=True),
            Field("content", STRING, searchable=True, analyzer="en.lucene"),  # as the peer: Snowball + 33 stop words
            Field("content_vector", VECTOR, dimensions=384, vector_profile="hnsw", retrievable=False)),
        semantic_configurations=(SemanticConfiguration("default", None, ("content",)),),
        default_semantic_configuration="default",
        vector_profiles=(VectorSearchProfile(name="hnsw", algorithm="hnsw-1", kind="hnsw", metric="cosine",
                                             m=16, ef_construction=200, ef_search=128),))
    (WORK / "schema.json").write_text(json.dumps(schema.to_azure(), indent=2))
    for name in ("qrels", "query-text.trec"):
        (WORK / name).write_bytes((VASWANI / name).read_bytes())
    (WORK / "plain.toml").write_text(POLICY.format(description="hybrid, no semantic ranking", semantic=""))
    (WORK / "semantic.toml").write_text(POLICY.format(
        description="hybrid with semantic ranking",
        semantic='query_type = "semantic"\nsemantic_configuration = "default"\n'))
    for name in ("plain", "semantic"):
        (WORK / f"audit-{name}.toml").write_text(CONFIG.format(profiles=f"{name}.toml"))


def audit(name: str) -> dict:
    env = {**os.environ, "RAGDIAG_CACHE": str(WORK / "cache"), "HF_HUB_OFFLINE": "1"}
    out = WORK / f"findings-{name}.json"
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(WORK / f"audit-{name}.toml"),
                           "--json", str(out), "--fail-on", "never", "--quiet"],
                          env=env, capture_output=True, text=True, cwd=WORK)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"audit {name} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    data = json.loads(out.read_text())
    return {"wall_s": round(wall, 1), "exit": proc.returncode,
            "findings": {f["check_id"]: {"status": f["status"],
                                          "headline": f["headline"] or f.get("skipped_reason") or "",
                                          "metrics": f.get("metrics", {})} for f in data["findings"]}}


def independent_metrics() -> dict:
    """nDCG@10, recall@50, MRR of the same hybrid request built with bm25s + FAISS + numpy RRF
    over the index ragdiag built, scored with pytrec_eval (ranked 50 deep, as the goldset is)."""
    import compare
    import faiss
    import numpy as np
    import pytrec_eval
    from compare import Strong, vaswani

    docs, topics, _dv, qvecs = vaswani()
    hnsw = next((WORK / "cache").rglob("content_vector.hnsw"))
    faiss.omp_set_num_threads(1)
    compare.TOP = 50  # ranked 50 deep (the goldset check's depth)
    strong = Strong([k for k, _ in docs], [t for _, t in docs], hnsw)
    run = {}
    for (qid, text), qv in zip(topics, qvecs, strict=True):
        keys = strong.search(text, np.asarray(qv, dtype=np.float32))
        run[qid] = {k: float(50 - r) for r, k in enumerate(keys)}
    qrels: dict[str, dict[str, int]] = {}
    from compare import VASWANI
    for line in (VASWANI / "qrels").read_text().split("\n"):
        if line.strip():
            qid, _it, doc, rel = line.split()
            if int(rel) > 0:
                qrels.setdefault(qid, {})[doc] = max(int(rel), qrels.get(qid, {}).get(doc, 0))
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.50", "recip_rank"})
    res = ev.evaluate({q: r for q, r in run.items() if q in qrels})
    mean = lambda m: float(np.mean([v[m] for v in res.values()]))  # noqa: E731
    return {"queries": len(res), "ndcg@10": round(mean("ndcg_cut_10"), 4), "recall@50": round(mean("recall_50"), 4),
            "mrr": round(mean("recip_rank"), 4)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results" / "realcorpus.json"))
    args = ap.parse_args()
    write_inputs()
    result = {"load_start": os.getloadavg()[0]}
    for name in ("plain", "semantic"):
        result[name] = audit(name)
        print(f"audit {name}: {result[name]['wall_s']} s", flush=True)
        for cid, f in result[name]["findings"].items():
            print(f"  {cid:18} {f['status']:8} {f['headline'][:150]}", flush=True)
    result["independent"] = independent_metrics()
    result["load_end"] = os.getloadavg()[0]
    print("independent (bm25s + FAISS + RRF, pytrec_eval):", result["independent"])
    Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
