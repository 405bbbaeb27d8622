"""Three public collections new to this project, converted to BEIR folders for the optimizer and
draft benchmarks (bench_optimize.py --collections, bench_draft.py --collections).

- cisi: the CISI collection (1,460 library-science abstracts with titles and authors, 112
  queries; this copy of the qrels judges 50 of them, 2,492 binary judgements, 50 per query on average).
- cacm: the CACM collection (3,204 Communications of the ACM records, 3,203 with text: titles,
  most with an abstract; 64 queries of which 52 are judged, 796 judgements).
- xquad-de: the German part of XQuAD (240 Wikipedia paragraphs of 48 articles, 1,190
  questions; each question's paragraph is its one relevant passage).

The raw files are fetched public copies kept outside the repository (never committed):
``$RAGDIAG_BENCH_DATA`` (default ``../opt-data`` beside the worktree) holds
``Adrien2209+NLP-Project-TFIDF/CISI.{ALL,QRY,REL}``,
``charlesdlrsa+moteur_recherche_fri/cacm/{cacm.all,query.text,qrels.text}`` and
``google-deepmind+xquad/xquad.de.json``.

    python benchmarks/collections_data.py OUT   # writes OUT/<name>/{corpus.jsonl,queries.jsonl,qrels/test.tsv}
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("RAGDIAG_BENCH_DATA", HERE.parent.parent / "opt-data"))
NAMES = ("cisi", "cacm", "xquad-de")
LANGUAGE = {"cisi": "en", "cacm": "en", "xquad-de": "de"}


def _smart(path: Path) -> dict[str, dict[str, str]]:
    """SMART-format records (.I id, then .T/.A/.W/.B/... sections) as {id: {section: text}}."""
    out: dict[str, dict[str, str]] = {}
    cur: dict[str, list[str]] | None = None
    sec = ""
    for line in path.read_text(encoding="latin-1").splitlines():
        m = re.match(r"^\.([A-Z])(?:\s+(\d+))?\s*$", line)
        if m and m.group(1) == "I":
            cur = {}
            out[str(int(m.group(2)))] = cur  # type: ignore[assignment]
            sec = ""
        elif m:
            sec = m.group(1)
            cur.setdefault(sec, [])  # type: ignore[union-attr]
        elif cur is not None and sec:
            cur[sec].append(line)
    return {i: {k: " ".join(" ".join(v).split()) for k, v in rec.items()} for i, rec in out.items()}


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out.setdefault(str(int(parts[0])), {})[str(int(parts[1]))] = 1
    return out


def cisi() -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    root = DATA / "Adrien2209+NLP-Project-TFIDF"
    docs = _smart(root / "CISI.ALL")
    corpus = [{"_id": i, "title": d.get("T", ""), "text": d.get("W", "")} for i, d in docs.items()]
    queries = {i: q.get("W", "") for i, q in _smart(root / "CISI.QRY").items()}
    return corpus, queries, _qrels(root / "CISI.REL")


def cacm() -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    root = DATA / "charlesdlrsa+moteur_recherche_fri" / "cacm"
    docs = _smart(root / "cacm.all")
    corpus = [{"_id": i, "title": d.get("T", ""), "text": d.get("W", "") or d.get("T", "")}
              for i, d in docs.items()]
    queries = {i: q.get("W", "") for i, q in _smart(root / "query.text").items()}
    return corpus, queries, _qrels(root / "qrels.text")


def xquad_de() -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    data = json.loads((DATA / "google-deepmind+xquad" / "xquad.de.json").read_text(encoding="utf-8"))
    corpus, queries, qrels = [], {}, {}
    for art in data["data"]:
        title = art["title"].replace("_", " ")
        for n, para in enumerate(art["paragraphs"]):
            pid = f"{art['title']}-{n}"
            corpus.append({"_id": pid, "title": title, "text": para["context"]})
            for qa in para["qas"]:
                queries[qa["id"]] = qa["question"]
                qrels[qa["id"]] = {pid: 1}
    return corpus, queries, qrels


LOADERS = {"cisi": cisi, "cacm": cacm, "xquad-de": xquad_de}


def write_beir(name: str, out: Path) -> Path:
    """`name` as a BEIR folder under `out` (judged queries only); returns the folder."""
    corpus, queries, qrels = LOADERS[name]()
    folder = out / name
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    ids = {d["_id"] for d in corpus}
    judged = {q: {d: g for d, g in rel.items() if d in ids} for q, rel in qrels.items() if q in queries}
    judged = {q: rel for q, rel in judged.items() if rel and queries[q].strip()}
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for d in corpus:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f:
        for q in sorted(judged, key=lambda x: (len(x), x)):
            f.write(json.dumps({"_id": q, "text": queries[q]}, ensure_ascii=False) + "\n")
    with (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in sorted(judged, key=lambda x: (len(x), x)):
            for d, g in sorted(judged[q].items()):
                f.write(f"{q}\t{d}\t{g}\n")
    return folder


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else DATA / "beir")
    for n in NAMES:
        print(write_beir(n, target))
