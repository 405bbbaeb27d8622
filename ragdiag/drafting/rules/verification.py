"""Verification: a dated statement asked back as a claim, half of them with the date or
value changed (the answer is the true one), so a system must read, not echo."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext
from ragdiag.drafting.rules.facts import valued_sentences

__all__ = ["draft", "shifted"]

_TEMPLATES = {
    "en": ["Is it true that the {topic} in {ctx} is {value_as_is}?", "Does {ctx} really give {value_as_is} for the {topic}?",
           "Can you confirm {value_as_is} as the {topic} of {ctx}?"],
    "de": ["Stimmt es, dass bei {ctx} für {topic} {value_as_is} gilt?", "Ist bei {ctx} wirklich {value_as_is} für {topic} festgelegt?"],
}


def shifted(value: str, rng) -> str:
    """`value` with its last number changed (a year by 1-3, anything else by a few units)."""
    numbers = list(re.finditer(r"\d+", value))
    if not numbers:
        return value
    m = numbers[-1]
    n = int(m.group())
    delta = rng.choice([1, 2, 3]) * rng.choice([-1, 1])
    new = n + delta if n > 3 else n + abs(delta)
    return value[:m.start()] + str(new).zfill(len(m.group())) + value[m.end():]


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    for p in ctx.shuffled(ctx.corpus.citable(), "verification"):
        lang = p.language if p.language in _TEMPLATES else "en"
        for sentence, value, topic_text, context in valued_sentences(p, ctx, lambda kind: kind in ("date", "year")):
            claim = shifted(value.text, ctx.rng) if ctx.rng.random() < 0.5 else value.text
            q = ctx.paraphraser.fill(_TEMPLATES[lang], lang, topic=topic_text, ctx=context, value_as_is=claim)
            yield Candidate(rule="verification", question=q, passages=(p,), evidence=sentence,
                            answer=(value.text,), language=lang)
            break
