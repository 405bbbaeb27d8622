"""``ragdiag diff``: compare two findings files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragdiag.cli._common import _console, _print_table


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
