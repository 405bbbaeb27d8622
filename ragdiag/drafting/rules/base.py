"""What every rule receives: the corpus in a seeded order, rarity of words, the paraphraser.

Rules are generators: they walk the passages in an order shuffled by the seed and yield
candidates until drafting has enough, so a large corpus is never segmented whole.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ragdiag.drafting.corpus import Corpus, Passage
from ragdiag.drafting.paraphrase import Paraphraser
from ragdiag.drafting.text import content_words
from ragdiag.drafting.thesaurus import AssociationThesaurus

__all__ = ["RuleContext", "context_of", "clean_markup"]

_MARKUP = re.compile(r"[*`#]+|(?<![^\W_])_+|_+(?![^\W_])|'{2,}|^=+\s*|\s*=+$", re.M)
_JOINER = re.compile(r"(?<=[^\W_])_+(?=[^\W_])")  # Nikola_Tesla: a word separator, not emphasis


def clean_markup(text: str) -> str:
    """Text without Markdown emphasis and heading marks and MediaWiki emphasis ('') and heading
    (== x ==) marks, line breaks kept; an underscore between two letters is a space (a title
    like Nikola_Tesla must not become NikolaTesla)."""
    text = _MARKUP.sub("", _JOINER.sub(" ", text))
    return "\n".join(" ".join(line.split()) for line in text.splitlines()).strip()


#: a rule reads at most this many passages (in its seeded order): drafting a large corpus
#: stays bounded, and a rule that finds nothing in them says so in the draft's notes
SCAN_LIMIT = 4000


@dataclass
class RuleContext:
    corpus: Corpus
    seed: int = 0
    identities: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scan_limit: int = SCAN_LIMIT

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.paraphraser = Paraphraser(random.Random(self.seed + 1))

    def shuffled(self, passages: list[Passage], salt: str) -> Iterator[Passage]:
        """`passages` in an order fixed by the seed and the rule (`salt`)."""
        order = list(passages)
        random.Random(f"{self.seed}:{salt}").shuffle(order)
        yield from order[:self.scan_limit]

    @cached_property
    def thesaurus(self) -> AssociationThesaurus:
        return AssociationThesaurus(self.corpus)

    @cached_property
    def _df(self) -> Counter[str]:
        df: Counter[str] = Counter()
        for p in self.corpus.citable():
            df.update(set(content_words(p.text)))
        return df

    def idf(self, word: str) -> float:
        n = max(1, len(self.corpus.citable()))
        return math.log((n + 1) / (self._df.get(word.lower(), 0) + 1))


_GENERIC_TITLE = re.compile(r"^\s*[A-Z]{2,4}-\d{3,6}\s*:\s*")


def context_of(p: Passage) -> str:
    """What a question names to say where it asks (the document's title, shortened), or ''."""
    title = clean_markup(p.title)
    title = _GENERIC_TITLE.sub("", title)
    title = title.split(":")[0].strip() if ":" in title and len(title.split(":")[0]) > 6 else title
    return title
