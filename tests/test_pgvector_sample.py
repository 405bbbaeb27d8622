"""The pgvector sample end to end: seed 002's system on ragdiag's embedded PostgreSQL, audited both ways."""

from __future__ import annotations

import json

import pytest

from ragdiag.sample.pgvector_answerer import answer_case


def test_sample_answerer_is_extractive_and_refuses_without_overlap():
    chunks = [("k1", "Delivery is free. Payment terms are 45 days net from invoice."),
              ("k2", "The payment terms for spare parts are 30 days.")]
    a = answer_case("What are the payment terms for spare parts?", chunks)
    assert a == {"answer": "The payment terms for spare parts are 30 days.", "citations": ["k2"], "refused": False}
    assert answer_case("What is the euro exchange rate today?", chunks) == \
        {"answer": "", "citations": [], "refused": True}


@pytest.fixture(scope="module")
def audits():
    from ragdiag.audit import run_audit
    from ragdiag.sample.system import sample_dir

    # the leaky variant differs in its client code only: acl_trimming is the check that reads it
    return {"pgvector": run_audit(sample_dir() / "audit-pgvector.toml", progress=False,
                                  checks=["acl_trimming", "goldset", "prerank_filters", "pool_size"]),
            "pgvector-leaky": run_audit(sample_dir() / "audit-pgvector-leaky.toml", checks=["acl_trimming"],
                                        progress=False)}


def _f(result, check):
    return next(f for f in result.findings if f.check_id == check)


@pytest.mark.slow
def test_sound_passes_and_leaky_fails_acl_trimming(audits):
    sound, leaky = _f(audits["pgvector"], "acl_trimming"), _f(audits["pgvector-leaky"], "acl_trimming")
    assert sound.status == "pass", sound.headline
    assert sound.observed["leak_probe_requests"] > 0
    assert leaky.status == "fail" and "security ids come from the request" in leaky.headline
    assert "assistant/retrieval.py:24" in leaky.headline


@pytest.mark.slow
def test_sample_reports_the_four_numbers_and_what_was_audited(audits):
    result = audits["pgvector"]
    m = _f(result, "goldset").metrics
    for name in ("retrieval_hit_rate", "answer_accuracy", "refusal_accuracy"):
        assert 0 < m[name] < 1 and m[f"{name}_n"] > 200
    assert (m["permission_leaks"], m["permission_leaks_n"]) == (0, 230)
    assert result.meta["target_info"]["kind"] == "pgvector"
    assert result.meta["target_info"]["server_version"].startswith("PostgreSQL 16.")
    pre = _f(result, "prerank_filters")
    assert [r[2] for r in next(e for e in pre.evidence if e.key == "sql_clauses").rows] == \
        ["access", "recency", "recency"]
    assert _f(result, "pool_size").status == "skipped"  # the sample client has no reranker


@pytest.mark.slow
def test_committed_answers_equal_the_sample_client_run(tmp_path):
    from ragdiag.sample.pgvector_answerer import write_answers
    from ragdiag.sample.system import sample_dir

    write_answers(sample_dir() / "audit-pgvector.toml", tmp_path / "answers.jsonl")
    fresh = [json.loads(x) for x in (tmp_path / "answers.jsonl").read_text().splitlines()]
    committed = [json.loads(x) for x in (sample_dir() / "pgvector" / "answers.jsonl").read_text().splitlines()]
    assert fresh == committed, "regenerate: python -m ragdiag.sample.pgvector_answerer"
