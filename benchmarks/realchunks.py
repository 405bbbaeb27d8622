"""Chunk boundaries on real German text cut by a real chunker: does `chunk_boundaries` see
which chunks end mid-sentence?

The German articles the project grew out of (../shared/seeds, about 74 KB) are cut by
LangChain's `RecursiveCharacterTextSplitter` (the most common chunker in public RAG apps) in
two configurations, and by sentence packing (pysbd sentences joined up to the size). Each
chunk's end is then judged twice: by ragdiag's boundary classifier (`analyse_chunks`), and by
a reference that sees the whole document: pysbd's German sentence segmentation of the full
text, a chunk ending at a sentence end (or a paragraph break) is whole. Disagreements are
listed for reading by hand.

    python benchmarks/realchunks.py --chunker-python /path/to/venv/bin/python

The chunker runs in its own interpreter (a venv with `langchain-text-splitters` and `pysbd`;
neither is a ragdiag dependency for this). Writes results/realchunks.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
SEEDS = ROOT.parent / "shared" / "seeds"
if not SEEDS.is_dir():
    SEEDS = ROOT.parent.parent / "shared" / "seeds"

CHUNKER = r'''
import json, sys
import pysbd
from langchain_text_splitters import RecursiveCharacterTextSplitter
seg = pysbd.Segmenter(language="de", clean=False, char_span=True)
out = []
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    doc = path.rsplit("/", 1)[-1]
    # whole-document sentence ends (char offsets), and paragraph breaks
    ends = sorted({s.end for s in seg.segment(text)} | {i for i in range(len(text)) if text.startswith("\n\n", i)})
    configs = {
        "recursive_default_500": RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50,
                                                                add_start_index=True),
        "recursive_sentence_500": RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=0, add_start_index=True,
                                                                 separators=["\n\n", "\n", ". ", " ", ""]),
    }
    for name, splitter in configs.items():
        for i, d in enumerate(splitter.create_documents([text])):
            start = d.metadata["start_index"]
            out.append({"chunker": name, "doc": doc, "position": i, "start": start,
                        "end": start + len(d.page_content), "content": d.page_content})
    # sentence packing: whole sentences up to 500 characters
    chunk, cstart, pos = "", 0, 0
    for s in seg.segment(text):
        if chunk and len(chunk) + len(s.sent) > 500:
            out.append({"chunker": "sentence_pack_500", "doc": doc, "position": pos, "start": cstart,
                        "end": cstart + len(chunk), "content": chunk})
            chunk, pos = "", pos + 1
        if not chunk:
            cstart = s.start
        chunk += s.sent
    if chunk:
        out.append({"chunker": "sentence_pack_500", "doc": doc, "position": pos, "start": cstart,
                    "end": cstart + len(chunk), "content": chunk})
    out.append({"doc": doc, "sentence_ends": ends, "length": len(text)})
print(json.dumps(out))
'''


def reference_mid(chunk: dict, ends: list[int], text_len: int) -> bool:
    """True when the chunk's stripped end is not at a sentence end or paragraph break of the
    whole document (pysbd, German)."""
    end = chunk["end"]
    content = chunk["content"]
    end -= len(content) - len(content.rstrip())
    if end >= text_len - 1:
        return False
    return not any(abs(end - e) <= 2 or 0 <= e - end <= 3 for e in ends)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunker-python", required=True)
    ap.add_argument("--out", default=str(HERE / "results" / "realchunks.json"))
    args = ap.parse_args()
    seeds = sorted(p for p in SEEDS.glob("*.txt"))
    raw = json.loads(subprocess.run([args.chunker_python, "-c", CHUNKER, *map(str, seeds)], check=True,
                                    capture_output=True, text=True).stdout)
    docs = {r["doc"]: r for r in raw if "sentence_ends" in r}
    chunks = [r for r in raw if "chunker" in r]

    from ragdiag.chunks import ChunkFields, analyse_chunks

    fields = ChunkFields(key="key", content="content", doc_id="doc_id", parent_id=None, page=None,
                         position="position", section_title=None, level=None, chunk_levels=())
    results = {}
    for name in sorted({c["chunker"] for c in chunks}):
        mine = [c for c in chunks if c["chunker"] == name]
        records = [{"key": f"{c['doc']}#{c['position']}", "content": c["content"], "doc_id": c["doc"],
                    "position": c["position"]} for c in mine]
        # examples large enough to hold every flagged chunk: the analyser's own per-chunk verdict
        # (after the corrections it makes from each chunk's successor)
        report = analyse_chunks(records, fields=fields, examples=1_000_000)
        mid = {k for k, _ in report.examples.get("mid_sentence_end", ())}
        says = {r["key"]: "mid" if r["key"] in mid else "whole" for r in records}
        truth = {f"{c['doc']}#{c['position']}": reference_mid(c, docs[c["doc"]]["sentence_ends"],
                                                              docs[c["doc"]]["length"]) for c in mine}
        conf = Counter((says[k] == "mid", truth[k]) for k in truth)
        disagree = [(k, says[k], truth[k], next(c["content"] for c in mine if f"{c['doc']}#{c['position']}" == k)[-90:])
                    for k in truth if (says[k] == "mid") != truth[k]]
        results[name] = {
            "chunks": len(mine), "ragdiag_mid_sentence_end_share": report.mid_sentence_end_share,
            "reference_mid_share": sum(truth.values()) / len(truth),
            "both_mid": conf[(True, True)], "ragdiag_only": conf[(True, False)], "reference_only": conf[(False, True)],
            "both_whole": conf[(False, False)], "end_classes": dict(report.end_classes),
            "punctuation_moved": getattr(report, "punctuation_moved", None),
            # keys and classes only: the seeds' text stays out of committed files
            "disagreements": [(k, cls, "mid" if ref else "whole") for k, cls, ref, _tail in disagree],
        }
        print(f"{name}: {len(mine)} chunks, ragdiag mid-sentence end {report.mid_sentence_end_share:.1%}, "
              f"reference {results[name]['reference_mid_share']:.1%}; both mid {conf[(True, True)]}, "
              f"ragdiag only {conf[(True, False)]}, reference only {conf[(False, True)]}")
        for k, cls, ref, tail in disagree:
            print(f"   {k}: ragdiag {cls}, reference {'mid' if ref else 'whole'}: ...{tail!r}")
    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
