"""ragdiag's document chunker (``ragdiag init --documents``): every chunk is an exact slice of the
extracted text, cut only at block boundaries and sentence ends.

`extract_file(path)` reads a file into one text (`Extracted`): Markdown and plain text as they
are, HTML as its blocks (headings ``#``, paragraphs, lists ``-``, tables ``|``, ``pre`` as fenced
code) joined by blank lines, PDF as its pages' text joined by blank lines (with the offset where
each page starts). `chunk_text(text)` finds the blocks of that text (`blocks`) and packs them, in
order, into chunks of about `target_words` words:

- a fenced code block, an include or other markup line (`ragdiag.chunks.structure`), a table and a
  list item are never cut (an oversized one stays whole);
- a heading and an admonition opener (``!!! note "Title"``, ``/// tip | Title``, ``.. note::``,
  ``:::note``, ``{{% note %}}``) are glued to the block after them: a title never ends a chunk;
- a heading starts a new chunk (sections are never crossed);
- a paragraph longer than the target is cut at sentence ends (`ragdiag.chunks.sentences`), never
  inside a sentence, a word or an inline code span.

A chunk is ``text[start:end]``, so `ragdiag chunks --source` locates every chunk, and nothing is
rewritten (no re-spacing, no sentence splitter that changes characters).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.chunks.sentences import is_boundary
from ragdiag.chunks.structure import fence_state, is_fence, is_markup_line, is_opener

TARGET_WORDS = 90
_HEADING = re.compile(r"#{1,6}\s+\S")
_LIST = re.compile(r"[ \t]*(?:[-*+•]|\d{1,3}[.)]|[a-z][.)])\s+\S")
_UNDERLINE = re.compile(r"(=+|-+|~+|\^+|\*+|#+)\s*$")
_ANCHOR = re.compile(r"\s*\{\s*#[^}]*\}\s*$")
_SENT_END = re.compile(r"[.!?…][\"'”’»)\]*_]*(?=\s)")
#: openers whose body runs to a closing marker line (the rest have an indented or one-block body)
_CLOSERS = (("///", re.compile(r"///\s*$")), (":::", re.compile(r":{3,}\s*$")),
            ("{{%", re.compile(r"\{\{%\s*/")), ("{{<", re.compile(r"\{\{<\s*/")))


@dataclass(frozen=True)
class Extracted:
    """The text of one file as the chunker reads it; `pages`: (offset, page number) where each page
    starts (PDF only; None where the source has no pages)."""

    title: str
    text: str
    pages: tuple[tuple[int, int], ...] | None = None
    #: (offset, title) where an outline section starts (PDF outlines; headings are found in the text)
    sections: tuple[tuple[int, str], ...] = ()


@dataclass
class Block:
    start: int
    end: int
    kind: str        # paragraph | list | code | table | markup | heading | opener
    words: int = 0
    glue: bool = False  # joined to the next block (a heading, an admonition title)
    items: list[tuple[int, int]] = field(default_factory=list)  # list items (cut points)


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    pos = 0
    for line in text.split("\n"):
        yield pos, pos + len(line), line
        pos += len(line) + 1


def blocks(text: str) -> list[Block]:
    """The blocks of `text` in order (see the module docstring)."""
    lines = list(_lines(text))
    out: list[Block] = []
    i, n = 0, len(lines)
    while i < n:
        s, e, line = lines[i]
        st = line.strip()
        if not st:
            i += 1
            continue
        if i == 0 and st in ("---", "+++"):  # front matter
            j = next((k for k in range(1, n) if lines[k][2].strip() == st), None)
            if j is not None:
                out.append(Block(s, lines[j][1], "markup"))
                i = j + 1
                continue
        f = is_fence(line)
        if f is not None:
            state = fence_state([(0, *f)], None)
            j = i + 1
            while j < n and state is not None:
                g = is_fence(lines[j][2])
                if g is not None:
                    state = fence_state([(0, *g)], state)
                j += 1
            out.append(Block(s, lines[j - 1][1], "code"))
            i = j
            continue
        if _HEADING.match(st) or (i + 1 < n and lines[i + 1][2].strip() and _UNDERLINE.fullmatch(lines[i + 1][2].strip())
                                  and not _LIST.match(line) and len(lines[i + 1][2].strip()) >= 3
                                  and not st.startswith("|")):
            end = lines[i][1] if _HEADING.match(st) else lines[i + 1][1]
            out.append(Block(s, end, "heading", len(st.split()), glue=True))
            i += 1 if _HEADING.match(st) else 2
            continue
        if is_opener(st):
            out.append(Block(s, e, "opener", len(st.split()), glue=True))
            i += 1
            continue
        if st.startswith("|"):
            j = i
            while j + 1 < n and lines[j + 1][2].strip().startswith("|"):
                j += 1
            out.append(Block(s, lines[j][1], "table", sum(len(lines[k][2].split()) for k in range(i, j + 1))))
            i = j + 1
            continue
        if is_markup_line(st):
            out.append(Block(s, e, "markup", len(st.split())))
            i += 1
            continue
        if _LIST.match(line):
            j, items, start_item = i, [], s
            while j + 1 < n:
                nxt = lines[j + 1][2]
                if not nxt.strip():
                    # a blank line ends the list unless an indented continuation or another item follows
                    if j + 2 < n and (lines[j + 2][2].startswith((" ", "\t")) or _LIST.match(lines[j + 2][2])) \
                            and not is_fence(lines[j + 2][2]):
                        j += 1
                        continue
                    break
                if _LIST.match(nxt) and len(nxt) - len(nxt.lstrip()) <= len(line) - len(line.lstrip()):
                    items.append((start_item, lines[j][1]))
                    start_item = lines[j + 1][0]
                elif not nxt.startswith((" ", "\t")) and (is_fence(nxt) or is_markup_line(nxt) or _HEADING.match(nxt)):
                    break
                if is_fence(nxt):
                    break  # a fenced block inside an item: a block of its own (never cut)
                j += 1
            items.append((start_item, lines[j][1]))
            out.append(Block(s, lines[j][1], "list", len(text[s:lines[j][1]].split()), items=items))
            i = j + 1
            continue
        j = i
        while j + 1 < n:
            nxt = lines[j + 1][2]
            if not nxt.strip() or is_fence(nxt) or _HEADING.match(nxt.strip()) or is_markup_line(nxt) \
                    or is_opener(nxt) or nxt.strip().startswith("|") or (_LIST.match(nxt) and not nxt.startswith("    ")):
                break
            j += 1
        out.append(Block(s, lines[j][1], "paragraph", len(text[s:lines[j][1]].split())))
        i = j + 1
    return out


def _sentence_cuts(text: str, start: int, end: int, lang: str) -> list[int]:
    """Offsets inside text[start:end] where a sentence ends (a cut there is clean)."""
    cuts = []
    for m in _SENT_END.finditer(text, start, end):
        p = m.end()
        if p >= end:
            continue
        if text[max(start, p - 200):p].count("`") % 2:
            continue  # inside an inline code span
        if is_boundary(text[max(0, p - 300):p], text[p:p + 300], lang):
            cuts.append(p)
    return cuts


def _heading_text(text: str, b: Block) -> str:
    first = text[b.start:b.end].split("\n", 1)[0].strip()
    return _ANCHOR.sub("", first.lstrip("#").strip()).strip()


@dataclass(frozen=True)
class Piece:
    """One chunk: ``text[start:end]``, its section (the nearest heading before it) and whether it
    holds a table (always whole)."""

    start: int
    end: int
    section: str
    is_table: bool


def chunk_text(text: str, *, target_words: int = TARGET_WORDS, lang: str = "en") -> list[Piece]:
    """The chunks of `text` (see the module docstring)."""
    if target_words < 1:
        from ragdiag.errors import InputDataError

        raise InputDataError(f"target_words must be >= 1, got {target_words}")
    units: list[tuple[int, int, int, str, bool]] = []  # start, end, words, kind, glue
    section_at: list[tuple[int, str]] = []
    for b in blocks(text):
        if b.kind == "heading":
            section_at.append((b.start, _heading_text(text, b)))
        if b.kind == "paragraph" and b.words > target_words:
            prev = b.start
            for p in _sentence_cuts(text, b.start, b.end, lang):
                units.append((prev, p, len(text[prev:p].split()), "sentence", False))
                prev = p
            units.append((prev, b.end, len(text[prev:b.end].split()), "sentence", False))
        elif b.kind == "list" and b.words > target_words and len(b.items) > 1:
            for a, z in b.items:
                units.append((a, z, len(text[a:z].split()), "item", False))
        else:
            units.append((b.start, b.end, b.words, b.kind, b.glue))
    pieces: list[Piece] = []
    cur: list[tuple[int, int, int, str, bool]] = []

    def emit() -> None:
        if cur:
            start, end = cur[0][0], cur[-1][1]
            # leading whitespace of a sentence unit is not part of the chunk
            while start < end and text[start].isspace():
                start += 1
            sec = next((t for at, t in reversed(section_at) if at <= start), "")
            pieces.append(Piece(start, end, sec, any(u[3] == "table" for u in cur)))
            cur.clear()

    for u in units:
        words_now = sum(x[2] for x in cur)
        glued = bool(cur) and cur[-1][4]
        if cur and not glued and (u[3] == "heading" or words_now + u[2] > target_words):
            emit()
        cur.append(u)
    emit()
    return pieces


def page_of(pages: tuple[tuple[int, int], ...] | None, offset: int) -> int | None:
    """The page an offset of the extracted text lies on (None without pages)."""
    if not pages:
        return None
    page = pages[0][1]
    for at, p in pages:
        if at > offset:
            break
        page = p
    return page


# ---- extraction ---------------------------------------------------------------------------------
def extract_file(path: Path) -> Extracted:
    """The text of one Markdown, text, HTML or PDF file (see the module docstring)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return _extract_pdf(path)
    raw = path.read_text(encoding="utf-8", errors="replace")
    if suffix in (".html", ".htm"):
        return _extract_html(raw)
    title = ""
    if suffix in (".md", ".markdown"):
        h1 = [ln for ln in raw.split("\n") if ln.startswith("# ")]
        if len(h1) == 1:
            title = _ANCHOR.sub("", h1[0][2:]).strip()
    return Extracted(title=title, text=raw)


_HTML_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "table", "pre", "blockquote", "dl")


def _extract_html(raw: str) -> Extracted:
    from bs4 import BeautifulSoup  # ragdiag[local]

    soup = BeautifulSoup(raw, "html.parser")
    for tag in soup(["script", "style", "nav", "header", "footer", "noscript", "template"]):
        tag.decompose()
    head_title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    parts, h1 = [], []
    root = soup.body or soup
    for el in root.find_all(_HTML_BLOCKS):
        if any(p.name in _HTML_BLOCKS for p in el.parents):
            continue
        name = el.name
        if name[0] == "h" and name[1:].isdigit():
            t = " ".join(el.get_text(" ").split())
            if name == "h1":
                h1.append(t)
            parts.append("#" * int(name[1]) + " " + t)
        elif name in ("ul", "ol", "dl"):
            items = [" ".join(li.get_text(" ").split()) for li in el.find_all(["li", "dt", "dd"])]
            parts.append("\n".join(f"- {x}" for x in items if x))
        elif name == "table":
            rows = []
            for tr in el.find_all("tr"):
                rows.append("| " + " | ".join(" ".join(c.get_text(" ").split()) for c in tr.find_all(["th", "td"])) + " |")
            parts.append("\n".join(rows))
        elif name == "pre":
            parts.append("```\n" + el.get_text().strip("\n") + "\n```")
        else:
            parts.append(" ".join(el.get_text(" ").split()))
    text = "\n\n".join(p for p in parts if p.strip())
    return Extracted(title=(h1[0] if len(h1) == 1 else "") or head_title, text=text)


def _extract_pdf(path: Path) -> Extracted:
    from pypdf import PdfReader  # ragdiag[local]

    reader = PdfReader(str(path))
    starts: dict[int, str] = {}
    try:
        for item in reader.outline:
            if not isinstance(item, list):  # top-level entries only: nested lists are sub-entries
                starts.setdefault(reader.get_destination_page_number(item) + 1, str(item.title).strip())
    except Exception:  # noqa: BLE001 - a broken outline is no reason to lose the text
        starts = {}
    parts, pages, pos = [], [], 0
    for number, page in enumerate(reader.pages, 1):
        t = (page.extract_text() or "").strip("\n")
        if not t.strip():
            continue
        if parts:
            pos += 2  # the blank line between pages
        pages.append((pos, number))
        parts.append(t)
        pos += len(t)
    meta = reader.metadata
    title = str(meta.title).strip() if meta is not None and meta.title else ""
    return Extracted(title=title, text="\n\n".join(parts), pages=tuple(pages),
                     sections=tuple((at, starts[p]) for at, p in pages if p in starts))
