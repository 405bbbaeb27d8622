"""Tests of ragdiag.model.findings: statuses, JSON round trips, exit codes, notebook display."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import ragdiag
from ragdiag.errors import ConfigError, InputDataError
from ragdiag.model.findings import (
    SEVERITY,
    STATUSES,
    AuditResult,
    Evidence,
    Finding,
    worst,
)


def _evidence(n_rows: int = 2) -> Evidence:
    return Evidence(title="Profiles below the window", columns=("profile", "k", "pool"),
                    rows=tuple((f"p{i}", 20 + i, 40 + i) for i in range(n_rows)), note="k + recall")


def _finding(check_id: str = "pool_size", status: str = "fail", **kw) -> Finding:
    base = dict(headline="2 of 5 profiles configure a pool below 50.",
                metrics={"profiles_below": 2, "share": 0.4, "label": "x", "missing": None},
                evidence=(_evidence(),), recommendations=("Set k to 50.",), title="Pool",
                question="Does the pool reach 50?", incomplete={"failed_requests": 3, "requests": 120},
                figures=("pool_size_histogram",))
    base.update(kw)
    return Finding(check_id=check_id, status=status, **base)


# -- statuses ---------------------------------------------------------------

def test_statuses_and_severity_order():
    assert STATUSES == ("pass", "warn", "fail", "skipped", "error")
    order = sorted(STATUSES, key=SEVERITY.__getitem__, reverse=True)
    assert order == ["fail", "error", "warn", "skipped", "pass"]


@pytest.mark.parametrize(("statuses", "expected"), [
    ([], "pass"),
    (["pass"], "pass"),
    (["pass", "skipped"], "skipped"),
    (["skipped", "warn", "pass"], "warn"),
    (["warn", "error"], "error"),
    (["error", "fail", "warn"], "fail"),
])
def test_worst(statuses, expected):
    assert worst(statuses) == expected


def test_worst_rejects_unknown_status():
    with pytest.raises(ValueError, match="unknown status 'ok'"):
        worst(["pass", "ok"])


def test_finding_validates_status():
    with pytest.raises(ValueError, match="expected one of pass, warn, fail, skipped, error"):
        Finding("pool_size", "passed", "headline")


# -- normalisation and round trips -----------------------------------------

def test_finding_round_trip_is_identity():
    f = _finding()
    d = f.to_dict()
    assert Finding.from_dict(d) == f
    assert Finding.from_dict(json.loads(json.dumps(d))) == f
    assert d["evidence"][0]["rows"] == [["p0", 20, 40], ["p1", 21, 41]]
    assert isinstance(d["recommendations"], list) and isinstance(d["figures"], list)


def test_numpy_and_nan_are_normalised():
    f = Finding("x", "warn", "h", metrics={"a": np.int64(3), "b": np.float32(0.5), "c": float("nan"),
                                           "d": np.float64("inf"), "e": np.bool_(True), "f": np.str_("s")},
                evidence=(Evidence("t", ("v", "arr"), ((np.float64("nan"), np.array([1, 2])),
                                                       (pd.NA, [np.int32(4)]))),),
                incomplete={"failed_requests": np.int64(2)})
    assert f.metrics == {"a": 3, "b": 0.5, "c": None, "d": None, "e": True, "f": "s"}
    assert type(f.metrics["a"]) is int and type(f.metrics["b"]) is float and type(f.metrics["f"]) is str
    assert f.evidence[0].rows == ((None, (1, 2)), (None, (4,)))
    assert f.incomplete == {"failed_requests": 2}
    text = json.dumps(f.to_dict(), allow_nan=False)  # strict JSON: no NaN left
    assert Finding.from_dict(json.loads(text)) == f


def test_metrics_must_be_scalars():
    with pytest.raises(TypeError, match="metric 'quantiles'"):
        Finding("x", "pass", "h", metrics={"quantiles": [1, 2]})


def test_evidence_row_width_checked():
    with pytest.raises(ValueError, match="row 1 has 2 cells, expected 3"):
        Evidence("t", ("a", "b", "c"), ((1, 2, 3), (1, 2)))


def test_evidence_dataframe_round_trip():
    ev = _evidence(3)
    frame = ev.to_dataframe()
    assert list(frame.columns) == ["profile", "k", "pool"]
    assert frame["k"].tolist() == [20, 21, 22]
    back = Evidence.from_dataframe(ev.title, frame, note=ev.note)
    assert back == ev
    assert Evidence.from_dict(ev.to_dict()) == ev


def test_evidence_from_records():
    ev = Evidence.from_records("t", [{"a": 1, "b": 2}, {"a": 3, "c": 4}])
    assert ev.columns == ("a", "b", "c")
    assert ev.rows == ((1, 2, None), (3, None, 4))


def test_from_dict_errors_are_input_data_errors():
    with pytest.raises(InputDataError, match="lacks status"):
        Finding.from_dict({"check_id": "x", "headline": "h"})
    with pytest.raises(InputDataError, match="invalid finding 'x'"):
        Finding.from_dict({"check_id": "x", "status": "great", "headline": "h"})


# -- constructors -----------------------------------------------------------

def test_skipped_and_not_implemented():
    s = Finding.skipped("goldset", "no goldset configured", what_to_supply="a goldset file (goldset = ...)")
    assert s.status == "skipped"
    assert s.skipped_reason == "no goldset configured"
    assert s.headline == "Skipped: no goldset configured"
    assert s.recommendations == ("To run this check, supply a goldset file (goldset = ...).",)
    n = Finding.not_implemented("route_counts")
    assert (n.status, n.skipped_reason) == ("skipped", "not implemented yet")
    assert n.metrics == {} and n.evidence == ()


def test_repr_is_one_line():
    f = _finding(headline="two\nlines")
    assert repr(f) == "<Finding pool_size [fail] two lines>"


# -- HTML -------------------------------------------------------------------

def test_repr_html_escapes_everything():
    evil = "<script>alert(1)</script>"
    f = Finding(evil, "warn", evil, metrics={evil: evil}, title=evil, question=evil,
                evidence=(Evidence(evil, (evil,), ((evil,),), note=evil),), recommendations=(evil,),
                figures=(evil,))
    for html in (f._repr_html_(), AuditResult((f,), {})._repr_html_()):
        assert "<script>" not in html
        assert "&lt;script&gt;" in html


def test_evidence_html_truncates_long_tables():
    ev = Evidence("many", ("i",), tuple((i,) for i in range(120)))
    html = ev._repr_html_()
    assert html.count("<tr>") == 1 + 50  # header + 50 rows
    assert "70 more rows" in html
    assert "<td>49</td>" in html and "<td>50</td>" not in html


def test_finding_html_shows_parts():
    html = _finding()._repr_html_()
    for part in ("FAIL", "2 of 5 profiles", "profiles_below", "Profiles below the window",
                 "Set k to 50.", "failed_requests = 3"):
        assert part in html


# -- AuditResult --------------------------------------------------------------

def _audit(*statuses: str) -> AuditResult:
    return AuditResult(tuple(_finding(f"c{i}", s) for i, s in enumerate(statuses)),
                       meta={"target": "local", "profiles": ("a", "b")})


def test_status_counts_and_worst():
    a = _audit("pass", "warn", "warn", "skipped")
    assert a.status_counts() == {"pass": 1, "warn": 2, "fail": 0, "skipped": 1, "error": 0}
    assert a.worst() == "warn"
    assert AuditResult((), {}).worst() == "pass"


@pytest.mark.parametrize(("statuses", "fail_on", "code"), [
    (("pass", "skipped"), "warn", 0),
    (("pass", "warn"), "warn", 1),
    (("pass", "warn"), "fail", 0),
    (("pass", "fail"), "fail", 1),
    (("pass", "error"), "fail", 3),   # an error makes the audit incomplete: 3 wins
    (("pass", "error"), "warn", 3),
    (("fail", "error"), "never", 3),
    (("fail", "pass"), "never", 0),
    ((), "warn", 0),
])
def test_exit_code(statuses, fail_on, code):
    assert _audit(*statuses).exit_code(fail_on) == code


def test_exit_code_rejects_unknown_threshold():
    with pytest.raises(ConfigError, match="fail_on must be one of warn, fail, never"):
        _audit("pass").exit_code("error")


def test_audit_json_schema_and_round_trip(tmp_path):
    a = _audit("pass", "fail", "skipped")
    d = a.to_dict()
    assert list(d) == ["schema_version", "ragdiag_version", "meta", "summary", "worst", "findings"]
    assert d["ragdiag_version"] == ragdiag.__version__
    assert d["summary"] == {"pass": 1, "warn": 0, "fail": 1, "skipped": 1, "error": 0}
    assert d["worst"] == "fail"
    assert d["meta"] == {"target": "local", "profiles": ["a", "b"]}
    first = d["findings"][0]
    for key in ("check_id", "status", "headline", "metrics", "evidence", "recommendations",
                "title", "question", "incomplete", "skipped_reason", "figures"):
        assert key in first
    path = tmp_path / "out" / "audit.json"
    text = a.to_json(path)
    assert path.read_text(encoding="utf-8") == text
    assert AuditResult.from_json(path) == a
    assert AuditResult.from_dict(json.loads(text)) == a


def test_audit_from_json_reports_bad_files(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{\n  nope", encoding="utf-8")
    with pytest.raises(InputDataError) as err:
        AuditResult.from_json(p)
    assert err.value.path == str(p) and err.value.line == 2
    p.write_text(json.dumps({"schema_version": 99, "findings": []}), encoding="utf-8")
    with pytest.raises(InputDataError, match="schema_version 99"):
        AuditResult.from_json(p)


def test_audit_lookup_and_dataframe():
    a = _audit("pass", "warn")
    assert a["c1"].status == "warn"
    with pytest.raises(KeyError, match="findings: c0, c1"):
        a["nope"]
    frame = a.to_dataframe()
    assert frame["status"].tolist() == ["pass", "warn"]
    assert "worst: warn" in repr(a)


NAMES = {"ranking", "tables", "lists", "report", "scan", "findings", "order", "salt"}


def test_sets_in_meta_and_recommendations_come_out_sorted_whatever_the_hash_salt():
    """A set's iteration order follows PYTHONHASHSEED; the JSON must not: sorted at the boundary."""
    a = AuditResult((_finding(recommendations=set(NAMES)),), {"routes": set(NAMES), "nested": {"f": frozenset(NAMES)}},
                    loss_funnel={"stages": set(NAMES)})
    assert a.meta["routes"] == a.meta["nested"]["f"] == a.loss_funnel["stages"] == sorted(NAMES)
    assert a.findings[0].recommendations == tuple(sorted(NAMES))


def test_meta_nan_becomes_null():
    a = AuditResult((), {"duration": float("nan"), "n": np.int64(3)})
    assert a.meta == {"duration": None, "n": 3}
    assert not math.isnan(json.loads(a.to_json())["meta"]["n"])
