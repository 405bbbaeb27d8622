"""Permission headers in client code: where a query passes the end user's token to Azure AI Search.

With native document-level access control the service trims results itself when the query
carries the user's token in ``x-ms-query-source-authorization`` (the Python SDK's keyword
``x_ms_query_source_authorization``). The scanner proper does not look for it; this read-only
helper finds the lines that name it in Python and JavaScript/TypeScript files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ragdiag.codescan.model import _Record
from ragdiag.codescan.scan import _kind_of, list_files
from ragdiag.codescan.tree import CodeUnreadable, read_code

PERMISSION_HEADER_RE = re.compile(r"x[-_]ms[-_]query[-_]source[-_]authorization", re.I)
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class HeaderSite(_Record):
    """A line of client code that names the permission header."""

    file: str
    line: int
    text: str


def permission_header_sites(root: str | os.PathLike[str]) -> tuple[HeaderSite, ...]:
    """Lines naming the permission header under `root` (a folder or one file), in file order."""
    base = Path(root)
    if base.is_file():
        files, base = [base.name], base.parent
    elif base.is_dir():
        files = list_files(base)
    else:
        return ()
    out: list[HeaderSite] = []
    for rel in files:
        if _kind_of(rel) not in ("python", "js"):
            continue
        try:
            text = read_code(base / rel, MAX_FILE_BYTES).decode("utf-8", errors="replace")
        except CodeUnreadable:
            continue
        if not PERMISSION_HEADER_RE.search(text):
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if PERMISSION_HEADER_RE.search(line):
                out.append(HeaderSite(rel, i, line.strip()[:160]))
    return tuple(out)
