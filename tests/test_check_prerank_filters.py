"""prerank_filters on a ten-document world, numbers checkable by hand.

Eight evidence chunks (d1-d4 about alpha, d5-d8 about beta), one section (s1) and one
document (D1) about alpha. The goldset case asks about alpha and judges d4, s1 and D1
relevant; d4 was extracted badly (confidence 0.7), everything else has 0.9. A profile
that keeps `level eq 'evidence'` can never return s1 or D1: of the three relevant
documents only d4 is within its reach.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.base import catalogue_for, labels_for, localize
from ragdiag.checks.figures import FigureDataError
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.errors import TargetError
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.model.messages import Message
from ragdiag.model.schema import STRING, Field
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

Q = "What is alpha?"
FILLER = "with enough further words in it to give a ranker something real to read and judge here"
SCORES = {"d1": 3.0, "d2": 3.0, "d3": 3.0, "d4": 3.5, "s1": 2.5, "D1": 2.0,
          **{f"d{i}": 0.5 for i in range(5, 9)}}

def policy(filter_: str | None, override: str | None = None, *, vector_only: bool = False) -> str:
    """One semantic profile `fact` (hybrid, or vector only) with a filter and an override."""
    lines = ["[policy]", 'name = "t"', "[routes]", 'fact = "fact"', "[profiles.fact]", 'query_type = "semantic"',
             'semantic_configuration = "default"', 'semantic_text = "verbatim"',
             f'keyword_text = "{"none" if vector_only else "keywords"}"']
    lines += [f'filter = "{filter_}"'] if filter_ else []
    lines += ["[[profiles.fact.vector_queries]]", 'fields = ["vec"]', "k = 50"]
    lines += [f'filter_override = "{override}"'] if override else []
    return "\n".join(lines) + "\n"


PROFILE_FILTER = policy("level eq 'evidence' and confidence_score ge 0.85")
SCOPE_ONLY = policy("level eq 'evidence'")
# vector only: the override is the only filter the search runs under
OVERRIDE_CONFIDENCE = policy("level eq 'evidence'", "level eq 'evidence' and confidence_score ge 0.85",
                             vector_only=True)
OVERRIDE_SOUND = policy("level eq 'evidence'", "group_ids/any(g: search.in(g, 'all', '|')) and level eq 'evidence'",
                        vector_only=True) + "override_security = false\n"
NO_FILTER = policy(None)


def schema():
    base = tiny_schema()
    return dataclasses.replace(base, fields=base.fields + (Field("level", STRING, filterable=True),))


def world(tmp_path, *, d4_confidence=0.7):
    recs, vecs = [], []
    docs = [(f"d{i}", "evidence", "alpha" if i <= 4 else "beta") for i in range(1, 9)]
    docs += [("s1", "section", "alpha"), ("D1", "document", "alpha")]
    for n, (key, level, topic) in enumerate(docs):
        recs.append({"key": key, "title": "", "content": f"{topic} text {key} {FILLER}", "category": "c",
                     "confidence_score": d4_confidence if key == "d4" else 0.9, "page": 1, "level": level,
                     "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
                     "group_ids": ["all"]})
        vecs.append([1.0, 0.05 * n, 0.0] if topic == "alpha" else [0.0, 1.0, 0.05 * n])
    emb = FakeEmbedder({Q: [1, 0, 0], "alpha": [1, 0, 0]})
    return LocalTarget.build(recs, LocalIndexSpec("tiny", schema(), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=emb, reranker=KeyReranker(SCORES),
                             vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)


GOLD = Goldset(cases=(GoldCase(id="q1", question=Q, intent="fact", as_user="u",
                               expect_sources=(("d4", 3), ("s1", 1), ("D1", 1))),), path=None)


def context(target, policy_text, *, goldset=GOLD, lang="en"):
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(policy_text),
                        goldset=goldset, identities={"u": Identity("u", ("all",))}, lang=lang)


def check(ctx, check_id="prerank_filters"):
    spec = load_checklist()[check_id]
    return run_check(resolve(spec), ctx, spec)


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return world(tmp_path_factory.mktemp("prerank"))


def _ablation(f):
    return f.evidence_table("ablation").records()[0]


def _ablation_rows(f):
    return f.evidence_table("ablation").records()


# ---- miss 1: the share is over the relevant documents the profile can reach --------------------
def test_a_clause_removing_every_reachable_relevant_document_reports_100_percent(target):
    f = check(context(target, PROFILE_FILTER))
    # reachable without the clause: d4 only (s1 and D1 fail level eq 'evidence'); the clause
    # removes d4 (confidence 0.7): 1 of 1 = 100 %, not 1 of 3 = 33 %
    assert f.status == "fail"
    assert ("'confidence_score ge 0.85' in the filter of profile fact removes 1 of 1 reachable relevant "
            "documents (100%) before reranking; 2 more relevant documents are out of the profile's reach "
            "(excluded by level eq 'evidence' (2))") in f.headline
    row = _ablation(f)
    assert (row["relevant_removed"], row["relevant_reachable"], row["relevant_unreachable"]) == (1, 1, 2)
    assert row["share_removed"] == pytest.approx(1.0)
    assert f.metrics["removed_relevant_share[fact: confidence_score ge 0.85]"] == pytest.approx(1.0)
    assert f.metrics["relevant_unreachable[fact: confidence_score ge 0.85]"] == 2
    unreachable = {r["document"]: r["excluded_by"] for r in f.evidence_table("unreachable_documents").records()}
    # a message cell (re-rendered per language): the excluding clauses, joined
    assert unreachable == {"s1": "level eq 'evidence'", "D1": "level eq 'evidence'"}
    assert f.evidence_table("removed_documents").column("document") == ["d4"]


def test_a_clause_that_removes_no_reachable_relevant_document_does_not_fail(tmp_path):
    # the same filter on a world where d4 is extracted well: 0 of 1 removed, the clause still warns
    f = check(context(world(tmp_path, d4_confidence=0.9), PROFILE_FILTER))
    assert f.status == "warn"
    assert "'confidence_score ge 0.85' (quality) in the filter of profile fact filters before reranking" in f.headline
    row = _ablation(f)
    assert (row["relevant_removed"], row["relevant_reachable"], row["relevant_unreachable"]) == (0, 1, 2)


def test_scope_clauses_only_pass_with_what_was_examined(target):
    f = check(context(target, SCOPE_ONLY))
    assert f.status == "pass"
    assert f.observed == {"profile_clauses": 1, "elements_ablated": 1}
    assert f.headline.startswith("1 filter clauses examined (1 in profile filters, 0 in filter overrides")
    assert f.evidence_table("clauses").records() == [
        {"source": "profile", "where": "fact", "clause": "level eq 'evidence'", "role": "scope", "fields": "level"}]


# ---- miss 2: filter_override clauses are classified and ablated ----------------------------------
def test_an_override_holding_the_confidence_clause_is_flagged(target):
    f = check(context(target, OVERRIDE_CONFIDENCE))
    # the vector leg runs under the override only: dropping its confidence clause brings d4 back
    assert f.status == "fail"
    assert ("'confidence_score ge 0.85' in the filter_override of vector query 1 of profile fact removes "
            "1 of 1 reachable relevant documents (100%)") in f.headline
    clauses = f.evidence_table("clauses").records()
    assert {"source": "filter_override", "where": "fact, filter_override of vector query 1",
            "clause": "confidence_score ge 0.85", "role": "quality", "fields": "confidence_score"} in clauses
    # every clause is also one what-if of the ablation (the filter's and both of the override's)
    assert f.observed == {"profile_clauses": 1, "override_clauses": 2, "elements_ablated": 3}
    row = _ablation(f)
    assert row["where"] == "filter_override of vector query 1"
    assert (row["relevant_removed"], row["relevant_reachable"], row["relevant_unreachable"]) == (1, 1, 2)
    assert any("magnitude function (the index already has one in scoring profile 'conf')" in r
               for r in f.recommendations)


def test_an_override_holding_only_security_and_scope_clauses_passes(target):
    f = check(context(target, OVERRIDE_SOUND))
    assert f.status == "pass", f.headline
    # the security clause of the override is never ablated: the two level clauses are
    assert f.observed == {"profile_clauses": 1, "override_clauses": 2, "elements_ablated": 2}
    roles = {r["clause"]: r["role"] for r in f.evidence_table("clauses").records()}
    assert roles == {"level eq 'evidence'": "scope", "group_ids/any(g: search.in(g, 'all', '|'))": "access"}
    assert f.evidence_table("ablation") is None


# ---- nothing to judge, nothing to run, unknown roles ------------------------------------------
def test_no_filter_anywhere_is_skipped_not_passed(target):
    f = check(context(target, NO_FILTER))
    assert f.status == "skipped"
    assert f.skipped_reason.startswith("no filter clause to examine")
    assert not f.observed


def test_suspicious_clause_without_questions_warns(target):
    f = check(context(target, PROFILE_FILTER, goldset=None))
    assert f.status == "warn"
    assert "(not measured: no question reaches the profile)" in f.headline
    assert f.evidence_table("ablation") is None


def test_a_clause_of_unknown_role_warns_without_a_goldset_to_measure_it(target):
    f = check(context(target, SCOPE_ONLY.replace("level eq 'evidence'", "level eq 'evidence' and page ge 1"),
                      goldset=None))
    assert f.status == "warn"
    assert "1 filter clauses could not be classified" in f.headline and "page ge 1" in f.headline
    assert f.observed == {"profile_clauses": 1}  # only the classified clause counts
    assert "no profile element was ablated (no goldset" in f.headline


def test_a_clause_of_unknown_role_is_measured_and_passes_when_it_removes_nothing(target):
    # page ge 1 holds for every record: measured on the goldset it removes no relevant document
    f = check(context(target, SCOPE_ONLY.replace("level eq 'evidence'", "level eq 'evidence' and page ge 1")))
    assert f.status == "pass", f.headline
    assert "could not be classified" not in f.headline
    assert f.observed["unclassified_clauses_measured"] == 1
    row = next(r for r in _ablation_rows(f) if r["clause"] == "page ge 1")
    assert (row["relevant_removed"], row["relevant_reachable"]) == (0, 1)


# ---- failures ------------------------------------------------------------------------------
class FailingTarget:
    """The local world whose every search fails (documents and counts still answer)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def search(self, request):
        raise TargetError("index unavailable (503)")


def test_every_request_failing_is_an_error_with_the_reason(target):
    f = check(context(FailingTarget(target), PROFILE_FILTER))
    assert f.status == "error"
    d = f.to_dict()
    assert d["failures"] and "index unavailable (503)" in d["failures"][0]["reason"]
    assert d["failures"][0]["profile"] == "fact"
    # the clause dropped and the baseline, then the ablation's what-if of each of the 2 clauses
    assert f.incomplete["failed_requests"] == f.incomplete["requests"] == 2 + 2


# ---- the figure ----------------------------------------------------------------------------
def test_figure_reads_the_ablation_by_key(target):
    from ragdiag.checks.figures import figure

    f = check(context(target, PROFILE_FILTER))
    fig = figure(f)
    assert fig is not None and type(fig).__name__ == "Figure"
    ev = f.evidence_table("ablation")
    renamed = dataclasses.replace(f, evidence=tuple(dataclasses.replace(e, title="Something else")
                                                    if e is ev else e for e in f.evidence))
    assert figure(renamed, "de") is not None
    keys = tuple("recall_50_with" if k == "recall50_with" else k for k in ev.column_keys)
    broken = dataclasses.replace(f, evidence=(dataclasses.replace(ev, column_keys=keys),))
    with pytest.raises(FigureDataError):
        figure(broken)


# ---- German --------------------------------------------------------------------------------
def assert_all_german(finding, check_id):
    """Every message and column label of `finding` has a German text of its own."""
    specs = load_checklist()
    cat, labels = catalogue_for(specs.values()), labels_for(specs.values())

    def german(m):
        assert "de" in cat.templates(m.id), f"{m.id} has no German text"
        for p in m.params.values():
            for x in p if isinstance(p, tuple) else (p,):
                if isinstance(x, Message):
                    german(x)

    msgs = [*finding.headline_msgs, *finding.recommendation_msgs]
    msgs += [m for e in finding.evidence for m in (e.title_msg, e.note_msg) if m is not None]
    assert msgs
    for m in msgs:
        german(m)
    for e in finding.evidence:
        for k in e.column_keys:
            assert "de" in (labels.get(k) or {}), f"{check_id}: column {k} has no German label"
    de = localize(finding, "de")
    assert de.headline != finding.headline
    assert all(a.title != b.title for a, b in zip(de.evidence, finding.evidence, strict=True))
    return de


def test_the_finding_renders_in_german(target):
    f = check(context(target, PROFILE_FILTER))
    de = assert_all_german(f, "prerank_filters")
    assert "entfernt 1 von 1 erreichbaren relevanten Dokumenten (100 %) vor dem Reranking" in de.headline
    assert "ausgeschlossen durch level eq 'evidence' (2)" in de.headline
    assert de.evidence_table("ablation").columns[6] == "relevante erreichbar"
    assert any("magnitude-Funktion" in r for r in de.recommendations)
    # cells rendered in the audit's language when the audit runs in German
    g = check(context(target, PROFILE_FILTER, lang="de"))
    assert g.evidence_table("clauses").column("role") == ["Scope", "Qualität"]
