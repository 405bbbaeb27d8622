"""What the client-code scanner's tests share: a client tree written from a dict of files, and a check
run on that code alone (no target, no runner: only the code evidence speaks)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from ragdiag.checks import resolve, run_check
from ragdiag.engine.context import AuditContext


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text, dedented) under `tmp_path`; the root."""
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")
    return tmp_path


def run_on_code(specs: Any, check_id: str, root: Path) -> Any:
    """The finding of check `check_id` on the client code under `root` and nothing else."""
    ctx = AuditContext(config=None, target=None, runner=None, client_code=root)
    return run_check(resolve(specs[check_id]), ctx, specs[check_id])
