"""Observed evidence in the checks (ragdiag/checks/_observed.py): each verdict traffic informs, both ways.

Traffic files are written here as `ragdiag record` writes them (one JSON object per request),
spans as OTLP JSON lines, statements as a Postgres server log; the checks read them through
`[inputs] traffic` / `[inputs] traces` (`load_observed`), with hand-checkable numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.base import catalogue_for, localize
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.model.messages import render
from ragdiag.observe import load_observed

SPECS = load_checklist()
SECURE = "group_ids/any(g: search.in(g, 'sales'))"
APPS = Path(__file__).parent / "fixtures" / "observed_apps"


def search(body: dict[str, Any], *, seq: int = 1, reranker: list[float] | None = None, keys: list[str] | None = None,
           header: bool = False, trace: str | None = None, ts: str = "2026-12-02T08:00:00.000Z",
           agent: str = "azsdk-python-search-documents/12.0.0", index: str = "docs") -> dict[str, Any]:
    keys = keys if keys is not None else ["k1", "k2", "k3"]
    return {"seq": seq, "ts": ts, "method": "POST", "path": f"/indexes('{index}')/docs/search.post.search",
            "operation": "search", "index": index, "api_version": "2026-04-01", "status": 200, "refused": False,
            "auth": "api-key", "permission_header": header, "user_agent": agent, "trace_id": trace,
            "client_request_id": None, "body": body,
            "response": {"returned": len(keys), "count": None, "keys": keys, "key_field": "id",
                         "scores": [0.03] * len(keys), "reranker_scores": reranker or [None] * len(keys),
                         "captions": False, "answers": False, "partial": None},
            "latency_ms": 5.0, "upstream_ms": 4.0}


def write_traffic(tmp: Path, records: list[dict[str, Any]], name: str = "traffic.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def semantic(k: int = 50, *, keyword: bool = False, text: str = "notice period", flt: str | None = SECURE,
             top: int = 5, semantic_query: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"queryType": "semantic", "semanticConfiguration": "default", "top": top,
                            "vectorQueries": [{"kind": "vector", "vector": [1.0, 0.0, 0.0], "k": k, "fields": "vec"}]}
    if keyword:
        body["search"] = text
    if semantic_query:
        body["semanticQuery"] = semantic_query
    if flt:
        body["filter"] = flt
    return body


def run(check_id: str, tmp: Path, *, traffic: list[Path] = (), traces: list[Path] = (), code: Path | None = None,
        budgets: dict[str, Any] | None = None, identities: dict[str, Any] | None = None):
    obs = load_observed(traffic=list(traffic), traces=list(traces))
    ctx = AuditContext(config=None, target=None, runner=Runner(None), client_code=code, observed=obs,
                       budgets=budgets or {}, identities=identities)
    spec = SPECS[check_id]
    return run_check(resolve(spec), ctx, spec)


def code_only(check_id: str, code: Path):
    ctx = AuditContext(config=None, target=None, runner=Runner(None), client_code=code)
    spec = SPECS[check_id]
    return run_check(resolve(spec), ctx, spec)


def german(finding) -> str:
    de = localize(finding, "de", SPECS)
    cat = catalogue_for(SPECS.values())
    for m in finding.headline_msgs:
        assert render(m, "en", cat) != render(m, "de", cat) or m.id.endswith("verdict_ok"), m.id
    return de.headline


# ---- reranker scores -------------------------------------------------------------------------------------
def test_reranker_scores_from_recorded_responses_fail_when_low(tmp_path):
    recs = [search(semantic(), seq=i, reranker=[0.8, 0.5, 0.2]) for i in range(1, 5)]
    f = run("reranker_scores", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "fail", f.headline
    assert "median top-1 reranker score 0.80 < 1.00 in 4 recorded requests" in f.headline
    assert f.metrics["observed_requests"] == 4 and "observed: 4 recorded requests" in f.headline
    assert "Reranker" in german(f) or "Median" in german(f)


def test_reranker_scores_from_recorded_responses_pass_when_healthy(tmp_path):
    recs = [search(semantic(), seq=i, reranker=[3.0, 2.5, 1.0]) for i in range(1, 4)]
    f = run("reranker_scores", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "pass", f.headline
    assert "reranker scores of 3 recorded requests on 1 de facto routes are healthy (median top-1 3.00)" in f.headline
    assert f.metrics["observed_median_top1"] == 3.0


def test_semantic_asked_but_no_score_back_warns(tmp_path):
    recs = [search(semantic(keyword=True), seq=1, reranker=[3.0, 2.0, 1.0]),
            search(semantic(keyword=True), seq=2)]  # keys came back, no reranker score: the ranker did not run
    f = run("reranker_scores", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "warn" and "1 of 2 recorded semantic requests came back without reranker scores" in f.headline


def test_traffic_without_semantic_requests_does_not_pass_reranker_scores(tmp_path):
    f = run("reranker_scores", tmp_path, traffic=[write_traffic(tmp_path, [search({"search": "x", "top": 3})])])
    assert f.status == "skipped"


# ---- pool size -------------------------------------------------------------------------------------------
def test_pool_below_the_window_in_traffic_fails(tmp_path):
    recs = [search(semantic(k=10), seq=1), search(semantic(k=10), seq=2), search(semantic(k=60, keyword=True), seq=3)]
    f = run("pool_size", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "fail", f.headline
    assert "2 of 3 recorded semantic requests put only 10 candidates into fusion (< 50)" in f.headline
    rows = {(r[1], r[5]): r[6] for r in f.evidence_table("observed_pools").rows}
    assert rows[("vec=10", 10)] == 2 and rows[("vec=60", 1000 + 60)] == 1


def test_pools_that_fill_the_window_pass(tmp_path):
    recs = [search(semantic(k=50), seq=i) for i in range(1, 4)]
    f = run("pool_size", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "pass" and "3 recorded semantic requests fill the reranker's window (smallest pool 50 >= 50)" \
        in f.headline


def test_a_wrapper_passing_k_explicitly_the_scan_misreads_the_traffic_corrects(tmp_path):
    """The scan sees the SDK call inside the app's wrapper without k (it arrives in **options) and fails
    the pool at 0; the wrapper's caller passes k=50, which is what was sent."""
    code = APPS / "wrapper"
    static = code_only("pool_size", code)
    assert static.status == "fail" and "app.py" in static.headline
    recs = [search(semantic(k=50, flt=None), seq=i) for i in range(1, 6)]
    f = run("pool_size", tmp_path, traffic=[write_traffic(tmp_path, recs)], code=code)
    assert f.status == "pass", f.headline
    assert "the code said:" in f.headline and "app.py:" in f.headline
    assert "all 5 semantic requests sending at least 50 candidates" in f.headline
    assert f.metrics["observed_contradicts_code"] == 1
    assert not [loc for loc in f.locations if "loc_code_pool_below" in str(loc.message_msg)]
    # and where the traffic agrees with the code (k really missing), the code's fail stands with the traffic's
    low = [search(semantic(k=5, flt=None), seq=1)]
    f2 = run("pool_size", tmp_path, traffic=[write_traffic(tmp_path, low, "low.jsonl")], code=code)
    assert f2.status == "fail" and "code_pool_below" in {m.id.split(".")[-1] for m in f2.headline_msgs}


# ---- pre-rerank filters ------------------------------------------------------------------------------------
def test_a_quality_clause_sent_before_reranking_warns_with_its_variants(tmp_path):
    recs = [search(semantic(flt=f"{SECURE} and confidence_score ge 0.85"), seq=1),
            search(semantic(flt=f"{SECURE} and confidence_score ge 0.7"), seq=2),
            search(semantic(flt=SECURE), seq=3)]
    f = run("prerank_filters", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "warn", f.headline
    assert "'confidence_score ge ?' (quality) was sent before reranking on 2 of 3 recorded requests" in f.headline
    rows = {r[0]: r[3] for r in f.evidence_table("observed_clauses").rows}
    assert rows == {"group_ids/any(g: search.in(g, '?'))": 3, "confidence_score ge ?": 2}


def test_access_clauses_only_pass_prerank_filters(tmp_path):
    recs = [search(semantic(flt=SECURE), seq=i) for i in range(1, 3)]
    f = run("prerank_filters", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "pass" and "1 filter clause variants sent in 2 recorded requests" in f.headline


def test_fallback_cascades_in_traffic_warn(tmp_path):
    recs = [search({"search": "notice period", "filter": "confidence_score ge 0.85"}, seq=1, trace="a" * 32,
                   ts="2026-12-02T08:00:00.000Z", keys=[]),
            search({"search": "notice period"}, seq=2, trace="a" * 32, ts="2026-12-02T08:00:01.000Z"),
            search({"search": "notice period"}, seq=3, trace="b" * 32, ts="2026-12-02T08:05:00.000Z")]
    f = run("prerank_filters", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert "1 fallback cascades in 3 recorded requests" in f.headline
    (row,) = f.evidence_table("observed_cascades").rows
    assert row[0] == f"trace {'a' * 32}" and row[2] == 2


# ---- shared query text -----------------------------------------------------------------------------------------
def test_one_text_for_every_channel_in_traffic_warns(tmp_path):
    body = {"search": "notice period", "queryType": "semantic", "semanticConfiguration": "default",
            "vectorQueries": [{"kind": "text", "text": "notice period", "k": 50, "fields": "vec"}]}
    f = run("shared_query_text", tmp_path, traffic=[write_traffic(tmp_path, [search(body, seq=i) for i in (1, 2)])])
    assert f.status == "warn" and "100% of 2 recorded requests send one identical text to every channel" in f.headline


def test_separate_channel_texts_in_traffic_pass(tmp_path):
    body = {"search": "notice period framework", "queryType": "semantic", "semanticConfiguration": "default",
            "semanticQuery": "What notice period applies to the framework agreement?",
            "vectorQueries": [{"kind": "text", "text": "What notice period applies?", "k": 50, "fields": "vec"}]}
    f = run("shared_query_text", tmp_path, traffic=[write_traffic(tmp_path, [search(body)])])
    assert f.status == "pass" and "channel texts of 1 recorded requests compared (0% identical)" in f.headline


# ---- route counts ---------------------------------------------------------------------------------------------
def test_de_facto_routes_with_a_starved_one_warn(tmp_path):
    recs = [search(semantic(), seq=i) for i in range(1, 100)] + [search({"search": "x", "top": 3}, seq=100)]
    f = run("route_counts", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "warn", f.headline
    assert "carries 1.0% of the recorded traffic (1 requests, < 2%)" in f.headline
    assert [r[1] for r in f.evidence_table("observed_routes").rows] == [99, 1]


def test_de_facto_routes_with_their_share_pass(tmp_path):
    recs = [search(semantic(), seq=i) for i in range(1, 7)] + [search({"search": "x"}, seq=i) for i in range(7, 11)]
    f = run("route_counts", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "pass" and "2 de facto routes in 10 recorded requests" in f.headline
    assert [round(r[2], 2) for r in f.evidence_table("observed_routes").rows] == [0.6, 0.4]


# ---- call sites: drift and loops ------------------------------------------------------------------------------
def test_a_filter_that_drifts_within_one_route_fails(tmp_path):
    recs = [search(semantic(flt=SECURE), seq=1), search(semantic(flt=SECURE), seq=2),
            search(semantic(flt=None), seq=3)]
    f = run("call_sites", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "fail", f.headline
    assert "the filter differs between the recorded requests of one route" in f.headline
    params = {r[1] for r in f.evidence_table("observed_drift").rows}
    assert params == {"filter"}


def test_a_dead_fallback_the_scan_fails_on_passes_on_traffic(tmp_path):
    """The scan fails call_sites on a fallback without the security clause; the recorded traffic (the
    app's own test questions) never took it: every request carried the clause."""
    code = APPS / "fallback"
    static = code_only("call_sites", code)
    assert static.status == "fail" and "app.py:16" in static.headline
    recs = [search({"search": f"q{i}", "filter": SECURE, "top": 5}, seq=i) for i in range(1, 9)]
    f = run("call_sites", tmp_path, traffic=[write_traffic(tmp_path, recs)], code=code)
    assert f.status == "pass", f.headline
    assert "the code said:" in f.headline and "one filter per route in 8 requests on 1 routes" in f.headline
    assert "observed: 8 recorded requests" in f.headline
    acl = run("acl_trimming", tmp_path, traffic=[write_traffic(tmp_path, recs)], code=code)
    # the missing-clause site is withdrawn; the retry after an error stays a fault (errors were not recorded)
    assert "acl_trimming.code_no_clause" not in {m.id for m in acl.headline_msgs}  # withdrawn as a fault
    assert "the code said: the security clause is missing at 1 of 2" in acl.headline  # ... and named
    assert "trimming on all 8 requests" in acl.headline
    assert acl.status == "fail" and "fail-open" in acl.headline


def test_loops_per_trace_are_counted(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_otlp([("t1", "AGENT", None), ("t1", "RETRIEVER", "r"), ("t1", "RETRIEVER", "r"),
                             ("t1", "RETRIEVER", "r"), ("t1", "LLM", "r"), ("t2", "AGENT", None),
                             ("t2", "RETRIEVER", "r")]), encoding="utf-8")
    f = run("call_sites", tmp_path, traces=[traces])
    assert f.status == "pass" and "2 traces: at most 3 retrievals per trace (median 2)" in f.headline
    rows = f.evidence_table("observed_loops").rows
    assert [(r[2], r[3]) for r in rows] == [(3, 1), (1, 0)]
    assert f.metrics["observed_max_retrievals_per_trace"] == 3


# ---- context budgets -------------------------------------------------------------------------------------------
def _otlp(spans: list[tuple[str, str, str | None]], tokens: int | None = None, ts0: int = 1) -> str:
    out = []
    for i, (trace, kind, parent) in enumerate(spans):
        attrs = [{"key": "openinference.span.kind", "value": {"stringValue": kind}}]
        if kind == "LLM" and tokens is not None:
            attrs.append({"key": "llm.token_count.prompt", "value": {"intValue": str(tokens + i)}})
        tid = (trace * 32)[:32].encode().hex()[:32]
        span = {"traceId": tid, "spanId": f"{i + 1:016x}", "parentSpanId": "" if parent is None else f"{1:016x}",
                "name": kind.lower(), "startTimeUnixNano": str(ts0 + i), "endTimeUnixNano": str(ts0 + i + 1),
                "attributes": attrs}
        out.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return "\n".join(out) + "\n"


def test_traced_prompts_above_the_declared_budget_fail(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_otlp([("t1", "LLM", None), ("t2", "LLM", None)], tokens=9000), encoding="utf-8")
    f = run("context_budgets", tmp_path, traces=[traces], budgets={"context_tokens": 6000})
    assert f.status == "fail", f.headline
    assert "above the budget of 6,000" in f.headline and f.metrics["observed_prompt_tokens_max"] == 9001


def test_traced_prompts_within_the_budget_pass(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(_otlp([("t1", "LLM", None), ("t2", "LLM", None)], tokens=3000), encoding="utf-8")
    f = run("context_budgets", tmp_path, traces=[traces], budgets={"context_tokens": 6000})
    assert f.status == "pass" and "2 traced LLM calls stay within the budget" in f.headline
    assert "observed: 2 LLM calls in the traces" in f.headline


# ---- ACL trimming ------------------------------------------------------------------------------------------------
def test_the_security_clause_missing_on_one_path_names_its_caller(tmp_path):
    recs = [search(semantic(flt=SECURE), seq=i, trace="a" * 32) for i in (1, 2, 3)] + \
        [search(semantic(flt=None), seq=4, trace="b" * 32)]
    f = run("acl_trimming", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "fail", f.headline
    assert ("the security clause and the permission header are missing on 1 of 4 recorded requests "
            f"(sent by trace {'b' * 32} (1))") in f.headline
    rows = {r[0]: (r[1], r[2]) for r in f.evidence_table("observed_acl").rows}
    assert rows == {f"trace {'b' * 32}": (1, 1), f"trace {'a' * 32}": (3, 0)}


def test_every_request_trimmed_by_clause_or_header_passes(tmp_path):
    recs = [search(semantic(flt=SECURE), seq=1), search(semantic(flt=None), seq=2, header=True)]
    f = run("acl_trimming", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    assert f.status == "pass", f.headline
    assert "all 2 recorded requests are trimmed" in f.headline and "not verified against identities" in f.headline


PG_LOG = """\
2026-12-02 08:00:00.100 UTC [77] LOG:  duration: 1.0 ms  execute <unnamed>: SELECT id, content FROM chunks WHERE acl && $2 ORDER BY embedding <=> $1 LIMIT 20
2026-12-02 08:00:00.100 UTC [77] DETAIL:  parameters: $1 = '[1,0,0]', $2 = '{sales}'
2026-12-02 08:00:00.200 UTC [77] LOG:  duration: 1.0 ms  execute <unnamed>: SELECT id, content FROM chunks WHERE acl && $2 ORDER BY embedding <=> $1 LIMIT 20
2026-12-02 08:00:00.200 UTC [77] DETAIL:  parameters: $1 = '[0,1,0]', $2 = '{hr}'
"""


def test_trimming_inside_sql_the_scan_cannot_see_passes_on_the_statements(tmp_path):
    code = APPS / "sqltrim"
    static = code_only("acl_trimming", code)
    assert static.status == "skipped", static.headline
    log = tmp_path / "postgres.log"
    log.write_text(PG_LOG, encoding="utf-8")
    f = run("acl_trimming", tmp_path, traffic=[log], code=code)
    assert f.status == "pass", f.headline
    assert "all 2 recorded requests are trimmed (by a security condition in SQL)" in f.headline
    pool = run("pool_size", tmp_path, traffic=[log], code=code)
    assert [(r[1], r[2]) for r in pool.evidence_table("observed_sql_limits").rows] == [("20", 2)]
    # one statement without the condition: the missing trimming is found
    log.write_text(PG_LOG + "2026-12-02 08:00:01.000 UTC [78] LOG:  duration: 1.0 ms  statement: SELECT id FROM chunks "
                   "ORDER BY embedding <=> '[1,0,0]' LIMIT 20\n", encoding="utf-8")
    f2 = run("acl_trimming", tmp_path, traffic=[log], code=code)
    assert f2.status == "fail" and "missing on 1 of 3 recorded requests (sent by postgres (1))" in f2.headline


def test_no_observed_input_leaves_the_checks_as_they_were(tmp_path):
    empty = write_traffic(tmp_path, [])
    for cid in ("reranker_scores", "pool_size", "prerank_filters", "route_counts", "acl_trimming"):
        f = run(cid, tmp_path, traffic=[empty])
        assert f.status == "skipped", (cid, f.headline)


@pytest.mark.parametrize("lang", ["de"])
def test_observed_messages_render_in_german(tmp_path, lang):
    recs = [search(semantic(flt=SECURE), seq=1), search(semantic(flt=None), seq=2)]
    f = run("acl_trimming", tmp_path, traffic=[write_traffic(tmp_path, recs)])
    de = german(f)
    assert "aufgezeichneten Anfragen" in de and "recorded" not in de


def test_an_audit_config_with_traffic_only_audits_what_was_sent(tmp_path):
    """[inputs] traffic / traces in the config: `ragdiag audit` runs the checks traffic informs on it."""
    import subprocess
    import sys

    recs = [search(semantic(k=10), seq=1, reranker=[3.0]), search(semantic(k=10, flt=None), seq=2, reranker=[2.9])]
    write_traffic(tmp_path, recs)
    (tmp_path / "traces.jsonl").write_text(_otlp([("t1", "LLM", None)], tokens=100), encoding="utf-8")
    (tmp_path / "audit.toml").write_text('[audit]\nname = "observed"\n\n[inputs]\ntraffic = "traffic.jsonl"\n'
                                         'traces = ["traces.jsonl"]\n', encoding="utf-8")
    out = tmp_path / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(tmp_path / "audit.toml"), "--json", str(out),
                           "--fail-on", "never"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["meta"]["observed"]["searches"] == 2 and data["meta"]["observed"]["spans"] == 1
    by_id = {f["check_id"]: f for f in data["findings"]}
    assert by_id["pool_size"]["status"] == "fail" and by_id["pool_size"]["metrics"]["observed_requests"] == 2
    assert by_id["acl_trimming"]["status"] == "fail"
    assert by_id["reranker_scores"]["status"] == "pass"
    assert by_id["context_budgets"]["metrics"]["observed_llm_calls"] == 1
    assert by_id["goldset"]["status"] in ("fail", "skipped")  # nothing observed informs it


def test_config_traffic_must_name_files(tmp_path):
    from ragdiag.errors import ConfigError
    from ragdiag.inputs.config import load_config

    (tmp_path / "a.toml").write_text("[inputs]\ntraffic = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"a\.toml:2.*'traffic' must be a file or a list of files"):
        load_config(tmp_path / "a.toml")
    (tmp_path / "b.toml").write_text('[inputs]\ntraces = ["nope.jsonl"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "b.toml")
