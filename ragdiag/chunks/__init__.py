"""Chunk boundary analysis: what chunking did to the text before retrieval ever ran.

`analyse_chunks` streams index records once and measures, over the chunk-level
records (``level == "evidence"`` when the index has a level field, else every
record):

- **size** in tokens (tiktoken ``cl100k``): min, p5 ... p95, max, a histogram,
  tiny (< `min_tokens`) and oversized (> `max_tokens`) chunks;
- **boundaries** at both ends, by a fast line/regex classifier (no sentence
  splitter runs per chunk): a chunk *starts mid-sentence* when its first line
  begins lowercase, with punctuation or with a connective ("And", "Or", "Und",
  ...) and is no heading, table row or list item, or when the previous chunk of
  its document ended mid-sentence and the two do not overlap; it *ends
  mid-sentence* when its last line neither ends with sentence-final punctuation
  (``. ! ? : ; " ' )`` and typographic quotes) nor is a table row, a list item or
  a heading. The end classes are exclusive: a chunk that ends with a heading
  line counts as *heading separated from its body*, not as mid-sentence (unless
  the next chunk continues it in lowercase: then the "heading" was a cut line);
- **overlap** between consecutive chunks of a document (ordered by position):
  the longest word sequence that ends one chunk and starts the next (at least
  `MIN_OVERLAP_WORDS` words, at most about `HEAD_CHARS` characters);
- **structure**: tables split across chunks (a chunk ends inside a table and the
  next chunk of the document continues it without a header row, or a table
  header without body ends a chunk; both chunks of a cut count), headings
  separated from their body (a chunk ending with a heading line, or holding
  only headings), lists cut (a chunk ends in a list item and the next starts
  mid-sentence or continues the numbering);
- **citation metadata**: document id (the parent id stands in when the index
  has no document-id field), page, position, parent id present and non-empty on
  each chunk (section title as information); a chunk lacking any of document
  id, page or position counts as not citable;
- **duplicates**: exact (hash of the word sequence, ASCII case-folded,
  whitespace-insensitive) and near (one-permutation MinHash of word 3-shingles,
  16 bins, LSH 4 bands x 4 rows, estimated Jaccard >= `NEAR_DUPLICATE_JACCARD`).

Streaming speed and bounded memory: see `ragdiag.chunks.analyser`.
`straddling_answers` checks, for each answerable goldset case, whether each
``expect_answer_contains`` string lies inside one chunk, only across the
boundary of two consecutive chunks, or nowhere in the expected documents.

The modules: `fields` (which record fields hold what), `boundaries` (the
line classifiers and one chunk's summary), `tokens` (token counting and the
estimate), `duplicates` (hashes, MinHash, LSH), `report` (`ChunkReport`),
`analyser` (`analyse_chunks`), `answers` (`straddling_answers`) and `histogram`
(bins of one width).

`ragdiag chunks FILE` (a chunk export, no index): `files` (JSONL/JSON/CSV/Parquet
and the field roles), `source` (source documents; locating a chunk in its
source), `sentences` (the English/German sentence-boundary rules at a cut, which
the streaming analyser uses too), `cuts` (per-chunk flags of one document, against
the source or from aligned neighbours) and `export` (`check_chunk_file`: status,
headline, counts, examples in context, per-document figures).
"""

from __future__ import annotations

from ragdiag.chunks.analyser import analyse_chunks
from ragdiag.chunks.answers import StraddleRow, doc_id_of_key, iter_with_copy, straddling_answers
from ragdiag.chunks.boundaries import classify_end, classify_start, is_heading
from ragdiag.chunks.duplicates import batch_numeric
from ragdiag.chunks.fields import ChunkFields
from ragdiag.chunks.report import ChunkReport
from ragdiag.chunks.tokens import TOKEN_ENCODING, token_counter

__all__ = [
    "ChunkFields",
    "ChunkReport",
    "StraddleRow",
    "analyse_chunks",
    "straddling_answers",
    "doc_id_of_key",
    "iter_with_copy",
    "batch_numeric",
    "is_heading",
    "token_counter",
    "classify_start",
    "classify_end",
    "TOKEN_ENCODING",
]

