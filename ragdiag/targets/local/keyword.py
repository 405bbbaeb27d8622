"""The keyword leg: BM25 (Lucene variant, bm25s) per searchable field, scored on bm25s's arrays.

Each field is analysed like the Azure analyzer its index definition names (`analyzers`:
tokenising, stop words and stemming of that language; Standard Lucene when it names none),
and bm25s builds the eager BM25 score matrix from the resulting terms. Queries do not go
through bm25s: the query is analysed the same way, and each query term adds its
precomputed column of the CSC score matrix (`data`, `indices`, `indptr`, persisted as .npy
files and memory-mapped) to a float32 score vector, exactly the additions bm25s's
`get_scores` makes, without its per-call tokenizer set-up, progress bar and `np.add.at`.
Opening an index therefore needs neither bm25s nor scipy.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ragdiag.targets.local.analyzers import Analysis, Analyzer, analysis_for
from ragdiag.targets.local.ranking import top_rows

MMAP_MIN_BYTES = 1 << 20  # arrays below this size are read, not memory-mapped


def _load_array(path: Path) -> np.ndarray:
    if path.stat().st_size < MMAP_MIN_BYTES:
        arr = np.load(path)
        arr.flags.writeable = False  # as a read-only map would be
        return arr
    return np.load(path, mmap_mode="r").view(np.ndarray)


class KeywordField:
    """BM25 over one searchable field: its analysis, term vocabulary and the eager score matrix."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n_docs: int,
                 term_to_col: dict[str, int], analysis: Analysis) -> None:
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.n = int(n_docs)
        self.term_to_col = term_to_col
        self.analysis = analysis
        self.analyzer = Analyzer(analysis)
        self._query_cache: OrderedDict[str, tuple[int, ...]] = OrderedDict()

    # ---- building ------------------------------------------------------------------
    @classmethod
    def build(cls, texts: Sequence[str], analysis: Analysis | None = None) -> KeywordField:
        """Index `texts` analysed with `analysis` (default: Azure's default, Standard Lucene)."""
        import bm25s

        analysis = analysis or analysis_for(None)
        analyzer = Analyzer(analysis)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in analyzer.terms(text)] for text in texts]
        if not vocab:  # no field value has a term: nothing can match (bm25s needs one term)
            return cls(np.empty(0, dtype=np.float32), np.empty(0, dtype=np.int32),
                       np.zeros(1, dtype=np.int64), len(ids), {}, analysis)
        bm25 = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        bm25.index(ids, show_progress=False)
        col_of = {int(k): int(v) for k, v in bm25.vocab_dict.items() if k != ""}  # "": empty docs
        sc = bm25.scores
        term_to_col = {t: col_of[i] for t, i in vocab.items() if i in col_of}
        return cls(np.ascontiguousarray(sc["data"], dtype=np.float32),
                   np.ascontiguousarray(sc["indices"], dtype=np.int32),
                   np.ascontiguousarray(sc["indptr"], dtype=np.int64), int(sc["num_docs"]),
                   term_to_col, analysis)

    # ---- persistence -----------------------------------------------------------------
    def save(self, folder: Path, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for part in ("data", "indices", "indptr"):
            np.save(folder / f"{name}.{part}.npy", getattr(self, part))
        (folder / f"{name}.vocab.json").write_text(json.dumps({
            "n_docs": self.n, "terms": self.term_to_col, "analysis": self.analysis.describe()}),
            encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, name: str) -> KeywordField:
        # memory-mapped, viewed as plain arrays (a np.memmap slice costs a Python-level __getitem__);
        # a small array is read instead: every map holds a file descriptor, and an index of
        # thousands of fields ran out of them ("too many open files")
        arrays = [_load_array(folder / f"{name}.{part}.npy") for part in ("data", "indices", "indptr")]
        vocab = json.loads((folder / f"{name}.vocab.json").read_text(encoding="utf-8"))
        return cls(*arrays, vocab["n_docs"], vocab["terms"], Analysis.from_dict(vocab["analysis"]))

    # ---- querying --------------------------------------------------------------------
    def clear_cache(self) -> None:
        self._query_cache.clear()

    def query_columns(self, query: str) -> tuple[int, ...]:
        """Score-matrix columns of the query's terms, repeated terms repeated (as bm25s does)."""
        hit = self._query_cache.get(query)
        if hit is not None:
            return hit
        get = self.term_to_col.get
        cols = [c for c in (get(t) for t in self.analyzer.terms(query, query=True)) if c is not None]
        out = tuple(cols)
        self._query_cache[query] = out
        if len(self._query_cache) > 8192:
            self._query_cache.popitem(last=False)
        return out

    def scores(self, query: str) -> np.ndarray | None:
        """BM25 score of every record for `query` (float32), or None when no query term is known."""
        cols = self.query_columns(query)
        if not cols:
            return None
        out = np.zeros(self.n, dtype=np.float32)
        indptr, indices, data = self.indptr, self.indices, self.data
        for c in cols:
            a, b = indptr[c], indptr[c + 1]
            out[indices[a:b]] += data[a:b]  # a column holds each document once
        return out


    def has_term(self, word: str) -> np.ndarray | None:
        """Rows whose field holds the query token `word` (as this field analyses it); None when the
        field's analysis drops it (a stop word: Lucene removes the clause for this field)."""
        terms = [t for t in map(self.analyzer.term, self.analyzer.query_words(word)) if t]
        if not terms:
            return None
        out = np.zeros(self.n, dtype=bool)
        for t in terms:
            c = self.term_to_col.get(t)
            if c is not None:
                out[self.indices[self.indptr[c]:self.indptr[c + 1]]] = True
        return out


def _all_terms(fields: Mapping[str, KeywordField], text: str) -> np.ndarray | None:
    """``searchMode = all``: the rows that hold every query token in at least one searched field
    (a token a field drops as a stop word does not constrain that field). None: no constraint."""
    words = dict.fromkeys(w for f in fields.values() for w in f.analyzer.query_words(text))
    need = None
    for w in words:
        hit = None
        for f in fields.values():
            m = f.has_term(w)
            if m is None:  # dropped by this field's analysis: satisfied there
                hit = None
                break
            hit = m if hit is None else (hit | m)
        if hit is not None:
            need = hit if need is None else (need & hit)
    return need


def text_leg(fields: Mapping[str, KeywordField], text: str, weights: Mapping[str, float],
             allowed: np.ndarray | None, cap: int, key_rank: np.ndarray,
             search_mode: str = "any") -> tuple[np.ndarray, np.ndarray, int]:
    """Rows and scores of the keyword leg (top `cap`, ties by key) and how many rows matched.

    Field scores are summed with the scoring profile's text weights; only rows with a
    positive score that pass the filter (`allowed`) are candidates. ``search_mode = "all"``
    keeps only rows holding every query token (Azure's searchMode all, simple syntax).
    """
    total = None
    for name, f in fields.items():
        sc = f.scores(text)
        if sc is None:
            continue
        w = float(weights.get(name, 1.0))
        total = sc * w if total is None else total + sc * w
    if total is None:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32), 0
    cand = total > 0
    if search_mode == "all":
        need = _all_terms(fields, text)
        if need is not None:
            cand &= need
    if allowed is not None:
        cand &= allowed
    rows = np.flatnonzero(cand).astype(np.int32)
    top, scores = top_rows(total[rows], rows, key_rank, cap)
    return top, scores, int(rows.shape[0])
