"""``ragdiag audit``: run the checklist, write the outputs, decide the exit code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ragdiag.cli._common import _console, _log, _print_table, _Terminated

# ---- audit -----------------------------------------------------------------------
FINDINGS_FILE = "findings.json"  # what an audit writes into the config's [output] dir


_STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "error": "red", "skipped": "dim"}


def cmd_audit(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    path = Path(args.config) if args.config else sample_dir() / "audit.toml"
    config = load_config(path)
    con = _console()
    err = _console(stderr=True)
    if not args.plan:  # refused now, not after the audit ran (its findings would be lost)
        _check_outputs(args, config.output_dir)
    try:
        ctx = build_context(config, log=_log, progress=not args.quiet, plan=args.plan)
    except (KeyboardInterrupt, _Terminated) as exc:  # e.g. while the local index is built
        if args.plan:
            raise
        return _interrupted_before_checks(exc, args, config, con)
    if args.lang:
        ctx.lang = args.lang
    checks = [c.strip() for c in args.checks.split(",")] if args.checks else None
    if args.plan:
        return _print_plan(ctx, checks)
    result = run_checks(ctx, checks=checks,
                        on_check=None if args.quiet else (lambda cid: err.print(f"[dim]running {cid}[/dim]")))
    rows = [[str(i), f.check_id, f.status + ("*" if f.is_incomplete else ""), f.headline,
             f.recommendations[0] if f.recommendations else ""]
            for i, f in enumerate(result.findings, 1)]
    where = ", ".join(x for x in (getattr(ctx.target, "name", "") or "no target",
                                  f"policy {getattr(ctx.policy, 'name', None) or '-'}"))
    _print_table(con, f"ragdiag audit: {config.name} ({where})",
                 ["#", "check", "status", "finding", "top recommendation"], rows,
                 whole=("check", "status"), long=("finding", "top recommendation"), right=("#",),
                 max_widths={"finding": 70, "top recommendation": 50},
                 styles=[_STATUS_STYLE.get(f.status) for f in result.findings])
    incomplete = [f for f in result.findings if f.is_incomplete]
    if incomplete:
        con.print("[yellow]* incomplete: " + escape("; ".join(
            f"{f.check_id} {f.incomplete.get('failed_requests')} of {f.incomplete.get('requests')} requests "
            f"failed" + (f" ({f.failures[0].reason})" if f.failures else "") for f in incomplete)) + "[/yellow]")
    counts = result.status_counts()
    con.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    stats = ctx.runner.stats
    con.print(f"requests sent {stats.sent}, answered from cache {stats.memory_hits + stats.disk_hits}, "
              f"failed {stats.failed}, over budget {stats.over_budget}")
    tstats = result.meta.get("target_stats") or {}
    if tstats:
        con.print("target: " + ", ".join(f"{k} {v}" for k, v in tstats.items()))
    if result.meta.get("unsent_parameters"):
        con.print("[yellow]not sent (API version or SDK does not support them): "
                  + ", ".join(f"{k} ({n}x)" for k, n in result.meta["unsent_parameters"].items())
                  + "[/yellow]")
    stopped = result.meta.get("interrupted") or result.meta.get("circuit_breaker")
    if stopped:
        con.print("[red]" + escape(f"stopped early: {stopped.get('reason') or 'interrupted by ' + stopped['signal']}"
                                   f"; {stats.not_sent} requests not sent") + "[/red]")
    _write_outputs(result, args, checklist=config.checklist, lang=ctx.lang, con=con,
                   output_dir=config.output_dir)
    code = _audit_exit_code(result, args.fail_on)
    if code:
        gating = [f.check_id for f in result.findings if _gates(f.status, args.fail_on)]
        why = ("interrupted" if code in (130, 143) else
               "incomplete: an error, too many failed requests or an open circuit" if code == 3 else
               "a check crashed (an internal error of ragdiag)" if code == 4 else
               f"{', '.join(gating)} at or above --fail-on {args.fail_on}")
        err.print(f"exit {code}: {escape(why)}", markup=True, highlight=False, soft_wrap=True)
    return code


def _check_outputs(args: argparse.Namespace, output_dir: Path | None) -> None:
    """Every output the audit will write must be writable before it starts (`ragdiag.outputs`)."""
    from ragdiag.outputs import check_output

    json_path = args.json or (output_dir / FINDINGS_FILE if output_dir is not None else None)
    for path, what in ((json_path, "findings"), (args.junit, "JUnit XML"), (args.sarif, "SARIF log"),
                       (args.summary, "summary")):
        if path:
            check_output(path, what)


def _interrupted_before_checks(exc: BaseException, args: argparse.Namespace, config: Any, con: Any) -> int:
    """SIGINT/SIGTERM before any check ran (opening the target, building its index): the
    findings are still written, every check ``error`` ("not run"), and the exit is 130/143."""
    from ragdiag.audit import _with_texts
    from ragdiag.inputs.checklist import default_checklist_dir, load_checklist
    from ragdiag.model.findings import AuditResult, Finding

    signame, code = ("SIGTERM", 143) if isinstance(exc, _Terminated) else ("SIGINT", 130)
    print(f"ragdiag: interrupted by {signame} while opening the target (nothing was audited); "
          "writing the findings", file=sys.stderr)
    specs = load_checklist(config.checklist or default_checklist_dir())
    checks = [c.strip() for c in args.checks.split(",")] if args.checks else list(specs)
    findings = tuple(_with_texts(Finding.errored(cid, f"not run: the audit was interrupted by {signame} while "
                                                      "its target was opened"), specs[cid], config.language)
                     for cid in checks if cid in specs)
    result = AuditResult(findings=findings, meta={
        "config": config.describe(), "interrupted": {"signal": signame, "exit_code": code,
                                                      "during": "opening the target", "not_run": list(checks)}})
    _write_outputs(result, args, checklist=config.checklist, lang=args.lang or config.language, con=con,
                   output_dir=config.output_dir)
    return code


def _gates(status: str, fail_on: str) -> bool:
    from ragdiag.ci import gates

    return gates(status, fail_on)


def _write_outputs(result: Any, args: argparse.Namespace, *, checklist: Path | None, lang: str,
                   con: Any, output_dir: Path | None = None) -> None:
    """--json, --junit, --sarif and --summary: every file the audit was asked to write. Without
    --json, the config's ``[output] dir`` gets the findings as ``findings.json``. One that
    cannot be written (a full disk) does not stop the others; the first such error is raised
    after them (exit 2, naming the path)."""
    from rich.markup import escape

    from ragdiag.errors import OutputError

    failed: list[OutputError] = []

    def attempt(write: Any) -> None:
        try:
            write()
        except OutputError as exc:
            failed.append(exc)

    json_path = args.json or (output_dir / FINDINGS_FILE if output_dir is not None else None)
    if json_path:
        def findings() -> None:
            result.to_json(Path(json_path))
            con.print(f"findings written to {escape(str(json_path))}")

        attempt(findings)
    if args.junit:
        from ragdiag.ci.junit import write_junit

        attempt(lambda: con.print(f"JUnit written to {write_junit(result, args.junit, fail_on=args.fail_on)}",
                                  markup=False))
    if args.sarif:
        from ragdiag.ci.sarif import write_sarif
        from ragdiag.inputs.checklist import default_checklist_dir, load_checklist

        specs = load_checklist(checklist or default_checklist_dir())
        attempt(lambda: con.print(f"SARIF written to {write_sarif(result, args.sarif, specs, lang=lang)}",
                                  markup=False))
    if args.summary:
        from ragdiag.ci.summary import write_summary

        attempt(lambda: con.print(f"summary appended to {write_summary(result, args.summary, fail_on=args.fail_on)}",
                                  markup=False))
    if failed:
        raise failed[0]


def _audit_exit_code(result: Any, fail_on: str) -> int:
    """130 / 143 when interrupted, 4 when a check crashed, 3 when the circuit breaker stopped the
    audit, else the result's."""
    interrupted = result.meta.get("interrupted")
    if interrupted:
        return int(interrupted.get("exit_code") or 130)
    if result.crashed:
        return 4
    if result.meta.get("circuit_breaker"):
        return 3
    return result.exit_code(fail_on)


def _print_plan(ctx: Any, checks: list[str] | None) -> int:
    from ragdiag.plan import plan_audit

    rows, summary = plan_audit(ctx, checks=checks)
    cells = [[r.check_id, str(r.searches), str(r.other)] for r in rows]
    cells.append(["total", str(summary["searches"]), str(summary["other_requests"])])
    con = _console()
    _print_table(con, f"ragdiag audit --plan: requests to {getattr(ctx.target, 'name', 'the target')}",
                 ["check", "searches", "other requests"], cells, whole=("check",),
                 right=("searches", "other requests"))
    ratio = summary["requests_per_question_and_profile"]
    con.print(f"{summary['questions']} questions x {summary['profiles']} profiles; "
              f"{summary['total_requests']} requests"
              + (f" = {ratio:.2f} per question and profile" if ratio is not None else "")
              + ". Nothing was sent (the index definition and document count were read once). "
              "Not counted: acl_trimming's leak probes asked from documents the index lists per "
              "foreign group (at most 3 per identity and group, each through the routed profile and "
              "one profile per way of handling the identity).")
    _print_resolutions(con, getattr(ctx, "resolutions", ()))
    if summary.get("refused_without_vectorizer"):
        from ragdiag.targets.azure.target import vectorizer_message

        con.print(f"{summary['refused_without_vectorizer']} of these searches will be refused before "
                  "sending: " + vectorizer_message(getattr(ctx.target, "index", "?"),
                                                   summary["fields_without_vectorizer"]), markup=False)
    return 0


def _print_resolutions(con: Any, resolutions: Any) -> None:
    """--plan: what each goldset name (a document, a section, a page) resolved to, with grades."""
    if not resolutions:
        return
    rows = []
    for r in resolutions:
        keys = ", ".join(f"{k} ({g})" if not r.forbidden else k for k, g in r.keys[:4])
        more = f" and {len(r.keys) - 4} more" if len(r.keys) > 4 else ""
        rows.append([r.case_id, r.name + (" (forbidden)" if r.forbidden else f", grade {r.grade}"), r.how,
                     str(len(r.keys)), keys + more + (f"; {r.note}" if r.note else "")])
    _print_table(con, "goldset names resolved to chunk keys (grade +1: the chunk holding the expected answer)",
                 ["case", "as judged", "matched", "chunks", "chunk keys (grade)"], rows,
                 whole=("case", "matched", "chunks"), long=("as judged", "chunk keys (grade)"), right=("chunks",))
