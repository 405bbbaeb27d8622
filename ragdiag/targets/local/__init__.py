"""The local hybrid target: BM25 (bm25s) + FAISS vector legs + RRF + scoring + reranking.

It imitates Azure AI Search closely enough that a query profile means the same
thing on both, difference by difference (see README, "Local target"):

- keyword leg: BM25 per searchable field (bm25s, English stemming), field scores
  summed with the scoring profile's text weights; filtered like Azure (the text
  leg is always pre-filtered) and capped at `max_text_recall_size` (default 1000)
- vector legs: one FAISS list per (vector query, field); `exhaustive` = exact flat
  search, otherwise HNSW; `preFilter` restricts candidates before top-k,
  `postFilter`/`strictPostFilter` filter the unfiltered top-k so the pool shrinks
  (one shard locally, so the two post modes coincide)
- fusion: weighted RRF with constant 60 (a single list keeps its own score)
- scoring-profile functions multiply the fused score (ragdiag.targets.local.scoring)
- semantic reranking: only the first 50 of the fused pool, scores 0..4, boosted by
  the profile's functions when the semantic configuration says BoostedRerankerScore

Every stage lands in the returned `Trace`. The index is persisted on disk and
rebuilt only when its inputs change.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag import odata
from ragdiag.errors import InputDataError, TargetError
from ragdiag.model import RERANK_WINDOW, Hit, RankedList, SearchRequest, Trace
from ragdiag.model.schema import IndexSchema
from ragdiag.targets.local.scoring import document_boost, parse_scoring_parameters

FORMAT_VERSION = 1
# Bump when search semantics change, so cached traces of older code are never reused.
SEMANTICS_VERSION = 2  # 2: stale HNSW graphs are no longer reused after a rebuild
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class LocalIndexSpec:
    """What a local index is built from: records, schema, and how vectors are made."""

    name: str
    schema: IndexSchema
    vector_sources: Mapping[str, Sequence[str]]  # vector field -> text fields joined with " — "
    now: str | None = None  # reference time for freshness functions (ISO); None = wall clock


def _joined(record: Mapping[str, Any], fields: Sequence[str]) -> str:
    parts = []
    for f in fields:
        v = record.get(f)
        if v is None or v == "":
            continue
        parts.append(" ".join(map(str, v)) if isinstance(v, list | tuple) else str(v))
    return " — ".join(parts)


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(map(str, value))
    return str(value)


class _FieldBM25:
    """BM25 over one searchable field (bm25s), with its own tokenizer vocabulary."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self.tokenizer = _tokenizer()
        ids = self.tokenizer.tokenize(list(texts), update_vocab=True, return_as="ids",
                                      show_progress=False)
        self.bm25 = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        self.bm25.index(ids, show_progress=False)
        self.n = len(texts)

    def scores(self, query: str) -> np.ndarray | None:
        """BM25 score of every record for `query`, or None when no query term is known."""
        ids = self.tokenizer.tokenize([query], update_vocab=False, return_as="ids",
                                      show_progress=False)[0]
        ids = [i for i in ids if i != 0]  # 0 is bm25s's empty-token slot
        if not ids:
            return None
        return self.bm25.get_scores(ids)

    # The Snowball stemmer is a C object that cannot be pickled: drop it and
    # re-create it on load.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        tok = state["tokenizer"]
        state["tokenizer"] = (tok.word_to_stem, tok.stem_to_sid, tok.word_to_id)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        tok = _tokenizer()
        tok.word_to_stem, tok.stem_to_sid, tok.word_to_id = state["tokenizer"]
        state["tokenizer"] = tok
        self.__dict__.update(state)
        # Unpickled arrays carry non-canonical dtype objects, which makes numpy's np.add.at
        # (bm25s's scoring loop) take a slow path: re-view them with canonical dtypes (no copy).
        scores = getattr(self.bm25, "scores", None)
        if isinstance(scores, dict):
            for k, v in list(scores.items()):
                if isinstance(v, np.ndarray):
                    scores[k] = v.view(np.dtype(v.dtype.str))


def _tokenizer() -> Any:
    import Stemmer
    from bm25s.tokenization import Tokenizer

    return Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")


class LocalTarget:
    """A read-only, persisted hybrid index answering `SearchRequest`s with full traces."""

    capabilities = frozenset({"documents", "get_document", "security_values", "stages"})

    def __init__(self, path: Path, spec: LocalIndexSpec, records: list[dict[str, Any]],
                 vectors: dict[str, np.ndarray], semantic: np.ndarray | None,
                 bm25: dict[str, _FieldBM25], embedder: Any = None, reranker: Any = None) -> None:
        self.path = path
        self.spec = spec
        self.name = spec.name
        self._schema = spec.schema
        self.records = records
        self.keys = [r[spec.schema.key_field.name] for r in records]
        self.row_of = {k: i for i, k in enumerate(self.keys)}
        self.vectors = vectors
        self.semantic_vectors = semantic
        self.bm25 = bm25
        self.embedder = embedder
        self.reranker = reranker
        self._flat: dict[str, Any] = {}
        self._hnsw: dict[str, Any] = {}
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()
        self._text_cache: OrderedDict[Any, Any] = OrderedDict()
        self._vector_cache: OrderedDict[Any, Any] = OrderedDict()
        self._rerank_cache: OrderedDict[Any, dict[str, float]] = OrderedDict()
        self._now = (datetime.fromisoformat(spec.now.replace("Z", "+00:00"))
                     if spec.now else None)
        self.retrievable = tuple(f.name for f in spec.schema.fields
                                 if f.retrievable and not f.is_vector)

    # ---- building and opening ------------------------------------------------
    @staticmethod
    def input_hash(records_blob: bytes, spec: LocalIndexSpec, model_id: str) -> str:
        h = hashlib.sha256()
        h.update(f"format={FORMAT_VERSION}\nmodel={model_id}\n".encode())
        h.update(json.dumps(spec.schema.to_azure(), sort_keys=True).encode())
        h.update(json.dumps({k: list(v) for k, v in spec.vector_sources.items()}, sort_keys=True).encode())
        h.update(records_blob)
        return h.hexdigest()

    @classmethod
    def from_jsonl(cls, records_path: str | Path, spec: LocalIndexSpec, *, index_dir: str | Path,
                   embedder: Any, reranker: Any = None, progress: bool = True,
                   log: Callable[[str], None] | None = None) -> LocalTarget:
        """Open the persisted index for these inputs, building it first when they changed."""
        records_path = Path(records_path)
        try:
            blob = records_path.read_bytes()
        except FileNotFoundError as exc:
            raise InputDataError("records file not found; run `ragdiag sample build` for the sample",
                                 path=str(records_path)) from exc
        digest = cls.input_hash(blob, spec, embedder.model_id)
        index_dir = Path(index_dir)
        manifest = index_dir / "manifest.json"
        if manifest.exists():
            try:
                if json.loads(manifest.read_text()).get("input_hash") == digest:
                    return cls.open(index_dir, embedder=embedder, reranker=reranker)
            except (OSError, json.JSONDecodeError, pickle.UnpicklingError, EOFError):
                pass  # a damaged index is rebuilt below
        if log:
            log(f"building local index '{spec.name}' in {index_dir} (inputs changed or first run)")
        records = []
        for lineno, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputDataError(f"invalid JSON: {exc.msg}", path=str(records_path),
                                     line=lineno) from exc
        return cls.build(records, spec, index_dir=index_dir, embedder=embedder, reranker=reranker,
                         progress=progress, input_hash=digest)

    @classmethod
    def build(cls, records: Iterable[Mapping[str, Any]], spec: LocalIndexSpec, *,
              index_dir: str | Path, embedder: Any = None, reranker: Any = None,
              vectors: Mapping[str, np.ndarray] | None = None, progress: bool = True,
              input_hash: str | None = None, semantic: bool = True) -> LocalTarget:
        """Build and persist an index. Vectors come from `vectors`, the records, or the embedder."""
        schema = spec.schema
        key = schema.key_field.name
        vector_names = [f.name for f in schema.vector_fields]
        recs: list[dict[str, Any]] = []
        seen: set[str] = set()
        given = {k: [] for k in vector_names}
        for i, r in enumerate(records):
            if key not in r or r[key] in (None, ""):
                raise InputDataError(f"record {i} has no key field '{key}'")
            if r[key] in seen:
                raise InputDataError(f"duplicate key {r[key]!r} (record {i})")
            seen.add(r[key])
            clean = {k: v for k, v in r.items() if k not in vector_names}
            for vn in vector_names:
                if r.get(vn) is not None:
                    given[vn].append(r[vn])
            recs.append(clean)
        n = len(recs)
        vecs: dict[str, np.ndarray] = {}
        for vn in vector_names:
            if vectors is not None and vn in vectors:
                arr = np.asarray(vectors[vn], dtype=np.float32)
            elif len(given[vn]) == n and n:
                arr = np.asarray(given[vn], dtype=np.float32)
            else:
                sources = spec.vector_sources.get(vn)
                if not sources:
                    raise InputDataError(
                        f"vector field '{vn}' has no vectors in the records and no text source; "
                        f"set vector_sources['{vn}'] to the text fields to embed")
                if embedder is None:
                    raise InputDataError(f"vector field '{vn}' needs an embedder to be built")
                arr = embedder.embed([_joined(r, sources) for r in recs], progress=progress)
            if arr.shape[0] != n:
                raise InputDataError(f"vector field '{vn}' has {arr.shape[0]} vectors for {n} records")
            vecs[vn] = _normalise(arr)
        sem = None
        if semantic and embedder is not None and schema.semantic_configurations:
            sem = embedder.embed([_semantic_text(schema, r) for r in recs], progress=progress)
            sem = _normalise(sem)
        bm25 = {f: _FieldBM25([_text_of(r.get(f)) for r in recs]) for f in schema.searchable_fields}
        index_dir = Path(index_dir)
        (index_dir / "vectors").mkdir(parents=True, exist_ok=True)
        manifest = index_dir / "manifest.json"
        if manifest.exists():
            manifest.unlink()  # a half-written index must never look valid
        for stale in (index_dir / "vectors").glob("*.hnsw"):
            stale.unlink()  # HNSW graphs of the previous records would answer with wrong rows
        (index_dir / "schema.json").write_text(json.dumps(schema.to_azure(), indent=2))
        with open(index_dir / "records.pkl", "wb") as fh:
            pickle.dump(recs, fh, protocol=5)
        with open(index_dir / "bm25.pkl", "wb") as fh:
            pickle.dump(bm25, fh, protocol=5)
        for vn, arr in vecs.items():
            np.save(index_dir / "vectors" / f"{vn}.npy", arr)
        if sem is not None:
            np.save(index_dir / "semantic.npy", sem)
        manifest.write_text(json.dumps({
            "format_version": FORMAT_VERSION,
            "name": spec.name,
            "records": n,
            "input_hash": input_hash,
            "model_id": getattr(embedder, "model_id", None),
            "vector_sources": {k: list(v) for k, v in spec.vector_sources.items()},
            "now": spec.now,
        }, indent=2))
        return cls(index_dir, spec, recs, vecs, sem, bm25, embedder=embedder, reranker=reranker)

    @classmethod
    def open(cls, index_dir: str | Path, *, embedder: Any = None, reranker: Any = None) -> LocalTarget:
        index_dir = Path(index_dir)
        try:
            manifest = json.loads((index_dir / "manifest.json").read_text())
        except FileNotFoundError as exc:
            raise TargetError(f"no local index at {index_dir}: build it first") from exc
        if manifest.get("format_version") != FORMAT_VERSION:
            raise TargetError(f"local index at {index_dir} has format "
                              f"{manifest.get('format_version')}, expected {FORMAT_VERSION}: rebuild it")
        schema = IndexSchema.load(index_dir / "schema.json")
        spec = LocalIndexSpec(name=manifest["name"], schema=schema,
                              vector_sources=manifest.get("vector_sources", {}),
                              now=manifest.get("now"))
        with open(index_dir / "records.pkl", "rb") as fh:
            recs = pickle.load(fh)
        with open(index_dir / "bm25.pkl", "rb") as fh:
            bm25 = pickle.load(fh)
        vecs = {f.name: np.load(index_dir / "vectors" / f"{f.name}.npy") for f in schema.vector_fields}
        sem_path = index_dir / "semantic.npy"
        sem = np.load(sem_path) if sem_path.exists() else None
        return cls(index_dir, spec, recs, vecs, sem, bm25, embedder=embedder, reranker=reranker)

    # ---- Target protocol -----------------------------------------------------
    def fingerprint(self) -> str:
        """What the target would answer: index inputs, search semantics, reranker."""
        try:
            digest = json.loads((self.path / "manifest.json").read_text()).get("input_hash")
        except (OSError, json.JSONDecodeError):
            digest = None
        reranker = getattr(self.reranker, "name", type(self.reranker).__name__)
        return f"{self.name}:{digest}:semantics={SEMANTICS_VERSION}:reranker={reranker}"

    def schema(self) -> IndexSchema:
        return self._schema

    def count(self, filter: str | None = None) -> int:
        if not filter:
            return len(self.records)
        return int(self._mask(filter).sum())

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        mask = self._mask(filter) if filter else None
        for i, r in enumerate(self.records):
            if mask is not None and not mask[i]:
                continue
            yield {k: r.get(k) for k in select} if select else dict(r)

    def security_values(self, keys: Sequence[str], field: str) -> dict[str, tuple[str, ...] | None]:
        """Each key's values of `field`, read from the records (None for an unknown key)."""
        out: dict[str, tuple[str, ...] | None] = {}
        for k in keys:
            row = self.row_of.get(k)
            out[k] = None if row is None else tuple(self.records[row].get(field) or ())
        return out

    def get_document(self, key: str, select: Sequence[str] | None = None) -> dict[str, Any]:
        try:
            r = self.records[self.row_of[key]]
        except KeyError as exc:
            raise TargetError(f"no document with key {key!r} in index '{self.name}'") from exc
        return {k: r.get(k) for k in (select or self.retrievable)}

    # ---- filters ---------------------------------------------------------------
    def _mask(self, text: str) -> np.ndarray:
        """Boolean row mask of an OData filter, cached per filter text."""
        m = self._masks.get(text)
        if m is not None:
            self._masks.move_to_end(text)
            return m
        expr = odata.parse(text)
        odata.validate(expr, self._schema)
        fn = odata.compile_filter(expr)
        m = np.fromiter((fn(r) for r in self.records), dtype=bool, count=len(self.records))
        self._masks[text] = m
        if len(self._masks) > 512:
            self._masks.popitem(last=False)
        return m

    # ---- vector search -----------------------------------------------------------
    def _flat_index(self, field: str) -> Any:
        idx = self._flat.get(field)
        if idx is None:
            import faiss
            arr = self.vectors[field]
            idx = faiss.IndexFlatIP(arr.shape[1])
            idx.add(arr)
            self._flat[field] = idx
        return idx

    def _hnsw_index(self, field: str) -> Any:
        idx = self._hnsw.get(field)
        if idx is None:
            import faiss
            path = self.path / "vectors" / f"{field}.hnsw"
            prof = self._schema.vector_profile(self._schema.field(field).vector_profile)
            m = prof.m if prof else 16
            efc = prof.ef_construction if prof else 200
            efs = prof.ef_search if prof else 128
            idx = faiss.read_index(str(path)) if path.exists() else None
            if idx is not None and idx.ntotal != self.vectors[field].shape[0]:
                idx = None  # a graph of other records: rebuild it
            if idx is None:
                arr = self.vectors[field]
                idx = faiss.IndexHNSWFlat(arr.shape[1], max(4, m), faiss.METRIC_INNER_PRODUCT)
                idx.hnsw.efConstruction = efc
                idx.add(arr)
                try:
                    faiss.write_index(idx, str(path))
                except OSError:
                    pass  # read-only location: keep it in memory
            idx.hnsw.efSearch = efs
            self._hnsw[field] = idx
        return idx

    def _knn(self, field: str, q: np.ndarray, k: int, exhaustive: bool,
             allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows and cosine similarities, restricted to `allowed` rows when given."""
        import faiss
        arr = self.vectors[field]
        n = arr.shape[0]
        k = min(k, n)
        if k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if allowed is not None:
            rows = np.flatnonzero(allowed)
            if rows.size == 0:
                return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
            if exhaustive or rows.size <= max(4 * k, n // 20):
                # small candidate set: exact search over it is both correct and fast
                sims = arr[rows] @ q
                top = _top_k(sims, k)
                return rows[top], sims[top]
            sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(np.packbits(allowed, bitorder="little")))
            params = faiss.SearchParametersHNSW(sel=sel, efSearch=max(k, self._hnsw_index(field).hnsw.efSearch))
            d, i = self._hnsw_index(field).search(q[None, :], k, params=params)
        elif exhaustive:
            d, i = self._flat_index(field).search(q[None, :], k)
        else:
            idx = self._hnsw_index(field)
            params = faiss.SearchParametersHNSW(efSearch=max(k, idx.hnsw.efSearch))
            d, i = idx.search(q[None, :], k, params=params)
        keep = i[0] >= 0
        return i[0][keep].astype(np.int64), d[0][keep]

    def _query_vector(self, vq: Any) -> np.ndarray:
        if vq.vector is not None:
            v = np.asarray(vq.vector, dtype=np.float32)
        else:
            if self.embedder is None:
                raise TargetError("a text vector query needs an embedder; open the target with one")
            v = np.asarray(self.embedder.embed_one(vq.text), dtype=np.float32)
        dim = next(iter(self.vectors.values())).shape[1] if self.vectors else v.shape[0]
        if v.shape != (dim,):
            raise InputDataError(f"query vector has {v.shape[0]} dimensions, the index has {dim}")
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    # ---- stage caches ----------------------------------------------------------------
    def clear_stage_caches(self) -> None:
        """Forget cached keyword legs, vector legs, reranker scores and filter masks (cold timings)."""
        for cache in (self._text_cache, self._vector_cache, self._rerank_cache, self._masks):
            cache.clear()

    @staticmethod
    def _stage_get(cache: OrderedDict, key: Any) -> Any:
        val = cache.get(key)
        if val is not None:
            cache.move_to_end(key)
        return val

    @staticmethod
    def _stage_put(cache: OrderedDict, key: Any, val: Any, limit: int = 4096) -> None:
        cache[key] = val
        if len(cache) > limit:
            cache.popitem(last=False)

    def _text_leg(self, text: str, fields: Sequence[str], weights: Mapping[str, float],
                  allowed: np.ndarray | None, cap: int) -> tuple[RankedList, int]:
        total = None
        for f in fields:
            sc = self.bm25[f].scores(text)
            if sc is None:
                continue
            w = float(weights.get(f, 1.0))
            total = sc * w if total is None else total + sc * w
        if total is None:
            return RankedList("text", (), ()), 0
        cand = total > 0
        if allowed is not None:
            cand &= allowed
        rows = np.flatnonzero(cand)
        top = rows[_top_k(total[rows], cap)]
        return (RankedList("text", tuple(self.keys[i] for i in top), tuple(float(total[i]) for i in top)),
                int(rows.size))

    # ---- search ------------------------------------------------------------------
    def _check(self, req: SearchRequest) -> None:
        s = self._schema
        searchable = set(s.searchable_fields)
        for f in req.search_fields or ():
            if f not in searchable:
                raise InputDataError(f"search field '{f}' is not searchable; searchable fields: "
                                     f"{', '.join(sorted(searchable))}")
        vnames = {f.name for f in s.vector_fields}
        for vq in req.vector_queries:
            for f in vq.fields:
                if f not in vnames:
                    raise InputDataError(f"'{f}' is not a vector field; vector fields: "
                                         f"{', '.join(sorted(vnames))}")
        for f in req.select or ():
            if f not in self.retrievable:
                raise InputDataError(f"field '{f}' cannot be selected (missing or not retrievable); "
                                     f"retrievable fields: {', '.join(self.retrievable)}")
        if req.is_semantic:
            s.semantic_configuration(req.semantic_configuration)
        if req.scoring_profile:
            s.scoring_profile(req.scoring_profile)

    def search(self, request: SearchRequest) -> Trace:
        req = request
        self._check(req)
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        allowed = self._mask(req.filter) if req.filter else None
        filter_matches = int(allowed.sum()) if allowed is not None else None
        profile = self._schema.scoring_profile(req.scoring_profile) if req.scoring_profile else None

        # keyword leg (cached per text, fields, weights, filter and cap: probes reuse it)
        text_list = None
        text_total = 0
        if req.has_text_leg:
            fields = tuple(req.search_fields or self._schema.searchable_fields)
            weights = dict(profile.text_weights) if profile else {}
            ckey = (req.search, fields, tuple(sorted(weights.items())), req.filter,
                    req.effective_max_text_recall_size)
            cached = self._stage_get(self._text_cache, ckey)
            if cached is None:
                cached = self._text_leg(req.search, fields, weights, allowed,
                                        req.effective_max_text_recall_size)
                self._stage_put(self._text_cache, ckey, cached)
            text_list, text_total = cached
        timings["text"] = (time.perf_counter() - t0) * 1000

        # vector legs
        t1 = time.perf_counter()
        vector_lists: list[RankedList] = []
        for qi, vq in enumerate(req.vector_queries):
            qv = self._query_vector(vq)
            vfilter = vq.filter_override if vq.filter_override is not None else req.filter
            vmask = self._mask(vfilter) if vfilter else None
            for field in vq.fields:
                qid = vq.text if vq.text is not None else vq.vector
                ckey = (qid, field, vq.k, vq.exhaustive, vfilter, req.vector_filter_mode)
                core = self._stage_get(self._vector_cache, ckey)
                if core is None:
                    if vmask is not None and req.vector_filter_mode == "preFilter":
                        rows, sims = self._knn(field, qv, vq.k, vq.exhaustive, vmask)
                    else:
                        rows, sims = self._knn(field, qv, vq.k, vq.exhaustive, None)
                        if vmask is not None:  # post-filter: the pool shrinks, as on Azure
                            keep = vmask[rows]
                            rows, sims = rows[keep], sims[keep]
                    core = (tuple(self.keys[i] for i in rows), tuple(float(s) for s in sims))
                    self._stage_put(self._vector_cache, ckey, core)
                vector_lists.append(RankedList(f"vector[{qi}]:{field}", core[0], core[1],
                                               weight=vq.weight))
        timings["vector"] = (time.perf_counter() - t1) * 1000

        # fusion
        t2 = time.perf_counter()
        lists = [lst for lst in ([text_list] if text_list is not None else []) + vector_lists]
        if not lists:  # no text and no vectors: browse the filtered index, as `search=*` does
            rows = np.flatnonzero(allowed) if allowed is not None else np.arange(len(self.keys))
            fused_keys = [self.keys[i] for i in rows]
            fused_scores = [1.0] * len(fused_keys)
        elif len(lists) == 1:
            only = lists[0]
            fused_keys = list(only.keys)
            if only.name == "text":
                fused_scores = list(only.scores)
            else:  # Azure's cosine searchScore
                fused_scores = [1.0 / (2.0 - s) for s in only.scores]
        else:
            scores: dict[str, float] = {}
            for lst in lists:
                w = lst.weight
                for rank, key in enumerate(lst.keys, 1):
                    scores[key] = scores.get(key, 0.0) + w / (60 + rank)
            fused_keys = sorted(scores, key=lambda key: -scores[key])
            fused_scores = [scores[key] for key in fused_keys]
        boosts: dict[str, float] = {}
        if profile is not None and profile.functions and fused_keys:
            params = parse_scoring_parameters(req.scoring_parameters)
            now = self._now or datetime.now(UTC)
            for key in fused_keys:
                boosts[key] = document_boost(profile, self.records[self.row_of[key]], params, now)
            pairs = sorted(zip(fused_keys, fused_scores, strict=True),
                           key=lambda kv: -kv[1] * boosts[kv[0]])
            fused_keys = [k for k, _ in pairs]
            fused_scores = [s * boosts[k] for k, s in pairs]
        pool = RankedList("fused", tuple(fused_keys), tuple(fused_scores))
        timings["fusion"] = (time.perf_counter() - t2) * 1000

        # semantic reranking of the first 50 only
        t3 = time.perf_counter()
        rr: dict[str, float] = {}
        rrb: dict[str, float] = {}
        window: tuple[str, ...] = ()
        reranked = False
        partial = None
        order = list(fused_keys)
        sem_text = req.effective_semantic_text
        if req.is_semantic:
            if not sem_text or not sem_text.strip() or sem_text.strip() == "*":
                partial = "no semantic text: `*` or empty search disables semantic ranking"
            elif self.reranker is None:
                partial = "no reranker configured on this local target"
            else:
                window = tuple(fused_keys[:RERANK_WINDOW])
                known = self._rerank_cache.setdefault((sem_text, req.semantic_configuration), {})
                missing = [k for k in window if k not in known]
                if missing:
                    known.update(zip(missing, (float(x) for x in self._rerank(req, sem_text, missing)),
                                     strict=True))
                if len(self._rerank_cache) > 4096:
                    self._rerank_cache.popitem(last=False)
                rr = {k: known[k] for k in window}
                config = self._schema.semantic_configuration(req.semantic_configuration)
                boosted = bool(boosts) and config.ranking_order.lower() == "boostedrerankerscore"
                if boosts:
                    rrb = {k: rr[k] * boosts.get(k, 1.0) for k in window}
                key_score = rrb if boosted else rr
                fused_pos = {k: i for i, k in enumerate(fused_keys)}
                head = sorted(window, key=lambda k: (-key_score[k], fused_pos[k]))
                order = head + list(fused_keys[len(window):])
                reranked = True
        timings["rerank"] = (time.perf_counter() - t3) * 1000

        # page and materialise hits
        t4 = time.perf_counter()
        page = order[req.skip:req.skip + req.top]
        fused_rank = {k: i for i, k in enumerate(fused_keys, 1)}
        fused_score = dict(zip(fused_keys, fused_scores, strict=True))
        text_rank = {k: i for i, k in enumerate(text_list.keys, 1)} if text_list else {}
        text_score = dict(zip(text_list.keys, text_list.scores, strict=True)) if text_list else {}
        vec_maps = [(lst.name.split(":", 1)[1], {k: (i, s) for i, (k, s) in
                     enumerate(zip(lst.keys, lst.scores, strict=True), 1)}) for lst in vector_lists]
        select = req.select or self.retrievable
        hits = []
        for key in page:
            rec = self.records[self.row_of[key]]
            vsims: dict[str, float] = {}
            vranks: dict[str, int] = {}
            for fname, mp in vec_maps:
                if key in mp and fname not in vranks:
                    vranks[fname], vsims[fname] = mp[key]
            captions: tuple[str, ...] = ()
            if req.captions and reranked and req.captions.startswith("extractive"):
                captions = (_caption(_text_of(rec.get("content")), sem_text or ""),)
            hits.append(Hit(
                key=key,
                score=fused_score[key],
                fields={f: rec.get(f) for f in select},
                reranker_score=rr.get(key),
                reranker_boosted_score=rrb.get(key),
                text_score=text_score.get(key),
                text_rank=text_rank.get(key),
                vector_similarities=vsims,
                vector_ranks=vranks,
                fused_score=fused_score[key],
                fused_rank=fused_rank[key],
                document_boost=boosts.get(key, 1.0),
                captions=captions,
            ))
        count = None
        if req.count:
            count = len(set(fused_keys)) + max(0, text_total - (len(text_list) if text_list else 0))
        timings["materialise"] = (time.perf_counter() - t4) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        return Trace(request=req, hits=tuple(hits), text=text_list, vectors=tuple(vector_lists),
                     pool=pool, rerank_window=window, reranked=reranked, count=count,
                     filter_matches=filter_matches, partial_reason=partial, timings_ms=timings,
                     target=self.name)

    def _rerank(self, req: SearchRequest, text: str, window: Sequence[str]) -> np.ndarray:
        rows = [self.row_of[k] for k in window]
        if self.semantic_vectors is not None and hasattr(self.reranker, "score_vectors") \
                and req.semantic_configuration in (None, self._schema.default_semantic_configuration):
            q = np.asarray(self.embedder.embed_one(text), dtype=np.float32)
            return np.asarray(self.reranker.score_vectors(q, self.semantic_vectors[rows]))
        passages = [_semantic_text(self._schema, self.records[i], req.semantic_configuration)
                    for i in rows]
        return np.asarray(self.reranker.score(text, passages))


def _semantic_text(schema: IndexSchema, record: Mapping[str, Any], config: str | None = None) -> str:
    """What the semantic ranker reads: title, content fields, keywords (in that priority)."""
    c = schema.semantic_configuration(config)
    fields = ([c.title_field] if c.title_field else []) + list(c.content_fields) + list(c.keywords_fields)
    return _joined(record, fields)


def _normalise(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, sorted descending; ties by position (stable)."""
    n = scores.shape[0]
    if k >= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.lexsort((part, -scores[part]))]


def _caption(content: str, query: str) -> str:
    """The content sentence sharing most words with the query (a cheap extractive caption)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", content) if s.strip()]
    if not sentences:
        return ""
    q = {w.lower() for w in _WORD.findall(query)}
    return max(sentences, key=lambda s: len(q & {w.lower() for w in _WORD.findall(s)}))
