"""Expected sources found by search on the target, and the support test of refusals.

Near-duplicates: a keyword search (no filter, no identity) for the evidence sentence, each
hit kept only when its text really holds the sentence (contained after normalisation, or
80 % of the sentence's word 5-grams), so the expected sources do not depend on which
profile ranks well. Support: the idf-weighted share of a question's content stems found in
the best of the top hits of a keyword and a text search; a refusal is drafted only below
`REFUSAL_SUPPORT`, so a name or code the corpus lacks weighs most.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

from ragdiag.drafting.corpus import Corpus, Passage
from ragdiag.drafting.text import content_words, stems

__all__ = ["SourceFinder", "REFUSAL_SUPPORT", "normalise"]

REFUSAL_SUPPORT = 0.5
SHINGLE = 5
CONTAINMENT = 0.8
SEARCH_DEPTH = 30
MAX_NEAR_DUPLICATES = 8

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}


class SourceFinder:
    """Searches the target (read-only) on behalf of the drafting rules."""

    def __init__(self, target: Any, corpus: Corpus) -> None:
        self.target = target
        self.corpus = corpus
        self.requests = 0

    def _search(self, text: str) -> list[str]:
        from ragdiag.model import SearchRequest
        from ragdiag.policy.text import keywords

        query = keywords(text)
        if not query.strip():
            return []
        self.requests += 1
        trace = self.target.search(SearchRequest(search=query, top=SEARCH_DEPTH))
        return list(trace.keys)

    def near_duplicates(self, evidence: str, exclude: Iterable[str] = (),
                        documents: Iterable[str] | None = None) -> list[str]:
        """Keys of records (other than `exclude`; of `documents` when given, because a question
        that names its document is not answered by the same clause in another one) whose text
        holds the evidence sentence."""
        docs = set(documents) if documents is not None else None
        target_norm = normalise(evidence)
        if len(target_norm.split()) < 3:
            return []
        ev_shingles = _shingles(target_norm.split())
        skip = set(exclude)
        out = []
        for key in self._search(evidence):
            p = self.corpus.by_key.get(key)
            if key in skip or p is None or (docs is not None and p.doc_id not in docs):
                continue
            text = normalise(p.text)
            if target_norm in text or len(ev_shingles & _shingles(text.split())) >= CONTAINMENT * len(ev_shingles):
                out.append(key)
            if len(out) >= MAX_NEAR_DUPLICATES:
                break
        return out

    @cached_property
    def _stem_df(self) -> Counter[str]:
        df: Counter[str] = Counter()
        for lang in sorted(self.corpus.languages()):
            for p in self.corpus.passages:
                if p.language == lang:
                    df.update(set(stems(content_words(p.text), lang)))
        return df

    def _idf(self, stem: str) -> float:
        n = len(self.corpus.passages)
        return math.log((n + 1) / (self._stem_df.get(stem, 0) + 1)) + 0.1

    def support(self, question: str, language: str = "en",
                readable: Callable[[Passage], bool] | None = None) -> tuple[float, str | None]:
        """(best idf-weighted share of the question's stems in one record, that record's key),
        over the top keyword hits for the question (only records `readable` allows)."""
        q = set(stems(content_words(question), language))
        if not q:
            return 0.0, None
        total = sum(self._idf(s) for s in q)
        best, best_key = 0.0, None
        for key in self._search(question):
            p = self.corpus.by_key.get(key)
            if p is None or (readable is not None and not readable(p)):
                continue
            have = set(stems(content_words(p.text + " " + p.title), p.language if p.language else language))
            share = sum(self._idf(s) for s in q & have) / total
            if share > best:
                best, best_key = share, key
        return best, best_key
