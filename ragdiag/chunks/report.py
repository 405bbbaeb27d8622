"""`ChunkReport`: what `analyse_chunks` measured (counts, shares, examples)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

BOUNDARY_MEASURES = ("mid_sentence_end", "mid_sentence_start", "split_table", "heading_separated",
                     "list_cut", "overlap", "exact_duplicate", "near_duplicate", "tiny",
                     "oversized", "missing_citation", "unpunctuated", "punctuation_moved", "mid_word",
                     "split_code")


@dataclass(frozen=True)
class ChunkReport:
    """What `analyse_chunks` measured. Shares are over `chunks` (over consecutive pairs for
    overlap; the mid-sentence shares over the chunk edges that were judged: a document's own start
    and end count as whole, nothing is judged in text without sentence punctuation); None when
    nothing was measured."""

    chunks: int
    records_seen: int
    chunk_records_seen: int
    documents: int
    sampled: bool
    sample_note: str
    tokenizer: str
    tokens_exact: int                          # chunks counted exactly (the rest estimated)
    token_estimate_error: float | None         # median relative error of the estimate on them
    min_tokens: int
    max_tokens: int
    fields: Mapping[str, Any]
    levels_seen: Mapping[str, int]
    empty: int
    tokens: Mapping[str, float | None]          # n, min, p5, p25, p50, p75, p95, max, mean
    token_histogram: tuple[tuple[int, int | None, int], ...]  # (from, to or None, chunks)
    tiny: int
    tiny_share: float | None
    oversized: int
    oversized_share: float | None
    start_classes: Mapping[str, int]
    end_classes: Mapping[str, int]
    mid_sentence_start: int
    mid_sentence_start_share: float | None
    mid_sentence_end: int
    mid_sentence_end_share: float | None
    pairs: int
    pairs_with_overlap: int
    overlap_share: float | None
    overlap_words_median: float | None
    overlap_words_max: int
    table_chunks: int
    split_table: int
    split_table_share: float | None
    heading_separated: int
    heading_separated_share: float | None
    list_cut: int
    list_cut_share: float | None
    metadata_present: Mapping[str, float | None]   # role -> share of chunks with a value
    missing_citation: int
    missing_citation_share: float | None
    exact_duplicates: int
    exact_duplicate_share: float | None
    duplicate_groups: int
    near_duplicates: int
    near_duplicate_share: float | None
    documents_reopened: int
    examples: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: chunks without any sentence punctuation: left out of the mid-sentence shares
    unpunctuated: int = 0
    unpunctuated_share: float | None = None
    #: chunks that start with the previous chunk's full stop (the chunker moved the separator)
    punctuation_moved: int = 0
    punctuation_moved_share: float | None = None
    #: chunks whose end cuts a word in two (the next chunk continues it)
    mid_word: int = 0
    mid_word_share: float | None = None
    #: chunks with an edge inside a code block or an include/markup line (either side of the cut)
    split_code: int = 0
    split_code_share: float | None = None
    #: citation role -> chunks lacking it where the corpus needs it ("document id", "page" for paged
    #: documents, "section or anchor" for Markdown and web documents)
    citation_lacking: Mapping[str, int] = field(default_factory=dict)
    #: whether the text had sentence punctuation to judge sentence cuts by (False: not judged)
    sentences_judged: bool = True
    #: the language whose sentence rules judged the cuts (detected on the first chunks)
    language: str = ""

    def share(self, measure: str) -> float | None:
        """The share of one of `BOUNDARY_MEASURES`."""
        return getattr(self, f"{measure}_share")

    def count(self, measure: str) -> int:
        if measure == "overlap":
            return self.pairs_with_overlap
        if measure in ("exact_duplicate", "near_duplicate"):
            return getattr(self, f"{measure}s")
        return getattr(self, measure)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["token_histogram"] = [list(r) for r in self.token_histogram]
        d["examples"] = {k: [list(r) for r in v] for k, v in self.examples.items()}
        d["fields"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.fields.items()}
        return d
