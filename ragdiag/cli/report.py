"""``ragdiag report``: the audit as a PDF report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragdiag.cli._common import _console


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
