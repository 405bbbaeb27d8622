"""Local hybrid target semantics, each with numbers you can check by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ragdiag.errors import InputDataError
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema


def _spec(**kw):
    return LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={}, now="2026-06-30T00:00:00Z", **kw)


def _build(tmp_path, records, vectors, reranker=None):
    return LocalTarget.build(records, _spec(), index_dir=tmp_path / "idx", embedder=FakeEmbedder(),
                             reranker=reranker, vectors={"vec": np.asarray(vectors, dtype=np.float32)},
                             progress=False)


def _rec(key, content, **kw):
    base = {"key": key, "title": "", "content": content, "category": "common",
            "confidence_score": 0.9, "page": 1, "last_updated": "2026-01-01T00:00:00Z",
            "is_table": False, "entity_keys": [], "group_ids": ["all"]}
    base.update(kw)
    return base


@pytest.fixture()
def four(tmp_path):
    records = [_rec("a", "alpha"), _rec("b", "alpha with several other words in it"),
               _rec("c", "gamma"), _rec("d", "beta")]
    vectors = [[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1]]
    return _build(tmp_path, records, vectors)


def test_rrf_arithmetic(four):
    req = SearchRequest(search="alpha", vector_queries=(VectorQuery(fields=("vec",), vector=(1, 0, 0), k=2),))
    t = four.search(req)
    assert t.text.keys == ("a", "b")
    assert t.vectors[0].keys == ("a", "b")
    assert t.keys[:2] == ("a", "b")
    assert t.hits[0].score == pytest.approx(1 / 61 + 1 / 61)
    assert t.hits[1].score == pytest.approx(1 / 62 + 1 / 62)
    assert t.pool_size == 2


def test_weights_change_fusion(four):
    # text ranks a=1, b=2; the vector [0.8, 0.6, 0] ranks b=1, a=2: equal weights tie
    vq = VectorQuery(fields=("vec",), vector=(0.8, 0.6, 0), k=2)
    tied = four.search(SearchRequest(search="alpha", vector_queries=(vq,)))
    assert {h.key: h.score for h in tied.hits}["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert {h.key: h.score for h in tied.hits}["b"] == pytest.approx(1 / 62 + 1 / 61)
    heavy = four.search(SearchRequest(search="alpha", vector_queries=(
        VectorQuery(fields=("vec",), vector=(0.8, 0.6, 0), k=2, weight=2.0),)))
    assert heavy.keys[0] == "b"
    assert heavy.hits[0].score == pytest.approx(1 / 62 + 2 / 61)
    assert heavy.hits[1].score == pytest.approx(1 / 61 + 2 / 62)


def test_single_list_keeps_its_own_score(four):
    t = four.search(SearchRequest(vector_queries=(VectorQuery(fields=("vec",), vector=(1, 0, 0), k=1),)))
    # Azure's cosine searchScore is 1 / (1 + (1 - cos)) = 1 / (2 - cos)
    assert t.hits[0].score == pytest.approx(1.0)
    assert t.hits[0].vector_similarities["vec"] == pytest.approx(1.0)


def _fan(n):
    """n records whose cosine to [1, 0, 0] falls with the index: rank i+1 for record i."""
    records, vectors = [], []
    for i in range(n):
        theta = (i + 1) * (math.pi / 2) / (n + 1)
        records.append(_rec(f"r{i:02d}", "alpha filler", category="rare" if 30 <= i < 35 else "common",
                            confidence_score=round(i / n, 3)))
        vectors.append([math.cos(theta), math.sin(theta), 0.0])
    return records, vectors


def test_only_top_50_are_reranked(tmp_path):
    records, vectors = _fan(60)
    rer = KeyReranker({"r40": 4.0, "r55": 4.0})
    t = _build(tmp_path, records, vectors, reranker=rer).search(SearchRequest(
        query_type="semantic", semantic_query="alpha",
        vector_queries=(VectorQuery(fields=("vec",), vector=(1, 0, 0), k=60, exhaustive=True),), top=60))
    assert len(t.rerank_window) == 50
    assert t.reranked
    assert t.keys[0] == "r40"  # fused rank 41, inside the window, lifted to the top
    pos = t.keys.index("r55")  # fused rank 56: outside the window, never seen by the reranker
    assert pos == 55
    assert t.hits[pos].reranker_score is None
    assert sum(h.reranker_score is not None for h in t.hits) == 50


def test_max_text_recall_size_caps_keyword_leg(tmp_path):
    records, vectors = _fan(60)
    target = _build(tmp_path, records, vectors)
    assert len(target.search(SearchRequest(search="alpha")).text) == 60
    capped = target.search(SearchRequest(search="alpha", max_text_recall_size=10))
    assert len(capped.text) == 10
    assert capped.pool_size == 10


def test_post_filter_shrinks_pool(tmp_path):
    records, vectors = _fan(60)
    target = _build(tmp_path, records, vectors)
    vq = VectorQuery(fields=("vec",), vector=(1, 0, 0), k=10)
    pre = target.search(SearchRequest(vector_queries=(vq,), filter="category eq 'rare'"))
    post = target.search(SearchRequest(vector_queries=(vq,), filter="category eq 'rare'",
                                       vector_filter_mode="postFilter"))
    assert pre.pool_size == 5  # every 'rare' record, though they rank 31-35 unfiltered
    assert post.pool_size == 0  # the unfiltered top 10 hold no 'rare' record
    assert set(pre.keys) == {f"r{i}" for i in range(30, 35)}


def test_filter_override_replaces_top_level_filter(tmp_path):
    records, vectors = _fan(60)
    target = _build(tmp_path, records, vectors)
    vq = VectorQuery(fields=("vec",), vector=(1, 0, 0), k=3, filter_override="page eq 1")
    t = target.search(SearchRequest(vector_queries=(vq,), filter="category eq 'rare'"))
    assert t.keys == ("r00", "r01", "r02")


def test_exhaustive_equals_exact_ranking(tmp_path):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(400, 3)).astype(np.float32)
    records = [_rec(f"x{i:03d}", "text") for i in range(400)]
    target = _build(tmp_path, records, vectors)
    q = rng.normal(size=3).astype(np.float32)
    t = target.search(SearchRequest(vector_queries=(VectorQuery(fields=("vec",), vector=tuple(q), k=25,
                                                                exhaustive=True),), top=25))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:25]
    assert list(t.keys) == [f"x{i:03d}" for i in exact]


def test_magnitude_function_boosts_fused_score(tmp_path):
    records = [_rec("low", "alpha", confidence_score=0.2), _rec("high", "alpha", confidence_score=0.9)]
    target = _build(tmp_path, records, [[1, 0, 0], [0, 1, 0]])
    plain = target.search(SearchRequest(search="alpha"))
    base = plain.hits[0].score
    assert plain.hits[0].score == pytest.approx(plain.hits[1].score)  # same BM25
    boosted = target.search(SearchRequest(search="alpha", scoring_profile="conf"))
    assert boosted.keys[0] == "high"
    # boost 2 over range 0..1, linear: 1 + (2 - 1) * 0.9 = 1.9 and 1 + 1 * 0.2 = 1.2
    assert boosted.hits[0].document_boost == pytest.approx(1.9)
    assert boosted.hits[0].score == pytest.approx(base * 1.9)
    assert boosted.hits[1].score == pytest.approx(base * 1.2)


def test_text_weights_scale_field_scores(tmp_path):
    records = [_rec("t", "other", title="alpha"), _rec("c", "alpha", title="other")]
    target = _build(tmp_path, records, [[1, 0, 0], [0, 1, 0]])
    plain = {h.key: h.text_score for h in target.search(SearchRequest(search="alpha")).hits}
    weighted = {h.key: h.text_score for h in
                target.search(SearchRequest(search="alpha", scoring_profile="title3")).hits}
    assert weighted["t"] == pytest.approx(plain["t"] * 3)
    assert weighted["c"] == pytest.approx(plain["c"])


def test_select_and_paging(four):
    t = four.search(SearchRequest(search="alpha", select=("content",), top=1, skip=1))
    assert t.keys == ("b",)
    assert dict(t.hits[0].fields) == {"content": "alpha with several other words in it"}
    with pytest.raises(InputDataError, match="group_ids"):
        four.search(SearchRequest(search="alpha", select=("group_ids",)))


def test_unknown_fields_are_clear_errors(four):
    with pytest.raises(InputDataError, match="vector fields: vec"):
        four.search(SearchRequest(vector_queries=(VectorQuery(fields=("nope",), vector=(1, 0, 0)),)))
    with pytest.raises(InputDataError, match="searchable"):
        four.search(SearchRequest(search="x", search_fields=("category",)))


def test_persisted_and_rebuilt_only_when_inputs_change(tmp_path):
    records = [_rec("a", "alpha"), _rec("b", "beta")]
    for r, v in zip(records, ([1, 0, 0], [0, 1, 0]), strict=True):
        r["vec"] = v
    src = tmp_path / "records.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    emb = FakeEmbedder()
    spec = _spec()
    first = LocalTarget.from_jsonl(src, spec, index_dir=tmp_path / "idx", embedder=emb, progress=False)
    mtime = (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns
    again = LocalTarget.from_jsonl(src, spec, index_dir=tmp_path / "idx", embedder=emb, progress=False)
    assert (tmp_path / "idx" / "manifest.json").stat().st_mtime_ns == mtime  # opened, not rebuilt
    req = SearchRequest(search="alpha")
    assert first.search(req).keys == again.search(req).keys == ("a",)
    src.write_text(src.read_text().replace("beta", "alpha beta"))
    changed = LocalTarget.from_jsonl(src, spec, index_dir=tmp_path / "idx", embedder=emb, progress=False)
    assert set(changed.search(req).keys) == {"a", "b"}


def test_reranker_scores_do_not_depend_on_their_batch():
    """A window's missing documents are scored together; a BLAS matrix-vector product gives
    a row different last bits depending on its batch, the row-wise scores must not."""
    from ragdiag.encoders import BiEncoderReranker
    from ragdiag.targets.local.rerank import RerankScores, bi_encoder_scores

    rng = np.random.default_rng(3)
    sem = rng.standard_normal((500, 384)).astype(np.float32)
    sem /= np.linalg.norm(sem, axis=1, keepdims=True)
    q = rng.standard_normal(384).astype(np.float32)
    q /= np.linalg.norm(q)
    rer = BiEncoderReranker(FakeEmbedder(dim=384), low=-1.0, high=1.0)
    full = bi_encoder_scores(rer, q, sem)
    key_rank = np.arange(500, dtype=np.int32)
    for _ in range(50):
        cache = RerankScores()
        for size in (7, 31, 50):
            rows = rng.choice(500, size, replace=False).astype(np.int32)
            got = cache.scores("q", rows, key_rank, lambda r: bi_encoder_scores(rer, q, sem[r]))
            assert np.array_equal(got, full[rows].astype(np.float32))


def test_hnsw_graph_is_built_with_the_index_and_holds_the_only_copy(tmp_path):
    records, vectors = _fan(30)
    target = _build(tmp_path, records, vectors)
    files = {p.name for p in (tmp_path / "idx" / "vectors").iterdir()}
    assert files == {"vec.hnsw"}  # no vec.npy beside the graph
    assert target.vector_fields["vec"].hnsw is not None
    assert not target.vectors["vec"].flags.writeable
    unit = np.asarray(vectors, dtype=np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    # unit vectors rounded to multiples of 2^-11 (ragdiag.encoders.numerics): exact float32 sums
    np.testing.assert_array_equal(target.vectors["vec"], np.rint(unit * 2048) / 2048)


def test_hnsw_graphs_are_built_with_one_thread_and_the_thread_count_is_restored(tmp_path, monkeypatch):
    """FAISS inserts in parallel with several OpenMP threads, and which of two concurrent
    insertions links to the other depends on timing: the build must run on one thread."""
    import faiss

    from ragdiag.targets.local.vector import build_hnsw

    seen: list[int] = []
    real = faiss.IndexHNSWFlat

    class Spy(real):  # type: ignore[misc, valid-type]
        def add(self, x):
            seen.append(faiss.omp_get_max_threads())
            return super().add(x)

    monkeypatch.setattr(faiss, "IndexHNSWFlat", Spy)
    rng = np.random.default_rng(5)
    arr = rng.standard_normal((400, 16)).astype(np.float32)
    before = faiss.omp_get_max_threads()
    digests = set()
    for threads in (1, 2):
        faiss.omp_set_num_threads(threads)
        try:
            digests.add(build_hnsw(arr, 8, 40, tmp_path / f"g{threads}.hnsw", progress=False, label="t"))
            assert faiss.omp_get_max_threads() == threads  # restored after the build
        finally:
            faiss.omp_set_num_threads(before)
    assert seen == [1, 1] and len(digests) == 1


def test_index_input_hash_names_the_embedders_numerics(tmp_path):
    """Vectors made another way (another compute type or grid) are another index: the input
    hash carries the embedder's vector space, not its model id alone."""
    from ragdiag.targets.local import index as _index

    spec = _spec()
    a, b = FakeEmbedder(), FakeEmbedder()
    a.cache_id, b.cache_id = "fake-embedder#float64-grid11", "fake-embedder#float32-grid11"
    assert _index.vector_space_of(a) == "fake-embedder#float64-grid11"
    assert _index.vector_space_of(FakeEmbedder()) == "fake-embedder"  # no numerics: the model id
    assert _index.vector_space_of(None) is None
    blob = b'{"key": "a"}\n'
    assert _index.input_hash(blob, spec, _index.vector_space_of(a)) != \
        _index.input_hash(blob, spec, _index.vector_space_of(b))


def test_search_mode_all_keeps_only_records_holding_every_query_token(tmp_path):
    from ragdiag.model import SearchRequest
    from tests.test_emulator import build_tiny_target

    t = build_tiny_target(tmp_path / "idx")
    # "alpha" is in a, b and c (title); "several" only in b: any -> a, b, c; all -> b alone
    anyq = t.search(SearchRequest(search="alpha several", top=10))
    allq = t.search(SearchRequest(search="alpha several", search_mode="all", top=10))
    assert set(anyq.keys) == {"a", "b", "c"}
    assert allq.keys == ("b",)
    # a token no field holds leaves nothing under "all"
    assert t.search(SearchRequest(search="alpha nowhere", search_mode="all", top=10)).keys == ()
    # the keyword leg's cache keeps the two modes apart
    assert set(t.search(SearchRequest(search="alpha several", top=10)).keys) == {"a", "b", "c"}


def test_matching_keys_answers_from_the_filter_masks(tmp_path):
    from tests.test_emulator import build_tiny_target

    t = build_tiny_target(tmp_path / "idx")
    assert t.matching_keys(["a", "b", "zz"]) == {"a", "b"}
    assert t.matching_keys(["a", "b", "r31"], "category eq 'rare'") == {"r31"}
