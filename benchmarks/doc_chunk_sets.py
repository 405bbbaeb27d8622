"""Labelled chunk sets from public documentation sites in Markdown, for `bench_chunk_cuts.py`.

Each Markdown file of a documentation folder is one source document; real splitters cut it and
every cut point is labelled from the source by an independent reading of its structure:
markdown-it-py (CommonMark + tables) finds the blocks (fenced and indented code, HTML blocks,
tables, lists, headings, paragraphs), the extension syntaxes of the sites read for this run are
recognised line by line (mkdocs/pymdownx admonitions ``!!!`` ``???`` ``///``, content tabs
``===``, includes ``{* ... *}`` and ``--8<--``, Hugo shortcodes ``{{% ... %}}``, HTML comment
lines, link reference definitions, YAML front matter), and each paragraph is split into
sentences by pysbd 0.3.4 (an emoji or closing markup after a sentence end belongs to that end).

Label classes of a cut (the whitespace between the last character before and the first after):
``clean_block`` (between blocks or structure lines), ``clean_sentence`` (between two sentences of a
paragraph), ``mid_sentence`` (strictly inside a sentence, a heading or a list item's text),
``in_code`` (inside a code block, an HTML block, front matter, or inside an include/markup line)
and ``in_table`` (between or inside table rows). The booleans ``end_mid_sentence`` ...
``start_mid_word`` are derived from them (mid-word: letters or digits on both sides).

Splitters (in their own venv, not ragdiag dependencies): LangChain's
``RecursiveCharacterTextSplitter`` at 500 and 1,000 characters (default separators, overlap 10 %),
its Markdown preset (``from_language(Language.MARKDOWN)``, 1,000) and semantic-text-splitter's
``MarkdownSplitter`` (1,000); LangChain at 200 characters and a fixed-size character window (500,
overlap 10 %, whitespace kept) as controls with many true cuts. ragdiag's own chunker: ``--splitters ragdiag`` run with ragdiag's venv (pysbd and markdown-it-py
are ragdiag dependencies).

    V/bin/python benchmarks/doc_chunk_sets.py --out /tmp/docsets \\
        --docs fastapi-de=/path/fastapi/docs/de/docs --docs material-en=/path/mkdocs-material/docs

The venv: ``python -m venv V && V/bin/pip install langchain-text-splitters==1.1.3
semantic-text-splitter==0.33.1 pysbd==0.3.4 markdown-it-py``.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import unicodedata
from pathlib import Path

CLASSES = ("clean_block", "clean_sentence", "mid_sentence", "in_code", "in_table")
# extension lines of the sites read for this run: each is a unit of its own (a cut inside it cuts it)
_MARKER = re.compile(r"\s*(?:///|!!!|\?\?\?\+?|===\+?\s+\"|:::|\{\{[<%]|\{%|\{\*|\{!|--8<--|<!--.*-->\s*$|"
                     r"\[[^\]\n]+\]:\s+\S)")
#: bodies indented by four spaces: admonitions, tabs, footnotes, definition-list definitions (":   ")
_CONTAINER = re.compile(r"(\s*)(?:!!!|\?\?\?\+?|===\+?|\[\^[^\]]+\]:|:(?=\s{2,}\S))(?:\s|$)")
_FENCE = re.compile(r"\s*(`{3,}|~{3,})")


def _closing_tail(s: str) -> int:
    """Length of emoji, closing markup and spaces at the start of `s` (they end the sentence before)."""
    i = 0
    while i < len(s):
        ch = s[i]
        cat = unicodedata.category(ch)
        if ch in " \t*_~`)]\"'”’»" or cat in ("So", "Sk", "Mn", "Cf") or ch == "\ufe0f":
            i += 1
        elif ch == ":" and re.match(r":[a-z0-9_+-]+:", s[i:]):
            i += re.match(r":[a-z0-9_+-]+:", s[i:]).end()
        elif ch == "<" and re.match(r"</?\w[^>]*>", s[i:]):
            i += re.match(r"</?\w[^>]*>", s[i:]).end()
        else:
            break
    return i


class Labeller:
    """The structure and sentences of one Markdown source, and the class of a cut in it."""

    def __init__(self, text: str, lang: str) -> None:
        import pysbd
        from markdown_it import MarkdownIt

        self.text = text
        lines = text.split("\n")
        self.starts = [0]
        for ln in lines[:-1]:
            self.starts.append(self.starts[-1] + len(ln) + 1)
        n = len(lines)
        kind = ["blank" if not ln.strip() else "" for ln in lines]
        cid = [-1] * n  # which code block a line belongs to
        # front matter
        if lines and lines[0].strip() == "---":
            for j in range(1, n):
                if lines[j].strip() in ("---", "..."):
                    for k in range(j + 1):
                        kind[k], cid[k] = "code", -2
                    break
        # dedent container bodies (admonitions, tabs) so markdown-it reads them as Markdown
        parse_lines = list(lines)
        stack: list[tuple[int, int]] = []
        in_fence = None
        for j, ln in enumerate(lines):
            ind = len(ln) - len(ln.lstrip(" "))
            if ln.strip():
                # a body ends at a line indented no deeper than its marker (a footnote marker
                # indented by two spaces has its body at four)
                while stack and ind <= stack[-1][0]:
                    stack.pop()
            cut = min(ind, stack[-1][1]) if stack and ln.strip() else 0
            parse_lines[j] = ln[cut:]
            f = _FENCE.match(ln)
            if f:
                in_fence = None if in_fence and f.group(1)[0] == in_fence else in_fence or f.group(1)[0]
            if kind[j] == "" and in_fence is None and _MARKER.match(ln):
                kind[j] = "marker"
                parse_lines[j] = ""
            m = _CONTAINER.match(ln) if in_fence is None else None
            while m:
                stack.append((len(m.group(1)), len(m.group(1)) + 4))  # (marker indent, body indent)
                # a container opened on the same line (":   !!! quote"): its body is deeper still
                rest = ln[m.end():]
                m2 = _CONTAINER.match(rest) if rest.strip() else None
                m = None
                if m2:
                    off = len(ln) - len(rest) + len(m2.group(1))
                    stack.append((off, off + 4))
        for j in range(n):
            if kind[j] == "code":
                parse_lines[j] = ""
        tokens = MarkdownIt("commonmark").enable("table").parse("\n".join(parse_lines))
        self.sentences: list[tuple[int, int]] = []   # char spans of sentences and unit lines
        seg = pysbd.Segmenter(language=lang, clean=False, char_span=True)
        for i, t in enumerate(tokens):
            if not t.map:
                continue
            a, b = t.map
            if t.type in ("fence", "code_block", "html_block"):
                for k in range(a, b):
                    kind[k], cid[k] = "code", i
            elif t.type == "table_open":
                for k in range(a, b):
                    if kind[k] != "blank":
                        kind[k] = "table"
            elif t.type == "heading_open":
                for k in range(a, b):
                    kind[k] = "heading"
                    self._unit(k)
            elif t.type == "paragraph_open" and not any(kind[k] in ("table", "code") for k in range(a, b)):
                for k in range(a, b):
                    if kind[k] == "":
                        kind[k] = f"p{i}"
                self._paragraph([k for k in range(a, b) if kind[k] == f"p{i}"], seg)
        for j in range(n):
            if kind[j] == "marker":
                self._unit(j)
            elif kind[j] == "":
                kind[j] = "other"
                self._unit(j)
        self.kind, self.cid = kind, cid
        self.sentences.sort()

    def _unit(self, j: int) -> None:
        ln = self.text[self.starts[j]:].split("\n", 1)[0]
        a = self.starts[j] + len(ln) - len(ln.lstrip())
        b = self.starts[j] + len(ln.rstrip())
        if b > a:
            self.sentences.append((a, b))

    def _paragraph(self, rows: list[int], seg) -> None:
        if not rows:
            return
        base = self.starts[rows[0]]
        end = self.starts[rows[-1]] + len(self.text[self.starts[rows[-1]]:].split("\n", 1)[0])
        raw = self.text[base:end]
        # list markers and quote markers are no text; line breaks read as spaces (same length)
        flat = re.sub(r"(?m)^(\s*(?:>\s*)*(?:[-*+]|\d{1,3}[.)])?\s+)", lambda m: " " * len(m.group(0)), raw)
        flat = flat.replace("\n", " ")
        for s in seg.segment(flat):
            sent = s.sent
            a = base + s.start + (len(sent) - len(sent.lstrip()))
            b = base + s.start + len(sent.rstrip())
            a += _closing_tail(self.text[a:b])  # an emoji after the last full stop ends that sentence
            if b > a:
                self.sentences.append((a, b))

    def line_of(self, p: int) -> int:
        return bisect.bisect_right(self.starts, p) - 1

    def classify(self, p: int) -> str | None:
        """The class of a cut at offset `p` (None: the document's own start or end)."""
        t = self.text
        a = len(t[:p].rstrip())
        b = len(t) - len(t[p:].lstrip())
        if a == 0 or b >= len(t):
            return None
        la, lb = self.line_of(a - 1), self.line_of(b)
        ka, kb = self.kind[la], self.kind[lb]
        if la == lb:  # inside one line
            if ka in ("code", "marker"):
                return "in_code"
            if ka == "table":
                return "in_table"
            return self._sentence(a, b)
        # across a line break: inside a code block, or between blocks / lines
        if ka == "code" and kb == "code" and self.cid[la] == self.cid[lb]:
            return "in_code"
        if ka == "table" and kb == "table" and all(self.kind[k] == "table" for k in range(la, lb + 1)):
            return "in_table"
        if ka == kb and ka.startswith("p"):
            return self._sentence(a, b)
        return "clean_block"

    def _sentence(self, a: int, b: int) -> str:
        i = bisect.bisect_right(self.sentences, (a, 10**12)) - 1
        if i >= 0 and self.sentences[i][0] < a < self.sentences[i][1]:
            return "mid_sentence"
        j = bisect.bisect_right(self.sentences, (b, 10**12)) - 1
        if j >= 0 and self.sentences[j][0] < b < self.sentences[j][1]:
            return "mid_sentence"
        return "clean_sentence"


def cut(name: str, text: str) -> list[tuple[int, int, str]]:
    """(start, end, chunk text) per chunk, offsets into `text`."""
    if name.startswith("lc"):
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        size = int(re.sub(r"\D", "", name))
        if name.startswith("lcmd"):
            sp = RecursiveCharacterTextSplitter.from_language(Language.MARKDOWN, chunk_size=size,
                                                              chunk_overlap=size // 10, add_start_index=True)
        else:
            sp = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=size // 10, add_start_index=True)
        out = []
        for d in sp.create_documents([text]):
            s = d.metadata["start_index"]
            out.append((s, s + len(d.page_content), d.page_content))
        return out
    if name.startswith("stsmd"):
        from semantic_text_splitter import MarkdownSplitter

        size = int(re.sub(r"\D", "", name))
        return [(s, s + len(c), c) for s, c in MarkdownSplitter(size).chunk_indices(text)]
    if name == "ragdiag":  # ragdiag's own document chunker (ragdiag init --documents), in ragdiag's venv
        from ragdiag.chunks.chunker import chunk_text

        return [(p.start, p.end, text[p.start:p.end]) for p in chunk_text(text)]
    if name.startswith("fixed"):  # a fixed-size character window, overlap 10 %: the control with many true cuts
        size = int(re.sub(r"\D", "", name))
        step = size - size // 10
        return [(s, min(len(text), s + size), text[s:s + size]) for s in range(0, len(text), step)
                if text[s:s + size].strip()]
    raise ValueError(name)


SPLITTERS = ("lc200", "lc500", "lc1000", "lcmd1000", "stsmd1000", "fixed500")


def label_chunk(lab: Labeller, s: int, e: int) -> dict:
    out = {}
    for side, p in (("start", s), ("end", e)):
        cls = lab.classify(p)
        t = lab.text
        word = 0 < p < len(t) and t[p - 1].isalnum() and t[p].isalnum()
        out[f"{side}_class"] = cls
        out[f"{side}_mid_sentence"] = cls == "mid_sentence"
        out[f"{side}_mid_word"] = word
        out[f"{side}_in_code"] = cls == "in_code"
    return out


def write_set(set_dir: Path, docs: dict[str, str], pieces: dict[str, list[tuple[int, int, str]]],
              labellers: dict[str, Labeller]) -> int:
    set_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    with (set_dir / "chunks.jsonl").open("w", encoding="utf-8") as fc, \
            (set_dir / "labels.jsonl").open("w", encoding="utf-8") as fl:
        for d, cuts in pieces.items():
            for i, (s, e, c) in enumerate(cuts):
                key = f"{d}#{i}"
                fc.write(json.dumps({"id": key, "content": c, "sourcefile": d, "chunk_index": i},
                                    ensure_ascii=False) + "\n")
                fl.write(json.dumps({"key": key, "start": s, "end": e, **label_chunk(labellers[d], s, e)}) + "\n")
                n += 1
    with (set_dir / "sources.jsonl").open("w", encoding="utf-8") as fs:
        for d, t in docs.items():
            fs.write(json.dumps({"id": d, "text": t}, ensure_ascii=False) + "\n")
    return n


def read_docs(folder: Path, limit_chars: int) -> dict[str, str]:
    docs, total = {}, 0
    for p in sorted(folder.rglob("*.md")):
        t = p.read_text(encoding="utf-8", errors="replace")
        if not t.strip():
            continue
        docs[p.relative_to(folder).as_posix()] = t
        total += len(t)
        if total >= limit_chars:
            break
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--docs", action="append", default=[], metavar="NAME-LANG=FOLDER")
    ap.add_argument("--limit-chars", type=int, default=1_200_000)
    ap.add_argument("--splitters", default=",".join(SPLITTERS),
                    help="comma-separated; 'ragdiag' (ragdiag's own chunker) runs in ragdiag's venv")
    args = ap.parse_args()
    for item in args.docs:
        name, _, folder = item.partition("=")
        lang = name.rsplit("-", 1)[-1]
        docs = read_docs(Path(folder), args.limit_chars)
        labellers = {d: Labeller(t, lang) for d, t in docs.items()}
        (args.out / f"{name}.source").mkdir(parents=True, exist_ok=True)
        for splitter in args.splitters.split(","):
            pieces = {d: cut(splitter, t) for d, t in docs.items()}
            n = write_set(args.out / f"{name}.{splitter}", docs, pieces, labellers)
            print(f"{name}.{splitter}: {n} chunks from {len(docs)} documents")
        # the structure, for reading by hand and for ragdiag's own chunker (bench_chunk_cuts --ragdiag)
        with (args.out / f"{name}.source" / "documents.jsonl").open("w", encoding="utf-8") as fs:
            for d, t in docs.items():
                fs.write(json.dumps({"id": d, "text": t, "kinds": labellers[d].kind}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
