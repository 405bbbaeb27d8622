"""Comparisons: two documents of the same kind with a parallel fact (the same section, a
sentence worded alike -- at least `PARALLEL` of their content words shared, values and names
aside -- and a value of the same kind that differs), asked as one question about both."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.corpus import Passage
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of
from ragdiag.drafting.rules.facts import topic_words
from ragdiag.drafting.rules.values import Value, find_values
from ragdiag.drafting.text import content_words, sentences

__all__ = ["draft", "PARALLEL"]

PARALLEL = 0.5

_TEMPLATES = {
    "en": ["Compare the {topic} in {a} and {b}.", "How do {a} and {b} differ in the {topic}?",
           "{topic}: {a} versus {b}?", "Which is different, the {topic} in {a} or in {b}?"],
    "de": ["Vergleiche {topic} bei {a} und {b}.", "Wie unterscheiden sich {a} und {b} bei {topic}?"],
}


def _section(p: Passage) -> str:
    return re.sub(r"^[\d.\s]+", "", p.section_title).strip().lower()


def _facts(p: Passage, ctx: RuleContext) -> list[tuple[str, Value, list[str]]]:
    out = []
    for s in sentences(clean_markup(p.text), p.language):
        vals = [v for v in find_values(s) if v.kind not in ("year", "person", "date")]
        if vals and len(s) <= 400:
            out.append((s, vals[0], topic_words(s, vals[0], ctx, context_of(p), n=4, language=p.language)))
    return out


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    groups: dict[tuple[str, str, str], list[Passage]] = {}
    for p in ctx.corpus.citable():
        if _section(p) and context_of(p) and not p.is_table:
            groups.setdefault((p.language, _section(p), p.level), []).append(p)
    used: set[str] = set()
    order = sorted(groups)
    ctx.rng.shuffle(order)
    for gkey in order:
        members = list(ctx.shuffled(groups[gkey], "comparison:" + "|".join(gkey)))
        for i, a in enumerate(members):
            if a.doc_id in used:
                continue
            for b in members[i + 1:]:
                if b.doc_id == a.doc_id or b.doc_id in used or context_of(a) == context_of(b):
                    continue
                pair = _parallel(_facts(a, ctx), _facts(b, ctx))
                if pair is None:
                    continue
                (sa, va), (sb, vb), shared = pair
                lang = a.language if a.language in _TEMPLATES else "en"
                q = ctx.paraphraser.fill(_TEMPLATES[lang], lang, topic=" ".join(shared),
                                         a=context_of(a), b=context_of(b))
                used.update({a.doc_id, b.doc_id})
                yield Candidate(rule="comparison", question=q, passages=(a, b), evidence=f"{sa} / {sb}",
                                answer=(va.text, vb.text), language=lang)
                break


def _words(sentence: str, value: Value) -> set[str]:
    return {w for w in content_words(sentence[:value.start] + " " + sentence[value.end:])
            if not any(ch.isdigit() for ch in w)}


def _parallel(fa, fb):
    for sa, va, ta in fa:
        for sb, vb, tb in fb:
            shared = [w for w in ta if w in tb]
            if va.kind != vb.kind or not shared or va.text == vb.text:
                continue
            wa, wb = _words(sa, va), _words(sb, vb)
            if len(wa & wb) >= PARALLEL * len(wa | wb):
                return (sa, va), (sb, vb), shared
    return None
