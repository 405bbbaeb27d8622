"""Related words from the corpus itself: an association thesaurus, for domains the synonym
table does not know (a physics abstract has no "agreement -> contract").

Two words are associated when they occur in the same records more often than their
frequencies suggest: for a word w, the related word is the v (not w's stem, not in the
passage being asked about) maximising co(w, v) / sqrt(df(v)) over the records that contain
w, among the words found in at least `MIN_SHARE` of those records (and in at least two). This is query expansion's classic association measure turned around: the
drafted question keeps the topic but not every word of its source, as a user's question
does. Deterministic (ties broken by the word).
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cached_property

from ragdiag.drafting.corpus import Corpus
from ragdiag.drafting.text import content_words, stems

__all__ = ["AssociationThesaurus"]

MAX_POSTINGS = 300  # records read per word (the first ones, in index order)
MIN_CO = 2
MIN_SHARE = 0.2


class AssociationThesaurus:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus

    @cached_property
    def _index(self) -> tuple[list[set[str]], dict[str, list[int]], Counter[str]]:
        docs = [set(w for w in content_words(p.text) if len(w) > 3 and not any(ch.isdigit() for ch in w))
                for p in self.corpus.citable()]
        postings: dict[str, list[int]] = {}
        for i, words in enumerate(docs):
            for w in words:
                postings.setdefault(w, []).append(i)
        df = Counter({w: len(ix) for w, ix in postings.items()})
        return docs, postings, df

    def related(self, word: str, exclude: set[str], language: str = "en") -> str | None:
        """The word most associated with `word` that is not in `exclude` and not a form of it."""
        docs, postings, df = self._index
        rows = postings.get(word, [])[:MAX_POSTINGS]
        if not rows:
            return None
        co: Counter[str] = Counter()
        for i in rows:
            co.update(docs[i])
        stem = stems([word], language)[0]
        best, best_score = None, 0.0
        for v, n in sorted(co.items()):
            if n < max(MIN_CO, MIN_SHARE * len(rows)) or v == word or v in exclude or df[v] > max(3, len(docs) // 10):
                continue
            score = n / math.sqrt(df[v])
            if score > best_score and stems([v], language)[0] != stem:
                best, best_score = v, score
        return best
