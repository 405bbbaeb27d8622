"""Exact-id lookups: error codes, SKUs, contract and ticket numbers found in the corpus.

A code that occurs in more than `MAX_MENTIONS` passages is not an exact-id question (the
answer would be everywhere); every passage that mentions the code is an expected source.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext, clean_markup
from ragdiag.drafting.text import CODE_RE, sentences

__all__ = ["draft", "MAX_MENTIONS"]

MAX_MENTIONS = 6

_KIND_WORDS = {
    "error": re.compile(r"\b(?:error|fault|alarm|code|Fehler\w*|Störung\w*|Meldung)\s*$", re.I),
    "contract": re.compile(r"\b(?:contract|agreement|Vertrag\w*|Vertragsnummer)\s*(?:number|no\.?|nummer)?\s*$", re.I),
}
_TEMPLATES = {
    "en": {"error": ["What does error code {code_as_is} mean?", "{code_as_is}: what kind of fault is that?",
                     "What is behind the fault message {code_as_is}?"],
           "contract": ["Which agreement has the number {code_as_is}?", "What is contract {code_as_is} about?"],
           "other": ["What is {code_as_is}?", "Find the record on {code_as_is}.", "{code_as_is}: what do we have on it?"]},
    "de": {"error": ["Was bedeutet der Fehlercode {code_as_is}?", "{code_as_is}: was für eine Störung ist das?"],
           "contract": ["Welcher Vertrag hat die Nummer {code_as_is}?", "Worum geht es im Vertrag {code_as_is}?"],
           "other": ["Was ist {code_as_is}?", "Was wissen wir über {code_as_is}?"]},
}


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    mentions: dict[str, list[str]] = {}
    for p in ctx.corpus.citable():
        for code in dict.fromkeys(CODE_RE.findall(p.text)):
            mentions.setdefault(code, []).append(p.key)
    seen: set[str] = set()
    for p in ctx.shuffled(ctx.corpus.citable(), "exact_id"):
        lang = p.language if p.language in _TEMPLATES else "en"
        for sentence in sentences(clean_markup(p.text), lang):
            for m in CODE_RE.finditer(sentence):
                code = m.group()
                keys = mentions.get(code, [])
                if code in seen or not 0 < len(keys) <= MAX_MENTIONS:
                    continue
                seen.add(code)
                before = sentence[:m.start()]
                kind = next((k for k, pat in _KIND_WORDS.items() if pat.search(before)), "other")
                if kind == "other" and re.fullmatch(r"E-\d{3,5}", code):
                    kind = "error"
                q = ctx.paraphraser.fill(_TEMPLATES[lang][kind], lang, code_as_is=code)
                yield Candidate(rule="exact_id", question=q, passages=(p,), evidence=sentence,
                                answer=(code,), language=lang,
                                also_relevant=tuple(k for k in keys if k != p.key))
