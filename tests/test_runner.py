"""The runner executes each distinct request once, caches, honours the budget, fuses client-side."""

from __future__ import annotations

import threading

import pytest

from ragdiag.engine import probes
from ragdiag.engine.runner import Failure, Runner, fuse_traces
from ragdiag.errors import TargetError
from ragdiag.model import Hit, RankedList, SearchRequest, Trace, VectorQuery


class CountingTarget:
    """Answers every request with the request's text as the single hit; counts calls."""

    name = "counting"

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls = 0
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def fingerprint(self) -> str:
        return "counting-v1"

    def search(self, request: SearchRequest) -> Trace:
        with self.lock:
            self.calls += 1
        if request.search == self.fail_on:
            raise TargetError("boom")
        key = request.search or "none"
        return Trace(request=request, hits=(Hit(key=key, score=1.0),),
                     pool=RankedList("fused", (key,), (1.0,)), target=self.name)


def test_each_distinct_request_runs_once():
    t = CountingTarget()
    r = Runner(t)
    reqs = [SearchRequest(search=q) for q in ("a", "b", "a", "a", "c", "b")]
    out = r.run(reqs)
    assert t.calls == 3
    assert [o.keys[0] for o in out] == ["a", "b", "a", "a", "c", "b"]
    r.run(reqs)
    assert t.calls == 3  # all from memory now
    assert r.stats.sent == 3


def test_disk_cache_survives_a_new_runner(tmp_path):
    t = CountingTarget()
    Runner(t, cache_dir=tmp_path).run([SearchRequest(search="a")])
    fresh = Runner(t, cache_dir=tmp_path)
    out = fresh.run([SearchRequest(search="a")])
    assert t.calls == 1
    assert out[0].keys == ("a",)
    assert fresh.stats.disk_hits == 1


def test_budget_and_failures_are_recorded_not_raised():
    t = CountingTarget(fail_on="bad")
    r = Runner(t, budget=2)
    out = r.run([SearchRequest(search=q) for q in ("bad", "ok", "late")])
    assert isinstance(out[0], Failure) and "boom" in out[0].reason
    assert isinstance(out[1], Trace)
    assert isinstance(out[2], Failure) and out[2].kind == "budget"
    assert r.stats.failed == 1 and r.stats.over_budget == 1 and t.calls == 2


def test_concurrency_still_runs_each_request_once():
    t = CountingTarget()
    r = Runner(t, concurrency=4)
    out = r.run([SearchRequest(search=str(i % 10)) for i in range(100)])
    assert t.calls == 10
    assert [o.keys[0] for o in out] == [str(i % 10) for i in range(100)]


def _trace(keys):
    return Trace(request=SearchRequest(search="q", top=10), hits=tuple(Hit(key=k, score=0.0) for k in keys),
                 pool=RankedList("fused", tuple(keys), tuple(0.0 for _ in keys)))


def test_client_side_rrf():
    fused = fuse_traces([_trace(["a", "b"]), _trace(["b", "c"])])
    scores = {h.key: h.score for h in fused.hits}
    assert fused.keys[0] == "b"
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["c"] == pytest.approx(1 / 62)
    assert fused.pool.keys == ("a", "b", "c")


def test_probes_transform_requests():
    base = SearchRequest(search="notice period", query_type="semantic", semantic_query="What notice period?",
                         filter="group_ids/any(g: search.in(g, 'legal')) and confidence_score ge 0.85",
                         vector_queries=(VectorQuery(fields=("content_vector",), text="notice period", k=20),))
    (dropped,) = probes.drop_filter_clause(1).apply(base)
    assert dropped.filter == "group_ids/any(g: search.in(g, 'legal'))"
    (only_text,) = probes.text_only().apply(base)
    assert only_text.vector_queries == () and only_text.search == "notice period"
    (only_vec,) = probes.vector_only().apply(base)
    assert only_vec.search is None and only_vec.semantic_query == "What notice period?"
    (plain,) = probes.no_rerank().apply(base)
    assert plain.query_type == "simple" and plain.semantic_query is None
    (k50,) = probes.with_k(50).apply(base)
    assert k50.vector_queries[0].k == 50
    split = probes.split_channels("notice period Nordlicht", "What notice period applies?",
                                  "What notice period applies?", verbatim="What notice period?").apply(base)
    assert [s.search for s in split] == ["notice period Nordlicht", None, "What notice period?"]
    assert split[1].vector_queries[0].text == "What notice period applies?"
    assert all(s.semantic_query == "What notice period applies?" for s in split)
    assert base.filter.endswith("0.85")  # probes never mutate


def test_unknown_probe_lists_available():
    with pytest.raises(Exception, match="available: .*baseline"):
        probes.Probe("nope").apply(SearchRequest(search="x"))


def test_trace_memory_is_bounded_and_an_evicted_trace_comes_back_from_the_store(tmp_path):
    from ragdiag.engine.runner import TraceMemory

    t = CountingTarget()
    r = Runner(t, cache_dir=tmp_path)
    r._memory = TraceMemory(limit=3)
    queries = ["a", "b", "c", "d", "e"]
    first = [o.keys for o in r.run([SearchRequest(search=q) for q in queries])]
    assert t.calls == 5
    import gc

    gc.collect()
    assert len(r._memory) <= 3  # only the 3 most recent are held; nothing else holds the rest
    again = r.run([SearchRequest(search=q) for q in queries])
    assert [o.keys for o in again] == first
    assert t.calls == 5  # nothing is sent again: the evicted ones are read back from the store
    assert r.stats.disk_hits >= 2


def test_a_trace_held_elsewhere_stays_the_same_object_past_the_bound(tmp_path):
    from ragdiag.engine.runner import TraceMemory

    t = CountingTarget()
    r = Runner(t, cache_dir=tmp_path)
    r._memory = TraceMemory(limit=1)
    kept = r.execute(SearchRequest(search="a"))
    r.run([SearchRequest(search=q) for q in ("b", "c", "d")])
    assert r.execute(SearchRequest(search="a")) is kept  # alive in a check: found, not re-read
    assert r.stats.disk_hits == 0 and t.calls == 4


def test_within_the_bound_every_trace_is_held(tmp_path):
    from ragdiag.engine.runner import TraceMemory

    r = Runner(CountingTarget(), cache_dir=tmp_path)
    r._memory = TraceMemory(limit=10)
    r.run([SearchRequest(search=q) for q in "abcde"])
    import gc

    gc.collect()
    assert len(r._memory) == 5


def test_the_bounded_memory_is_safe_under_concurrency(tmp_path):
    from ragdiag.engine.runner import TraceMemory

    t = CountingTarget()
    r = Runner(t, cache_dir=tmp_path, concurrency=8)
    r._memory = TraceMemory(limit=4)
    reqs = [SearchRequest(search=f"q{i % 40}") for i in range(400)]
    for _ in range(3):
        out = r.run(reqs)
        assert [o.keys[0] for o in out] == [f"q{i % 40}" for i in range(400)]
    assert t.calls == 40  # each distinct request sent once, evicted ones read back
