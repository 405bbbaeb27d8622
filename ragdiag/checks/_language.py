"""Language fidelity evidence: the content's and the questions' language next to the
analyzers of the searchable fields and the embedder's languages.

Content language is detected per record (`ragdiag.language.detect_language`) over an even
sample of the index's first `SCAN_LIMIT` records (capability ``documents``), so a mixed corpus shows its
shares (the sample: 23 of 241 documents German); the questions (goldset or query log) are
detected together, because one question is too short to name a language. The analyzers
come from the index definition (for every target kind: `analysis_for` maps an Azure name
onto the language it analyses), the embedder from the target (`embedding_model`: the local
embedder's model id, an Azure vectorizer's model name) through
`ragdiag.encoders.languages`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ragdiag.encoders.languages import MULTILINGUAL, covers, embedder_languages
from ragdiag.language import detect_language
from ragdiag.targets.base import has_capability
from ragdiag.targets.local.analyzers import Analysis, analysis_for


@dataclass
class LanguageEvidence:
    """What was detected and configured; `mismatches` lists (kind, language, detail) tuples."""

    record_languages: Counter[str] = field(default_factory=Counter)
    records_sampled: int = 0
    question_language: str | None = None
    question_reason: str = ""
    questions: int = 0
    analyses: dict[str, Analysis] = field(default_factory=dict)
    embedding_model: str | None = None
    embedder_langs: tuple[str, ...] | None = None

    @property
    def records_detected(self) -> int:
        return sum(self.record_languages.values())

    def content_languages(self, min_share: float) -> dict[str, float]:
        n = self.records_detected
        return {lang: c / n for lang, c in self.record_languages.most_common() if n and c / n >= min_share}

    def describe(self) -> dict[str, Any]:
        return {"records_sampled": self.records_sampled, "record_languages": dict(self.record_languages),
                "question_language": self.question_language, "question_reason": self.question_reason,
                "analyzers": {f: a.analyzer for f, a in self.analyses.items()},
                "embedding_model": self.embedding_model,
                "embedder_languages": ("multilingual" if self.embedder_langs == MULTILINGUAL
                                       else list(self.embedder_langs) if self.embedder_langs else None)}


#: at most this many records are read to draw the sample (a live index is paged through)
SCAN_LIMIT = 20_000


def _sample_records(target: Any, fields: list[str], limit: int) -> list[str]:
    """Texts of an even sample of at most `limit` records: every n-th of the first
    `SCAN_LIMIT` records (all of them on an index that small)."""
    total = min(target.count(), SCAN_LIMIT)
    step = max(1, -(-total // limit)) if total else 1
    out = []
    for i, doc in enumerate(target.iter_documents(select=fields)):
        if i >= SCAN_LIMIT:
            break
        if i % step:
            continue
        out.append(" ".join(_text(doc.get(f)) for f in fields))
        if len(out) >= limit:
            break
    return out


def _text(v: Any) -> str:
    if v is None:
        return ""
    return " ".join(map(str, v)) if isinstance(v, list | tuple) else str(v)


def gather(ctx: Any, *, max_records: int) -> LanguageEvidence:
    """Detect the languages and read the analyzers and the embedder (each part optional)."""
    ev = LanguageEvidence()
    target = ctx.target
    if target is None:
        return ev
    schema = target.schema()
    text_fields = [f for f in schema.fields if f.searchable and not f.is_vector
                   and f.element_type == "Edm.String"]
    ev.analyses = {f.name: analysis_for(f.analyzer) for f in text_fields}
    ev.embedding_model = target.embedding_model if has_capability(target, "embedding_model") else None
    ev.embedder_langs = embedder_languages(ev.embedding_model)
    if ctx.supports("documents") and text_fields:
        texts = _sample_records(target, [f.name for f in text_fields], max_records)
        ev.records_sampled = len(texts)
        for t in texts:
            code = detect_language([t]).code
            if code:
                ev.record_languages[code] += 1
    if ctx.has("questions"):
        cases = ctx.question_cases()
        ev.questions = len(cases)
        guess = detect_language(c.question for c in cases)
        ev.question_language, ev.question_reason = guess.code, guess.reason
    return ev


def mismatches(ev: LanguageEvidence, min_share: float) -> list[tuple[str, str, float | None, str]]:
    """(what, language, content share or None for the questions, detail) per disagreement.

    what: ``analyzer`` (a field analysed as another language), ``embedder`` (the embedder
    does not cover the language). Language-neutral analyzers (standard.lucene, keyword, ...)
    are no mismatch: they neither stem nor drop stop words in any language.
    """
    wanted: list[tuple[str, float | None]] = list(ev.content_languages(min_share).items())
    if ev.question_language and ev.question_language not in dict(wanted):
        wanted.append((ev.question_language, None))
    out = []
    for lang, share in wanted:
        wrong = sorted({a.analyzer for a in ev.analyses.values() if a.language and a.language != lang})
        if wrong:
            fields = [f for f, a in ev.analyses.items() if a.language and a.language != lang]
            out.append(("analyzer", lang, share, f"{', '.join(wrong)}: {', '.join(fields)}"))
        if covers(ev.embedder_langs, lang) is False:
            out.append(("embedder", lang, share, str(ev.embedding_model)))
    return out
