"""The "Muster AG" sample corpus: generators, goldset and build.

Layout (one kind of document per module, each with its own fixed seed):

- `vocab`: the fictional company, its ~40 partners, people, sites, products;
- `docs_contracts`, `docs_policies`, `docs_handbooks`, `docs_tickets`, `docs_hr`,
  `docs_products`: each has ``generate() -> (documents, facts)``;
- `contract_phrases`, `policy_texts`, `handbook_texts`: the text banks of the
  three largest generators (kept apart so every module stays readable);
- `corpus`: all documents in a fixed order; `goldset`: questions from the facts;
- `build`: ``build_sample(out_dir)`` writes ``sample_data/``; `schema`: the
  sample index definition and identities.

This module holds what the generators share: :class:`Fact` (a planted answer a
goldset question can be built from), :class:`DocBuilder` (sections, blocks,
pages) and date/number formatting. Nothing here reads the clock: the sample's
reference date is :data:`REFERENCE_DATE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

REFERENCE_DATE = date(2026, 6, 30)
INTENTS = ("fact", "definition", "verification", "comparison", "overview", "table", "exact_id")

_MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December")


@dataclass(frozen=True)
class Fact:
    """An answer planted in one document, with a question that asks for it.

    `needle` is verbatim text inside one block of the document (inside one
    sentence for paragraphs, or a table row); the goldset finds the evidence
    chunk that contains it. `attr`/`value`/`label` describe comparable facts
    (e.g. attr "notice_days", value 90, label "90 days").
    """

    intent: str
    doc_id: str
    needle: str
    question: str
    answer: tuple[str, ...]
    entity: str | None = None
    attr: str | None = None
    value: float | None = None
    label: str | None = None


@dataclass
class DocBuilder:
    """Collects sections and blocks of one source document, then assigns pages."""

    doc_id: str
    title: str
    doc_type: str
    summary: str = ""
    language: str = "en"
    entity_keys: list[str] = field(default_factory=list)
    group_ids: list[str] = field(default_factory=lambda: ["all-staff"])
    valid_from: str | None = None
    valid_to: str | None = None
    last_updated: str | None = None
    scan_quality: float = 0.95
    sections: list[dict[str, Any]] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    # ---- content ------------------------------------------------------------------
    def section(self, title: str, summary: str) -> DocBuilder:
        self.sections.append({"title": title, "summary": summary, "blocks": []})
        return self

    def _add(self, kind: str, text: str) -> DocBuilder:
        if not self.sections:
            raise ValueError(f"{self.doc_id}: add a section before its blocks")
        self.sections[-1]["blocks"].append({"kind": kind, "text": text, "page": 0})
        return self

    def para(self, *sentences: str) -> DocBuilder:
        return self._add("paragraph", tidy(" ".join(s.strip() for s in sentences if s.strip())))

    def heading(self, text: str) -> DocBuilder:
        return self._add("heading", text)

    def bullets(self, items: list[str]) -> DocBuilder:
        return self._add("list", "\n".join(f"- {i}" for i in items))

    def table(self, header: list[str], rows: list[list[str]]) -> DocBuilder:
        return self._add("table", markdown_table(header, rows))

    def fact(self, intent: str, needle: str, question: str, answer: str | tuple[str, ...],
             **kw: Any) -> DocBuilder:
        ans = (answer,) if isinstance(answer, str) else tuple(answer)
        self.facts.append(Fact(intent, self.doc_id, tidy(needle), question, ans, **kw))
        return self

    # ---- output -------------------------------------------------------------------
    def build(self, pages: int | None = None) -> tuple[dict[str, Any], list[Fact]]:
        """The source document (pages assigned by word position) and its facts."""
        blocks = [b for s in self.sections for b in s["blocks"]]
        words = [len(b["text"].split()) for b in blocks]
        total = max(1, sum(words))
        n_pages = pages or min(8, max(2, round(total / 150)))
        before = 0
        for b, w in zip(blocks, words, strict=True):
            b["page"] = 1 + min(n_pages - 1, before * n_pages // total)
            before += w
        for f in self.facts:
            hits = sum(1 for b in blocks if f.needle in " ".join(b["text"].split()))
            if hits != 1:
                raise ValueError(f"{self.doc_id}: needle {f.needle!r} found in {hits} blocks")
        doc = {
            "doc_id": self.doc_id, "title": self.title, "doc_type": self.doc_type,
            "language": self.language, "summary": self.summary,
            "entity_keys": sorted(set(self.entity_keys)), "group_ids": list(self.group_ids),
            "valid_from": self.valid_from, "valid_to": self.valid_to,
            "last_updated": self.last_updated, "scan_quality": round(self.scan_quality, 3),
            "sections": self.sections,
        }
        return doc, list(self.facts)


# ---- formatting ---------------------------------------------------------------------

_DOUBLE_STOP = re.compile(r"(?<=[A-Za-z])\.\.(?!\.)")


def tidy(text: str) -> str:
    """Sentence text without the double full stop a name like "Inc." leaves at the end."""
    return _DOUBLE_STOP.sub(".", text)


def iso(d: date | None) -> str | None:
    """ISO date-time with Z (the index's DateTimeOffset form)."""
    return None if d is None else f"{d.isoformat()}T00:00:00Z"


def date_en(d: date) -> str:
    return f"{d.day} {_MONTHS_EN[d.month - 1]} {d.year}"


def date_de(d: date) -> str:
    return f"{d.day:02d}.{d.month:02d}.{d.year}"


def money(amount: float, currency: str = "EUR", decimals: int = 0) -> str:
    return f"{currency} {amount:,.{decimals}f}"


def money_de(amount: float, currency: str = "EUR", decimals: int = 0) -> str:
    s = f"{amount:,.{decimals}f}".replace(",", "_").replace(".", ",").replace("_", ".")
    return f"{s} {currency}"


def add_months(d: date, months: int) -> date:
    m = d.month - 1 + months
    y = d.year + m // 12
    m = m % 12 + 1
    days = (31, 29 if y % 4 == 0 and (y % 100 or y % 400 == 0) else 28, 31, 30, 31, 30,
            31, 31, 30, 31, 30, 31)[m - 1]
    return date(y, m, min(d.day, days))


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def table_row(cells: list[str]) -> str:
    """The markdown line of one table row (a needle for table facts)."""
    return "| " + " | ".join(cells) + " |"


__all__ = ["INTENTS", "REFERENCE_DATE", "DocBuilder", "Fact", "add_months", "date_de",
           "date_en", "iso", "markdown_table", "money", "money_de", "table_row", "tidy"]
