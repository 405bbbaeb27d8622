"""Labelled chunk sets for `bench_chunk_cuts.py`: real splitters cut known sources, every cut
point labelled from the source.

Sources: the sample corpus (sample_data/corpus/documents.jsonl, rendered to Markdown: title,
section headings, paragraphs, lists, tables; English and German documents as separate sets),
the Vaswani abstracts (../shared/data/vaswani, first 3,000; lower-case, unpunctuated), and
optionally public text given on the command line (a Project Gutenberg book, a German law text
in Markdown) that is read from where you put it and never committed.

Splitters (installed from PyPI in a separate venv, not ragdiag dependencies):
LangChain's ``RecursiveCharacterTextSplitter`` (langchain-text-splitters 1.1.3, overlap 10 %,
``add_start_index``), ``semantic_text_splitter.TextSplitter`` (0.33.1, ``chunk_indices``) and
a fixed-size character cutter (overlap 10 %, whitespace kept), each at 200, 500 and 1,000
characters. Each chunk's true offsets come from the splitter.

Labels, from the source at each chunk's true start and end offset (a document's own start
and end are never cuts): ``*_mid_word`` when the characters on both sides of the cut are
letters or digits; ``*_mid_sentence`` when the cut falls strictly inside a sentence unit. The
units: each heading, list item and table row line of its own; every paragraph (blank-line
separated, line breaks read as spaces) split into sentences by pysbd 0.3.4 (English or German
rules) -- an independent segmenter, not ragdiag's rules.

    /path/to/bench-venv/bin/python benchmarks/chunk_sets.py --out /tmp/chunksets \\
        [--text gutenberg-en=/tmp/pg3261.txt] [--text gg-de=/tmp/gg.md]

The venv: ``python -m venv V && V/bin/pip install langchain-text-splitters==1.1.3
semantic-text-splitter==0.33.1 pysbd==0.3.4``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VASWANI = ROOT.parent / "shared" / "data" / "vaswani" / "corpus" / "doc-text.trec"
SIZES = (200, 500, 1000)
_STRUCT = re.compile(r"\s*(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|\|)")


def render(doc: dict) -> str:
    """A sample-corpus document as Markdown (what a document chunker would see)."""
    parts = [f"# {doc.get('title') or doc['doc_id']}"]
    for s in doc.get("sections", []):
        if s.get("title"):
            parts.append(f"## {s['title']}")
        for b in s.get("blocks", []):
            parts.append(b["text"].strip())
    return "\n\n".join(parts) + "\n"


def sample_sources() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {"sample-en": {}, "sample-de": {}}
    for line in (ROOT / "sample_data" / "corpus" / "documents.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        out["sample-de" if d.get("language") == "de" else "sample-en"][d["doc_id"]] = render(d)
    return out


def vaswani_sources(path: Path = VASWANI, limit: int = 3000) -> dict[str, str]:
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    docs = re.findall(r"<DOCNO>(\d+)</DOCNO>\n(.*?)</DOC>", text, re.S)
    return {f"V{n}": body for n, body in docs[:limit]}


def units(text: str, lang: str) -> list[tuple[int, int]]:
    """Sentence and structure spans of `text` (see the module docstring)."""
    import pysbd

    seg = pysbd.Segmenter(language=lang, clean=False, char_span=True)
    spans: list[tuple[int, int]] = []
    for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text):  # paragraphs: blank-line separated
        para, base = m.group(0), m.start()
        lines = para.split("\n")
        if all(_STRUCT.match(ln) or not ln.strip() for ln in lines) or len(lines) == 1 and _STRUCT.match(para):
            off = 0
            for ln in lines:
                if ln.strip():
                    spans.append((base + off + (len(ln) - len(ln.lstrip())), base + off + len(ln.rstrip())))
                off += len(ln) + 1
            continue
        flat = para.replace("\n", " ")
        for s in seg.segment(flat):
            sent = s.sent
            a = base + s.start + (len(sent) - len(sent.lstrip()))
            b = base + s.start + len(sent.rstrip())
            if b > a:
                spans.append((a, b))
    return spans


def label(text: str, spans: list[tuple[int, int]], p: int) -> tuple[bool, bool]:
    """(mid-sentence, mid-word) at cut offset p of `text`."""
    if p <= 0 or p >= len(text.rstrip()):
        return False, False
    word = text[p - 1].isalnum() and text[p].isalnum()
    import bisect

    i = bisect.bisect_right(spans, (p, 10**12)) - 1
    inside = i >= 0 and spans[i][0] < p < spans[i][1]
    return inside, word


def cut(name: str, size: int, text: str) -> list[tuple[int, int, str]]:
    """(start, end, chunk text) per chunk, offsets into `text`."""
    if name == "lc":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        sp = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=size // 10, add_start_index=True)
        out = []
        for d in sp.create_documents([text]):
            s = d.metadata["start_index"]
            out.append((s, s + len(d.page_content), d.page_content))
        return out
    if name == "sts":
        from semantic_text_splitter import TextSplitter

        return [(s, s + len(c), c) for s, c in TextSplitter(size).chunk_indices(text)]
    step = size - size // 10
    return [(s, min(len(text), s + size), text[s:s + size]) for s in range(0, len(text), step)
            if text[s:s + size].strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--text", action="append", default=[], metavar="NAME-LANG=PATH",
                    help="public text to cut as one more source (name ends with -en or -de)")
    ap.add_argument("--vaswani", type=Path, default=VASWANI, help="doc-text.trec of the Vaswani collection")
    args = ap.parse_args()
    out = Path(args.out)
    sources = sample_sources()
    v = vaswani_sources(args.vaswani)
    if v:
        sources["vaswani-en"] = v
    for item in args.text:
        name, _, path = item.partition("=")
        sources[name] = {Path(path).stem: Path(path).read_text(encoding="utf-8", errors="replace")}
    for src_name, docs in sources.items():
        lang = src_name.rsplit("-", 1)[-1]
        spans = {d: units(t, lang) for d, t in docs.items()}
        for splitter in ("lc", "sts", "fixed"):
            for size in SIZES:
                set_dir = out / f"{src_name}.{splitter}{size}"
                set_dir.mkdir(parents=True, exist_ok=True)
                n = 0
                with (set_dir / "chunks.jsonl").open("w", encoding="utf-8") as fc, \
                        (set_dir / "labels.jsonl").open("w", encoding="utf-8") as fl:
                    for d, t in docs.items():
                        for i, (s, e, c) in enumerate(cut(splitter, size, t)):
                            key = f"{d}#{i}"
                            ss, sw = label(t, spans[d], s)
                            es, ew = label(t, spans[d], e)
                            fc.write(json.dumps({"id": key, "content": c, "sourcefile": d, "chunk_index": i},
                                                ensure_ascii=False) + "\n")
                            fl.write(json.dumps({"key": key, "start": s, "end": e, "start_mid_sentence": ss,
                                                 "start_mid_word": sw, "end_mid_sentence": es,
                                                 "end_mid_word": ew}) + "\n")
                            n += 1
                with (set_dir / "sources.jsonl").open("w", encoding="utf-8") as fs:
                    for d, t in docs.items():
                        fs.write(json.dumps({"id": d, "text": t}, ensure_ascii=False) + "\n")
                print(f"{set_dir.name}: {n} chunks")


if __name__ == "__main__":
    main()
