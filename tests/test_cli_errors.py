"""The CLI's last line of defence: one line per error, `--debug` for the stack; the exit code says
who went wrong: 2 the input, 3 the service, 4 ragdiag itself."""

from __future__ import annotations

import pytest

import ragdiag.cli as cli
from ragdiag.inputs.checklist import load_checklist


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    cfg = tmp_path / "audit.toml"
    cfg.write_text("[runner]\ntimeout_s = nan\n", encoding="utf-8")
    assert cli.main(["audit", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "audit.toml:2: 'timeout_s' must be a number of seconds" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("where", ["front", "end"])
def test_debug_shows_the_stack_wherever_it_is_written(tmp_path, capsys, where):
    cfg = tmp_path / "audit.toml"
    cfg.write_text("[runner]\nconcurrency = 100000000\n", encoding="utf-8")
    argv = ["audit", str(cfg), "--quiet"]
    argv = ["--debug", *argv] if where == "front" else [*argv, "--debug"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "'concurrency' must be an integer from 1 to 64" in err and "Traceback" in err


def test_an_internal_error_is_one_line_pointing_to_debug(monkeypatch, capsys):
    def boom(args):
        raise RuntimeError("x" * 5000)

    monkeypatch.setattr(cli, "cmd_checks_list", boom)
    assert cli.main(["checks", "list"]) == 4  # not 3: a crash is not an outage
    err = capsys.readouterr().err
    assert err.startswith("ragdiag: internal error (a bug in ragdiag, exit 4): RuntimeError: ")
    assert err.count("\n") == 1
    assert "(run with --debug for the Python stack)" in err and len(err) < 500
    assert cli.main(["checks", "list", "--debug"]) == 4
    err = capsys.readouterr().err
    assert "Traceback" in err and "--debug for the Python stack" not in err


def test_exit_codes_of_a_stopped_audit():
    from ragdiag.model.findings import AuditResult, Finding

    ok = AuditResult(findings=(Finding(check_id="a", status="pass", headline="h"),), meta={})
    assert cli._audit_exit_code(ok, "fail") == 0
    term = AuditResult(findings=ok.findings, meta={"interrupted": {"signal": "SIGTERM", "exit_code": 143}})
    assert cli._audit_exit_code(term, "fail") == 143
    opened = AuditResult(findings=ok.findings, meta={"circuit_breaker": {"open": True, "reason": "r"}})
    assert cli._audit_exit_code(opened, "never") == 3


@pytest.mark.parametrize("error, code, prefix", [
    ("TargetUnavailableError", 3, "ragdiag: service unavailable: "),
    ("MalformedAnswerError", 3, "ragdiag: service unavailable: "),
    ("AuthRejectedError", 2, "ragdiag: error: "),  # at the start the key is wrong: the input
    ("TargetError", 2, "ragdiag: error: "),
    ("OutputError", 2, "ragdiag: error: "),
    ("MissingDependencyError", 2, "ragdiag: error: "),
])
def test_each_error_class_has_its_exit_code(monkeypatch, capsys, error, code, prefix):
    import ragdiag.errors as errors

    def boom(args):
        raise getattr(errors, error)("the reason")

    monkeypatch.setattr(cli, "cmd_checks_list", boom)
    assert cli.main(["checks", "list"]) == code
    err = capsys.readouterr().err
    assert err.startswith(prefix) and "the reason" in err and "internal error" not in err


def test_a_crashed_check_exits_4_and_an_error_finding_3():
    from ragdiag.model.findings import AuditResult, Finding

    crashed = Finding.errored("a", "the check crashed: ValueError: x", incomplete={"internal_error": 1})
    failed = Finding.errored("b", "TargetError: the service refused")
    assert AuditResult(findings=(failed,), meta={}).exit_code("never") == 3
    both = AuditResult(findings=(failed, crashed), meta={})
    assert both.crashed == ("a",) and both.exit_code("never") == 4
    assert cli._audit_exit_code(both, "never") == 4
    opened = AuditResult(findings=(crashed,), meta={"circuit_breaker": {"open": True, "reason": "r"}})
    assert cli._audit_exit_code(opened, "never") == 4  # ragdiag's own bug wins over the outage


def test_run_check_marks_a_crash_as_an_internal_error_and_a_ragdiag_error_not():
    from ragdiag.checks.base import Check
    from ragdiag.checks.registry import run_check
    from ragdiag.errors import TargetError
    from ragdiag.inputs.checklist import load_checklist

    spec = load_checklist()["goldset"]

    class Crashing(Check):
        id = "goldset"

        def __init__(self, exc):
            self.exc = exc

        def evaluate(self, ctx, spec, v):
            raise self.exc

    crash = run_check(Crashing(KeyError("k")), object(), spec)
    assert crash.status == "error" and crash.incomplete == {"internal_error": 1}
    assert "the check crashed: KeyError" in crash.headline
    refused = run_check(Crashing(TargetError("refused")), object(), spec)
    assert refused.status == "error" and not refused.incomplete.get("internal_error")


def test_a_dead_search_service_at_the_start_exits_3_with_the_reason(tmp_path, capsys, monkeypatch):
    pytest.importorskip("azure.search.documents")
    import time

    from tests.test_breaker import _closed_port

    monkeypatch.setenv("RAGDIAG_DEAD_KEY", "k" * 32)
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[target]\nkind = "azure"\nendpoint = "http://127.0.0.1:{_closed_port()}"\nindex = "idx"\n'
                   'api_key_env = "RAGDIAG_DEAD_KEY"\n[runner]\nretries = 1\ntimeout_s = 5\n')
    t0 = time.monotonic()
    assert cli.main(["audit", str(cfg), "--quiet"]) == 3  # the service, not "bad input" (2)
    err = capsys.readouterr().err
    assert err.startswith("ragdiag: service unavailable: ") and "connection failed" in err
    assert "k" * 32 not in err and time.monotonic() - t0 < 60


def test_an_unreachable_postgres_is_the_service_and_refused_credentials_the_input(tmp_path):
    pytest.importorskip("psycopg")
    from ragdiag.errors import TargetError, TargetUnavailableError
    from ragdiag.targets.pgvector.connection import ReadOnlyConnection

    with pytest.raises(TargetUnavailableError, match="cannot connect to PostgreSQL"):
        ReadOnlyConnection(f"postgresql://u@/db?host={tmp_path}", source="the test DSN")
    from ragdiag.targets.pgvector.connection import _refused_login

    assert _refused_login('FATAL:  password authentication failed for user "u"')
    assert _refused_login('FATAL:  database "x" does not exist')
    assert not _refused_login("connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file")
    assert issubclass(TargetUnavailableError, TargetError)


def test_sigint_while_the_target_is_opened_still_writes_the_findings(tmp_path, capsys, monkeypatch):
    """An interrupted index build (the target is opened before any check runs): every check is
    an error "not run", meta.interrupted says when, exit 130."""
    import json

    import ragdiag.audit as audit

    def building(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(audit, "build_context", building)
    cfg = tmp_path / "audit.toml"
    cfg.write_text("[audit]\nname = 'x'\n")
    out = tmp_path / "findings.json"
    assert cli.main(["audit", str(cfg), "--json", str(out), "--quiet"]) == 130
    data = json.loads(out.read_text())
    assert data["meta"]["interrupted"]["signal"] == "SIGINT"
    assert data["meta"]["interrupted"]["during"] == "opening the target"
    assert len(data["findings"]) == len(load_checklist()) and {f["status"] for f in data["findings"]} == {"error"}
    assert "interrupted by SIGINT while opening the target" in capsys.readouterr().err
