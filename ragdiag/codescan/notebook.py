"""Jupyter notebooks (`.ipynb`): their code cells, scanned as one Python module (never run).

The code cells are joined in order into one Python source; IPython magics
(`%pip`, `!ls`, `%%bash` cells) become blank lines, and a cell that does not
parse on its own is left out (and reported in `skipped`), so one broken cell
does not hide the others. Records keep `line` as the line in that joined
source (stable, sortable) and carry `cell` as ``"<cell index>:<line in
cell>"`` (cells counted from 0 over all cells, markdown included, as Jupyter
shows them).
"""

from __future__ import annotations

import ast
import dataclasses
import json
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import LanguageScanner, register
from ragdiag.codescan.model import Skipped


def _cell_text(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def notebook_source(text: str) -> tuple[str, dict[int, tuple[int, int]], list[str]]:
    """(joined Python source, joined line -> (cell index, line in cell), problems) of a notebook's JSON text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a notebook (invalid JSON at line {exc.lineno})") from exc
    cells = data.get("cells") if isinstance(data, dict) else None
    if cells is None and isinstance(data, dict):  # nbformat 3
        cells = [c for ws in data.get("worksheets", []) for c in ws.get("cells", [])]
    if not isinstance(cells, list):
        raise ValueError("not a notebook (no cells)")
    bodies: list[tuple[int, list[str]]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        body = _cell_text(cell).splitlines()
        if body and body[0].lstrip().startswith("%%"):
            body = [""] * len(body)  # a cell magic: the cell is not Python
        bodies.append((index, ["" if ln.lstrip().startswith(("%", "!", "?")) else ln for ln in body]))
    problems: list[str] = []
    joined = _join(bodies)
    try:
        ast.parse(joined[0])
    except (SyntaxError, ValueError, RecursionError):
        # some cell does not parse: find it (and any other), leave those out
        for k, (index, body) in enumerate(bodies):
            try:
                ast.parse("\n".join(body))
            except (SyntaxError, ValueError, RecursionError) as exc:
                problems.append(f"cell {index}: syntax error at line {getattr(exc, 'lineno', '?')}")
                bodies[k] = (index, [""] * len(body))
        joined = _join(bodies)
    return joined[0], joined[1], problems


def _join(bodies: list[tuple[int, list[str]]]) -> tuple[str, dict[int, tuple[int, int]]]:
    lines: list[str] = []
    line_map: dict[int, tuple[int, int]] = {}
    for index, body in bodies:
        for j, ln in enumerate(body, start=1):
            lines.append(ln)
            line_map[len(lines)] = (index, j)
        lines.append("")  # cells never run into each other
    return "\n".join(lines) + "\n", line_map


def _with_cells(result: C.FileResult, line_map: dict[int, tuple[int, int]]) -> C.FileResult:
    def cell(rec: Any) -> Any:
        if "cell" not in {f.name for f in dataclasses.fields(rec)}:
            return rec
        where = line_map.get(getattr(rec, "line", 0))
        return dataclasses.replace(rec, cell=f"{where[0]}:{where[1]}") if where else rec

    for name in ("search_calls", "vector_queries", "llm_calls", "security_filters", "acl_sites", "fail_open",
                 "delegated", "thresholds", "budget_units", "agent_graphs", "frontend_defaults"):
        items = getattr(result, name, None)
        if items:
            setattr(result, name, [cell(r) for r in items])
    return result


class NotebookScanner(LanguageScanner):
    """Jupyter notebooks: the code cells, scanned as Python."""

    name = "notebook"
    suffixes = (".ipynb",)

    def scan(self, project: C.Project, rel: str, text: str) -> C.FileResult:
        from ragdiag.codescan.python_scan import scan_python

        try:
            source, line_map, problems = notebook_source(text)
        except ValueError as exc:
            result = C.FileResult(scanned=False)
            result.skipped.append(Skipped(rel, str(exc)))
            return result
        result = _with_cells(scan_python(project, rel, source), line_map)
        for p in problems:
            result.skipped.append(Skipped(rel, f"{p}: cell not scanned"))
        return result


register(NotebookScanner())

__all__ = ["NotebookScanner", "notebook_source"]
