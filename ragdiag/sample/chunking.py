"""Chunkers: turn a source document into index records of three levels.

A *source document* is a dict (one line of a corpus ``documents.jsonl``)::

    {"doc_id", "title", "doc_type", "language", "summary", "entity_keys",
     "group_ids", "valid_from", "valid_to", "last_updated", "scan_quality",
     "sections": [{"title", "summary",
                   "blocks": [{"kind": "paragraph|table|list|heading",
                               "text", "page"}]}]}

From it the chunkers produce index records (plain dicts with the fields in
``RECORD_FIELDS``) on three levels:

- ``document``: one per document, key = doc_id, content = summary + first paragraph;
- ``section``: one per section, key ``{doc_id}-s{n}``, content = section text
  truncated to about 200 words;
- ``evidence``: the citable chunks, made by one of two strategies:

  - :func:`structure_aware`: whole sentences packed up to a target size inside a
    section, tables and lists never split (a table is its own chunk, prefixed by
    its heading line), one sentence of overlap; keys ``{doc_id}-s{n}-c{m}``.
  - :func:`fixed_size`: the whole document text cut every N words, ignoring
    sentences, tables and sections, no overlap; keys ``{doc_id}-n{m}``.

``confidence_score`` is the *extraction* quality of a record (how well the text
was read from the source), derived from the document's ``scan_quality`` and the
page with a deterministic jitter. It says nothing about relevance.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ragdiag.errors import InputDataError, MissingDependencyError

RECORD_FIELDS: tuple[str, ...] = (
    "key", "doc_id", "parent_id", "level", "title", "section_title", "page", "position",
    "content", "summary", "doc_type", "entity_keys", "confidence_score", "valid_from",
    "valid_to", "last_updated", "is_table", "group_ids", "language", "citable",
)
LEVELS = ("document", "section", "evidence")
BLOCK_KINDS = ("paragraph", "table", "list", "heading")
STRATEGIES = ("structure_aware", "fixed_size")
SECTION_CONTENT_WORDS = 200

_WORD = re.compile(r"\S+")
_SBD_LANGUAGES = ("en", "de")


# ---- helpers --------------------------------------------------------------------------

def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def truncate_words(text: str, max_words: int) -> str:
    """The first `max_words` words of `text`, keeping its line structure."""
    n = 0
    for m in _WORD.finditer(text):
        n += 1
        if n == max_words:
            return text[: m.end()]
    return text


@lru_cache(maxsize=4)
def _segmenter(language: str) -> Any:
    try:
        import pysbd
    except ImportError as exc:  # pragma: no cover - pysbd is a declared dependency
        raise MissingDependencyError(
            "structure-aware chunking needs the sentence splitter pysbd; pip install pysbd"
        ) from exc
    return pysbd.Segmenter(language=language, clean=False)


@lru_cache(maxsize=65536)
def split_sentences(text: str, language: str = "en") -> tuple[str, ...]:
    """Sentences of one paragraph (pysbd; English or German rules by `language`)."""
    text = " ".join(text.split())
    if not text:
        return ()
    lang = (language or "en").lower()[:2]
    seg = _segmenter(lang if lang in _SBD_LANGUAGES else "en")
    out = tuple(s.strip() for s in seg.segment(text) if s.strip())
    return out or (text,)


def _unit_interval(*parts: object) -> float:
    h = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def confidence_score(doc: Mapping[str, Any], page: int, salt: str = "") -> float:
    """Extraction confidence of text on `page` of `doc` (0..1), deterministic.

    Digital documents (scan_quality ~0.9-0.98) land at ~0.88-0.99; scanned ones
    (scan_quality ~0.65-0.8) at ~0.6-0.83 and lose a little on later pages.
    """
    q = doc.get("scan_quality")
    q = 1.0 if q is None else float(q)
    loss = (1.0 - q) * 0.04 * min(max(page, 1) - 1, 5)
    jitter = (_unit_interval(doc.get("doc_id"), page, salt) - 0.5) * 0.06
    return round(min(0.99, max(0.5, q - loss + jitter)), 3)


def validate_document(doc: Mapping[str, Any]) -> None:
    """Raise InputDataError if `doc` is not a usable source document."""
    for name in ("doc_id", "title", "sections"):
        if name not in doc:
            raise InputDataError(
                f"source document lacks '{name}'; expected keys doc_id, title, summary, sections, ...; "
                f"found {', '.join(sorted(doc)) or 'none'}")
    if not isinstance(doc["sections"], list):
        raise InputDataError(f"document {doc['doc_id']}: 'sections' must be a list")
    for i, sec in enumerate(doc["sections"], 1):
        for j, b in enumerate(sec.get("blocks") or (), 1):
            if b.get("kind") not in BLOCK_KINDS:
                raise InputDataError(
                    f"document {doc['doc_id']} section {i} block {j}: kind must be one of "
                    f"{', '.join(BLOCK_KINDS)}, got {b.get('kind')!r}")
            if not isinstance(b.get("page"), int):
                raise InputDataError(
                    f"document {doc['doc_id']} section {i} block {j}: 'page' must be an int")


def _base(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "doc_type": doc.get("doc_type"),
        "entity_keys": list(doc.get("entity_keys") or []),
        "valid_from": doc.get("valid_from"),
        "valid_to": doc.get("valid_to"),
        "last_updated": doc.get("last_updated"),
        "group_ids": list(doc.get("group_ids") or []),
        "language": doc.get("language") or "en",
    }


def _record(doc: Mapping[str, Any], *, key: str, parent_id: str | None, level: str,
            section_title: str | None, page: int, position: int, content: str, summary: str,
            is_table: bool, citable: bool) -> dict[str, Any]:
    b = _base(doc)
    rec = {
        "key": key,
        "doc_id": doc["doc_id"],
        "parent_id": parent_id,
        "level": level,
        "title": doc["title"],
        "section_title": section_title,
        "page": page,
        "position": position,
        "content": content,
        "summary": summary,
        "doc_type": b["doc_type"],
        "entity_keys": b["entity_keys"],
        "confidence_score": confidence_score(doc, page, key),
        "valid_from": b["valid_from"],
        "valid_to": b["valid_to"],
        "last_updated": b["last_updated"],
        "is_table": is_table,
        "group_ids": b["group_ids"],
        "language": b["language"],
        "citable": citable,
    }
    return rec


def _first_page(sec: Mapping[str, Any], default: int = 1) -> int:
    blocks = sec.get("blocks") or ()
    return int(blocks[0]["page"]) if blocks else default


def section_text(sec: Mapping[str, Any]) -> str:
    return "\n".join(b["text"] for b in sec.get("blocks") or ())


# ---- document and section levels ---------------------------------------------------------

def document_record(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The parent record: summary plus the first paragraph."""
    first = ""
    for sec in doc["sections"]:
        for b in sec.get("blocks") or ():
            if b["kind"] == "paragraph":
                first = b["text"]
                break
        if first:
            break
    summary = doc.get("summary") or ""
    content = f"{summary}\n\n{first}".strip()
    return _record(doc, key=doc["doc_id"], parent_id=None, level="document", section_title=None,
                   page=1, position=0, content=content, summary=summary, is_table=False,
                   citable=False)


def section_records(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One record per section, content truncated to ~200 words."""
    out = []
    for n, sec in enumerate(doc["sections"], 1):
        text = truncate_words(section_text(sec), SECTION_CONTENT_WORDS)
        out.append(_record(
            doc, key=f"{doc['doc_id']}-s{n}", parent_id=doc["doc_id"], level="section",
            section_title=sec.get("title"), page=_first_page(sec), position=n - 1, content=text,
            summary=sec.get("summary") or "",
            is_table=any(b["kind"] == "table" for b in sec.get("blocks") or ()), citable=False))
    return out


# ---- structure-aware evidence --------------------------------------------------------------

@dataclass(frozen=True)
class _Unit:
    text: str
    kind: str  # sentence | list | heading
    page: int
    block: int  # block index inside the section
    overlap: bool = False


def _join_units(units: Iterable[_Unit]) -> str:
    parts: list[str] = []
    prev: _Unit | None = None
    for u in units:
        if prev is not None:
            same = prev.block == u.block and prev.kind == u.kind == "sentence"
            parts.append(" " if same else "\n")
        parts.append(u.text)
        prev = u
    return "".join(parts)


def structure_aware(doc: Mapping[str, Any], target_words: int = 90,
                    overlap_sentences: int = 1) -> list[dict[str, Any]]:
    """Evidence chunks that respect sentences, sections, tables and lists.

    Sentences (pysbd) are packed up to `target_words` within one section; a chunk
    never crosses a section boundary; a table is always its own chunk, prefixed
    by its heading line (the nearest sub-heading in the section, else the section
    title); a list is never split; a sub-heading starts a new chunk and stays with
    its body; when a chunk is closed for size, its last `overlap_sentences`
    sentences open the next one.
    """
    if target_words < 1:
        raise InputDataError(f"target_words must be >= 1, got {target_words}")
    validate_document(doc)
    language = doc.get("language") or "en"
    doc_id = doc["doc_id"]
    out: list[dict[str, Any]] = []
    position = 0

    for n, sec in enumerate(doc["sections"], 1):
        skey = f"{doc_id}-s{n}"
        stitle = sec.get("title") or ""
        ssum = sec.get("summary") or ""
        chunks: list[tuple[list[_Unit], bool, str | None]] = []  # units, is_table, table text
        units: list[_Unit] = []
        heading_line = stitle

        def fresh(us: list[_Unit]) -> int:
            return sum(1 for u in us if not u.overlap and u.kind != "heading")

        def words(us: list[_Unit]) -> int:
            return sum(word_count(u.text) for u in us)

        def flush(carry: bool, chunks: list = chunks) -> None:
            nonlocal units
            if fresh(units) == 0:
                # only headings or carried overlap: keep headings for the next content
                units = [u for u in units if u.kind == "heading"]
                return
            chunks.append((units, False, None))
            tail: list[_Unit] = []
            if carry and overlap_sentences > 0:
                for u in reversed(units):
                    if u.kind != "sentence" or len(tail) == overlap_sentences:
                        break
                    tail.insert(0, _Unit(u.text, u.kind, u.page, u.block, overlap=True))
            units = tail

        for bi, block in enumerate(sec.get("blocks") or ()):
            kind, text, page = block["kind"], block["text"], int(block["page"])
            if kind == "heading":
                flush(carry=False)
                units.append(_Unit(text.strip(), "heading", page, bi))
                heading_line = text.strip()
            elif kind == "table":
                flush(carry=False)
                units = []  # a heading waiting for a body is the table's prefix anyway
                chunks.append(([_Unit(heading_line, "heading", page, bi)], True, text.strip("\n")))
            elif kind == "list":
                unit = _Unit(text.strip("\n"), "list", page, bi)
                if fresh(units) and words(units) + word_count(unit.text) > target_words:
                    flush(carry=True)
                units.append(unit)
            else:
                for sent in split_sentences(text, language):
                    unit = _Unit(sent, "sentence", page, bi)
                    if fresh(units) and words(units) + word_count(sent) > target_words:
                        flush(carry=True)
                    units.append(unit)
        flush(carry=False)

        for m, (us, is_table, table_text) in enumerate(chunks, 1):
            if is_table:
                content = f"{us[0].text}\n{table_text}" if us[0].text else str(table_text)
            else:
                content = _join_units(us)
            out.append(_record(
                doc, key=f"{skey}-c{m}", parent_id=skey, level="evidence", section_title=stitle,
                page=us[0].page, position=position, content=content, summary=ssum,
                is_table=is_table, citable=True))
            position += 1
    return out


# ---- fixed-size evidence ----------------------------------------------------------------

def _token_stream(doc: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(word, whitespace after it, page) over the whole document text, in reading order."""
    pieces: list[tuple[str, int]] = [(doc["title"], 1)]
    for sec in doc["sections"]:
        page = _first_page(sec)
        if sec.get("title"):
            pieces.append((sec["title"], page))
        for b in sec.get("blocks") or ():
            pieces.append((b["text"], int(b["page"])))
    tokens: list[tuple[str, str, int]] = []
    for text, page in pieces:
        ms = list(_WORD.finditer(text))
        for i, m in enumerate(ms):
            sep = text[m.end(): ms[i + 1].start()] if i + 1 < len(ms) else "\n"
            tokens.append((m.group(), sep, page))
    return tokens


def _has_table_line(text: str) -> bool:
    return any(line.lstrip().startswith("|") for line in text.splitlines())


def fixed_size(doc: Mapping[str, Any], size_words: int = 90) -> list[dict[str, Any]]:
    """Evidence chunks cut every `size_words` words of the concatenated document.

    Ignores sentences, sections and tables (chunks start and end mid-sentence and
    tables are split), no overlap. The record's page is where the chunk starts.
    """
    if size_words < 1:
        raise InputDataError(f"size_words must be >= 1, got {size_words}")
    validate_document(doc)
    tokens = _token_stream(doc)
    summary = doc.get("summary") or ""
    out = []
    for m, start in enumerate(range(0, len(tokens), size_words), 1):
        part = tokens[start: start + size_words]
        content = "".join(w + s for w, s, _ in part).strip()
        out.append(_record(
            doc, key=f"{doc['doc_id']}-n{m}", parent_id=doc["doc_id"], level="evidence",
            section_title=None, page=part[0][2], position=m - 1, content=content,
            summary=summary, is_table=_has_table_line(content), citable=True))
    return out


# ---- all levels -------------------------------------------------------------------------

_CHUNKERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "structure_aware": structure_aware,
    "fixed_size": fixed_size,
}


def index_records(doc: Mapping[str, Any], strategy: str = "structure_aware",
                  **options: Any) -> list[dict[str, Any]]:
    """Document, section and evidence records of one source document."""
    try:
        chunker = _CHUNKERS[strategy]
    except KeyError:
        raise InputDataError(
            f"no chunking strategy named {strategy!r}; available: {', '.join(_CHUNKERS)}"
        ) from None
    validate_document(doc)
    return [document_record(doc), *section_records(doc), *chunker(doc, **options)]


__all__ = [
    "RECORD_FIELDS", "LEVELS", "STRATEGIES", "confidence_score", "document_record",
    "fixed_size", "index_records", "section_records", "section_text", "split_sentences",
    "structure_aware", "truncate_words", "validate_document", "word_count",
]
