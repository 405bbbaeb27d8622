"""``ragdiag scan-code``: search and LLM call sites in a client's code.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragdiag.cli._common import _console


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
