"""Read Markdown, text, HTML and PDF files into the chunker's source-document shape.

Each parser returns ``(title, sections)``: sections are ``{"title", "blocks": [{"kind",
"text", "page"}]}`` as `ragdiag.sample.chunking` expects (kinds paragraph, list, table,
heading). Headings make sections (the shallowest level below the document title) and
sub-headings; lists, tables and code stay whole blocks; PDF pages come from the PDF, so the
chunks keep their page. Markdown is parsed with markdown-it-py, HTML with BeautifulSoup,
PDF with pypdf (its outline, when the file has one, gives the sections).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

Sections = list[dict[str, Any]]
SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
            ".html": "html", ".htm": "html", ".pdf": "pdf"}


class _Builder:
    """Collects blocks into sections; headings at `section_level` (or above) open a section."""

    def __init__(self) -> None:
        self.title = ""
        self.sections: Sections = []
        self.headings: list[tuple[int, str, int]] = []  # (level, text, page) in order, for the levels

    def start(self, title: str) -> None:
        self.sections.append({"title": title, "blocks": []})

    def add(self, kind: str, text: str, page: int = 1) -> None:
        text = text.strip("\n")
        if not text.strip():
            return
        if not self.sections:
            self.start("")
        self.sections[-1]["blocks"].append({"kind": kind, "text": text, "page": page})


def _headed(items: list[tuple[str, Any, int, int]]) -> tuple[str, Sections]:
    """(kind, text or level+text, page) items -> title and sections: the first h1 is the title
    when it is the only h1; the shallowest remaining level opens sections."""
    heads = [it for it in items if it[0] == "heading"]
    title = ""
    h1 = [it for it in heads if it[1][0] == 1]
    if len(h1) == 1:
        title = h1[0][1][1]
        items = [it for it in items if it is not h1[0]]
        heads = [it for it in heads if it is not h1[0]]
    level = min((it[1][0] for it in heads), default=None)
    b = _Builder()
    for kind, value, page, _ in items:
        if kind == "heading":
            lvl, text = value
            if lvl == level:
                b.start(text)
            else:
                b.add("heading", text, page)
        else:
            b.add(kind, value, page)
    return title, b.sections


# ---- Markdown -----------------------------------------------------------------------------
def _inline(tok: Any) -> str:
    parts = []
    for c in tok.children or ():
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif c.type == "image":
            parts.append(c.content)
    return "".join(parts).strip()


def parse_markdown(text: str) -> tuple[str, Sections]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    items: list[tuple[str, Any, int, int]] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        line = (t.map[0] + 1) if t.map else 0
        if t.type == "heading_open":
            items.append(("heading", (int(t.tag[1]), _inline(tokens[i + 1])), 1, line))
            i += 3
        elif t.type in ("bullet_list_open", "ordered_list_open"):
            close, depth, j, lines = t.type.replace("open", "close"), 0, i, []
            while j < len(tokens):
                u = tokens[j]
                if u.type == t.type:
                    depth += 1
                elif u.type == close:
                    depth -= 1
                    if depth == 0:
                        break
                elif u.type == "inline":
                    lines.append(f"{'  ' * max(0, u.level // 2 - 1)}- {_inline(u)}")
                j += 1
            items.append(("list", "\n".join(lines), 1, line))
            i = j + 1
        elif t.type == "table_open":
            rows, row, j = [], [], i
            while tokens[j].type != "table_close":
                u = tokens[j]
                if u.type == "inline":
                    row.append(_inline(u))
                elif u.type == "tr_close":
                    rows.append("| " + " | ".join(row) + " |")
                    row = []
                j += 1
            items.append(("table", "\n".join(rows), 1, line))
            i = j + 1
        elif t.type in ("fence", "code_block"):
            items.append(("list", t.content.rstrip("\n"), 1, line))
            i += 1
        elif t.type == "inline":
            items.append(("paragraph", _inline(t), 1, line))
            i += 1
        else:
            i += 1
    return _headed(items)


# ---- plain text ----------------------------------------------------------------------------
def parse_text(text: str) -> tuple[str, Sections]:
    b = _Builder()
    for para in re.split(r"\n\s*\n", text):
        if para.strip():
            b.add("paragraph", " ".join(para.split()))
    return "", b.sections


# ---- HTML ------------------------------------------------------------------------------------
_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "table", "pre", "blockquote", "dl")


def parse_html(text: str) -> tuple[str, Sections]:
    from bs4 import BeautifulSoup  # ragdiag[local]

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(["script", "style", "nav", "header", "footer", "noscript", "template"]):
        tag.decompose()
    head_title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    items: list[tuple[str, Any, int, int]] = []
    root = soup.body or soup
    for el in root.find_all(_BLOCKS):
        if any(p.name in _BLOCKS for p in el.parents):
            continue  # inside a block already taken whole
        line = getattr(el, "sourceline", 0) or 0
        name = el.name
        if name[0] == "h" and name[1:].isdigit():
            items.append(("heading", (int(name[1]), " ".join(el.get_text(" ").split())), 1, line))
        elif name in ("ul", "ol", "dl"):
            entries = [" ".join(li.get_text(" ").split()) for li in el.find_all(["li", "dt", "dd"])]
            items.append(("list", "\n".join(f"- {e}" for e in entries if e), 1, line))
        elif name == "table":
            rows = []
            for tr in el.find_all("tr"):
                cells = [" ".join(c.get_text(" ").split()) for c in tr.find_all(["th", "td"])]
                rows.append("| " + " | ".join(cells) + " |")
            items.append(("table", "\n".join(rows), 1, line))
        elif name == "pre":
            items.append(("list", el.get_text().rstrip("\n"), 1, line))
        else:
            items.append(("paragraph", " ".join(el.get_text(" ").split()), 1, line))
    title, sections = _headed(items)
    return title or head_title, sections


# ---- PDF -------------------------------------------------------------------------------------
def _page_paragraphs(text: str) -> list[str]:
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)  # words hyphenated at a line end
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [" ".join(p.split()) for p in paras]


def parse_pdf(path: Path) -> tuple[str, Sections]:
    from pypdf import PdfReader  # ragdiag[local]

    reader = PdfReader(str(path))
    starts: dict[int, str] = {}
    try:
        for item in reader.outline:
            if not isinstance(item, list):  # top-level entries only: nested lists are sub-entries
                page = reader.get_destination_page_number(item)
                starts.setdefault(page, str(item.title).strip())
    except Exception:  # noqa: BLE001 - a broken outline is no reason to lose the text
        starts = {}
    b = _Builder()
    for number, page in enumerate(reader.pages):
        if number in starts:
            b.start(starts[number])
        for para in _page_paragraphs(page.extract_text() or ""):
            b.add("paragraph", para, number + 1)
    meta = reader.metadata
    title = str(meta.title).strip() if meta is not None and meta.title else ""
    return title, b.sections


def parse_file(path: Path) -> tuple[str, Sections]:
    """Title and sections of one supported file (see `SUFFIXES`)."""
    kind = SUFFIXES[path.suffix.lower()]
    if kind == "pdf":
        return parse_pdf(path)
    from ragdiag.inputs.limits import read_bytes

    # a regular file within the size limit (a FIFO would block, a device never ends)
    text = read_bytes(path, what="document").decode("utf-8", errors="replace")
    parser: Callable[[str], tuple[str, Sections]] = {"markdown": parse_markdown, "text": parse_text,
                                                      "html": parse_html}[kind]
    return parser(text)
