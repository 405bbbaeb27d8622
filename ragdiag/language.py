"""Content language of a corpus or question set, from function-word frequencies.

ragdiag only has to tell the languages its analyzers support apart (English and German
first), on whole corpora rather than single sentences, so a function-word profile is
enough and deterministic: the share of tokens that are among a language's commonest
function words is high for that language (20-40 % of running text) and low for the others.
A language is reported only with evidence: too few words, or no profile clearly ahead,
is ``None`` with the reason, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["LanguageGuess", "detect_language", "FUNCTION_WORDS"]

# The commonest function words of each language (articles, pronouns, prepositions,
# conjunctions, auxiliaries), few enough that the lists do not overlap in meaning.
# Words shared by the two lists ("in", "an", "was", "die" as an English verb) are dropped
# from both, so a hit counts for one language only.
_RAW = {
    "en": "the of and to a is that for it with as was on be by this are or from at an not "
    "which have has but they their you we can will would there been were its if these "
    "those also than other into more such when what who",
    "de": "der die das und ist nicht ein eine einer einen dem den des zu mit sich auf für "
    "von im auch es sind wird werden bei oder wie aus nach noch nur wenn kann können "
    "über durch dass zum zur wir sie ich er vom sowie diese dieser",
}
_SHARED = set(_RAW["en"].split()) & set(_RAW["de"].split())
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(w for w in words.split() if w not in _SHARED) for lang, words in _RAW.items()
}

MIN_WORDS = 40  # below this, function-word shares are too noisy to name a language
MIN_SHARE = 0.08  # the winner's function words must be at least this share of all words
MIN_LEAD = 2.0  # ... and this many times the runner-up's share

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class LanguageGuess:
    """The detected language (``None`` when the evidence is too thin) and why."""

    code: str | None
    words: int
    shares: dict[str, float] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "words": self.words,
                "shares": {k: round(v, 4) for k, v in self.shares.items()}, "reason": self.reason}


def detect_language(texts: Iterable[str], max_words: int = 200_000) -> LanguageGuess:
    """The language of ``texts`` taken together (a corpus sample or a question set)."""
    counts = {lang: 0 for lang in FUNCTION_WORDS}
    words = 0
    for text in texts:
        for m in _WORD.finditer(text or ""):
            w = m.group().lower()
            words += 1
            for lang, vocab in FUNCTION_WORDS.items():
                if w in vocab:
                    counts[lang] += 1
        if words >= max_words:
            break
    if words < MIN_WORDS:
        return LanguageGuess(None, words, {}, f"only {words} words (at least {MIN_WORDS} needed)")
    shares = {lang: n / words for lang, n in counts.items()}
    ranked = sorted(shares.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < MIN_SHARE:
        return LanguageGuess(None, words, shares,
                             f"no known language: function words are {top:.0%} of the words "
                             f"(at least {MIN_SHARE:.0%} expected)")
    if second > 0 and top < MIN_LEAD * second:
        return LanguageGuess(None, words, shares,
                             f"mixed: {best} {top:.0%} vs {ranked[1][0]} {second:.0%} function words")
    return LanguageGuess(best, words, shares, f"{best}: function words are {top:.0%} of {words} words")
