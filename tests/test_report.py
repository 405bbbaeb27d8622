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
from ragdiag.model.findings import AuditResult, Evidence, Finding
from ragdiag.sample.system import sample_dir

SECRET = "pl4nted-S3cret-value-0042"


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
                recommendations=("grow the goldset to 30-50 cases for comparison",)),
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


@pytest.mark.parametrize("lang,label,title", [("en", "Client", "Retrieval audit report"),
                                              ("de", "Kunde", "Retrieval-Audit-Bericht")])
def test_render_title(result, lang, label, title):
    html = R.render_title(result, lang, client="ACME <Corp>", system="", name="",
                          generated="2026-07-01T08:00:00+00:00")
    assert title in html and label in html
    assert "ACME &lt;Corp&gt;" in html and "<Corp>" not in html  # escaped
    assert "Knowledge assistant" in html  # system from the meta when not overridden
    assert "2026-06-30 12:34 UTC" in html and "2026-07-01 08:00 UTC" in html
    assert __version__ in html
    assert "muster-structured (sample)" in html and "misconfigured" in html and "tuned" in html


def test_render_title_from_saved_findings_names_the_file(result):
    html = R.render_title(result, "de", source="/tmp/out/findings.json")
    assert "geladen aus findings.json" in html
    assert "Muster AG" in html


@pytest.mark.parametrize("lang", ["en", "de"])
def test_render_summary_lists_every_check(result, specs, lang):
    html = R.render_summary(result, lang, specs)
    for f in result.findings:
        assert R._e(specs[f.check_id].text("title", lang)) in html
        assert f'href="#check-{f.check_id}"' in html
    assert html.count('class="rd-badge') >= len(result.findings)
    for status in ("FAIL", "WARN", "SKIPPED", "ERROR", "PASS"):
        assert f">{status}</span>" in html
    assert "pool 20 &lt; 50" in html  # headline escaped
    assert "set k = 50 on every vector query" in html  # top recommendation
    assert "use preFilter" not in html  # only the first one
    heading = {"en": "Executive summary", "de": "Zusammenfassung"}[lang]
    assert heading in html
    assert {"en": "5 checks; worst status FAIL.", "de": "5 Prüfungen; schlechtester Status FAIL."}[lang] in html


def test_summary_without_specs_falls_back_to_finding_titles():
    res = AuditResult(findings=(Finding("custom_check", "pass", "fine", title="My custom check"),
                                Finding("bare", "warn", "hm")))
    html = R.render_summary(res, "en")
    assert "My custom check" in html and "2. bare" in html


# ---------------------------------------------------------------------------
# one check


@pytest.mark.parametrize("lang", ["en", "de"])
def test_render_check_sections(result, specs, lang):
    finding, spec = result["pool_size"], specs["pool_size"]
    html = R.render_check(finding, spec, lang, number=2, total=5, figures=False)
    assert f"2. {R._e(spec.text('title', lang))}" in html
    assert R._e(spec.text("question", lang)) in html
    assert R._e(spec.text("why", lang)) in html
    rule = spec.render_rules(lang)
    assert "{" not in rule and R._e(rule) in html  # thresholds filled in
    assert R._e(spec.text("remediation", lang)) in html  # fail: general remediation shown
    assert "pool 20 &lt; 50" in html
    assert "set k = 50 on every vector query" in html and "use preFilter" in html
    assert "failed_requests = 3, requests = 120" in html
    assert "Configured pool per profile" in html and "level eq 'evidence'" in html
    assert "measured_pool_median" in html and "41.5" in html and "a text value" in html
    # evidence truncated to 25 rows, with a note in the report's language
    assert "case-024" in html and "case-025" not in html
    note = {"en": "Showing the first 25 of 30 rows",
            "de": "Gezeigt werden die ersten 25 von 30 Zeilen"}[lang]
    assert note in html
    labels = {"en": ("Why it matters", "Status rule", "Evidence", "Recommendations", "Check 2 of 5"),
              "de": ("Warum es wichtig ist", "Statusregel", "Belege", "Empfehlungen", "Prüfung 2 von 5")}
    for label in labels[lang]:
        assert label in html
    assert spec.references[0] in html
    assert 'id="check-pool_size"' in html and 'class="rd-check"' in html


def test_render_check_skipped_error_and_empty(result, specs):
    skipped = R.render_check(result["call_sites"], specs["call_sites"], "en", figures=False)
    assert "SKIPPED" in skipped and "no client code folder configured" in skipped
    assert "Not run because" in skipped and "supply [inputs] client_code" in skipped
    assert R._e(specs["call_sites"].text("remediation", "en")) not in skipped  # not for skipped
    errored = R.render_check(result["acl_trimming"], specs["acl_trimming"], "de", figures=False)
    assert "ERROR" in errored and "Unvollständig" in errored and "failed_requests = 9" in errored
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
        assert f"<td>{name}</td>" in html
    assert R._e(t["gold_per_profile"]) in html and R._e(t["gold_per_intent"]) in html
    assert "hit_rate@10" in html and "0.6667" in html
    # what was not run
    assert R._e(t["skipped_checks"]) in html and "no client code folder configured" in html
    assert R._e(t["errored_checks"]) in html and "request budget exhausted" in html
    assert R._e(t["incomplete_checks"]) in html
    assert R._e(specs["call_sites"].text("title", lang)) in html
    assert "HTTP 503 from target" in html and "<td>2</td>" in html and "budget" in html
    assert "5" in html
    # versions
    assert "<td>python</td>" in html and "<td>ragdiag</td>" in html and "<td>pandas</td>" in html
    assert "audit.toml" in html and "/x/sample_data" not in html  # file names, not paths


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
