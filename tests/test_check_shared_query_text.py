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
    assert f.observed == {"profile_requests_compared": 1, "split_probe_questions": 1}
    assert f.metrics["identical_share_profiles"] == 0.0
    assert "0% of 1 profile requests" in f.headline and "split channels change recall@10" in f.headline


def test_faulty_policy_warns_with_the_shares(tmp_path):
    f = _check(_ctx(tmp_path, FAULTY, GOOD_SCORES))
    # fact: vector "alpha" == semantic "alpha" -> identical: 1 of 1 request; both profiles search "vec"
    assert f.status == "warn", f.headline
    assert "100% of 1 profile requests" in f.headline
    assert "every intent searches the same vector field (vec)" in f.headline
    assert_german(f)


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
