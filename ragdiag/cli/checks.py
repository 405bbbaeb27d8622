"""``ragdiag checks list``: the checklist from the specs and the registry.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragdiag import __version__
from ragdiag.cli._common import _console, _print_table


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
