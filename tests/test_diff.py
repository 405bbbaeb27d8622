"""`ragdiag diff`: status changes and metric deltas between two audits, regressions by
severity and by the spec's [regression] tolerances, exit codes both ways; and the loader's
validation of the [regression] tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.ci.diff import diff_audits
from ragdiag.errors import ConfigError
from ragdiag.inputs.checklist import load_checklist, load_spec
from ragdiag.model.findings import AuditResult, Finding

SPEC = '''\
id = "demo"

[title]
en = "Demo"

[question]
en = "Is it a demo?"

[thresholds]
limit = 5
'''


def _audit(**checks: tuple[str, dict]) -> AuditResult:
    return AuditResult(findings=tuple(Finding(cid, status, f"{cid} is {status}", metrics=metrics)
                                      for cid, (status, metrics) in checks.items()))


def _write(tmp_path: Path, name: str, result: AuditResult) -> str:
    path = tmp_path / name
    result.to_json(path)
    return str(path)


# ---- the comparison ----------------------------------------------------------------------


def test_every_shipped_spec_declares_regression_metrics(checklist):
    for cid, spec in checklist.items():
        assert spec.regression, cid
        for rule in spec.regression.values():
            assert rule["better"] in ("higher", "lower") and rule["tolerance"] >= 0


def test_status_worse_is_a_regression_better_is_not(checklist):
    old = _audit(pool_size=("warn", {}), goldset=("fail", {}), call_sites=("pass", {}))
    new = _audit(pool_size=("fail", {}), goldset=("warn", {}), call_sites=("skipped", {}))
    d = diff_audits(old, new, checklist)
    assert {c.check_id: c.change for c in d.checks} == {"pool_size": "worse", "goldset": "better",
                                                        "call_sites": "worse"}  # skipped > pass
    assert d.regressions == ["pool_size: status warn -> fail", "call_sites: status pass -> skipped"]
    assert d.exit_code() == 1 and d.exit_code(fail_on_regression=False) == 0


def test_metric_tolerances_from_the_spec(checklist):
    # goldset: ndcg@10 higher, tolerance 0.01; pool_size: share_below lower, tolerance 0.02
    assert checklist["goldset"].regression["ndcg@10"] == {"better": "higher", "tolerance": 0.01}
    assert checklist["pool_size"].regression["share_below"] == {"better": "lower", "tolerance": 0.02}
    old = _audit(goldset=("warn", {"ndcg@10": 0.40, "recall@50": 0.50, "cases": 230, "label": "x"}),
                 pool_size=("pass", {"share_below": 0.10}))
    within = _audit(goldset=("warn", {"ndcg@10": 0.391, "recall@50": 0.60, "cases": 10, "label": "y"}),
                    pool_size=("pass", {"share_below": 0.12}))
    d = diff_audits(old, within, checklist)
    assert d.regressions == []  # -0.009 and +0.02 are inside the tolerances; cases has none
    g = {m.name: m for m in next(c for c in d.checks if c.check_id == "goldset").metrics}
    assert "label" not in g  # text metrics are not compared
    assert g["ndcg@10"].delta == pytest.approx(-0.009)
    assert g["cases"].delta == -220 and not g["cases"].regressed  # no tolerance: shown, never gates
    assert g["recall@50"].improved
    beyond = _audit(goldset=("warn", {"ndcg@10": 0.38, "recall@50": None}),
                    pool_size=("pass", {"share_below": 0.1201}))
    d = diff_audits(old, beyond, checklist)
    assert [r.split(";")[0] for r in d.regressions] == [
        "goldset: ndcg@10 0.4 -> 0.38 (-0.02)", "goldset: recall@50 no longer measured",
        "pool_size: share_below 0.1 -> 0.1201 (+0.0201)"]


def test_tolerances_naming_no_reported_metric_are_listed(checklist):
    old = _audit(goldset=("warn", {"ndcg@10": 0.4}), pool_size=("skipped", {}))
    d = diff_audits(old, old, checklist)
    assert "goldset.recall@50" in d.unmatched and "goldset.ndcg@10" not in d.unmatched
    assert not any(u.startswith("pool_size.") for u in d.unmatched)  # a skipped check reports none
    assert d.to_dict()["unmatched_tolerances"] == list(d.unmatched)


@pytest.mark.slow
def test_the_sample_audit_reports_every_metric_the_specs_guard(checklist, misconfigured_ctx):
    from ragdiag.audit import run_checks

    result = run_checks(misconfigured_ctx)
    assert diff_audits(result, result, checklist).unmatched == ()


def test_added_and_removed_checks(checklist):
    d = diff_audits(_audit(goldset=("pass", {"ndcg@10": 0.5})), _audit(pool_size=("fail", {})), checklist)
    assert {c.check_id: c.change for c in d.checks} == {"goldset": "removed", "pool_size": "added"}
    assert d.regressions == ["goldset: ran before (pass), missing now"]


# ---- the CLI -----------------------------------------------------------------------------


def test_cli_diff_exit_codes_both_ways(tmp_path, capsys):
    from ragdiag.cli import main

    good = _write(tmp_path, "good.json", _audit(goldset=("warn", {"ndcg@10": 0.48}), call_sites=("pass", {})))
    bad = _write(tmp_path, "bad.json", _audit(goldset=("warn", {"ndcg@10": 0.38}), call_sites=("fail", {})))
    assert main(["diff", bad, good, "--fail-on-regression"]) == 0  # improvements only
    out = capsys.readouterr().out
    assert "no regressions" in out and "call_sites" in out and "better" in out
    assert main(["diff", good, bad, "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert "2 regression(s)" in out
    assert "call_sites: status pass -> fail" in out and "goldset: ndcg@10 0.48 -> 0.38" in out
    assert main(["diff", good, bad]) == 0  # without the flag it reports only
    capsys.readouterr()
    summary = tmp_path / "summary.md"
    assert main(["diff", good, bad, "--json", "--summary", str(summary)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["regressed"] is True and len(data["regressions"]) == 2
    (gold,) = [c for c in data["checks"] if c["check_id"] == "goldset"]
    assert gold["metrics"][0] == {"name": "ndcg@10", "old": 0.48, "new": 0.38, "delta": pytest.approx(-0.1),
                                  "better": "higher", "tolerance": 0.01, "regressed": True}
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("## ragdiag diff") and "**2 regression(s)**" in md
    assert "| `call_sites` | pass → fail | worse |" in md


def test_cli_diff_bad_input_exits_2(tmp_path, capsys):
    from ragdiag.cli import main

    good = _write(tmp_path, "good.json", _audit(goldset=("pass", {})))
    assert main(["diff", good, str(tmp_path / "missing.json")]) == 2
    assert "findings file not found" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["diff", str(broken), good]) == 2
    assert f"{broken}:1: invalid findings file" in capsys.readouterr().err


def test_cli_diff_uses_a_copied_checklists_tolerances(tmp_path, checklist):
    from ragdiag.cli import main

    folder = tmp_path / "checks"
    folder.mkdir()
    text = Path(checklist["goldset"].path).read_text(encoding="utf-8")
    tuned = text.replace('[regression."ndcg@10"]\nbetter = "higher"\ntolerance = 0.01',
                         '[regression."ndcg@10"]\nbetter = "higher"\ntolerance = 0.2')
    assert tuned != text
    (folder / "goldset.toml").write_text(tuned, encoding="utf-8")
    good = _write(tmp_path, "good.json", _audit(goldset=("warn", {"ndcg@10": 0.48})))
    bad = _write(tmp_path, "bad.json", _audit(goldset=("warn", {"ndcg@10": 0.38})))
    assert main(["diff", good, bad, "--fail-on-regression"]) == 1
    assert main(["diff", good, bad, "--fail-on-regression", "--checklist", str(folder)]) == 0


# ---- the loader --------------------------------------------------------------------------


def _error(tmp_path: Path, tail: str) -> ConfigError:
    p = tmp_path / "demo.toml"
    p.write_text(SPEC + tail, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_spec(p)
    assert str(err.value).startswith(f"{p}:{err.value.line}: ")
    return err.value


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_regression_table_loads(tmp_path):
    p = tmp_path / "demo.toml"
    p.write_text(SPEC + '\n[regression."ndcg@10"]\nbetter = "higher"\ntolerance = 0.01\n\n'
                 '[regression.leaks]\nbetter = "lower"\n', encoding="utf-8")
    spec = load_spec(p)
    assert spec.regression == {"ndcg@10": {"better": "higher", "tolerance": 0.01},
                               "leaks": {"better": "lower", "tolerance": 0}}
    assert spec.to_dict()["regression"] == spec.regression


@pytest.mark.parametrize(("tail", "needle", "message"), [
    ('\n[regression.x]\nbetter = "up"\n', 'better = "up"', 'better must be "higher" or "lower", got "up"'),
    ('\n[regression.x]\ntolerance = 0.1\n', "[regression.x]", 'needs better = "higher" or "lower"'),
    ('\n[regression.x]\nbetter = "lower"\ntolerance = -1\n', "tolerance = -1",
     "tolerance must be a number >= 0"),
    ('\n[regression.x]\nbetter = "lower"\ntolerance = "0.1"\n', 'tolerance = "0.1"',
     "tolerance must be a number >= 0"),
    ('\n[regression.x]\nbetter = "lower"\ntolerence = 0.1\n', "tolerence", "did you mean 'tolerance'"),
    ('\n[regression]\nx = 1\n', "x = 1", "must be a table with better"),
])
def test_regression_table_errors_carry_file_and_line(tmp_path, tail, needle, message):
    err = _error(tmp_path, tail)
    assert message in str(err)
    assert err.line == _line(SPEC + tail, needle)


def test_regression_must_be_a_table(tmp_path):
    p = tmp_path / "demo.toml"
    p.write_text("regression = 3\n" + SPEC, encoding="utf-8")
    with pytest.raises(ConfigError, match="'regression' must be a table of tables") as err:
        load_spec(p)
    assert err.value.line == 1


def test_regression_tables_are_the_last_tables_of_each_shipped_spec(checklist):
    """Appended at the end: other branches edit [messages], [labels] and [status_rules]."""
    for spec in checklist.values():
        headers = [line for line in Path(spec.path).read_text(encoding="utf-8").splitlines()
                   if line.startswith("[")]
        first = next(i for i, h in enumerate(headers) if h.startswith("[regression"))
        assert all(h.startswith("[regression") for h in headers[first:]), spec.id
    assert load_checklist()  # and they load


def _funnel(rows):
    return {"status": "measured", "totals": [dict(r, route=None) for r in rows],
            "routes": [{"route": "fact", "sources": sum(r["sources"] for r in rows), "stages":
                        [dict(r, route="fact") for r in rows]}]}


def test_diff_shows_where_the_funnel_moved():
    old = AuditResult(findings=(Finding("goldset", "pass", "ok"),), loss_funnel=_funnel([
        {"stage": "top", "detail": None, "sources": 10, "share": 1.0, "gain": 10, "gain_share": 1.0}]))
    new = AuditResult(findings=(Finding("goldset", "pass", "ok"),), loss_funnel=_funnel([
        {"stage": "filter", "detail": "zq_tier eq 1", "sources": 7, "share": 0.7, "gain": 7, "gain_share": 0.7},
        {"stage": "top", "detail": None, "sources": 3, "share": 0.3, "gain": 3, "gain_share": 0.3}]))
    d = diff_audits(old, new)
    moved = {(f.route, f.stage, f.detail): (f.old_sources, f.new_sources, f.delta) for f in d.funnel}
    assert moved == {(None, "top", None): (10, 3, -7), ("fact", "top", None): (10, 3, -7),
                     (None, "filter", "zq_tier eq 1"): (0, 7, 7), ("fact", "filter", "zq_tier eq 1"): (0, 7, 7)}
    assert not d.regressions  # shown, never gating
    md = d.markdown()
    assert "| fact | filter: zq_tier eq 1 | 0 → 7 (+7) | 0% → 70% |" in md
    assert d.to_dict()["funnel"][0]["delta_sources"] == -7
    same = diff_audits(old, old)
    assert same.funnel == () and "loss funnel" not in same.markdown()
