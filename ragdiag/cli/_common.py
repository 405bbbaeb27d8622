"""Console and config helpers shared by the subcommands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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


class _Terminated(BaseException):
    """SIGTERM outside an audit's checks (which stop gracefully on their own)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()
