"""Context budgets (check 8): LLM calls, budget constants and citation handlers from the code,
and the measured context per profile on a hand-made world whose token counts are checkable by
hand; the misconfigured sample names chat.py:35 and the unvalidated citations, the tuned one
passes.

The world: four documents whose content is "a a a ..." with 100, 200, 300 and 400 tokens
(cl100k: one token per "a"). The reranker orders them d4 > d3 > d2 > d1, and the profile's top is
2, so the assembled context of the one question is d4 + d3 = 700 tokens.

What reaches the model: profiles whose top is far above their siblings' (more than 2x their
median) or fills the reranker's 50-document window are flagged with their token cost, top x the
measured median chunk tokens (the routed profile "a" with top 5 returns all four documents:
median of 100, 200, 300, 400 = 250 tokens), else top x the spec's 400-token estimate.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.base import localize
from ragdiag.checks.context_budgets import count_tokens
from ragdiag.checks.figures import FigureDataError, figure
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.errors import TargetError
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.evidence_helpers import column_renamed, english_left, retitled
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

SIZES = {"d1": 100, "d2": 200, "d3": 300, "d4": 400}
POLICY = """
[policy]
name = "two"
[routes]
default = "p"
[profiles.p]
query_type = "semantic"
semantic_configuration = "default"
keyword_text = "none"
semantic_text = "verbatim"
top = 2
  [[profiles.p.vector_queries]]
  fields = ["vec"]
  k = 50
  exhaustive = true
"""


def _tops_policy(*tops):
    """Vector-only profiles a, b, c, ... with these tops; `a` is the default route."""
    out = '[policy]\nname = "tops"\n[routes]\ndefault = "a"\n'
    for name, top in zip("abcdef", tops, strict=False):
        out += (f'[profiles.{name}]\nquery_type = "simple"\nkeyword_text = "none"\ntop = {top}\n'
                '  [[profiles.' + name + '.vector_queries]]\n  fields = ["vec"]\n  k = 50\n  exhaustive = true\n')
    return out

UNBOUNDED_APP = {
    "chat.py": """
        from openai import AzureOpenAI

        client = AzureOpenAI(azure_endpoint="e", api_version="2024-10-21")

        def answer(question, hits):
            context = "\\n".join(h["content"] for h in hits)
            return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
                                                  "content": f"{context}\\n{question}"}])
        """,
    "citations.py": """
        import re

        def extract_citations(answer):
            return re.findall(r"\\[(\\w+)\\]", answer)
        """,
}
BOUNDED_APP = {
    "settings.py": """
        MAX_CONTEXT_TOKENS = {budget}
        MAX_SOURCES = 5
        """,
    "chat.py": """
        from openai import AzureOpenAI
        from settings import MAX_SOURCES

        client = AzureOpenAI(azure_endpoint="e", api_version="2024-10-21")

        def answer(question, hits):
            context = "\\n".join(h["content"] for h in hits[:MAX_SOURCES])
            return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
                                                  "content": f"{context}\\n{question}"}])
        """,
    "citations.py": """
        def checked_citations(cited, retrieved_ids):
            return [c for c in cited if c in set(retrieved_ids)]
        """,
}


def _app(tmp_path, files, **fmt):
    root = tmp_path / "app"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text.replace("{budget}", str(fmt.get("budget", "")))), encoding="utf-8")
    return root


def _target(tmp_path):
    recs = [{"key": k, "title": "", "content": " ".join(["a"] * n), "category": "c", "confidence_score": 0.9,
             "page": 1, "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
             "group_ids": ["all"]} for k, n in SIZES.items()]
    vecs = np.asarray([[1.0, 0.1 * i, 0.0] for i in range(len(recs))], dtype=np.float32)
    return LocalTarget.build(recs, LocalIndexSpec("tiny-ctx", tiny_schema("tiny-ctx"), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=FakeEmbedder(),
                             reranker=KeyReranker({"d1": 1.0, "d2": 2.0, "d3": 3.0, "d4": 3.5}),
                             vectors={"vec": vecs}, progress=False)


def _ctx(tmp_path, *, budgets=None, client_code=None, target=True, policy=POLICY, goldset=True):
    t = _target(tmp_path) if target else None
    gs = Goldset(cases=(GoldCase(id="q1", question="What is a?", intent="fact", as_user="u",
                                 expect_sources=(("d4", 1),)),), path=None) if goldset else None
    return AuditContext(config=None, target=t, runner=Runner(t) if t else None,
                        policy=loads_policy(policy) if policy else None, goldset=gs,
                        identities={"u": Identity("u", ("all",))}, client_code=client_code, budgets=budgets)


def _check(ctx, spec=None):
    spec = spec or load_checklist()["context_budgets"]
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, key):
    ev = finding.evidence_table(key)
    assert ev is not None, f"no evidence table {key!r}: {[e.key for e in finding.evidence]}"
    return ev.records()


def test_token_counts_of_the_world():
    assert [count_tokens(" ".join(["a"] * n)) for n in SIZES.values()] == [100, 200, 300, 400]


def test_measured_context_within_a_config_budget_passes(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 800}))
    assert f.status == "pass", f.headline
    row = _rows(f, "context_per_profile")[0]
    assert (row["profile"], row["top"], row["p50_tokens"], row["max_tokens"], row["budget"]) == ("p", 2, 700, 700, 800)
    assert row["budget_source"] == "audit config [budgets] context_tokens = 800"
    assert _rows(f, "context_per_question") == [{"case": "q1", "profile": "p", "sources": 2, "tokens": 700}]
    assert f.metrics["context_tokens_max"] == 700
    assert f.observed == {"contexts_measured": 1}
    assert f.headline.startswith("measured context p95 700 tokens within the 800-token budget over 1 questions")
    assert "code half not run" in f.headline


def test_measured_context_above_a_config_budget_fails(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 600}))
    assert f.status == "fail"
    assert "profile 'p' assembles 700 tokens at p95 (top 2, max 700), above the 600-token budget" in f.headline
    # 700 tokens over 2 sources = 350 per source: 600 // 350 = 1 source fits
    assert any("lower top from 2 to 1" in r for r in f.recommendations)


def test_code_budget_wins_over_the_config(tmp_path):
    app = _app(tmp_path, BOUNDED_APP, budget=650)
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 6000}, client_code=app))
    assert f.status == "fail"
    assert "above the 650-token budget (code: settings.py:2 MAX_CONTEXT_TOKENS = 650)" in f.headline
    app2 = _app(tmp_path / "b", BOUNDED_APP, budget=1000)
    good = _check(_ctx(tmp_path / "b", client_code=app2))
    assert good.status == "pass", good.headline
    assert good.metrics["citations_validated"] is True
    assert good.observed == {"bounded_llm_calls": 1, "contexts_measured": 1}
    assert good.headline.startswith("1 of 1 LLM call(s) receiving retrieved content are bounded; measured context "
                                    "p95 700 tokens within the 1000-token budget")


def test_a_config_budget_conflicting_with_the_code_budget_is_reported_with_both(tmp_path):
    # the audit config says 600, the code says 1,000: both are reported with their sources, the
    # conflict is a finding, and the stricter (600) is judged: 700 tokens at p95 fail it
    app = _app(tmp_path, BOUNDED_APP, budget=1000)
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 600}, client_code=app))
    assert f.status == "fail"
    assert "above the 600-token budget (audit config [budgets] context_tokens = 600)" in f.headline
    declared = [r for r in _rows(f, "declared_values") if r["quantity"] == "context_tokens"]
    assert [(r["value"], r["source"]) for r in declared] == [(600, "audit config"), (1000, "code")]
    assert f.metrics["budget_tokens"] == 600
    assert any("declare context_tokens once" in r for r in f.recommendations)


def test_a_conflict_the_context_fits_either_way_still_warns(tmp_path):
    app = _app(tmp_path, BOUNDED_APP, budget=1000)
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 800}, client_code=app))
    assert f.status == "warn"
    assert f.headline.startswith("context_tokens is declared 2 times with different values: 800 (audit config, "
                                 "[budgets] context_tokens), 1000 (code, settings.py:2 MAX_CONTEXT_TOKENS); "
                                 "judged on the strictest, 800")


def test_a_config_budget_agreeing_with_the_code_is_no_conflict(tmp_path):
    app = _app(tmp_path, BOUNDED_APP, budget=1000)
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 1000}, client_code=app))
    assert f.status == "pass", f.headline
    assert "declared 2 times" not in f.headline
    declared = {(r["value"], r["source"]) for r in _rows(f, "declared_values") if r["quantity"] == "context_tokens"}
    assert declared == {(1000, "audit config"), (1000, "code")}
    # on a tie the code's own value is named as the budget
    assert "MAX_CONTEXT_TOKENS" in _rows(f, "context_per_profile")[0]["budget_source"]


def test_without_a_declared_budget_the_default_only_warns(tmp_path):
    spec = load_checklist()["context_budgets"].with_thresholds(default_budget_tokens=500)
    f = _check(_ctx(tmp_path), spec)
    assert f.status == "warn"
    assert "above the 500-token budget (assumed (spec default 500))" in f.headline
    assert any(r.startswith("declare the context budget") for r in f.recommendations)
    passed = _check(_ctx(tmp_path / "b"))  # 700 <= 6000, a budget the system never declared
    assert passed.status == "pass"
    assert passed.headline.startswith("measured context p95 700 tokens over 1 questions, within the 6000-token "
                                      "budget ragdiag assumes (the system declares none: set [budgets] "
                                      "context_tokens)")


def test_model_window_minus_reserve(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 6000, "model_window_tokens": 1500,
                                       "answer_reserve_tokens": 1000}))
    # 1500 - 700 = 800 tokens left for the answer < 1000 reserved
    assert f.status == "fail"
    assert "profile 'p' fills 700 tokens at p95, leaving 800 of the 1500-token window" in f.headline
    assert _rows(f, "context_per_profile")[0]["window_left"] == 800


def test_unbounded_llm_call_and_unvalidated_citations(tmp_path):
    app = _app(tmp_path, UNBOUNDED_APP)
    f = _check(_ctx(tmp_path, client_code=app, target=False, policy=None))
    assert f.status == "warn"
    assert "1 LLM call(s) receive retrieved content with no visible bound (chat.py:8)" in f.headline
    assert "citations are not validated against the retrieved ids (citations.py:4)" in f.headline
    assert "runtime half not run: no target: a code-only audit" in f.headline
    calls = _rows(f, "llm_calls")
    assert calls[0]["site"] == "chat.py:8" and calls[0]["bounded"] is False
    assert [(loc.file, loc.line) for loc in f.locations] == [("chat.py", 8)]
    assert any(r.startswith("cap the context at 6000 tokens / ") and "chat.py:8 (answer)" in r
               for r in f.recommendations)
    assert any(r.startswith("validate cited ids against the retrieved ids in code at citations.py:4")
               for r in f.recommendations)
    # with the switch off the unbounded call is not judged: nothing else was observed, so no pass
    off = load_checklist()["context_budgets"].with_thresholds(warn_unbounded_call=False)
    f_off = _check(_ctx(tmp_path, client_code=app, target=False, policy=None), off)
    assert f_off.status == "skipped" and not f_off.observed
    assert "warn_unbounded_call = false" in f_off.skipped_reason


def test_code_only_audit_passes_on_a_bounded_call_and_never_opens_a_target(tmp_path):
    app = _app(tmp_path, BOUNDED_APP, budget=1000)
    ctx = _ctx(tmp_path, client_code=app, target=False)
    assert not ctx.has("target") and ctx.has("profiles") and ctx.has("questions")
    f = _check(ctx)
    assert f.status == "pass", f.headline
    assert f.observed == {"bounded_llm_calls": 1}
    assert f.headline.startswith("1 of 1 LLM call(s) receiving retrieved content are bounded (in 3 scanned files)")
    assert "runtime half not run: no target: a code-only audit" in f.headline
    assert "context_per_profile" not in {e.key for e in f.evidence}


def test_no_llm_call_recognised_is_skipped_not_passed(tmp_path):
    app = _app(tmp_path, {"util.py": "def f(x):\n    return x\n", "more.py": "VALUE = 1\n"})
    f = _check(_ctx(tmp_path, client_code=app, target=False, policy=None, goldset=False))
    assert f.status == "skipped" and not f.observed
    assert f.skipped_reason == ("no LLM call was recognised in 2 files; ragdiag cannot tell whether context "
                                "is bounded")


def test_a_config_holding_only_a_target_passes_nothing(tmp_path):
    f = _check(_ctx(tmp_path, policy=None, goldset=False))
    assert f.status == "skipped"
    assert "client_code" in " ".join(f.recommendations)


def test_questions_without_a_target_are_skipped(tmp_path):
    f = _check(_ctx(tmp_path, target=False))
    assert f.status == "skipped"
    assert f.skipped_reason == "no client code was scanned and no context was measured (no target: a code-only audit)"


def test_citable_field_is_reported(tmp_path):
    f = _check(_ctx(tmp_path))
    # tiny_schema has no `citable` field
    assert f.metrics["schema_citable_field"] is None
    assert any("citable" in r for r in f.recommendations)


# ---- what reaches the model: top against the siblings and the reranker window ----------------------


def test_a_top_far_above_its_siblings_is_flagged_with_its_token_cost(tmp_path):
    f = _check(_ctx(tmp_path, policy=_tops_policy(5, 5, 50)))
    assert f.status == "warn"
    # c: top 50 > 2 x median(5, 5) = 10, and 50 >= the 50-document window; 50 x 250 tokens = 12,500
    assert ("profile 'c' (routes: none) passes top = 50 hits to the model (10.0x the median top 5 of the other "
            "profiles, it fills the reranker's 50-document window): about 12,500 context tokens at 250 tokens per "
            "chunk (measured median)") in f.headline
    tops = {r["profile"]: r for r in _rows(f, "profile_tops")}
    assert (tops["c"]["median_other_top"], tops["c"]["far_above"], tops["c"]["fills_window"],
            tops["c"]["chunk_tokens"], tops["c"]["tokens_at_top"]) == (5, True, True, 250, 12500)
    # a and b: 5 is not above 2 x median(5, 50) = 55
    assert not tops["a"]["far_above"] and not tops["b"]["far_above"]
    assert f.metrics["profiles_top_outliers"] == 1
    assert any(r.startswith("profile 'c': lower top from 50 to 5") for r in f.recommendations)


def test_tops_close_to_their_siblings_are_not_flagged(tmp_path):
    f = _check(_ctx(tmp_path, policy=_tops_policy(5, 5, 8)))
    # c: 8 <= 2 x median(5, 5) = 10 and 8 < 50
    assert f.status == "pass", f.headline
    assert f.metrics["profiles_top_outliers"] == 0
    assert not any(r["far_above"] or r["fills_window"] for r in _rows(f, "profile_tops"))


def test_unmeasured_top_cost_uses_the_spec_estimate(tmp_path):
    app = _app(tmp_path, BOUNDED_APP, budget=1000)
    f = _check(_ctx(tmp_path, client_code=app, target=False, policy=_tops_policy(5, 5, 50)))
    # no target, nothing measured: 50 x 400 (estimated_chunk_tokens) = 20,000
    assert f.status == "warn"
    assert "about 20,000 context tokens at 400 tokens per chunk (spec estimate, not measured)" in f.headline
    spec = load_checklist()["context_budgets"].with_thresholds(max_top_ratio=20.0)
    # a ratio of 10 no longer counts, but 50 still fills the window
    g = _check(_ctx(tmp_path, client_code=app, target=False, policy=_tops_policy(5, 5, 50)), spec)
    assert "(it fills the reranker's 50-document window)" in g.headline


# ---- failures, figure, German ------------------------------------------------------------------------


def test_every_request_failing_is_an_error_with_the_reason(tmp_path):
    ctx = _ctx(tmp_path)

    def refuse(request):
        raise TargetError("index 'tiny-ctx' is not reachable")

    ctx.target.search = refuse
    f = _check(ctx)
    assert f.status == "error"
    d = f.to_dict()
    assert d["failures"][0]["reason"] == "index 'tiny-ctx' is not reachable"
    assert d["failures"][0]["profile"] == "p"
    assert f.incomplete["failed_requests"] == f.incomplete["requests"] == 1


def test_figure_is_drawn_from_the_evidence_keys(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 800}))
    fig = figure(f)
    assert fig is not None and type(fig).__name__ == "Figure"
    assert "800" in fig.axes[0].get_legend().get_texts()[0].get_text()
    assert figure(retitled(f, "context_per_question")) is not None   # titles are not keys
    with pytest.raises(FigureDataError, match="tokens"):
        figure(column_renamed(f, "context_per_question", "tokens"))
    assert "Budget" in figure(f, "de").axes[0].get_title()


def test_finding_renders_in_german(tmp_path):
    app = _app(tmp_path, UNBOUNDED_APP)
    f = _check(_ctx(tmp_path, client_code=app, policy=_tops_policy(5, 5, 50)))
    assert f.status == "warn"
    de = localize(f, "de")
    assert de.headline.startswith("1 LLM-Aufruf(e) erhalten abgerufenen Inhalt ohne sichtbare Grenze (chat.py:8)")
    assert "etwa 12'500 Kontext-Tokens bei 250 Tokens pro Chunk (gemessener Median)" in de.headline
    assert de.evidence_table("profile_tops").title == "Was beim Modell ankommt: top je Profil"
    assert english_left(de, "context_budgets") == []
    assert english_left(f, "context_budgets")  # the control


# ---- the sample ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_misconfigured_sample_names_chat_py_35_and_unvalidated_citations(misconfigured_ctx, checklist):
    f = run_check(resolve(checklist["context_budgets"]), misconfigured_ctx, checklist["context_budgets"])
    assert f.status == "warn"
    assert "muster_assistant/chat.py:35" in f.headline and "muster_assistant/agents/search_agent.py:82" in f.headline
    assert "citations are not validated" in f.headline and "muster_assistant/citations.py:10" in f.headline
    assert any("before the LLM call at muster_assistant/chat.py:35" in r for r in f.recommendations)
    assert any("citations.py:15" in r and "validate cited ids" in r for r in f.recommendations)
    per_profile = {r["profile"]: r for r in _rows(f, "context_per_profile")}
    assert set(per_profile) == set(misconfigured_ctx.policy.profiles)
    assert all(r["top"] == 10 and 0 < r["p95_tokens"] < 6000 for r in per_profile.values())
    assert f.metrics["schema_citable_field"] == "citable"
    assert f.metrics["profiles_top_outliers"] == 0  # every profile passes top 10
    assert figure(f) is not None


@pytest.mark.slow
def test_tuned_sample_passes(tuned_ctx, checklist):
    f = run_check(resolve(checklist["context_budgets"]), tuned_ctx, checklist["context_budgets"])
    assert f.status in ("pass", "warn"), f.headline
    assert f.observed["bounded_llm_calls"] == 2 and f.observed["contexts_measured"] > 0
    assert f.metrics["unbounded_llm_calls"] == 0 and f.metrics["citations_validated"] is True
    assert f.metrics["budget_tokens"] == 6000
    assert "MAX_CONTEXT_TOKENS" in _rows(f, "context_per_profile")[0]["budget_source"]


# ---- a target whose hits carry no text measures nothing ---------------------------------------
def _mock_ctx(**mock):
    from ragdiag.extend import MockTarget

    recs = [{"id": k, "content": " ".join(["a"] * n), "group_ids": ["all"]} for k, n in SIZES.items()]
    t = MockTarget(recs, **mock)
    gs = Goldset(cases=(GoldCase(id="q1", question="What is a?", intent="fact", as_user="u",
                                 expect_sources=(("d4", 1),)),), path=None)
    return AuditContext(config=None, target=t, runner=Runner(t), policy=loads_policy(_tops_policy(2)), goldset=gs,
                        identities={"u": Identity("u", ("all",))}, client_code=None, budgets=None)


def test_hits_without_text_skip_instead_of_passing_on_zero_tokens():
    f = _check(_mock_ctx(text=False, capabilities=()))  # no text in the hits, none readable by key
    assert f.status == "skipped" and "none of the 2 hits searched carried text in content" in f.skipped_reason
    assert f.metrics["hits_without_text"] == 2 and "context_tokens_p95" not in f.metrics


def test_hits_with_text_are_measured_and_pass():
    # every record holds "a": all four score 1, ties by key, top 2 -> d1 + d2 = 100 + 200 tokens
    f = _check(_mock_ctx())
    assert f.status == "pass" and f.metrics["context_tokens_max"] == 300 and f.metrics["hits_without_text"] == 0


def test_searches_without_hits_measure_nothing():
    ctx = _mock_ctx()
    ctx.target.records = tuple(dict(r, group_ids=["other"]) for r in ctx.target.records)  # the filter keeps none
    f = _check(ctx)
    assert f.status == "skipped" and "the 1 searches returned no hits" in f.skipped_reason


def test_text_read_by_key_when_the_hits_lack_it_is_measured():
    f = _check(_mock_ctx(text=False))  # capability get_document: the content is read by key
    assert f.status == "pass" and f.metrics["context_tokens_max"] == 300
