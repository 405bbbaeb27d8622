"""Overviews: a document asked about as a whole, by its title (and summary where the index
has one). A corpus without titles is asked about by its record's topic: the five words with
the highest tf-idf that other records share, words among the record's first `LEAD` counting
double (a record's lead states its subject: titles, first sentences), about half of them
replaced by a word the corpus associates with them (`thesaurus`), in a shuffled order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of
from ragdiag.drafting.text import OVERLAP_CAP, content_words, lexical_overlap, searchable_text

MAX_SOURCES = 20  # passages of one document listed as sources of its overview question

__all__ = ["draft", "TOPIC_WORDS", "REPLACE_SHARE"]

TOPIC_WORDS = 5
LEAD = 8
REPLACE_SHARE = 0.5

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
        cited = [r for r in records if r.citable and r is not drawn]
        passages = (drawn, *cited[:MAX_SOURCES - 1])
        whole_text = " ".join(searchable_text(r) for r in passages)
        q = None
        if context:
            q = ctx.paraphraser.fill(_TEMPLATES[lang], lang, ctx=context)
            evidence = clean_markup(drawn.title + (f" — {drawn.summary}" if drawn.summary else ""))
            if (lexical_overlap(q, whole_text, lang) or 0.0) > OVERLAP_CAP:
                q = None  # the title copied: ask by the document's subject instead
        if q is None:  # no title, or a copied one: topic words, partly replaced by associated ones
            words = content_words(" ".join(r.text for r in passages))
            title_words = set(content_words(drawn.title))
            tf = Counter(w for w in words if len(w) > 3 and ctx._df.get(w, 0) >= 2 and w not in title_words)
            lead = set(content_words(drawn.text)[:LEAD])
            best = sorted(tf, key=lambda w: (-tf[w] * ctx.idf(w) * (2 if w in lead else 1), w))[:TOPIC_WORDS]
            if len(best) < 3:
                continue
            own = set(words) | title_words
            topic = []
            for w in best:
                alt = ctx.thesaurus.related(w, own | set(topic), lang) if ctx.rng.random() < REPLACE_SHARE else None
                topic.append(alt or w)
            ctx.rng.shuffle(topic)
            q = ctx.paraphraser.fill(_TOPIC[lang], lang, ctx=" ".join(topic))
            evidence = clean_markup(drawn.text)[:200]
        yield Candidate(rule="overview", question=q, passages=passages, evidence=evidence, language=lang)
