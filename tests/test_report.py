"""Unit tests of the report's pure render functions and its secret scanner (no kernel)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from ragdiag import __version__
from ragdiag import report as R
from ragdiag.engine.runner import Failure, RunnerStats
from ragdiag.errors import ConfigError
from ragdiag.metrics import evaluate
from ragdiag.model.findings import AuditResult, Effect, Evidence, Finding
from ragdiag.model.messages import Message
from ragdiag.sample.system import sample_dir

SECRET = "pl4nted-S3cret-value-0042"


def _cell(html: str, text: str) -> bool:
    """`text` is a whole table cell of `html` (whatever the cell's class)."""
    return re.search(r'<td(?: class="[^"]*")?>' + re.escape(R._e(text)) + "</td>", html) is not None


@pytest.fixture(scope="module")
def specs():
    from ragdiag.inputs.checklist import load_checklist

    return load_checklist()


@pytest.fixture(scope="module")
def policy():
    from ragdiag.policy import load_policy

    return load_policy(sample_dir() / "profiles" / "misconfigured.toml")


def _pool_rows(n: int) -> list[tuple]:
    return [(f"case-{i:03d}", "fact", "fact_template" if i % 2 else "definition", 10 + i)
            for i in range(n)]


@pytest.fixture(scope="module")
def result() -> AuditResult:
    findings = (
        Finding(
            check_id="pool_size", status="fail",
            headline="1 semantic profile(s) cannot fill the 50-document window: pool 20 < 50",
            metrics={"profiles": 7, "measured_pool_median": 41.5, "label": "a text value"},
            evidence=(
                Evidence("Configured pool per profile", ("profile", "configured pool", "filter"),
                         (("definition", 20, "level eq 'evidence'"), ("overview", 1000, None))),
                Evidence("Pool size per question", ("case", "intent", "profile", "pool"),
                         tuple(_pool_rows(30)), note="input of the pool-size figure", key="pool_per_question"),
            ),
            recommendations=("profile 'definition': set k = 50 on every vector query",
                             "use preFilter"),
            incomplete={"failed_requests": 3, "requests": 120},
        ),
        Finding(check_id="goldset", status="warn",
                headline="fewer than 30 cases for intent(s) comparison",
                recommendations=("grow the goldset to 30-50 cases for comparison",),
                effects=(Effect("ndcg@10", 0.382, 0.479, p=0.00001, n=213, action="switch to policy 'tuned'",
                                scope="213 goldset questions",
                                action_msg=Message("goldset.eff_switch_policy", {"policy": "tuned"}),
                                scope_msg=Message("common.eff_scope_all", {"n": 213})),)),
        Finding(check_id="prerank_filters", status="fail",
                headline="'confidence_score ge 0.85' removes 14 of 41 reachable relevant documents",
                evidence=(Evidence("Cascades", ("user", "question", "attempts", "filters"),
                                   tuple(("anna", "What is X?", 3, "group_ids/any(g: search.in(g, 'a|b', '|')) "
                                          "and c ge 0.85 -> c ge 0.8") for _ in range(12))
                                   + tuple(("hanna", f"Q{i}?", 2, "c ge 0.85 -> (none)") for i in range(8)),
                                   key="cascades", column_keys=("user", "question", "attempts", "filters")),),
                effects=(Effect("ndcg@10", 0.323, 0.454, p=0.009, n=41,
                                action="remove 'confidence_score ge 0.85' before reranking",
                                scope="41 fact questions"),
                         Effect("recall@50", 0.211, 0.309, p=0.0007, n=41,
                                action="remove 'confidence_score ge 0.85' before reranking",
                                scope="41 fact questions"))),
        Finding.skipped("call_sites", "no client code folder configured",
                        what_to_supply="[inputs] client_code"),
        Finding.errored("acl_trimming", "request budget exhausted", incomplete={"failed_requests": 9}),
        Finding(check_id="reranker_scores", status="pass", headline="median top-1 score 3.56",
                evidence=(Evidence("Empty table", ("a", "b"), ()),)),
    )
    meta = {"date": "2026-06-30T12:34:56+00:00", "ragdiag_version": __version__,
            "target": "muster-structured", "policy": "misconfigured",
            "config": {"config": "/x/sample_data/audit.toml", "name": "Sample audit",
                       "client": "Muster AG", "system": "Knowledge assistant",
                       "target": {"kind": "sample"}, "profiles": "/x/profiles/misconfigured.toml",
                       "compare_profiles": "/x/profiles/tuned.toml"},
            "runner": {"sent": 12, "memory_hits": 3, "disk_hits": 4, "failed": 1, "over_budget": 0}}
    return AuditResult(findings=findings, meta=meta)


# ---------------------------------------------------------------------------
# texts


def test_fixed_texts_exist_in_both_languages():
    assert set(R.TEXTS) == set(R.LANGUAGES) == {"en", "de"}
    assert set(R.TEXTS["en"]) == set(R.TEXTS["de"])
    for lang in R.LANGUAGES:
        for key, text in R.TEXTS[lang].items():
            assert text.strip(), (lang, key)
            # placeholders agree between the languages
            assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", R.TEXTS["en"][key]))


def test_unknown_language_is_a_config_error(result):
    with pytest.raises(ConfigError, match="en, de"):
        R.render_summary(result, "fr")


# ---------------------------------------------------------------------------
# title and summary


@pytest.mark.parametrize("lang,title", [("en", "Retrieval audit report"), ("de", "Retrieval-Audit-Bericht")])
def test_front_page_names_system_date_verdict_and_priorities(result, specs, lang, title):
    html = R.render_title(result, lang, client="ACME <Corp>", system="", name="",
                          generated="2026-07-01T08:00:00+00:00", specs=specs)
    assert title in html
    assert "ACME &lt;Corp&gt;" in html and "<Corp>" not in html  # escaped
    assert "Knowledge assistant" in html  # system from the meta when not overridden
    assert "2026-06-30" in html and "muster-structured (sample)" in html and "misconfigured" in html
    verdict = {"en": "Not yet sound: 2 of 6 checks found problems that need fixing and 1 found risks to reduce; "
                     "2 did not run or could not finish",
               "de": "Noch nicht solide: 2 von 6 Prüfungen fanden Probleme, die behoben werden müssen, und 1 "
                     "Risiken"}[lang]
    assert verdict in html
    policy = {"en": "switching to policy &#x27;tuned&#x27; raises nDCG@10 on 213 goldset questions from 0.382 "
                    "to 0.479 (p &lt; 0.001)",
              "de": "der Wechsel auf die Policy &#x27;tuned&#x27; hebt nDCG@10 auf 213 Goldset-Fragen von 0.382 "
                    "auf 0.479 (p &lt; 0.001)"}[lang]
    assert policy in html
    # priorities: only findings whose fix was measured as a significant gain, the largest first;
    # pool_size's fix is unmeasured: named below them, not a priority
    prios = re.findall(r'<li class="rd-prio">(.*?)</li>', html)
    assert len(prios) == 2
    assert "remove &#x27;confidence_score ge 0.85&#x27; before reranking" in prios[0]
    assert "41 fact questions: nDCG@10 0.323 → 0.454 (+0.131), p = 0.009" in prios[0]
    assert "switch to policy" in prios[1] or "tuned" in prios[1]
    assert R._e(specs["pool_size"].text("title", lang)) not in "".join(prios)
    unmeasured = {"en": "Also found, not a priority (no significant measured gain): ",
                  "de": "Ausserdem gefunden, keine Priorität (kein signifikanter gemessener Gewinn): "}[lang]
    assert R._e(unmeasured + specs["pool_size"].text("title", lang)) in html
    assert __version__ in html


def test_priorities_rank_security_first_then_the_significant_effect(result, specs):
    ranked = R.priorities(result, specs)
    assert [p.finding.check_id for p in ranked] == ["prerank_filters", "goldset"]
    assert ranked[0].effect.metric == "ndcg@10" and ranked[0].effect.delta == pytest.approx(0.131)
    assert [f.check_id for f in R.unmeasured_findings(result)] == ["pool_size"]
    # an effect that is not significant is no priority at all, however large
    weak = Finding("reranker_scores", "fail", "x", effects=(Effect("ndcg@10", 0.1, 0.9, p=0.4, n=5,
                                                                   action="a"),))
    strong = Finding("shared_query_text", "warn", "y", effects=(Effect("ndcg@10", 0.3, 0.35, p=0.01, n=50,
                                                                       action="b"),))
    negative = Finding("route_counts", "warn", "z", effects=(Effect("ndcg@10", 0.5, 0.4, p=0.001, n=50,
                                                                    action="merge"),))
    leak = Finding("acl_trimming", "fail", "leaks", priority="security")
    res = AuditResult(findings=(weak, strong, negative, leak))
    order = [p.finding.check_id for p in R.priorities(res, specs)]
    # a leak first (unmeasurable by a retrieval metric, measured by probes), then the measured gain
    assert order == ["acl_trimming", "shared_query_text"]
    assert {f.check_id for f in R.unmeasured_findings(res)} == {"reranker_scores", "route_counts"}
    assert [f.derived_priority() for f in (weak, strong, negative)] == ["unmeasured", "measured", "unmeasured"]


def test_render_title_from_saved_findings_names_the_file(result, specs):
    html = R.render_title(result, "de", source="/tmp/out/findings.json", specs=specs)
    assert "geladen aus findings.json" in html
    assert "Muster AG" in html


@pytest.mark.parametrize("lang", ["en", "de"])
def test_render_summary_lists_every_check_in_plain_language(result, specs, lang):
    html = R.render_summary(result, lang, specs)
    for f in result.findings:
        assert R._e(specs[f.check_id].text("title", lang)) in html
        assert f'href="#check-{f.check_id}"' in html
    assert html.count('class="rd-badge') >= len(result.findings)
    for status in ("fail", "warn", "skipped", "error", "pass"):  # plain words, not the status codes
        assert f">{R.TEXTS[lang]['st_' + status]}</span>" in html
    assert ">FAIL<" not in html and ">WARN<" not in html
    # the client-readable sentence of the check's spec, not the engineer headline
    assert R._e(specs["pool_size"].messages["client_fail"][lang]) in html
    assert "pool 20 &lt; 50" not in html
    assert "nDCG@10 +0.131, p = 0.009" in html  # the measured effect of the fix
    heading = {"en": "Executive summary", "de": "Zusammenfassung"}[lang]
    assert heading in html
    assert {"en": "6 checks: 2 to fix, 1 to improve, 1 in order, 2 not run or incomplete.",
            "de": "6 Prüfungen: 2 zu beheben, 1 zu verbessern, 1 in Ordnung, 2 nicht ausgeführt oder "
                  "unvollständig."}[lang] in html


def test_summary_without_specs_falls_back_to_finding_titles():
    res = AuditResult(findings=(Finding("custom_check", "pass", "fine", title="My custom check"),
                                Finding("bare", "warn", "hm")))
    html = R.render_summary(res, "en")
    assert "My custom check" in html and "2. bare" in html
    assert ">fine<" in html  # no client sentence in a spec: the headline


# ---------------------------------------------------------------------------
# one check


@pytest.mark.parametrize("lang", ["en", "de"])
def test_render_check_sections(result, specs, lang):
    finding, spec = result["pool_size"], specs["pool_size"]
    html = R.render_check(finding, spec, lang, number=2, total=5, figures=False)
    assert f"2. {R._e(spec.text('title', lang))}" in html
    assert R._e(spec.text("question", lang)) in html
    assert R._e(spec.text("why", lang)) in html
    assert R._e(spec.messages["client_fail"][lang]) in html  # what it means, first
    assert R._e(spec.render_rules(lang)) not in html  # the status rule is in the appendix (method)
    # one roadmap instead of a list per check: what to do (and the remediation) is in appendix A
    assert R._e(spec.text("remediation", lang)) not in html
    assert "set k = 50 on every vector query" not in html and 'href="#app-pool_size"' in html
    alone = R.render_check(finding, spec, lang, figures=False)  # a section on its own keeps it
    assert R._e(spec.text("remediation", lang)) in alone and "use preFilter" in alone
    app = R.render_appendix(None, result, lang, specs=specs)
    assert R._e(spec.text("remediation", lang)) in app and "set k = 50 on every vector query" in app
    assert "pool 20 &lt; 50" in html
    assert "failed_requests = 3, requests = 120" in html
    assert "Configured pool per profile" in html and "level eq &#x27;evidence&#x27;" in html
    # a long per-question table is not printed in the section: the appendix holds it
    assert "case-000" not in html
    ref = {"en": "Pool size per question: in appendix A.2 (30 rows).",
           "de": "Pool size per question: in Anhang A.2 (30 Zeilen)."}[lang]
    assert ref in html
    labels = {"en": ("Why it matters", "Evidence", "What to do", "Check 2 of 5"),  # "What to do: the roadmap"
              "de": ("Warum es wichtig ist", "Belege", "Was zu tun ist", "Prüfung 2 von 5")}
    for label in labels[lang]:
        assert label in html
    assert 'id="check-pool_size"' in html and 'class="rd-check"' in html


def test_render_check_shows_measured_effects_and_collapses_cascades(result, specs):
    html = R.render_check(result["prerank_filters"], specs["prerank_filters"], "en", number=3, figures=False)
    assert "Measured effects" in html and "41 fact questions" in html and "+0.131" in html
    assert "p = 0.009" in html and "p &lt; 0.001" in html
    # 20 cascade rows become their filter sequences, the identity clause masked
    assert "[security filter] and c ge 0.85 -&gt; c ge 0.8" in html
    assert "search.in(g" not in html
    assert "Full table: appendix A.3." in html
    appendix = R.render_appendix(None, AuditResult(findings=(result["pool_size"], result["prerank_filters"])),
                                 "en", specs=specs)
    assert appendix.count("search.in(g, &#x27;a|b&#x27;, &#x27;|&#x27;)") == 1  # 12 identical rows once
    assert "20 rows, 9 distinct; × counts identical rows." in appendix
    assert _cell(appendix, "case-029")  # the full per-question table


def test_tables_never_print_nan_and_share_as_percent():
    ev = Evidence("t", ("run", "share_below", "p_ttest", "wins"), (("a", 0.1478, float("nan"), None),
                                                                   ("b", None, 0.0000103, "1/2/3")),
                  column_keys=("run", "share_below", "p_ttest", "wins"))
    html = R.render_evidence(ev, "de")
    assert "nan" not in html.lower()
    assert "15 %" in html and "&lt; 0.001" in html and html.count(">–<") == 3


def test_wide_tables_get_column_widths_and_short_wide_ones_are_transposed():
    from ragdiag.report.tables import Table, table_html

    wide = Table([f"c{i}" for i in range(13)], [f"c{i}" for i in range(13)],
                 [[f"v{i}-{j}" for i in range(13)] for j in range(5)])
    html = table_html(wide)
    assert "rd-fixed" in html and html.count("<col ") == 13 and len(re.findall(r"<th[ >]", html)) == 13
    one = Table([f"c{i}" for i in range(16)], [f"c{i}" for i in range(16)], [list(range(16))])
    html = table_html(one)
    assert html.count("<tr>") == 17  # a header and one row per column


def test_drift_matrix_replaces_the_call_site_and_drift_tables(specs):
    sites = tuple((f"app/m.py:{i}", "azure_search", "m", "f", "", "python", False, 10 if i < 12 else 5,
                   50, None, "semantic", "x", "v") for i in range(1, 20))
    drift = (("security filter", "security_clause", "security", "present", 17,
              tuple(f"app/m.py:{i}" for i in range(1, 18))),
             ("security filter", "security_clause", "security", "absent", 2, ("app/m.py:18", "app/m.py:19")),
             ("top", "param", "", "10", 11, tuple(f"app/m.py:{i}" for i in range(1, 12))),
             ("top", "param", "", "5", 8, tuple(f"app/m.py:{i}" for i in range(12, 20))))
    f = Finding("call_sites", "fail", "drift", evidence=(
        Evidence("Search call sites", ("site", "kind", "module", "function", "builder", "language", "async", "top",
                                       "k", "exhaustive", "query_type", "filter", "vector_fields"), sites,
                 key="call_sites"),
        Evidence("Drift", ("parameter", "kind", "role", "value", "sites", "where"), drift, key="drift")))
    html = R.render_check(f, specs["call_sites"], "en", number=7, figures=False)
    assert "Drift matrix: call sites × the parameters that differ between them" in html
    # sites by the shortest path tail that tells them apart (full paths stay in the appendix)
    row = re.search(r"<tr><td[^>]*>m.py:18</td>(.*?)</tr>", html).group(1)
    assert "✗" in row and ">5<" in row
    from ragdiag.report.tables import _short_sites
    assert _short_sites(["a/b/x.py:1", "a/c/x.py:1", "a/c/y.py:3"]) == {
        "a/b/x.py:1": "b/x.py:1", "a/c/x.py:1": "c/x.py:1", "a/c/y.py:3": "y.py:3"}
    assert "Drift: in appendix A.7 (4 rows)." in html


def test_render_check_skipped_error_and_empty(result, specs):
    skipped = R.render_check(result["call_sites"], specs["call_sites"], "en", figures=False)
    assert ">Not checked<" in skipped and "no client code folder configured" in skipped
    assert "Not run because" in skipped and "supply [inputs] client_code" in skipped
    assert R._e(specs["call_sites"].text("remediation", "en")) not in skipped  # not for skipped
    errored = R.render_check(result["acl_trimming"], specs["acl_trimming"], "de", figures=False)
    assert ">Unvollständig<" in errored and "failed_requests = 9" in errored
    assert "Keine." in errored  # no recommendations
    empty = R.render_check(result["reranker_scores"], specs["reranker_scores"], "en", figures=False)
    assert "Empty table" in empty and "(no rows)" in empty


def test_render_check_embeds_the_figure(result, specs):
    html = R.render_check(result["pool_size"], specs["pool_size"], "en")
    assert html.count('src="data:image/png;base64,') == 1


def test_a_broken_figure_is_not_swallowed(result, specs):
    """A figure whose evidence lost a column raises: the report run fails loudly instead of
    shipping a section without its figure."""
    from dataclasses import replace

    from ragdiag.checks.figures import FigureDataError

    f = result["pool_size"]
    renamed = tuple(replace(ev, column_keys=tuple("size" if c == "pool" else c for c in ev.column_keys))
                    if ev.key == "pool_per_question" else ev for ev in f.evidence)
    with pytest.raises(FigureDataError, match="no column 'pool'"):
        R.render_check(replace(f, evidence=renamed), specs["pool_size"], "de")


def test_metric_labels_per_language():
    from ragdiag.report.labels import metric_label

    assert metric_label("hit_rate@10", "de") == "Trefferquote@10"
    assert metric_label("median_top1[definition]", "de") == "Median des Top-1-Reranker-Scores (definition)"
    assert metric_label("compare_ndcg@10_delta", "en") == "Δ nDCG@10 (compared policy)"
    assert metric_label("recall@10_split_channels", "de") == "Recall@10, getrennte Kanäle"
    assert metric_label("share_top1_below_1.5", "en") == "share of top-1 scores below 1.5"
    assert metric_label("some_plugin_metric", "de") == "some_plugin_metric"


def test_evidence_frame_truncates():
    ev = Evidence("t", ("a",), tuple((i,) for i in range(40)))
    frame, total = R.evidence_frame(ev, 25)
    assert len(frame) == 25 and total == 40


def test_cell_formatting():
    assert R._fmt(None) == "–"
    assert R._fmt(True, "de") == "ja" and R._fmt(False) == "no"
    assert R._fmt(0.123456) == "0.1235"
    assert R._fmt(("a", 1)) == "a, 1"
    assert R._fmt({"x": 1}) == "x=1"
    long = R._fmt("x" * 1000)
    assert len(long) == R.MAX_CELL_CHARS and long.endswith("…")


# ---------------------------------------------------------------------------
# appendix


def test_profiles_frame(policy):
    frame = R.profiles_frame(policy)
    assert list(frame["profile"]) == list(policy.profiles)
    assert list(frame.columns) == ["profile", "query type", "keyword text", "vector text",
                                   "semantic text", "vector fields", "k", "filter",
                                   "scoring profile", "top"]
    row = frame.set_index("profile").loc["definition"]
    assert row["k"] == "20" and row["vector fields"] == "content_vector"
    assert row["keyword text"] == "none" and row["vector text"] == "keywords"
    assert row["query type"] == "semantic" and row["top"] == 10
    assert "confidence_score ge 0.85" in frame.set_index("profile").loc["fact_template", "filter"]
    de = R.profiles_frame(policy, "de")
    assert list(de.columns)[:2] == ["Profil", "Abfragetyp"]


def _fake_ctx(policy):
    queries = [SimpleNamespace(case=SimpleNamespace(id=cid), profile=prof, intent=intent)
               for cid, prof, intent in (("q1", "fact_template", "fact"), ("q2", "fact_template", "fact"),
                                         ("q3", "overview", "overview"))]
    evaluation = evaluate({"q1": ["d1", "d2"], "q2": ["d5"], "q3": ["d3"]},
                          {"q1": {"d1": 1}, "q2": {"d9": 1}, "q3": {"d3": 2}})
    run = SimpleNamespace(queries=queries, evaluation=lambda goldset: evaluation)
    stats = RunnerStats(sent=5, memory_hits=1, disk_hits=2, failed=2)
    stats.failures = [Failure(None, "HTTP 503 from target", kind="error"),
                      Failure(None, "HTTP 503 from target", kind="error"),
                      Failure(None, "request budget of 5 exhausted", kind="budget")]
    return SimpleNamespace(policy=policy, goldset=object(), run_gold=lambda p: run,
                           runner=SimpleNamespace(stats=stats))


def test_goldset_frames_per_profile_and_intent(policy):
    per_profile, per_intent = R.goldset_frames(_fake_ctx(policy))
    p = per_profile.set_index("profile")
    assert list(p.index) == ["all", "fact_template", "overview"]
    assert p.loc["all", "questions"] == 3 and p.loc["fact_template", "questions"] == 2
    assert p.loc["fact_template", "hit_rate@10"] == pytest.approx(0.5)
    assert p.loc["overview", "hit_rate@10"] == pytest.approx(1.0)
    assert p.loc["all", "hit_rate@10"] == pytest.approx(2 / 3)
    assert list(per_intent["intent"]) == ["all", "fact", "overview"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_render_appendix_with_context(result, specs, policy, lang):
    html = R.render_appendix(_fake_ctx(policy), result, lang, specs=specs)
    t = R.TEXTS[lang]
    assert R._e(t["profiles"].format(name="misconfigured")) in html
    for name in policy.profiles:
        assert _cell(html, name)
    assert R._e(t["gold_per_profile"]) in html and R._e(t["gold_per_intent"]) in html
    assert {"en": "hit rate@10", "de": "Trefferquote@10"}[lang] in html and "0.667" in html
    # what was not run
    assert R._e(t["skipped_checks"]) in html and "no client code folder configured" in html
    assert R._e(t["errored_checks"]) in html and "request budget exhausted" in html
    assert R._e(t["incomplete_checks"]) in html
    assert R._e(specs["call_sites"].text("title", lang)) in html
    assert "HTTP 503 from target" in html and _cell(html, "2") and "budget" in html
    # how each check decides: the status rule with its thresholds, and the references
    assert R._e(specs["pool_size"].render_rules(lang)) in html and specs["pool_size"].references[0] in html
    # the per-question table in full, and the key figures by their display names
    assert _cell(html, "case-029")
    assert {"en": "measured pool, median", "de": "gemessener Pool, Median"}[lang] in html
    # audit details and versions
    assert _cell(html, "python") and _cell(html, "ragdiag") and _cell(html, "pandas")
    assert "audit.toml" in html and "/x/sample_data" not in html  # file names, not paths
    assert R._e(t["client"]) in html and "2026-06-30 12:34 UTC" in html
    assert "effects" in html  # the findings field that holds measured effects is named


def test_render_appendix_from_saved_findings(result, policy):
    html = R.render_appendix(None, result, "en", policy=policy)
    assert "rendered from saved findings" in html
    assert "fact_template" in html
    assert "12 sent to the target, 7 answered from the cache, 1 failed" in html
    no_policy = R.render_appendix(None, result, "de")
    assert R._e(R.TEXTS["de"]["no_policy"]) in no_policy


def test_render_appendix_all_ran():
    res = AuditResult(findings=(Finding("goldset", "pass", "ok"),))
    html = R.render_appendix(None, res, "en")
    assert "Every check ran to completion." in html and "No search request failed." in html
    assert "nan" not in html


# ---------------------------------------------------------------------------
# HTML export


def test_export_html_hides_code_streams_and_external_scripts():
    nb = new_notebook(cells=[
        new_code_cell("print('STREAM-MARKER'); CODE_MARKER = 1", outputs=[
            new_output("stream", name="stdout", text="STREAM-MARKER\n"),
            new_output("display_data", data={"text/html": "<p>DISPLAY-MARKER</p>",
                                             "text/plain": "x"}),
        ]),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    html = R.export_html(nb, title="T <1>", lang="de")
    assert "DISPLAY-MARKER" in html
    assert "CODE_MARKER" not in html and "STREAM-MARKER" not in html
    assert "<script src=" not in html and "cdnjs" not in html
    assert '<html lang="de">' in html and "<title>T &lt;1&gt;</title>" in html
    assert "size: A4" in html and "break-before: page" in html
    assert nb.cells[0].outputs[0]["output_type"] == "stream"  # the notebook itself is untouched
    nbformat.validate(nb)


# ---------------------------------------------------------------------------
# secrets


def test_secret_values_pick_secret_looking_names_with_long_values():
    env = {"AZURE_SEARCH_KEY": SECRET, "MY_TOKEN": "short", "DB_PASSWORD": "  ", "HOME": SECRET,
           "client_secret": "0123456789", "GITHUB_TOKEN": "ghp_abcdefgh"}
    assert R.secret_values(env) == {"AZURE_SEARCH_KEY": SECRET, "client_secret": "0123456789",
                                    "GITHUB_TOKEN": "ghp_abcdefgh"}


def test_scanner_catches_a_planted_value_and_never_prints_it():
    env = {"AZURE_SEARCH_API_KEY": SECRET, "OTHER_SECRET": "not-in-the-text-123"}
    assert R.find_secrets(f"<td>{SECRET}</td>", env) == ["AZURE_SEARCH_API_KEY"]
    assert R.find_secrets("nothing here", env) == []
    with pytest.raises(R.SecretLeakError) as info:
        R.assert_no_secrets({"HTML": "ok", "PDF": f"page 3: key={SECRET}\n"}, env)
    msg = str(info.value)
    assert "PDF" in msg and "$AZURE_SEARCH_API_KEY" in msg and SECRET not in msg
    R.assert_no_secrets({"HTML": "clean"}, env)


def test_scanner_sees_escaped_forms():
    value = 'k3y"<with>&quotes'
    env = {"SERVICE_PASSWORD": value}
    assert R.find_secrets("x k3y&quot;&lt;with&gt;&amp;quotes x", env) == ["SERVICE_PASSWORD"]
    assert R.find_secrets('{"text": "k3y\\"<with>&quotes"}', env) == ["SERVICE_PASSWORD"]


def test_scanner_reads_the_process_environment(monkeypatch):
    monkeypatch.setenv("RAGDIAG_TEST_TOKEN", SECRET)
    assert "RAGDIAG_TEST_TOKEN" in R.find_secrets(f"...{SECRET}...")


def test_build_report_rejects_bad_arguments_before_running(tmp_path):
    with pytest.raises(ConfigError, match="language"):
        R.build_report(None, tmp_path, lang="fr", log=None)
    with pytest.raises(ConfigError, match="pdf_engine"):
        R.build_report(None, tmp_path, pdf_engine="latex", log=None)
    with pytest.raises(ConfigError, match="no check named nope"):
        R.build_report(None, tmp_path, checks="pool_size,nope", log=None)
    assert not any(tmp_path.iterdir())


def test_chromium_missing_is_explained(tmp_path, monkeypatch):
    from ragdiag.errors import MissingDependencyError

    monkeypatch.setattr("ragdiag.report.export.find_chromium", lambda: None)
    with pytest.raises(MissingDependencyError, match="apt-get install chromium"):
        R.build_report(None, tmp_path, pdf_engine="chromium", log=None)


def test_template_is_the_repository_notebook():
    assert R.template_path().name == "audit_report.ipynb" and R.template_path().is_file()


# ---------------------------------------------------------------------------
# measured effects (Finding.effects, Verdict.effect)


def test_verdict_records_effects_that_round_trip_and_localize(specs):
    from ragdiag.checks.base import Verdict, localize

    v = Verdict("prerank_filters", specs["prerank_filters"])
    v.observed("profile_clauses")
    e = v.effect("ndcg@10", 0.323, 0.454, p=0.009, n=41, action="eff_drop_clause", scope="eff_scope_intents",
                 clause="confidence_score ge 0.85", profile="fact_template",
                 scope_params={"n": 41, "intents": ("fact",)})
    assert e.delta == pytest.approx(0.131) and e.improves and e.significant
    assert e.action == "remove 'confidence_score ge 0.85' before reranking" and e.scope == "41 fact questions"
    f = v.finish()
    assert f.effects == (e,)
    d = f.to_dict()["effects"][0]
    assert {k: d[k] for k in ("metric", "before", "after", "n", "test")} == {
        "metric": "ndcg@10", "before": 0.323, "after": 0.454, "n": 41, "test": "paired_ttest"}
    back = Finding.from_dict(f.to_dict())
    assert back == f
    de = localize(back, "de", specs).effects[0]
    assert de.action == "'confidence_score ge 0.85' vor dem Reranking entfernen"
    assert de.scope == "41 Fragen (Intent fact)"
    # old findings without effects still read; a NaN p-value is "not computed"
    assert Finding.from_dict({"check_id": "x", "status": "pass", "headline": "ok"}).effects == ()
    assert Effect("mrr", 0.1, 0.2, p=float("nan")).p is None


def test_wide_table_headers_keep_whole_words_and_long_paths_break_at_separators():
    from ragdiag.report.tables import _breakable, _widths

    cols = ["site", "class", "kind", "module", "function", "builder", "language", "async", "top", "k",
            "exhaustive", "query_type", "filter", "vector_fields", "why this class"]
    row = ["muster_assistant/agents/search_agent.py:44", "request path", "azure_vector_query",
           "muster_assistant.agents.search_agent", "SearchAgent.find_documents", "-", "python", "yes", "10",
           "100", "-", "semantic", "{self.acl_filter} and level eq 'document'", "title_vector",
           "reachable from muster_assistant/api.py:32 template"]
    widths = _widths([row] * 10, cols, 200)
    usable = 200 - 2 * len(cols)  # the characters a landscape line holds after cell padding
    for w, c in zip(widths, cols, strict=True):
        assert w / 100 * usable >= max(len(x) for x in c.split()), (c, w)
    assert _breakable("muster_assistant/agents/search_agent.py:44 and x<y") == (
        "muster_<wbr>assistant/<wbr>agents/<wbr>search_<wbr>agent.<wbr>py:<wbr>44 and x&lt;y")
    assert _breakable("fact_template") == "fact_template"  # short identifiers stay whole


def test_summary_shows_where_relevant_documents_went_per_route(specs):
    funnel = {"status": "measured", "method": "trace", "cases": 3, "sources_total": 4,
              "routes": [{"route": "fact", "sources": 4, "stages": [
                  {"route": "fact", "stage": "filter", "detail": "zq_tier eq 1", "sources": 3, "share": 0.75,
                   "gain": 3, "gain_share": 0.75},
                  {"route": "fact", "stage": "top", "detail": None, "sources": 1, "share": 0.25, "gain": 1,
                   "gain_share": 0.25}]}]}
    ablation = {"status": "measured", "alpha": 0.05, "elements": [
        {"id": "fact:filter_clause[1]", "profile": "fact", "element": "zq_tier eq 1", "verdict": "hurts",
         "routes": ["fact"], "metrics": {"recall@50": {"delta": 0.75, "p_holm": 0.001}}},
        {"id": "fact:k[1]", "profile": "fact", "element": "k = 20", "verdict": "neutral",
         "routes": ["fact"], "metrics": {"recall@50": {"delta": 0.9, "p_holm": 0.4}}}]}
    res = AuditResult(findings=(Finding("goldset", "pass", "ok"),), loss_funnel=funnel, ablation=ablation)
    html = R.render_summary(res, "en", specs)
    assert "Where the relevant documents went" in html
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html.split("rd-funnel")[-1])
    # one row per route: its sources, the share each stage lost, the share that reached the top,
    # and the measured cost (a non-significant larger delta is not named)
    assert cells == ["fact (4)", "75%", "25%", "fact: zq_tier eq 1 (recall@50 +0.750, Holm p = 0.001)"]
    de = R.render_summary(res, "de", specs)
    assert "Wohin die relevanten Dokumente gingen" in de and "erreichte die Top" in de
    skipped = AuditResult(findings=(), loss_funnel={"status": "skipped", "reason": "no goldset"})
    assert "The loss funnel was not measured: no goldset." in R.render_summary(skipped, "en", specs)


def _goldset_finding(tmp_path, groups, specs):
    from ragdiag.checks import resolve, run_check
    from tests import leak_world as w

    ctx = w.context(tmp_path, groups)
    return run_check(resolve(specs["goldset"]), ctx, specs["goldset"])


def test_a_planted_permission_leak_is_the_first_priority_and_a_sound_index_is_none(tmp_path, specs):
    """Severity order end to end: the goldset check of the leak world (a restricted document
    readable by the wrong group) fails as a security fault, ranked before a large measured gain;
    the sound index of the same world gives no security priority at all."""
    gain = Finding("prerank_filters", "fail", "filter drops relevant documents",
                   effects=(Effect("ndcg@10", 0.2, 0.6, p=0.001, n=80, action="remove the filter"),))
    leaky = _goldset_finding(tmp_path / "leaky", w_groups("leaky"), specs)
    assert leaky.status == "fail" and leaky.priority == "security"
    res = AuditResult(findings=(gain, leaky))
    assert [p.finding.check_id for p in R.priorities(res, specs)] == ["goldset", "prerank_filters"]
    html = R.render_title(res, "en", specs=specs)
    assert html.index("goldset") < html.index("remove the filter")
    sound = _goldset_finding(tmp_path / "sound", w_groups("sound"), specs)
    assert sound.priority != "security" and not any("leak" in m.id for m in sound.headline_msgs)
    assert [p.finding.check_id for p in R.priorities(AuditResult(findings=(gain, sound)), specs)] == [
        "prerank_filters"]


def w_groups(kind: str) -> dict:
    from tests import leak_world as w

    return w.LEAKY_GROUPS if kind == "leaky" else w.SOUND_GROUPS


def test_roadmap_orders_security_then_measured_gains_with_effort(result, specs):
    leak = Finding("acl_trimming", "fail", "leaks", priority="security")
    res = AuditResult(findings=(*result.findings, leak), meta=result.meta)
    steps = R.roadmap(res, specs)
    assert steps[0].finding.check_id == "acl_trimming" and steps[0].effect is None and steps[0].effort == "code"
    measured = [s.effect for s in steps[1:]]
    # each change once, nDCG@10 before the pool metric, largest first; only significant gains
    assert [(e.metric, round(e.delta, 3)) for e in measured] == [("ndcg@10", 0.131), ("ndcg@10", 0.097)]
    html = R.render_roadmap(res, "en", specs)
    assert "security fault" in html and "configuration" in html and "nDCG@10 +0.131, p = 0.009" in html
    assert R._e("Not on the roadmap (no significant measured gain): ") in html and "not measured" in html
    assert "Fahrplan" in R.render_roadmap(res, "de", specs)


def test_limits_name_what_was_not_measured_judged_share_stand_in_and_failures(result, specs):
    texts = R.limits(result, "en", specs)
    assert texts[0].startswith("Not measured: ") and "ACL trimming" in texts[0]
    assert any(t.startswith("Stand-in") for t in texts)  # the sample: a local stand-in reranker
    assert texts[-1] == "Requests: 12 sent, 1 failed, 0 over the budget."
    gold = Finding("goldset", "pass", "ok", metrics={"judged@10": 0.126}, observed={"x": 1})
    rr = Finding("reranker_scores", "pass", "ok", observed={"x": 1})
    res = AuditResult(findings=(gold, rr), meta={"config": {"target": {"kind": "local"}}})
    texts = R.limits(res, "en", specs)
    assert texts[0] == "Every check measured something."
    assert "13%" in texts[1] and texts[2].startswith("Stand-in") and texts[3] == "Requests: none failed."
    assert "Grenzen dieses Audits" in R.render_limits(res, "de", specs)


def test_security_faults_never_take_a_measured_gain_s_place(specs):
    leaks = [Finding(cid, "fail", "leak", priority="security") for cid in ("acl_trimming", "call_sites", "goldset")]
    gains = [Finding(cid, "warn", "gain", effects=(Effect("ndcg@10", 0.3, 0.3 + d, p=0.01, n=50, action=f"a{cid}"),))
             for cid, d in (("pool_size", 0.1), ("prerank_filters", 0.3), ("shared_query_text", 0.2),
                            ("route_counts", 0.05))]
    ranked = R.priorities(AuditResult(findings=(*gains, *leaks)), specs)
    assert [p.finding.check_id for p in ranked] == ["acl_trimming", "call_sites", "goldset", "prerank_filters",
                                                    "shared_query_text", "pool_size"]
