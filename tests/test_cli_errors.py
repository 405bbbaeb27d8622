"""The CLI's last line of defence: one line per error, `--debug` for the stack; the exit code says
who went wrong: 2 the input, 3 the service, 4 ragdiag itself."""

from __future__ import annotations

import pytest

import ragdiag.cli as cli


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
