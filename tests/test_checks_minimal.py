"""The runtime checks on a hand-made eight-document world, numbers checkable by hand.

Four documents (d1-d4) answer "What is alpha?"; d4 was extracted badly
(confidence 0.7). The faulty policy filters `confidence_score ge 0.85` before
reranking, runs vector-only with k = 3, and sends one text to every channel;
the sound policy does none of that.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.inputs.querylog import load_query_log
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

Q = "What is alpha?"
# long enough for the reranker check's "content too short to judge relevance" test
FILLER = "with enough further words in it to give a ranker something real to read and judge here"

FAULTY = """
[policy]
name = "faulty"
[routes]
fact = "fact"
comparison = "compare"
[defaults]
query_type = "semantic"
semantic_configuration = "default"
keyword_text = "keywords"
semantic_text = "keyword_text"
[profiles.fact]
keyword_text = "none"
semantic_text = "keywords"
filter = "confidence_score ge 0.85"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 3
  text = "keywords"
[profiles.compare]
  [[profiles.compare.vector_queries]]
  fields = ["vec"]
  k = 50
  text = "keyword_text"
"""

SOUND = """
[policy]
name = "sound"
[routes]
fact = "fact"
[defaults]
query_type = "semantic"
semantic_configuration = "default"
keyword_text = "keywords"
semantic_text = "verbatim"
[profiles.fact]
scoring_profile = "conf"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 50
"""


def _world(tmp_path, reranker_scores):
    recs, vecs = [], []
    for i in range(1, 9):
        alpha = i <= 4
        recs.append({"key": f"d{i}", "title": "", "content": ("alpha" if alpha else "beta") + f" text {i} " + FILLER,
                     "category": "c", "confidence_score": 0.7 if i == 4 else 0.9, "page": 1,
                     "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
                     "group_ids": ["all"]})
        # d4 is the nearest neighbour of the question, then d3, d2, d1
        vecs.append([1.0, 0.05 * (4 - i), 0.0] if alpha else [0.0, 1.0, 0.05 * i])
    emb = FakeEmbedder({Q: [1, 0, 0], "alpha": [1, 0, 0]})
    return LocalTarget.build(recs, LocalIndexSpec("tiny", tiny_schema(), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=emb, reranker=KeyReranker(reranker_scores),
                             vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)


def _ctx(tmp_path, policy_text, scores, *, goldset=True, log_routes=None):
    target = _world(tmp_path, scores)
    gs = Goldset(cases=(GoldCase(id="q1", question=Q, intent="fact", as_user="u",
                                 expect_sources=tuple((f"d{i}", 1) for i in range(1, 5))),), path=None) \
        if goldset else None
    qlog = None
    if log_routes:
        path = tmp_path / "log.jsonl"
        lines = [{"timestamp": f"2026-05-01T08:{i // 60:02d}:{i % 60:02d}Z", "user": "u", "question": Q,
                  "route": r, "keyword_text": "alpha", "vector_text": "alpha", "semantic_text": "alpha"}
                 for i, r in enumerate(log_routes)]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        qlog = load_query_log(path)
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(policy_text),
                        goldset=gs, query_log=qlog, identities={"u": Identity("u", ("all",))})


def _check(ctx, check_id):
    spec = load_checklist()[check_id]
    return run_check(resolve(spec), ctx, spec)


BAD_SCORES = {f"d{i}": 0.5 for i in range(1, 9)}
GOOD_SCORES = {**{f"d{i}": 3.5 for i in range(1, 5)}, **{f"d{i}": 0.5 for i in range(5, 9)}}


def test_pool_size_by_hand(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, BAD_SCORES), "pool_size")
    # vector only, k = 3: configured pool 0 (no keyword leg) + 3 = 3 < 50
    assert bad.status == "fail"
    assert "configured pool 3 < 50" in bad.headline
    good = _check(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), "pool_size")
    assert good.status in ("pass", "warn")  # 1000 + 50 configured; only 8 documents exist to measure
    assert "cannot fill" not in good.headline


def test_pool_size_unrouted_semantic_profile_is_judged_by_its_configuration_only(tmp_path):
    # the semantic profile exists but the route sends "fact" questions to a keyword profile:
    # no pool is measured, and the pass must not claim a measured median over 0 questions
    policy = SOUND.replace('fact = "fact"', 'fact = "plain"', 1) + """
[profiles.plain]
query_type = "simple"
"""
    f = _check(_ctx(tmp_path, policy, GOOD_SCORES), "pool_size")
    assert f.status == "pass"
    assert f.headline.startswith("all 1 semantic profiles configure a pool of at least 50 candidates; "
                                 "measured pool not run: none of the 1 questions is routed to a "
                                 "semantic profile (fact)")
    assert "median measured pool" not in f.headline


def test_prerank_filters_by_hand(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, BAD_SCORES), "prerank_filters")
    # without the clause the k = 3 pool is d4, d3, d2; with it d3, d2, d1: d4 (confidence 0.7),
    # one of four relevant documents, is removed: 1 / 4 = 25 % >= 5 %
    # (no scope clause here: all four are within the profile's reach)
    assert bad.status == "fail"
    assert "removes 1 of 4 reachable relevant documents (25%)" in bad.headline
    row = bad.evidence_table("ablation").records()[0]
    assert (row["relevant_removed"], row["relevant_reachable"], row["relevant_unreachable"]) == (1, 4, 0)
    assert bad.evidence_table("removed_documents").column("document") == ["d4"]
    good = _check(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), "prerank_filters")
    # the sound policy has no filter clause at all (the identity clause is built per request):
    # nothing to classify is not a pass
    assert good.status == "skipped" and "no filter clause to examine" in good.skipped_reason


def test_reranker_scores_by_hand(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, BAD_SCORES), "reranker_scores")
    # every hit scores 0.5: median top-1 0.5 < 1.0 fails, on the profile that served the question
    assert bad.status == "fail" and bad.metrics["median_top1"] == pytest.approx(0.5)
    assert "fact: median top-1 reranker score 0.50 < 1.00" in bad.headline
    good = _check(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), "reranker_scores")
    # the four alpha documents score 3.5, the rest 0.5: top-1 3.5, perfect separation
    assert good.status == "pass" and good.observed == {"semantic_profiles_scored": 1, "top1_scores": 1,
                                                       "elements_ablated": 2}
    assert good.metrics["median_top1"] == pytest.approx(3.5)
    assert good.metrics["roc_auc_relevant_vs_other"] == pytest.approx(1.0)


def test_shared_query_text_by_hand(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, BAD_SCORES), "shared_query_text")
    # fact: vector "alpha" and semantic "alpha" -> identical; one request, 100 % > 50 %
    assert bad.status in ("warn", "fail")
    assert bad.metrics["identical_share_profiles"] == pytest.approx(1.0)
    good = _check(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), "shared_query_text")
    # keyword "alpha", vector and semantic "What is alpha?": not identical
    assert good.metrics["identical_share_profiles"] == pytest.approx(0.0)
    assert good.status == "pass" and good.observed["profile_requests_compared"] == 1


def test_route_counts_by_hand(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, BAD_SCORES, goldset=False, log_routes=["fact"] * 99 + ["comparison"]),
                 "route_counts")
    # comparison gets 1 of 100 requests = 1 % < 2 %
    assert bad.status == "warn"
    assert "route 'comparison' receives 1% of traffic" in bad.headline
    good = _check(_ctx(tmp_path / "b", FAULTY, BAD_SCORES, goldset=False, log_routes=["fact", "comparison"] * 50),
                  "route_counts")
    # both routes get 50 % of the traffic: measured and sound
    assert good.status == "pass" and good.observed == {"routes_by_traffic": 2}
    # a single route has nothing to merge: skipped, never pass
    one = _check(_ctx(tmp_path / "c", SOUND, GOOD_SCORES, goldset=False, log_routes=["fact"] * 100), "route_counts")
    assert one.status == "skipped" and "one route: nothing to merge" in one.skipped_reason


def test_goldset_by_hand(tmp_path):
    none = _check(_ctx(tmp_path / "a", SOUND, GOOD_SCORES, goldset=False), "goldset")
    # no goldset and no client code to search for one: the absence is the finding
    assert none.status == "fail" and none.headline.startswith("no goldset")
    small = _check(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), "goldset")
    # one case: below 30 per intent, no refusal, no restricted cases -> warn
    assert small.status == "warn"
    # the four relevant documents rank 1-4 after reranking: every metric is 1
    assert small.metrics["ndcg@10"] == pytest.approx(1.0)
    assert small.metrics["recall@10"] == pytest.approx(1.0)
    assert small.metrics["mrr"] == pytest.approx(1.0)


def test_logged_questions_of_users_without_identity_are_named_not_measured_silently(tmp_path):
    known = _ctx(tmp_path / "a", SOUND, GOOD_SCORES, goldset=False, log_routes=["fact"] * 3)
    assert known.anonymous_log_questions() == (0, 1, [])
    assert "users not in [identities]" not in _check(known, "pool_size").headline
    unknown = _ctx(tmp_path / "b", SOUND, GOOD_SCORES, goldset=False, log_routes=["fact"] * 3)
    unknown.identities = {}  # the log's user 'u' is not configured: searched without an identity clause
    assert unknown.anonymous_log_questions() == (1, 1, ["u"])
    f = _check(unknown, "pool_size")
    assert "1 of 1 logged questions come from users not in [identities] (u)" in f.headline
