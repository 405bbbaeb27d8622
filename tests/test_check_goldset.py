"""goldset on the eight-document world of test_checks_minimal: the absence of a goldset is the
finding (but goldset-like files in the code are named, not denied), a pass needs an evaluated
goldset, sources missing from the index do not pass, failures, figure, German."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from tests.checkhelp import (
    FailingTarget,
    assert_failures_make_error,
    assert_figure_binding,
    assert_german,
)
from tests.test_checks_minimal import GOOD_SCORES, SOUND, Q, _ctx

ID = "goldset"
ANSWERABLE = GoldCase(id="q1", question=Q, intent="fact", as_user="u",
                      expect_sources=tuple((f"d{i}", 1) for i in range(1, 5)))
REFUSED = GoldCase(id="r1", question="What is gamma?", intent="fact", as_user="u", expect_refused=True)


def _spec(**thresholds):
    spec = load_checklist()[ID]
    return replace(spec, thresholds={**spec.thresholds, **thresholds})


def _check(ctx, spec=None):
    spec = spec or load_checklist()[ID]
    return run_check(resolve(spec), ctx, spec)


def _with(ctx, *cases, client_code=None):
    ctx.goldset = Goldset(cases=cases) if cases else None
    ctx.client_code = client_code
    return ctx


def test_evaluated_goldset_passes_and_missing_sources_fail(tmp_path):
    spec = _spec(min_cases_per_intent=1)
    good = _check(_with(_ctx(tmp_path / "a", SOUND, GOOD_SCORES), ANSWERABLE, REFUSED), spec)
    # the four relevant documents rank 1-4: every metric 1; one refusal case asked as 'u'
    assert good.status == "pass", good.headline
    assert good.observed == {"questions_evaluated": 1}
    assert good.headline == "2 cases over 1 intent(s) evaluated on 1 profile(s): nDCG@10 1.000, recall@50 1.000"
    ghost = replace(ANSWERABLE, expect_sources=(("x1", 1), ("x2", 1)))
    bad = _check(_with(_ctx(tmp_path / "b", SOUND, GOOD_SCORES), ghost, REFUSED), spec)
    # neither x1 nor x2 exists among d1-d8: the goldset measures nothing on this index
    assert bad.status == "fail"
    assert "none of the 2 expected sources of the 1 answerable cases exists in the index" in bad.headline
    assert bad.evidence_table("missing_sources").column("key") == ["x1", "x2"]


def test_small_goldset_warns_with_the_numbers(tmp_path):
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES), ANSWERABLE))
    assert f.status == "warn"
    assert f.headline.startswith("fewer than 30 cases for intent(s) fact; no refusal cases")
    assert f.headline.endswith("nDCG@10 1.000, recall@50 1.000")
    assert f.metrics["ndcg@10"] == pytest.approx(1.0) and f.metrics["mrr"] == pytest.approx(1.0)
    assert_german(f)


def test_no_goldset_and_no_client_code_fails(tmp_path):
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES, goldset=False)))
    assert f.status == "fail"
    assert f.headline.startswith("no goldset: none is configured (and no client code was given")
    assert_german(f)


def test_no_goldset_searched_in_code_fails(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "main.py").write_text("print('hello')\n")
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES, goldset=False), client_code=app))
    assert f.status == "fail"
    assert "none was found in the client code (1 files searched)" in f.headline


def test_goldset_files_in_the_code_are_named_not_denied(tmp_path):
    app = tmp_path / "app"
    (app / "eval").mkdir(parents=True)
    (app / "main.py").write_text("print('hello')\n")
    # phase 2: the file names its expected sources, so it can measure retrieval once configured
    (app / "eval" / "ground_truth.jsonl").write_text('{"id": "c1", "question": "q", "expect_sources": ["doc-1"]}\n')
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES, goldset=False), client_code=app))
    assert f.status == "warn"
    assert "no goldset" not in f.headline
    assert f.headline == "goldset not configured, but the client code holds 1 goldset-like file(s): eval/ground_truth.jsonl"
    assert f.evidence_table("goldset_files").column("file") == ["eval/ground_truth.jsonl"]
    row = f.evidence_table("goldset_files").records()[0]
    assert row["kind"] == "questions with expected source ids" and row["loads"] == "loads: 1 cases"
    assert [loc.file for loc in f.locations] == ["eval/ground_truth.jsonl"]


def test_goldset_files_without_sources_are_no_measuring_stick(tmp_path):
    """Questions with reference answers but no source ids measure answers, not retrieval: fail, naming the file."""
    app = tmp_path / "app"
    (app / "eval").mkdir(parents=True)
    (app / "main.py").write_text("print('hello')\n")
    (app / "eval" / "ground_truth.jsonl").write_text('{"question": "q", "answer": "a"}\n')
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES, goldset=False), client_code=app))
    assert f.status == "fail"
    assert f.headline.startswith("no goldset measures retrieval: the 1 goldset-like file(s) in the client code hold "
                                 "no expected sources (eval/ground_truth.jsonl: questions and answers, no source ids")
    assert [loc.file for loc in f.locations] == ["eval/ground_truth.jsonl"]


def test_goldset_not_evaluated_is_skipped(tmp_path):
    ctx = _with(_ctx(tmp_path, SOUND, GOOD_SCORES), ANSWERABLE, REFUSED)
    ctx.policy = None  # nothing runs the questions
    f = _check(ctx, _spec(min_cases_per_intent=1))
    assert f.status == "skipped"
    assert "the goldset (2 cases) was loaded but not evaluated" in f.skipped_reason


def test_every_request_failing_is_an_error(tmp_path):
    ctx = _with(_ctx(tmp_path, SOUND, GOOD_SCORES), ANSWERABLE, REFUSED)
    failing = FailingTarget(ctx.target, "index offline (test)")
    ctx.target, ctx.runner = failing, Runner(failing)
    f = _check(ctx, _spec(min_cases_per_intent=1))
    assert_failures_make_error(f, "index offline (test)")
    assert not f.observed


def test_figure_reads_the_metrics_table(tmp_path):
    f = _check(_with(_ctx(tmp_path, SOUND, GOOD_SCORES), ANSWERABLE, REFUSED))
    rows = {(r["slice_kind"], r["slice"]): r for r in f.evidence_table("metrics").records()}
    assert rows[("intent", "fact")]["ndcg_10"] == 1.0
    assert_figure_binding(f, "metrics", "ndcg_10")
    de = assert_german(f)
    assert de.evidence_table("metrics").title == "Retrieval-Metriken der Policy 'sound'"


# ---- every profile side by side, legs included ------------------------------------------------------
LEGS_POLICY = """
[policy]
name = "legs"
[routes]
default = "hybrid"
[profiles.keyword]
top = 10
[profiles.vector]
keyword_text = "none"
top = 10
  [[profiles.vector.vector_queries]]
  fields = ["vec"]
  k = 50
  exhaustive = true
[profiles.hybrid]
top = 10
  [[profiles.hybrid.vector_queries]]
  fields = ["vec"]
  k = 50
  exhaustive = true
"""


def _legs_ctx(tmp_path):
    """Four documents, one question 'banana', relevant k1. Keyword: k3 ("banana", shorter) then k1;
    vector (question [1, 0, 0]): k2, k4, k1, k3; hybrid RRF: k3 1/61 + 1/64, k1 1/62 + 1/63 (second),
    k2 1/61, k4 1/62."""
    import numpy as np

    from ragdiag.engine.context import AuditContext
    from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile
    from ragdiag.policy import loads_policy
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget
    from tests.fakes import FakeEmbedder, KeyReranker

    schema = IndexSchema(name="legs", fields=(Field("key", STRING, key=True, filterable=True),
                                              Field("content", STRING, searchable=True),
                                              Field("vec", VECTOR, dimensions=3, vector_profile="flat")),
                         vector_profiles=(VectorSearchProfile("flat", "flat-1", kind="exhaustiveKnn"),))
    texts = {"k1": "apple banana", "k2": "cherry", "k3": "banana", "k4": "date"}
    vecs = {"k1": [0.5, 0.5, 0], "k2": [1, 0, 0], "k3": [0, 1, 0], "k4": [0.9, 0.1, 0]}
    target = LocalTarget.build([{"key": k, "content": t} for k, t in texts.items()],
                               LocalIndexSpec("legs", schema, {}), index_dir=tmp_path / "idx",
                               embedder=FakeEmbedder({"banana": [1, 0, 0]}), reranker=KeyReranker({}),
                               vectors={"vec": np.asarray(list(vecs.values()), dtype=np.float32)}, progress=False)
    gs = Goldset(cases=(GoldCase(id="b", question="banana", expect_sources=(("k1", 1),)),))
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(LEGS_POLICY),
                        goldset=gs)


def test_every_profile_and_each_hybrid_leg_is_measured_on_the_same_questions(tmp_path):
    import math

    f = _check(_legs_ctx(tmp_path), _spec(min_cases_per_intent=1, require_refusals=False, require_restricted=False))
    rows = {(r["profile"], r["leg"]): r for r in f.evidence_table("per_profile").records()}
    assert list(rows) == [("keyword", "as configured"), ("vector", "as configured"), ("hybrid", "as configured"),
                          ("hybrid", "keyword leg alone"), ("hybrid", "vector leg alone")]
    ndcg = {k: r["ndcg_10"] for k, r in rows.items()}
    mrr = {k: r["mrr"] for k, r in rows.items()}
    # k1 at rank 2 (keyword, hybrid, hybrid's keyword leg) and rank 3 (vector, hybrid's vector leg)
    for key, rank in {("keyword", "as configured"): 2, ("vector", "as configured"): 3, ("hybrid", "as configured"): 2,
                      ("hybrid", "keyword leg alone"): 2, ("hybrid", "vector leg alone"): 3}.items():
        assert ndcg[key] == round(1 / math.log2(1 + rank), 3)
        assert mrr[key] == round(1 / rank, 3)
    assert rows[("hybrid", "as configured")]["routed_questions"] == 1
    assert rows[("keyword", "as configured")]["routed_questions"] == 0
    assert f.metrics["profiles_compared"] == 3
    assert f.metrics["best_profile"] == "keyword"  # first of the ties at 1 / log2(3)
    assert "nDCG@10 of every profile on the same 1 questions: keyword 0.631, vector 0.500, hybrid 0.631" in f.headline


def test_a_policy_whose_routed_profile_is_best_gets_no_best_profile_note(tmp_path):
    f = _check(_legs_ctx(tmp_path), _spec(min_cases_per_intent=1, require_refusals=False, require_restricted=False))
    assert f.status == "pass", f.headline
    assert "reaches nDCG@10" not in f.headline  # the routed hybrid ties the best: nothing to say


# ---- the four numbers count the leaks the goldset judges (tests.leak_world) ---------------------------


@pytest.mark.parametrize("groups, leaks", [("LEAKY_GROUPS", 1), ("SOUND_GROUPS", 0)])
def test_permission_leaks_count_the_goldset_judgement(tmp_path, groups, leaks):
    from tests import leak_world as w

    f = _check(w.context(tmp_path, getattr(w, groups)), _spec(min_cases_per_intent=1))
    # four cases asked as an identity; the local target reads every chunk's groups
    assert f.metrics["permission_leaks"] == leaks and f.metrics["permission_leaks_n"] == 4
    assert (f.status == "fail") == bool(leaks)
    assert f.metrics["paired_questions"] == 1 and "duplicate" not in f.headline  # the twins are by design
    if leaks:
        row = f.evidence_table("permission_leaks").records()[0]
        assert (row["case"], row["outside_keys"], row["forbidden_retrieved"], row["forbidden_by"]) == (
            "salary-u", (), ("d3",), ("salary-hr",))
