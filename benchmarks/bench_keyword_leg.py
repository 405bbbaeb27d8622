"""Is the local target's keyword leg what it imitates? Keyword-only nDCG@10 of the local leg against
bm25s built the same way and built the way the strongest peer builds it.

On cacm the independent bm25s + vector fusion (bench_baseline.TunedFusion) beat what the
optimizer hands over by 0.015-0.027. This measures where the keyword half of that gap comes
from, on every judged query of a collection (benchmarks/collections_data.py), keyword leg only:

- the local leg as an audit runs it: BM25 (k1 1.2, b 0.75: Azure's defaults) per searchable
  field (title, content), each field analysed like `en.lucene` / `de.lucene`, field scores
  summed (what Lucene's query over several fields does: one clause per field, scores added,
  each field with its own length norm and idf);
- the same model rebuilt with bm25s directly (per-field BM25, summed): if the local leg does
  what it says, the two agree to the last digit;
- the peer's model: title and content concatenated into one field, bm25s defaults (k1 1.5);
- one change at a time between the two (k1, one field), the Porter stemmer Lucene's
  EnglishAnalyzer uses instead of Snowball's Porter2, and what a scoring profile's text
  weights (an index setting the optimizer can choose but not create) would do.

    python benchmarks/bench_keyword_leg.py [cacm cisi xquad-de]   # -> results/keyword-leg.json
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _top(scores, keys: list[str], n: int = 50) -> list[str]:
    import numpy as np

    order = np.lexsort((np.arange(len(scores)), -scores))[:n]
    return [keys[i] for i in order if scores[i] > 0]


def measure(name: str) -> dict[str, float]:
    import bm25s
    import numpy as np
    import Stemmer
    import yaml
    from bench_baseline import system

    from ragdiag.metrics import evaluate
    from ragdiag.targets.local.analyzers import analysis_for
    from ragdiag.targets.local.keyword import KeywordField

    folder = system(name)
    lang = "de" if name == "xquad-de" else "en"
    recs = [json.loads(line) for line in (folder / "records.jsonl").open(encoding="utf-8")]
    keys = [str(r["key"]) for r in recs]
    cases = yaml.safe_load((folder / "goldset.yaml").read_text(encoding="utf-8"))
    qrels = {c["id"]: {(s["key"] if isinstance(s, dict) else s): 1 for s in c["expect_sources"]} for c in cases}
    analysis = analysis_for(f"{lang}.lucene")

    def ndcg(rank: Callable[[str], list[str]]) -> float:
        run = {c["id"]: rank(c["question"]) for c in cases}
        return round(float(evaluate(run, qrels).aggregate["ndcg@10"]), 4)

    def local(fields: tuple[str, ...], weights: dict[str, float] | None = None, stemmer: str | None = None):
        a = dataclasses.replace(analysis, stemmer=stemmer) if stemmer else analysis
        legs = {f: KeywordField.build([str(r.get(f) or "") for r in recs], a) for f in fields}

        def rank(q: str) -> list[str]:
            total = np.zeros(len(recs), dtype=np.float32)
            for f, leg in legs.items():
                s = leg.scores(q)
                if s is not None:
                    total += s * (weights or {}).get(f, 1.0)
            return _top(total, keys)
        return rank

    stem = Stemmer.Stemmer("german" if lang == "de" else "english")

    def tok(texts: list[str]):
        return bm25s.tokenize(texts, stopwords=lang, stemmer=stem, show_progress=False)

    def words(q: str) -> list[str]:
        t = tok([q])
        inv = {i: w for w, i in t.vocab.items()}
        return [inv[i] for i in t.ids[0]]

    def peer(fields: tuple[str, ...], k1: float, concatenated: bool):
        texts = ([" ".join(str(r.get(f) or "") for f in fields) for r in recs] if concatenated
                 else None)
        models = []
        for texts_of in ([texts] if concatenated else [[str(r.get(f) or "") for r in recs] for f in fields]):
            m = bm25s.BM25(k1=k1, b=0.75, method="lucene")
            m.index(tok(texts_of), show_progress=False)
            models.append(m)

        def rank(q: str) -> list[str]:
            w = words(q)
            return _top(sum(np.asarray(m.get_scores(w)) for m in models), keys)
        return rank

    both = ("title", "content")
    rows = {
        "local leg (per-field BM25 summed, k1 1.2, Snowball stems)": local(both),
        "bm25s per-field, summed, k1 1.2 (the same model, other code)": peer(both, 1.2, False),
        "bm25s per-field, summed, k1 1.5": peer(both, 1.5, False),
        "bm25s one field title + content, k1 1.2": peer(both, 1.2, True),
        "bm25s one field title + content, k1 1.5 (the peer)": peer(both, 1.5, True),
        "local leg, content only": local(("content",)),
        "local leg, scoring profile title weight 0.5": local(both, {"title": 0.5}),
        "local leg, scoring profile title weight 2": local(both, {"title": 2.0}),
    }
    if lang == "en":
        rows["local leg, Porter stemmer (Lucene's EnglishAnalyzer)"] = local(both, stemmer="porter")
    return {label: ndcg(rank) for label, rank in rows.items()}


def main() -> None:
    names = sys.argv[1:] or ["cacm", "cisi", "xquad-de"]
    out = {}
    for name in names:
        out[name] = measure(name)
        print(name)
        for label, v in out[name].items():
            print(f"  {v:.4f}  {label}")
    path = HERE / "results" / "keyword-leg.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"written {path}")


if __name__ == "__main__":
    main()
