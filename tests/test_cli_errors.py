"""The CLI's last line of defence: one line per error, `--debug` for the stack, bad input is 2."""

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
    assert cli.main(["checks", "list"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("ragdiag: internal error: RuntimeError: ") and err.count("\n") == 1
    assert "(run with --debug for the Python stack)" in err and len(err) < 500
    assert cli.main(["checks", "list", "--debug"]) == 3
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
