"""The corpus a draft is drawn from: the target's records, read once, with their roles.

A record's fields are found by name (the sample's and most RAG indexes' conventions): the
key from the schema, the text (`content`, `chunk`, `text`, ...), the title, the section
title, the summary, the document id, the security groups (the policy's security field), the
language (`language`, else detected per record) and whether the record may be cited
(`citable`, else every record). Only these are read; the target stays read-only. Without a
document id field, records with the same title are one document (a Wikipedia article cut into
paragraphs, a manual into sections), so a question about the document takes all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import InputDataError

__all__ = ["Passage", "Corpus", "load_corpus", "corpus_from_records"]

TEXT_FIELDS = ("content", "chunk", "text", "body", "page_content")
TITLE_FIELDS = ("title", "document_title", "doc_title")
SECTION_FIELDS = ("section_title", "heading", "section")
SUMMARY_FIELDS = ("summary", "abstract", "description")
DOC_ID_FIELDS = ("doc_id", "document_id", "parent_document", "source")


@dataclass(frozen=True)
class Passage:
    """One record of the index as the rules see it."""

    key: str
    text: str
    doc_id: str
    title: str = ""
    section_title: str = ""
    summary: str = ""
    groups: tuple[str, ...] | None = None  # None: the index has no security field
    language: str = "en"
    citable: bool = True
    level: str = ""

    @property
    def is_table(self) -> bool:
        return "\n|" in "\n" + self.text and "|---" in self.text.replace(" ", "")


@dataclass
class Corpus:
    passages: list[Passage]
    fields: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key = {p.key: p for p in self.passages}

    def citable(self) -> list[Passage]:
        """Records a case may be drawn from (evidence chunks where the index marks them)."""
        return [p for p in self.passages if p.citable]

    def documents(self) -> dict[str, list[Passage]]:
        """Records grouped by document id, in index order."""
        out: dict[str, list[Passage]] = {}
        for p in self.passages:
            out.setdefault(p.doc_id, []).append(p)
        return out

    def languages(self) -> set[str]:
        return {p.language for p in self.passages}


def _pick(names: Sequence[str], available: Iterable[str]) -> str | None:
    avail = set(available)
    return next((n for n in names if n in avail), None)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _doc_id(r: dict[str, Any], f: dict[str, str | None], key: str) -> str:
    if f["doc_id"]:
        return str(r.get(f["doc_id"]) or key)
    title = " ".join(_text(r.get(f["title"])).split()).lower() if f["title"] else ""
    return f"title:{title}" if title else key


def corpus_from_records(records: Iterable[dict[str, Any]], *, key_field: str = "key",
                        security_field: str | None = "group_ids",
                        text_field: str | None = None) -> Corpus:
    """A corpus from record dicts (what `iter_documents` yields, or a hand-made fixture)."""
    records = list(records)
    if not records:
        raise InputDataError("the index has no records to draft questions from")
    names = set().union(*(r.keys() for r in records[:200]))
    f = {"text": text_field or _pick(TEXT_FIELDS, names), "title": _pick(TITLE_FIELDS, names),
         "section": _pick(SECTION_FIELDS, names), "summary": _pick(SUMMARY_FIELDS, names),
         "doc_id": _pick(DOC_ID_FIELDS, names), "language": "language" if "language" in names else None,
         "citable": "citable" if "citable" in names else None, "level": "level" if "level" in names else None,
         "groups": security_field if security_field in names else None}
    if f["text"] is None:
        raise InputDataError(f"found no text field in the index records (looked for {', '.join(TEXT_FIELDS)}; "
                             f"fields seen: {', '.join(sorted(names))}); name it with text_field")
    from ragdiag.language import detect_language

    passages = []
    for r in records:
        text = _text(r.get(f["text"]))
        key = str(r.get(key_field, ""))
        if not key or not text.strip():
            continue
        lang = r.get(f["language"]) if f["language"] else None
        if lang not in ("en", "de"):
            lang = detect_language([text]).code or "en"
        groups = r.get(f["groups"]) if f["groups"] else None
        passages.append(Passage(
            key=key, text=text, doc_id=_doc_id(r, f, key),
            title=_text(r.get(f["title"])) if f["title"] else "",
            section_title=_text(r.get(f["section"])) if f["section"] else "",
            summary=_text(r.get(f["summary"])) if f["summary"] else "",
            groups=tuple(groups) if isinstance(groups, list | tuple) else None,
            language=lang, citable=bool(r.get(f["citable"], True)) if f["citable"] else True,
            level=str(r.get(f["level"]) or "") if f["level"] else ""))
    return Corpus(passages, f)


def load_corpus(target: Any, *, security_field: str | None = "group_ids") -> Corpus:
    """Every record of the target (capability ``documents``), read once."""
    from ragdiag.targets.base import has_capability

    if not has_capability(target, "documents"):
        raise InputDataError(f"target {getattr(target, 'name', target)!r} cannot list its records (capability "
                             "'documents'); drafting reads the corpus from the index")
    key_field = target.schema().key_field.name
    return corpus_from_records(target.iter_documents(), key_field=key_field, security_field=security_field)
