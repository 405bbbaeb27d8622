"""Words of questions and passages: content words, stems, sentences and lexical overlap.

The overlap measure says how much of a drafted question a keyword engine could match
verbatim in its source: the share of the question's content words (stopwords, question
words and request verbs removed; the language's Snowball stem compared) that occur in the
source passage. A drafted goldset whose questions copy their sources would let BM25 win by
construction; this is the number that shows whether paraphrasing moved them away.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ragdiag.policy.text import CODE_PATTERN, FILLER, STOPWORDS

__all__ = ["content_words", "stems", "lexical_overlap", "sentences", "CODE_RE", "NUMBER_RE", "OVERLAP_CAP",
           "CAP_EXEMPT", "NAMES_CONTEXT", "lexical_overlap_without", "searchable_text"]

#: a drafted question whose content words are found in its source (title, section title and
#: text: what a keyword engine searches) above this share copies its source: dropped, or kept
#: and flagged for rules whose question is about the id or term itself (CAP_EXEMPT)
OVERLAP_CAP = 0.75
CAP_EXEMPT = frozenset({"exact_id", "definition", "refusal_out_of_corpus", "refusal_restricted"})
#: rules whose question names its document (title) as context: the cap applies to the rest of
#: the question (an overview's question is about the title itself, so the whole of it counts)
NAMES_CONTEXT = frozenset({"fact", "verification", "comparison", "table"})


def searchable_text(passage: object) -> str:
    """What a keyword engine matches a question against: title, section title and text."""
    return " ".join(str(getattr(passage, a, "") or "") for a in ("title", "section_title", "text"))

CODE_RE = re.compile(rf"(?<![\w-]){CODE_PATTERN}(?![\w-])")
NUMBER_RE = re.compile(r"\d")
_WORD = re.compile(r"[^\W_][\w\-]*", re.UNICODE)
# question words of the templates (not of the source): they would count as "not copied"
_EXTRA_STOP = frozenset("""
true correct right whether according say says said tell according us our we give kind brief short
since via per ab seit least
research find record set named person connection differ different confirm really meant term behind message
versus defined
vergleiche unterscheiden angegeben genannt festgelegt wirklich gilt steht versteht heißt definiert
stimmt richtig laut gemäss gemäß steht kurz überblick ueberblick
about applies explain know known mean means overview summarise summarize value
worum geht gib bekannt wissen nennt zusammenhang welche welcher welches wert bedeutet mir man
""".split())


def content_words(text: str) -> list[str]:
    """The words that carry search content, lower case, in order (repeats kept)."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group().lower().strip("-")
        if w and w not in STOPWORDS and w not in FILLER and w not in _EXTRA_STOP:
            out.append(w)
    return out


@lru_cache(maxsize=4)
def _stemmer(language: str):
    import Stemmer  # PyStemmer, the stemmer bm25s uses (extra [local])

    return Stemmer.Stemmer("german" if language == "de" else "english")


def stems(words: list[str], language: str = "en") -> list[str]:
    return list(_stemmer(language).stemWords(words))


def lexical_overlap(question: str, source: str, language: str = "en") -> float | None:
    """Share of the question's content words (by stem) found in `source`; None without any."""
    q = set(stems(content_words(question), language))
    if not q:
        return None
    s = set(stems(content_words(source), language))
    return len(q & s) / len(q)


def lexical_overlap_without(question: str, source: str, exclude: str, language: str = "en") -> float | None:
    """`lexical_overlap` of the question's words other than those of `exclude` (the document a
    question names as its context: a slot, not a copy); None when nothing is left."""
    drop = set(stems(content_words(exclude), language))
    q = set(stems(content_words(question), language)) - drop
    if not q:
        return None
    s = set(stems(content_words(source), language))
    return len(q & s) / len(q)


def sentences(text: str, language: str = "en") -> tuple[str, ...]:
    """Sentences of a passage (pysbd per line, so table rows and list items stay apart)."""
    from ragdiag.sample.chunking import split_sentences

    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.extend(split_sentences(line, language))
    return tuple(out)
