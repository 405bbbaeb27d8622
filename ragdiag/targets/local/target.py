"""`LocalTarget`: answers `SearchRequest`s from a local index with a full stage trace.

The stages run on numpy row ids (see the package docstring for what each imitates):
filter masks (`filtering`), the keyword leg (`keyword`), the vector legs (`vector`),
fusion and document boosts (`fusion`, `scoring`), the rerank window (`rerank`). The
trace keeps every list as row ids and scores (`RankedList.of_ids`) and its hits as a
`HitList`, so nothing is turned into Python keys, floats or field dicts unless read.

Stage caches (per query text, vector, filter, ...) make what-ifs cheap: a request that
changes one knob recomputes only the stages that knob touches. `prepare(requests)`
embeds every query text of a batch in one call and runs the batch's unfiltered HNSW
searches together before the requests are executed one by one.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import InputDataError, RagdiagError, TargetError
from ragdiag.model import RERANK_WINDOW, RankedList, SearchRequest, Trace
from ragdiag.model.schema import IndexSchema
from ragdiag.model.trace import HitList, KeySeq, KeyTable
from ragdiag.targets.local import index as _index
from ragdiag.targets.local.filtering import FilterMasks
from ragdiag.targets.local.fusion import apply_boosts, fuse
from ragdiag.targets.local.index import IndexData, LocalIndexSpec, semantic_text, text_of
from ragdiag.targets.local.keyword import text_leg
from ragdiag.targets.local.ranking import key_ranks
from ragdiag.targets.local.rerank import RerankScores, bi_encoder_scores, caption, rerank_order
from ragdiag.targets.local.scoring import DocumentBoosts, parse_scoring_parameters
from ragdiag.targets.local.vector import query_vector

# Bump when search semantics change, so cached traces of older code are never reused.
# 3: ties broken by document key; reranker scores independent of their batch
# 4: equal reranker scores keep the pool order (fused score, then key), not the key alone
# 5: search_mode = "all" keeps only rows holding every query token (it was ignored)
# 6: query vectors on the grid of ragdiag.encoders.numerics (exact similarities)
SEMANTICS_VERSION = 6
STAGE_CACHE = 4096
QUERY_VECTOR_CACHE = 50000
# Query texts per model call when a batch of requests is prepared: None leaves it to the
# embedder, whose batch sizes go with its torch thread rule (benchmarks/README.md, "Embeddings:
# batch size and threads": with one thread batch 32 and 64 are equal; with two threads on a
# busy machine small batches collapse, which is what an earlier measurement of 64 saw).
EMBED_BATCH = None
# Unfiltered or equally-filtered HNSW searches of a prepared batch run in one FAISS call. FAISS
# parallelises a call with OpenMP, whose threads spin while they wait: on two cores shared with
# other jobs small batches measured slower than one call per query (a what-if's 6 groups of ~9
# queries: ~100 ms per call at load 9), so a batch below this size runs on one OpenMP thread
# (one call still saves the per-call overhead; each query is searched on its own, so the
# results equal one call per query).
HNSW_PARALLEL_MIN = 64
_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_F = np.empty(0, dtype=np.float32)


def _lru_get(cache: OrderedDict, key: Any) -> Any:
    val = cache.get(key)
    if val is not None:
        cache.move_to_end(key)
    return val


def _lru_put(cache: OrderedDict, key: Any, val: Any, limit: int = STAGE_CACHE) -> None:
    cache[key] = val
    if len(cache) > limit:
        cache.popitem(last=False)


def _unit_of(vq: Any, dim: int) -> np.ndarray:
    """A raw vector query's unit grid vector, made once per `VectorQuery` (a request reused
    across what-ifs or rounds is normalised and grid-checked once, not on every search)."""
    memo = vq.__dict__.get("_unit")
    if memo is not None and memo[0] == dim:
        return memo[1]
    v = query_vector(vq.array, dim)
    v.flags.writeable = False
    vq.__dict__["_unit"] = (dim, v)
    return v


class LocalTarget:
    """A read-only, persisted hybrid index answering `SearchRequest`s with full traces."""

    capabilities = frozenset({"documents", "get_document", "security_values", "stages", "prepare", "compact_traces",
                              "local_records", "embedder", "embedding_model", "reranker", "text_analysis"})

    def __init__(self, data: IndexData, *, embedder: Any = None, reranker: Any = None) -> None:
        spec = data.spec
        self.path = data.path
        self.spec = spec
        self.name = spec.name
        self._schema = spec.schema
        self._manifest = data.manifest
        self.records = data.records
        self.keys = [r[spec.schema.key_field.name] for r in self.records]
        self.row_of = {k: i for i, k in enumerate(self.keys)}
        self.key_table = KeyTable(self.keys, self.row_of)
        self.key_rank = key_ranks(self.keys)
        self.row_of_rank = np.argsort(self.key_rank).astype(np.int32)
        self.keyword = data.keyword
        self.vector_fields = data.vectors
        self.vectors = {name: vf.vectors for name, vf in data.vectors.items()}
        self._semantic = data.semantic
        self.semantic_vectors = (data.semantic.get(self._schema.semantic_configuration(None).name)
                                 if data.semantic else None)  # the default configuration's
        self.embedder = embedder
        self.reranker = reranker
        #: where each vector field's vectors came from: "embedder", "records" or "given" (build(vectors=))
        self._vector_origin: dict[str, str] = dict(data.manifest.get("vector_origin") or {})
        #: whether the embedder made the vectors that came with the records (the config route sets it
        #: from an explicit [target] embedding_model; built in code, the caller vouches for it)
        self.embedder_made_record_vectors = True
        self._masks = FilterMasks(self.records, self._schema)
        self._boosts = DocumentBoosts(self.records)
        self._text_cache: OrderedDict[Any, Any] = OrderedDict()
        self._vector_cache: OrderedDict[Any, Any] = OrderedDict()
        self._rerank_cache = RerankScores()
        self._qvecs: OrderedDict[str, np.ndarray] = OrderedDict()
        self._now = (datetime.fromisoformat(spec.now.replace("Z", "+00:00")) if spec.now else None)
        self.retrievable = tuple(f.name for f in spec.schema.fields if f.retrievable and not f.is_vector)
        self._dim = next(iter(self.vectors.values())).shape[1] if self.vectors else None
        self._searchable_order = spec.schema.searchable_fields
        self._searchable = frozenset(self._searchable_order)
        self._retrievable = frozenset(self.retrievable)

    # ---- building and opening ------------------------------------------------------
    input_hash = staticmethod(_index.input_hash)

    @classmethod
    def from_jsonl(cls, records_path: str | Path, spec: LocalIndexSpec, *, index_dir: str | Path,
                   embedder: Any, reranker: Any = None, progress: bool = True,
                   log: Callable[[str], None] | None = None) -> LocalTarget:
        """Open the persisted index for these inputs, building it first when they changed."""
        from ragdiag.inputs.limits import read_bytes

        records_path = Path(records_path)
        if not records_path.exists() and not records_path.is_symlink():
            raise InputDataError("records file not found; run `ragdiag sample build` for the sample",
                                 path=str(records_path))
        blob = read_bytes(records_path, what="records file")  # a regular file, read as large as it is
        digest = _index.input_hash(blob, spec, _index.vector_space_of(embedder))
        index_dir = Path(index_dir)
        manifest = index_dir / "manifest.json"

        def built() -> bool:
            try:
                return manifest.exists() and json.loads(manifest.read_text()).get("input_hash") == digest
            except (OSError, ValueError):
                return False  # a damaged index is rebuilt

        damaged = False
        if built():
            try:
                return cls.open(index_dir, embedder=embedder, reranker=reranker)
            except (OSError, ValueError, RuntimeError, TargetError, EOFError):
                damaged = True  # rebuilt below
        # one builder at a time (another audit on this cache may be building the same index)
        with _index.index_lock(index_dir, exclusive=True):
            if damaged or not built():  # (or it was built while this process waited for the lock)
                if log:
                    log(f"building local index '{spec.name}' in {index_dir} (inputs changed or first run)")
                from ragdiag.inputs.records import parse_records

                # every record checked against the schema, errors with file, line and record
                records = parse_records(blob, path=records_path, schema=spec.schema)
                _index.build_index(records, spec, index_dir=index_dir, embedder=embedder, progress=progress,
                                   input_hash=digest, locked=True)
        return cls.open(index_dir, embedder=embedder, reranker=reranker)

    @classmethod
    def build(cls, records: Iterable[Mapping[str, Any]], spec: LocalIndexSpec, *,
              index_dir: str | Path, embedder: Any = None, reranker: Any = None,
              vectors: Mapping[str, np.ndarray] | None = None, progress: bool = True,
              input_hash: str | None = None, semantic: bool = True) -> LocalTarget:
        """Build and persist an index (HNSW graphs included), then open it."""
        _index.build_index(records, spec, index_dir=index_dir, embedder=embedder, vectors=vectors,
                           progress=progress, input_hash=input_hash, semantic=semantic)
        return cls.open(index_dir, embedder=embedder, reranker=reranker)

    @classmethod
    def open(cls, index_dir: str | Path, *, embedder: Any = None, reranker: Any = None) -> LocalTarget:
        return cls(_index.open_index(index_dir), embedder=embedder, reranker=reranker)

    # ---- Target protocol -------------------------------------------------------------
    def fingerprint(self) -> str:
        """What the target would answer: index inputs and graphs, search semantics, reranker."""
        digest = self._manifest.get("input_hash")
        graphs = ",".join(f"{k}={v[:12]}" for k, v in sorted((self._manifest.get("graphs") or {}).items()))
        reranker = getattr(self.reranker, "name", type(self.reranker).__name__)
        return (f"{self.name}:{digest}:format={_index.FORMAT_VERSION}:graphs={graphs}:"
                f"semantics={SEMANTICS_VERSION}:reranker={reranker}")

    def schema(self) -> IndexSchema:
        return self._schema

    @property
    def embedding_model(self) -> str | None:
        """The model id of the embedder that vectorises query text (None: no embedder)."""
        return getattr(self.embedder, "model_id", None) if self.embedder is not None else None

    def text_analysis(self) -> dict[str, dict[str, Any]]:
        """Each searchable field's analysis (the Azure analyzer imitated, stemmer, stop words)."""
        return {name: kf.analysis.describe() for name, kf in self.keyword.items()}

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

    def matching_keys(self, keys: Sequence[str], filter: str | None = None) -> set[str]:
        """The keys of `keys` that are documents of the index and pass `filter` (its cached mask):
        what the loss funnel asks for every expected source and filter clause."""
        rows = [(k, self.row_of[k]) for k in keys if k in self.row_of]
        if not filter:
            return {k for k, _r in rows}
        mask = self._mask(filter)
        return {k for k, r in rows if mask[r]}

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

    def record(self, row: int) -> Mapping[str, Any]:
        """The record of one row (what a hit's lazy `fields` read)."""
        return self.records[row]

    # ---- caches --------------------------------------------------------------------------
    def _mask(self, text: str) -> np.ndarray:
        return self._masks.mask(text)

    def clear_stage_caches(self) -> None:
        """Forget cached keyword legs, vector legs, reranker scores and filter masks (cold timings)."""
        self._text_cache.clear()
        self._vector_cache.clear()
        self._rerank_cache.clear()
        self._masks.clear()
        for kf in self.keyword.values():
            kf.clear_cache()
        for vf in self.vector_fields.values():
            vf.clear_cache()

    def _text_vector(self, text: str, field: str | None = None) -> np.ndarray:
        if field is not None and not self.embedder_made_record_vectors and \
                self._vector_origin.get(field) == "records":
            raise TargetError(
                f"vector field '{field}' holds vectors that came with the records, made by a model "
                f"ragdiag does not know; embedding query text with {self.embedding_model} would compare "
                "vectors of two different models. Fix: supply each question's vector in the goldset "
                "(query_vector), or set [target] embedding_model to the model that made the record vectors")
        v = _lru_get(self._qvecs, text)
        if v is None:
            if self.embedder is None:
                raise TargetError("a text vector query needs an embedder; open the target with one")
            v = self._remember(text, self.embedder.embed_one(text))
        return v

    def _remember(self, text: str, vec: Any) -> np.ndarray:
        v = query_vector(vec, self._dim if self._dim is not None else len(vec))
        v.flags.writeable = False
        _lru_put(self._qvecs, text, v, QUERY_VECTOR_CACHE)
        return v

    def _passage_vectors(self, req: SearchRequest) -> np.ndarray | None:
        """The semantic configuration's passage vectors, when the reranker compares vectors."""
        if self.reranker is None or not hasattr(self.reranker, "score_vectors"):
            return None
        if not self._semantic:
            return None
        return self._semantic.get(self._schema.semantic_configuration(req.semantic_configuration).name)

    def _uses_vectors_for_rerank(self, req: SearchRequest) -> bool:
        return self._passage_vectors(req) is not None

    # ---- batches ---------------------------------------------------------------------------
    def prepare(self, requests: Sequence[SearchRequest], *, progress: bool = False) -> None:
        """Before a batch runs: embed all its query texts in one call, and run its unfiltered
        HNSW searches together (each query is searched on its own, so results are identical)."""
        texts: dict[str, None] = {}
        for r in requests:
            for vq in r.vector_queries:
                if vq.text is not None:
                    texts[vq.text] = None
            if r.is_semantic and self._uses_vectors_for_rerank(r):
                sem = r.effective_semantic_text
                if sem and sem.strip() and sem.strip() != "*":
                    texts[sem] = None
        missing = [t for t in texts if t not in self._qvecs]
        if missing and self.embedder is not None:
            vecs = np.asarray(self.embedder.embed(missing, progress=progress, batch_size=EMBED_BATCH))
            for t, v in zip(missing, vecs, strict=True):
                self._remember(t, v)
        # vector legs grouped by (field, k, pre-filter): one HNSW call per group
        groups: dict[tuple[str, int, str | None], list[tuple[Any, np.ndarray, np.ndarray | None]]] = {}
        planned: set[Any] = set()
        for r in requests:
            try:
                self._check(r)
            except RagdiagError:
                continue  # executing the request reports it
            for vq in r.vector_queries:
                if vq.exhaustive or (vq.text is not None and vq.text not in self._qvecs):
                    continue
                vfilter = vq.filter_override if vq.filter_override is not None else r.filter
                pre = vfilter if vfilter and r.vector_filter_mode == "preFilter" else None
                for field in vq.fields:
                    if self.vector_fields[field].hnsw is None:
                        continue
                    ckey = (vq.text if vq.text is not None else vq.vector_key, field, vq.k, False, vfilter,
                            r.vector_filter_mode)
                    if ckey in planned or ckey in self._vector_cache:
                        continue
                    planned.add(ckey)
                    qv = self._text_vector(vq.text, field) if vq.text is not None else \
                        _unit_of(vq, self.vector_fields[field].dim)
                    post = self._mask(vfilter) if vfilter and pre is None else None
                    groups.setdefault((field, vq.k, pre), []).append((ckey, qv, post))
        for (field, k, pre), items in groups.items():
            if len(items) < 2:
                continue  # searched in search(): identical results
            vf = self.vector_fields[field]
            allowed = self._mask(pre) if pre else None
            if allowed is not None and not vf.uses_hnsw(allowed, k):
                continue  # a small filtered set is searched exactly, query by query
            found = vf.hnsw_many(np.stack([q for _, q, _ in items]), k, self.key_rank, allowed=allowed,
                                 threads=None if len(items) >= HNSW_PARALLEL_MIN else 1)
            for (ckey, _q, post), (rows, sims) in zip(items, found, strict=True):
                if post is not None:  # post-filter: the pool shrinks, as on Azure
                    keep = post[rows]
                    rows, sims = rows[keep], sims[keep]
                _lru_put(self._vector_cache, ckey, (rows, sims))

    # ---- search ------------------------------------------------------------------------
    def _check(self, req: SearchRequest) -> None:
        s = self._schema
        searchable = self._searchable
        for f in req.search_fields or ():
            if f not in searchable:
                raise InputDataError(f"search field '{f}' is not searchable; searchable fields: "
                                     f"{', '.join(sorted(searchable))}")
        for vq in req.vector_queries:
            for f in vq.fields:
                if f not in self.vector_fields:
                    raise InputDataError(f"'{f}' is not a vector field; vector fields: "
                                         f"{', '.join(sorted(self.vector_fields))}")
        for f in req.select or ():
            if f not in self._retrievable:
                raise InputDataError(f"field '{f}' cannot be selected (missing or not retrievable); "
                                     f"retrievable fields: {', '.join(self.retrievable)}")
        if req.is_semantic:
            s.semantic_configuration(req.semantic_configuration)
        if req.scoring_profile:
            s.scoring_profile(req.scoring_profile)

    def search(self, request: SearchRequest) -> Trace:
        req = request
        self._check(req)
        table, key_rank = self.key_table, self.key_rank
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        allowed = self._mask(req.filter) if req.filter else None
        filter_matches = int(allowed.sum()) if allowed is not None else None
        profile = self._schema.scoring_profile(req.scoring_profile) if req.scoring_profile else None

        # keyword leg (cached per text, fields, weights, filter and cap: probes reuse it)
        text_list = None
        text_total = 0
        lists: list[tuple[np.ndarray, np.ndarray, float, bool]] = []
        if req.has_text_leg:
            fields = tuple(req.search_fields or self._searchable_order)
            weights = dict(profile.text_weights) if profile else {}
            ckey = (req.search, fields, tuple(sorted(weights.items())), req.filter,
                    req.effective_max_text_recall_size, req.search_mode)
            cached = _lru_get(self._text_cache, ckey)
            if cached is None:
                cached = text_leg({f: self.keyword[f] for f in fields}, req.search, weights, allowed,
                                  req.effective_max_text_recall_size, key_rank, search_mode=req.search_mode)
                _lru_put(self._text_cache, ckey, cached)
            rows, scores, text_total = cached
            text_list = RankedList.of_ids("text", rows, scores, table)
            lists.append((rows, scores, 1.0, True))
        t1 = time.perf_counter()
        timings["text"] = (t1 - t0) * 1000

        # vector legs
        vector_lists: list[RankedList] = []
        for qi, vq in enumerate(req.vector_queries):
            vfilter = vq.filter_override if vq.filter_override is not None else req.filter
            qv = None
            for field in vq.fields:
                ckey = (vq.text if vq.text is not None else vq.vector_key, field, vq.k, vq.exhaustive, vfilter,
                        req.vector_filter_mode)
                core = _lru_get(self._vector_cache, ckey)
                if core is None:
                    vf = self.vector_fields[field]
                    if qv is None:
                        qv = self._text_vector(vq.text, field) if vq.text is not None else _unit_of(vq, vf.dim)
                    vmask = self._mask(vfilter) if vfilter else None
                    if vmask is not None and req.vector_filter_mode == "preFilter":
                        rows, sims = vf.knn(qv, vq.k, vq.exhaustive, vmask, key_rank)
                    else:
                        rows, sims = vf.knn(qv, vq.k, vq.exhaustive, None, key_rank)
                        if vmask is not None:  # post-filter: the pool shrinks, as on Azure
                            keep = vmask[rows]
                            rows, sims = rows[keep], sims[keep]
                    core = (rows, sims)
                    _lru_put(self._vector_cache, ckey, core)
                vector_lists.append(RankedList.of_ids(f"vector[{qi}]:{field}", core[0], core[1], table,
                                                      weight=vq.weight))
                lists.append((core[0], core[1], float(vq.weight), False))
        t2 = time.perf_counter()
        timings["vector"] = (t2 - t1) * 1000

        # fusion and document boosts
        pool_rows, pool_scores = fuse(lists, key_rank, allowed, self.row_of_rank)
        boosts = None
        if profile is not None and profile.functions and pool_rows.shape[0]:
            params = parse_scoring_parameters(req.scoring_parameters)
            now = self._now or datetime.now(UTC)
            b = self._boosts.boosts(profile, pool_rows, params, now)
            pool_rows, pool_scores, boosts = apply_boosts(pool_rows, pool_scores, b, key_rank)
        pool = RankedList.of_ids("fused", pool_rows, pool_scores, table)
        t3 = time.perf_counter()
        timings["fusion"] = (t3 - t2) * 1000

        # semantic reranking of the first 50 only
        window = _EMPTY_I
        rr = _EMPTY_F
        rrb = None
        reranked = False
        partial = None
        positions = None  # pool position of each entry of the final order (None: pool order)
        sem_text = req.effective_semantic_text
        if req.is_semantic:
            if not sem_text or not sem_text.strip() or sem_text.strip() == "*":
                partial = "no semantic text: `*` or empty search disables semantic ranking"
            elif self.reranker is None:
                partial = "no reranker configured on this local target"
            else:
                window = pool_rows[:RERANK_WINDOW]
                rr = self._rerank_cache.scores(
                    (sem_text, req.semantic_configuration), window, key_rank,
                    lambda rows: self._rerank(req, sem_text, rows))
                config = self._schema.semantic_configuration(req.semantic_configuration)
                boosted = boosts is not None and config.ranking_order.lower() == "boostedrerankerscore"
                if boosts is not None:
                    rrb = (rr.astype(np.float64) * boosts[:window.shape[0]]).astype(np.float32)
                perm = rerank_order(window, rrb if boosted else rr, key_rank)
                positions = np.concatenate([perm, np.arange(window.shape[0], pool_rows.shape[0])])
                reranked = True
        t4 = time.perf_counter()
        timings["rerank"] = (t4 - t3) * 1000

        # the page: hits as ids (scores and fields are read from the stage lists on access)
        n_pool = pool_rows.shape[0]
        if positions is None:
            page_pos = np.arange(min(req.skip, n_pool), min(req.skip + req.top, n_pool))
        else:
            page_pos = positions[req.skip:req.skip + req.top]
        page = pool_rows[page_pos]
        page_boosts = boosts[page_pos] if boosts is not None else np.ones(page.shape[0])
        captions = None
        if req.captions and reranked and req.captions.startswith("extractive"):
            captions = [(caption(text_of(self.records[r].get("content")), sem_text or ""),)
                        for r in page.tolist()]
        hits = HitList(page_pos.astype(np.int32), page_boosts, pool=pool, text=text_list, vectors=vector_lists,
                       window_rr=rr if reranked else _EMPTY_F, window_rrb=rrb if reranked else None,
                       select=tuple(req.select or self.retrievable), captions=captions, records=self.record)
        count = None
        if req.count:
            count = n_pool + max(0, text_total - (len(text_list) if text_list is not None else 0))
        t5 = time.perf_counter()
        timings["materialise"] = (t5 - t4) * 1000
        timings["total"] = (t5 - t0) * 1000
        return Trace(request=req, hits=hits, text=text_list, vectors=tuple(vector_lists), pool=pool,
                     rerank_window=KeySeq(window, table) if reranked else (), reranked=reranked,
                     count=count, filter_matches=filter_matches, partial_reason=partial,
                     timings_ms=timings, target=self.name)

    def _rerank(self, req: SearchRequest, text: str, rows: np.ndarray) -> np.ndarray:
        sem = self._passage_vectors(req)
        if sem is not None:
            q = self._text_vector(text)
            passages = np.asarray(sem[rows])
            if hasattr(self.reranker, "cosine_to_score"):
                return bi_encoder_scores(self.reranker, q, passages)
            return np.asarray(self.reranker.score_vectors(q, passages))
        passages = [semantic_text(self._schema, self.records[i], req.semantic_configuration)
                    for i in rows.tolist()]
        return np.asarray(self.reranker.score(text, passages))
