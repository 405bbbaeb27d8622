"""Overviews: a document asked about as a whole, by its title (and summary where the index
has one); a corpus without titles is asked about by its record's rarest shared words."""

from __future__ import annotations

from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of
from ragdiag.drafting.text import content_words

__all__ = ["draft"]

_TEMPLATES = {
    "en": ["Give me an overview of {ctx}.", "What is {ctx} about?", "Summarise {ctx}.",
           "What do we know about {ctx}?"],
    "de": ["Worum geht es in {ctx}?", "Gib mir einen Überblick über {ctx}.", "Was wissen wir über {ctx}?"],
}
_TOPIC = {"en": ["What is known about {ctx}?", "Give an overview of {ctx}.", "Research on {ctx}?"],
          "de": ["Was ist über {ctx} bekannt?"]}


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    docs = ctx.corpus.documents()
    order = list(docs)
    ctx.rng.shuffle(order)
    for doc_id in order:
        records = docs[doc_id]
        whole = next((r for r in records if r.level == "document"), None)
        first = next((r for r in records if r.citable), None)
        drawn = whole or first
        if drawn is None:
            continue
        lang = drawn.language if drawn.language in _TEMPLATES else "en"
        context = context_of(drawn)
        if context:
            q = ctx.paraphraser.fill(_TEMPLATES[lang], lang, ctx=context)
            evidence = clean_markup(drawn.title + (f" — {drawn.summary}" if drawn.summary else ""))
        else:  # no title: the record's rarest words that other records share (a topic, not a typo)
            words = [w for w in dict.fromkeys(content_words(drawn.text)) if len(w) > 3 and ctx._df.get(w, 0) >= 2]
            best = sorted(words, key=lambda w: -ctx.idf(w))[:4]
            if len(best) < 3:
                continue
            topic = [w for w in words if w in best]
            ctx.rng.shuffle(topic)
            q = ctx.paraphraser.fill(_TOPIC[lang], lang, ctx=" ".join(topic))
            evidence = clean_markup(drawn.text)[:200]
        passages = (drawn,) + ((first,) if whole is not None and first is not None and first is not whole else ())
        yield Candidate(rule="overview", question=q, passages=passages, evidence=evidence, language=lang)
