"""Definitions: definitional sentences ("X means ...", "Unter X versteht man ...") and
glossary entries ("*Term*: ..." in a section called Glossary, Definitions, Begriffe)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of
from ragdiag.drafting.text import sentences

__all__ = ["draft", "terms_in"]

_GLOSSARY_SECTION = re.compile(r"glossar|definition|terms|terminology|begriff|abkürzung", re.I)
_TERM = r"[^\W\d_][\w\-/ ]{1,48}?"
_PATTERNS = [
    re.compile(rf"\*(?P<term>{_TERM})\*\s*(?::|–|—|-)\s+\S"),  # *Term*: definition
    re.compile(rf"\*(?P<term>{_TERM})\*\s+(?:means|refers to|is defined as|denotes|bezeichnet|bedeutet|meint)\b"),
    re.compile(rf"^(?:The term|Der Begriff)\s+\*?(?P<term>{_TERM})\*?\s+(?:means|refers to|bezeichnet|bedeutet)\b"),
    re.compile(rf"^(?:An?|The)\s+(?P<term>[a-z]{_TERM})\s+(?:is defined as|means|refers to)\b"),
    re.compile(rf"^Unter\s+(?:einer?|einem|dem|der|den)?\s*\*?(?P<term>{_TERM})\*?\s+versteh(?:t|en)\s+(?:man|wir)\b"),
    re.compile(rf"^(?:Als\s+)\*?(?P<term>{_TERM})\*?\s+(?:gilt|gelten|bezeichnen wir)\b"),
]
_GLOSSARY_LINE = re.compile(rf"^[-•]?\s*\*{{0,2}}(?P<term>{_TERM})\*{{0,2}}\s*:\s+\S")
_TEMPLATES = {
    "en": ["What does {term_as_is} mean?", "How is {term_as_is} defined?", "Explain the term {term_as_is}.",
           "What is meant by {term_as_is} in {ctx}?", "{term_as_is}: what is that?"],
    "de": ["Was bedeutet {term_as_is}?", "Wie ist {term_as_is} definiert?", "Was versteht man unter {term_as_is}?",
           "Was heißt {term_as_is} in {ctx}?"],
}


def terms_in(sentence: str, glossary: bool) -> list[str]:
    """Terms a sentence defines (markup-aware: emphasis marks the term)."""
    found = []
    for pattern in _PATTERNS:
        found += [m.group("term").strip() for m in pattern.finditer(sentence)]
    if glossary and not found:
        m = _GLOSSARY_LINE.match(sentence)
        if m:
            found.append(m.group("term").strip())
    return [t for t in dict.fromkeys(found) if 1 <= len(t.split()) <= 5]


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    seen: set[str] = set()
    for p in ctx.shuffled(ctx.corpus.citable(), "definition"):
        lang = p.language if p.language in _TEMPLATES else "en"
        glossary = bool(_GLOSSARY_SECTION.search(p.section_title))
        # the sentence splitter must see the emphasis marks, which say where a term is
        for sentence in sentences(p.text, lang):
            for term in terms_in(sentence, glossary):
                if term.lower() in seen:
                    continue
                seen.add(term.lower())
                context = context_of(p)
                templates = _TEMPLATES[lang] if context else [t for t in _TEMPLATES[lang] if "{ctx}" not in t]
                q = ctx.paraphraser.fill(templates, lang, term_as_is=term, ctx=context)
                yield Candidate(rule="definition", question=q, passages=(p,), evidence=clean_markup(sentence),
                                answer=(term,), language=lang)
