"""Context budgets (check 8): LLM calls, budget constants and citation handlers from the code,
and the measured context per profile on a hand-made world whose token counts are checkable by
hand; the misconfigured sample names chat.py:35 and the unvalidated citations, the tuned one
passes.

The world: four documents whose content is "a a a ..." with 100, 200, 300 and 400 tokens
(cl100k: one token per "a"). The reranker orders them d4 > d3 > d2 > d1, and the profile's top is
2, so the assembled context of the one question is d4 + d3 = 700 tokens.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.context_budgets import count_tokens
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
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


def _ctx(tmp_path, *, budgets=None, client_code=None, target=True, policy=True):
    t = _target(tmp_path) if target else None
    gs = Goldset(cases=(GoldCase(id="q1", question="What is a?", intent="fact", as_user="u",
                                 expect_sources=(("d4", 1),)),), path=None)
    return AuditContext(config=None, target=t, runner=Runner(t) if t else None,
                        policy=loads_policy(POLICY) if policy else None, goldset=gs,
                        identities={"u": Identity("u", ("all",))}, client_code=client_code, budgets=budgets)


def _check(ctx, spec=None):
    spec = spec or load_checklist()["context_budgets"]
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, title_start):
    for e in finding.evidence:
        if e.title.startswith(title_start):
            return [dict(zip(e.columns, r, strict=True)) for r in e.rows]
    raise AssertionError(f"no evidence table starting with {title_start!r}: {[e.title for e in finding.evidence]}")


def test_token_counts_of_the_world():
    assert [count_tokens(" ".join(["a"] * n)) for n in SIZES.values()] == [100, 200, 300, 400]


def test_measured_context_within_a_config_budget_passes(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 800}))
    assert f.status == "pass", f.headline
    row = _rows(f, "Context tokens per profile")[0]
    assert (row["profile"], row["top"], row["p50 tokens"], row["max tokens"], row["budget"]) == ("p", 2, 700, 700, 800)
    assert row["budget source"] == "audit config [budgets] context_tokens = 800"
    assert _rows(f, "Context tokens per question") == [{"case": "q1", "profile": "p", "sources": 2, "tokens": 700}]
    assert f.metrics["context_tokens_max"] == 700
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


def test_without_a_declared_budget_the_default_only_warns(tmp_path):
    spec = load_checklist()["context_budgets"].with_thresholds(default_budget_tokens=500)
    f = _check(_ctx(tmp_path), spec)
    assert f.status == "warn"
    assert "above the 500-token budget (assumed (spec default 500))" in f.headline
    assert any(r.startswith("declare the context budget") for r in f.recommendations)
    assert _check(_ctx(tmp_path / "b")).status == "pass"  # 700 <= 6000


def test_model_window_minus_reserve(tmp_path):
    f = _check(_ctx(tmp_path, budgets={"context_tokens": 6000, "model_window_tokens": 1500,
                                       "answer_reserve_tokens": 1000}))
    # 1500 - 700 = 800 tokens left for the answer < 1000 reserved
    assert f.status == "fail"
    assert "profile 'p' fills 700 tokens at p95, leaving 800 of the 1500-token window" in f.headline
    assert _rows(f, "Context tokens per profile")[0]["window left at p95"] == 800


def test_unbounded_llm_call_and_unvalidated_citations(tmp_path):
    app = _app(tmp_path, UNBOUNDED_APP)
    f = _check(_ctx(tmp_path, client_code=app, target=False, policy=False))
    assert f.status == "warn"
    assert "1 LLM call(s) receive retrieved content with no visible bound (chat.py:8)" in f.headline
    assert "citations are not validated against the retrieved ids (citations.py:4)" in f.headline
    assert "runtime half not run: no profiles" in f.headline
    calls = _rows(f, "LLM call sites")
    assert calls[0]["site"] == "chat.py:8" and calls[0]["bounded"] is False
    assert any(r.startswith("cap the context at 6000 tokens / ") and "chat.py:8 (answer)" in r
               for r in f.recommendations)
    assert any(r.startswith("validate cited ids against the retrieved ids in code at citations.py:4")
               for r in f.recommendations)
    off = load_checklist()["context_budgets"].with_thresholds(warn_unbounded_call=False)
    assert _check(_ctx(tmp_path, client_code=app, target=False, policy=False), off).status == "pass"


def test_skipped_without_code_and_profiles(tmp_path):
    f = _check(_ctx(tmp_path, target=False, policy=False))
    assert f.status == "skipped"


def test_citable_field_is_reported(tmp_path):
    f = _check(_ctx(tmp_path))
    # tiny_schema has no `citable` field
    assert f.metrics["schema_citable_field"] is None
    assert any("citable" in r for r in f.recommendations)


# ---- the sample ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_misconfigured_sample_names_chat_py_35_and_unvalidated_citations(misconfigured_ctx, checklist):
    f = run_check(resolve(checklist["context_budgets"]), misconfigured_ctx, checklist["context_budgets"])
    assert f.status == "warn"
    assert "muster_assistant/chat.py:35" in f.headline and "muster_assistant/agents/search_agent.py:82" in f.headline
    assert "citations are not validated" in f.headline and "muster_assistant/citations.py:10" in f.headline
    assert any("before the LLM call at muster_assistant/chat.py:35" in r for r in f.recommendations)
    assert any("citations.py:15" in r and "validate cited ids" in r for r in f.recommendations)
    per_profile = {r["profile"]: r for r in _rows(f, "Context tokens per profile")}
    assert set(per_profile) == set(misconfigured_ctx.policy.profiles)
    assert all(r["top"] == 10 and 0 < r["p95 tokens"] < 6000 for r in per_profile.values())
    assert f.metrics["schema_citable_field"] == "citable"
    from ragdiag.plots import figure

    assert figure(f) is not None


@pytest.mark.slow
def test_tuned_sample_passes(tuned_ctx, checklist):
    f = run_check(resolve(checklist["context_budgets"]), tuned_ctx, checklist["context_budgets"])
    assert f.status in ("pass", "warn"), f.headline
    assert f.metrics["unbounded_llm_calls"] == 0 and f.metrics["citations_validated"] is True
    assert f.metrics["budget_tokens"] == 6000
    assert "MAX_CONTEXT_TOKENS" in _rows(f, "Context tokens per profile")[0]["budget source"]
