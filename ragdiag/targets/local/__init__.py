"""The local hybrid target: BM25 (bm25s) + FAISS vector legs + RRF + scoring + reranking.

It imitates Azure AI Search closely enough that a query profile means the same
thing on both, difference by difference (see README, "Local target"):

- keyword leg: BM25 per searchable field (bm25s; analysed like the field's Azure analyzer,
  `analyzers`), field scores
  summed with the scoring profile's text weights; filtered like Azure (the text
  leg is always pre-filtered) and capped at `max_text_recall_size` (default 1000)
- vector legs: one list per (vector query, field); `exhaustive` = exact search,
  otherwise HNSW; `preFilter` restricts candidates before top-k,
  `postFilter`/`strictPostFilter` filter the unfiltered top-k so the pool shrinks
  (one shard locally, so the two post modes coincide)
- fusion: weighted RRF with constant 60 (a single list keeps its own score)
- scoring-profile functions multiply the fused score (ragdiag.targets.local.scoring)
- semantic reranking: only the first 50 of the fused pool, scores 0..4, boosted by
  the profile's functions when the semantic configuration says BoostedRerankerScore

Every ranking breaks ties by document key (equal reranker scores keep the fused pool's
order, itself key-tie-broken). Every stage lands in the returned `Trace`.
The index is persisted on disk and rebuilt only when its inputs change.

Modules, one concept each: `index` (building, persisting, opening), `keyword`,
`vector`, `fusion`, `filtering`, `rerank`, `scoring` (document boosts), `ranking`
(the shared tie-break order) and `target` (`LocalTarget`, which runs the stages).
"""

from ragdiag.targets.local.index import (
    FORMAT_VERSION,
    LocalIndexSpec,
    default_index_dir,
)
from ragdiag.targets.local.index import joined as _joined
from ragdiag.targets.local.index import semantic_text as _semantic_text
from ragdiag.targets.local.index import text_of as _text_of
from ragdiag.targets.local.keyword import KeywordField
from ragdiag.targets.local.rerank import caption as _caption
from ragdiag.targets.local.target import EMBED_BATCH, SEMANTICS_VERSION, LocalTarget
from ragdiag.targets.local.vector import normalise as _normalise

__all__ = ["EMBED_BATCH", "FORMAT_VERSION", "SEMANTICS_VERSION", "KeywordField", "LocalIndexSpec",
           "LocalTarget", "default_index_dir", "_caption", "_joined", "_normalise", "_semantic_text",
           "_text_of"]
