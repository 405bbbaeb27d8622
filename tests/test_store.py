"""The trace store: compact round trips, shared blobs, fixed precision, crash safety, two writers."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.engine.runner import Runner
from ragdiag.engine.store import TraceStore, store_path
from ragdiag.model import Hit, RankedList, SearchRequest, Trace, VectorQuery
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema


def _rec(key, content, **kw):
    base = {"key": key, "title": "", "content": content, "category": "common", "confidence_score": 0.9,
            "page": 1, "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
            "group_ids": ["all"]}
    base.update(kw)
    return base


@pytest.fixture()
def target(tmp_path):
    recs = [_rec(f"k{i:02d}", f"alpha beta {'gamma ' * (i % 4)}number {i}", confidence_score=i / 30)
            for i in range(30)]
    rng = np.random.default_rng(1)
    return LocalTarget.build(recs, LocalIndexSpec("st", tiny_schema("st"), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=FakeEmbedder(),
                             reranker=KeyReranker({"k03": 3.0, "k07": 2.0}),
                             vectors={"vec": rng.normal(size=(30, 3)).astype(np.float32)}, progress=False)


def _req(text="alpha gamma", top=10):
    return SearchRequest(search=text, query_type="semantic", semantic_configuration="default",
                         scoring_profile="conf", top=top,
                         vector_queries=(VectorQuery(fields=("vec",), vector=(1.0, 0.2, 0.0), k=8),))


def _hits(t):
    return [(h.key, h.score, h.reranker_score, h.reranker_boosted_score, h.text_score, h.text_rank,
             dict(h.vector_similarities), dict(h.vector_ranks), h.fused_score, h.fused_rank,
             h.document_boost, dict(h.fields)) for h in t.hits]


def test_round_trip_is_the_stored_form_at_float32(tmp_path, target):
    fresh = target.search(_req())
    path = store_path(tmp_path / "c", target.fingerprint())
    store = TraceStore(path, target_fingerprint=target.fingerprint(), key_table=target.key_table,
                       records=target.record)
    handed = store.put("a" * 24, fresh)
    store.flush()
    again = TraceStore(path, target_fingerprint=target.fingerprint(), key_table=target.key_table,
                       records=target.record).get("a" * 24, fresh.request)
    assert again is not None
    assert _hits(again) == _hits(handed)
    assert again.keys == handed.keys == fresh.keys
    assert again.pool.keys == fresh.pool.keys and again.text.keys == fresh.text.keys
    assert list(again.rerank_window) == list(fresh.rerank_window)
    for a, f in zip(again.pool.scores, fresh.pool.scores, strict=True):
        assert a == float(np.float32(f))
    assert again.to_dict()["hits"] == handed.to_dict()["hits"]
    assert dict(again.hits[0].fields) == dict(fresh.hits[0].fields)  # read from the records


def test_shared_legs_are_stored_once(tmp_path, target):
    runner = Runner(target, cache_dir=tmp_path / "c")
    runner.run([_req(top=n) for n in (5, 6, 7, 8)])
    store = runner.store
    assert len(store) == 4
    # four traces, one keyword leg, one vector leg, one pool: far fewer blobs than 4 x 9
    assert len(store._blob_at) < 20


def test_traces_without_a_key_table_store_keys_and_hits_as_json(tmp_path):
    req = SearchRequest(search="q", top=2)
    t = Trace(request=req, hits=(Hit(key="x", score=0.1, fields={"a": [1, "b"]}, reranker_score=2.5,
                                     vector_similarities={"v": 0.3}, vector_ranks={"v": 1}),
                                 Hit(key="y", score=0.05)),
              pool=RankedList("fused", ("x", "y", "z"), (0.1, 0.05, 0.01)), rerank_window=("x", "y"),
              reranked=True, count=3, target="live")
    path = tmp_path / "s.rdts"
    store = TraceStore(path, target_fingerprint="live:1")
    store.put("b" * 24, t)
    store.flush()
    back = TraceStore(path, target_fingerprint="live:1").get("b" * 24, req)
    assert back.keys == ("x", "y") and back.pool.keys == ("x", "y", "z")
    assert back.hits[0].fields == {"a": [1, "b"]} and back.hits[0].reranker_score == 2.5
    assert back.hits[0].score == float(np.float32(0.1)) and tuple(back.rerank_window) == ("x", "y")
    assert back.count == 3 and back.reranked and back.target == "live"


def test_torn_tail_is_ignored_and_overwritten(tmp_path, target):
    runner = Runner(target, cache_dir=tmp_path / "c")
    runner.run([_req()])
    path = runner.store.path
    with open(path, "ab") as fh:
        fh.write(b"T\xff\x00\x00\x00TORNTAIL")
    second = Runner(target, cache_dir=tmp_path / "c")
    assert second.cached(_req()) is not None
    second.run([_req("beta")])
    third = Runner(target, cache_dir=tmp_path / "c")
    assert third.cached(_req("beta")) is not None and third.cached(_req()) is not None
    assert b"TORNTAIL" not in path.read_bytes()


def test_two_writers_on_one_file(tmp_path, target):
    a = Runner(target, cache_dir=tmp_path / "c")
    b = Runner(target, cache_dir=tmp_path / "c")
    a.run([_req("alpha")])
    b.run([_req("beta")])  # b learns a's records before appending its own
    a.run([_req("gamma")])
    c = Runner(target, cache_dir=tmp_path / "c")
    for text in ("alpha", "beta", "gamma"):
        assert c.cached(_req(text)) is not None, text
    assert _hits(c.cached(_req("beta"))) == _hits(b.cached(_req("beta")))


def test_another_targets_file_is_not_used(tmp_path):
    path = tmp_path / "s.rdts"
    TraceStore(path, target_fingerprint="one")
    other = TraceStore(path, target_fingerprint="two")
    req = SearchRequest(search="q")
    other.put("c" * 24, Trace(request=req, hits=()))
    other.flush()
    assert TraceStore(path, target_fingerprint="one").get("c" * 24, req) is None


def test_the_pack_memo_prunes_amortised_not_on_every_call(monkeypatch):
    """Once more live arrays were remembered than the prune limit, the memo was rebuilt on every
    `_pack` call: a 2,000-question audit spent minutes there. The memo is now bounded: past the
    limit it keeps the live entries of its most recent half (so it prunes at most every limit / 2
    calls), drops the entries of arrays that are gone, and a forgotten array gets its digest again."""
    import ragdiag.engine.store as store_mod

    monkeypatch.setattr(store_mod, "SEEN_PRUNE_AT", 10)
    store = TraceStore(None)
    store._seen_limit = 10
    prunes = []
    real_items = dict.items

    class CountingDict(dict):
        def items(self):
            prunes.append(len(self))
            return real_items(self)

    store._seen = CountingDict()
    live = [np.arange(i, i + 3, dtype=np.int32) for i in range(200)]
    for arr in live:
        store._pack((arr,), (np.int32,), {})
        if not isinstance(store._seen, CountingDict):
            store._seen = CountingDict(store._seen)
    assert len(store._seen) <= 11  # bounded: the most recent live arrays only
    assert live[-1].ctypes.data and ((id(live[-1]),), (np.int32,)) in store._seen
    assert len(prunes) <= 200 // 5 + 1, prunes  # at most every limit / 2 calls, not once per call
    first = store._pack((live[0],), (np.int32,), {})  # forgotten: hashed again
    assert first == TraceStore(None)._pack((live[0],), (np.int32,), {})
    dead = np.arange(5, dtype=np.int32)
    store._pack((dead,), (np.int32,), {})
    del dead, live, arr
    store._seen_limit = 0
    store._pack((np.arange(7, dtype=np.int32),), (np.int32,), {})
    assert len(store._seen) == 1  # the gone arrays' entries were dropped
