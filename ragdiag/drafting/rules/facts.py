"""Facts: sentences with an amount, a duration, a date, a time, a measure or a named person.

The question asks for the value: the question word comes from the value's kind, the topic
from the rarest content words around the value (not the sentence's phrase), the context
from the document's title. Also used by the restricted-document refusals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.corpus import Passage
from ragdiag.drafting.rules.base import RuleContext, clean_markup, context_of
from ragdiag.drafting.rules.values import QUESTION_WORDS, Value, find_values
from ragdiag.drafting.text import NUMBER_RE, content_words, sentences

__all__ = ["draft", "facts_in", "topic_words", "valued_sentences"]

_VERBISH = frozenset("""
requires required must shall will may can apply applies applied agreed agree made make given give
set sets runs run provides provide amounts amount total totals need needs used uses use takes take
is are was were be been includes include including gilt gelten beträgt betragen wird werden wurde
muss müssen kann können darf dürfen erfolgt erfolgen liegt liegen hat haben
""".split())

_TEMPLATES = {
    "en": ["{wh} is the {topic} in {ctx}?", "For {ctx}, {whl} is the {topic}?",
           "In {ctx}, what is set for the {topic}?", "{ctx}: {whl} is the {topic}?"],
    "de": ["{wh} ist {topic} bei {ctx}?", "{ctx}: {whl} ist {topic}?", "Was gilt laut {ctx} für {topic}?"],
}
_PERSON = {"en": ["Who is named in connection with the {topic} in {ctx}?", "In {ctx}, which person is named for the {topic}?"],
           "de": ["Wer ist bei {ctx} im Zusammenhang mit {topic} genannt?", "Welche Person nennt {ctx} zu {topic}?"]}


_FUNCTION_AFTER_VERB = frozenset("the a an that to all its their his her by on in with for from of via at as "
                                 "this these any".split())


def _verbs(text: str) -> set[str]:
    """English words that read as verbs: ending in -s or -ed and followed by a function word
    ("survives the", "opened by"); a heuristic in place of a part-of-speech tagger."""
    tokens = re.findall(r"[^\W_][\w\-]*", text.lower())
    return {w for w, nxt in zip(tokens, tokens[1:], strict=False)
            if nxt in _FUNCTION_AFTER_VERB and ((w.endswith("s") and not w.endswith("ss")) or w.endswith("ed"))}


def topic_words(sentence: str, value: Value, ctx: RuleContext, context: str, n: int = 3,
                language: str = "en") -> list[str]:
    """The `n` rarest content words near the value (names, numbers, the context's words and
    verbs left out), in sentence order."""
    before = sentence[:value.start]
    after = sentence[value.end:]
    # the subject of a value usually precedes it; the words after it only when nothing does
    near = content_words(before)[-6:] or content_words(after)[:4]
    skip = set(content_words(context))
    if language == "en":
        skip |= _verbs(before + " " + after)
    raw = re.findall(r"[^\W_][\w\-]*", before + " " + after)
    capitalised = {w.lower() for i, w in enumerate(raw) if w[:1].isupper() and i > 0} if language == "en" else set()
    if language == "de":  # German nouns are capitalised: the topic is a noun, never a verb
        nouns = {w.lower() for w in raw if w[:1].isupper()}
        near = [w for w in near if w in nouns]
    words = [w for w in dict.fromkeys(near) if w not in skip and w not in _VERBISH and w not in capitalised
             and not NUMBER_RE.search(w) and len(w) > 2]
    best = sorted(words, key=lambda w: -ctx.idf(w))[:n]
    return [w for w in words if w in best]


def _original_case(words: list[str], sentence: str) -> str:
    out = []
    for w in words:
        m = re.search(rf"\b{re.escape(w)}\b", sentence, re.I)
        out.append(m.group() if m else w)
    return " ".join(out)


def valued_sentences(p: Passage, ctx: RuleContext, kinds: Callable[[str], bool]
                     ) -> Iterator[tuple[str, Value, str, str]]:
    """(sentence, its first value of an accepted kind, topic words, context) for each sentence
    of a titled, non-table passage: where a question can name its document."""
    lang = p.language if p.language in QUESTION_WORDS else "en"
    context = context_of(p)
    if not context or p.is_table:  # "how long is the notice period?" without saying where: unanswerable
        return
    for sentence in sentences(clean_markup(p.text), lang):
        values = [v for v in find_values(sentence) if kinds(v.kind)]
        if not values or len(sentence) > 400:
            continue
        topic = topic_words(sentence, values[0], ctx, context, language=lang)
        if topic:
            yield sentence, values[0], _original_case(topic, sentence), context


def facts_in(p: Passage, ctx: RuleContext, rule: str = "fact") -> Iterator[Candidate]:
    """Fact questions from one passage (one per sentence with a usable value)."""
    lang = p.language if p.language in _TEMPLATES else "en"
    for sentence, value, topic_text, context in valued_sentences(p, ctx, lambda kind: kind != "year"):
        wh = QUESTION_WORDS[lang][value.kind]
        pp = ctx.paraphraser
        if value.kind == "person":
            q = pp.fill(_PERSON[lang], lang, topic=topic_text, ctx=context)
        else:
            q = pp.fill(_TEMPLATES[lang], lang, wh=wh[:1].upper() + wh[1:], whl=wh, topic=topic_text, ctx=context)
        yield Candidate(rule=rule, question=q, passages=(p,), evidence=sentence, answer=(value.text,),
                        language=lang)


def draft(ctx: RuleContext) -> Iterator[Candidate]:
    for p in ctx.shuffled(ctx.corpus.citable(), "fact"):
        yield from facts_in(p, ctx)
