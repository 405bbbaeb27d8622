"""Table questions: a cell of a Markdown table, asked by its row and column headers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of

__all__ = ["draft", "parse_tables"]

_GENERIC_COLUMN = re.compile(r"^(?:value|values|wert|werte|details?|angabe|specification)$", re.I)
_EMPTY = frozenset({"", "-", "–", "none", "n/a", "keine", "—"})
_TEMPLATES = {
    "en": {True: ["What is the {col} for {row} in {ctx}?", "In {ctx}, which {col} applies to {row}?",
                  "{row} in {ctx}: what {col}?"],
           False: ["What is the {row} of {ctx}?", "Which {row} does {ctx} have?", "{ctx}: what {row}?"]},
    "de": {True: ["Welcher Wert gilt bei {ctx} für {row} ({col})?", "Was steht in {ctx} bei {row} unter {col}?"],
           False: ["Welche {row} hat {ctx}?", "{ctx}: was ist bei {row} angegeben?"]},
}


def parse_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of each Markdown table in `text`."""
    tables = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip().startswith("|") and re.fullmatch(r"\|?[\s:\-|]+\|?", lines[i + 1].strip() or "x"):
            header = [clean_markup(c) for c in lines[i].strip().strip("|").split("|")]
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append([clean_markup(c) for c in lines[j].strip().strip("|").split("|")])
                j += 1
            tables.append((header, [r for r in rows if len(r) == len(header)]))
            i = j
        else:
            i += 1
    return tables


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    for p in ctx.shuffled([p for p in ctx.corpus.citable() if p.is_table], "table"):
        lang = p.language if p.language in _TEMPLATES else "en"
        context = context_of(p) or p.section_title or "the table"
        cells = []
        for header, rows in parse_tables(p.text):
            for row in rows:
                for c in range(1, len(header)):
                    if row[c].lower() not in _EMPTY and row[0] and header[c]:
                        cells.append((row[0], header[c], row[c], " | ".join(row)))
        if not cells:
            continue
        row, col, value, line = cells[ctx.rng.randrange(len(cells))]
        named = not _GENERIC_COLUMN.match(col)
        if lang == "en" and not row[:2].isupper():
            row = row[:1].lower() + row[1:]
        q = ctx.paraphraser.fill(_TEMPLATES[lang][named], lang, row=row, col=col, ctx=context)
        yield Candidate(rule="table", question=q, passages=(p,), evidence=line, answer=(value,), language=lang)
