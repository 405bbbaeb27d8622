"""TOML files with line numbers for error messages.

`tomllib` parses but forgets where things were; users need "file:line: key"
when a config is wrong. `TomlLocator` scans the source text once for table
headers and `key =` lines (skipping multi-line strings and arrays);
`TomlFile` keeps a loaded file's text and data and asks its locator. The
audit config and the policy loader both find their lines here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError

# ---- line numbers (tomllib reports none for valid files) --------------------------------
_KEY_RE = re.compile(r"""^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*([.=])""")
_STRINGS = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'""")


def _unquote(part: str) -> str:
    if part.startswith('"'):
        try:
            return str(json.loads(part))
        except ValueError:
            return part[1:-1]
    if part.startswith("'"):
        return part[1:-1]
    return part


def _split_dotted(text: str) -> tuple[str, ...] | None:
    parts: list[str] = []
    pos = 0
    token = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*""")
    while True:
        m = token.match(text, pos)
        if not m:
            return None
        parts.append(_unquote(m.group(1)))
        pos = m.end()
        if pos == len(text):
            return tuple(parts)
        if text[pos] != ".":
            return None
        pos += 1


_PART = re.compile(r"""[ \t]*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)[ \t]*""")


def parse_header(line: str) -> tuple[bool, tuple[str, ...]] | None:
    """(is an array of tables, dotted parts) of a `[table]` / `[[table]]` line, else None.

    Hand-written rather than one regex: `^\\s*\\[(.+?)\\s*\\]` backtracks quadratically on a
    header padded with many spaces, which valid TOML allows.
    """
    s = line.lstrip()
    if not s.startswith("["):
        return None
    double = s.startswith("[[")
    pos = 2 if double else 1
    parts: list[str] = []
    while True:
        m = _PART.match(s, pos)
        if not m:
            return None
        parts.append(_unquote(m.group(1)))
        pos = m.end()
        if s.startswith(".", pos):
            pos += 1
            continue
        break
    close = "]]" if double else "]"
    if not s.startswith(close, pos):
        return None
    tail = s[pos + len(close):].strip()
    if tail and not tail.startswith("#"):
        return None
    return double, tuple(parts)


def _bracket_delta(value: str) -> int:
    bare = _STRINGS.sub("", value).split("#", 1)[0]
    return bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")


class TomlLocator:
    """Table header lines and `key =` lines, found by scanning the TOML text."""

    def __init__(self, text: str) -> None:
        self.headers: dict[tuple[Any, ...], int | None] = {(): None}
        self.keys: dict[tuple[Any, ...], dict[str, int]] = {(): {}}
        counts: dict[tuple[str, ...], int] = {}
        current: tuple[Any, ...] = ()
        multiline: str | None = None
        depth = 0
        for lineno, line in enumerate(text.splitlines(), 1):
            if multiline:
                if line.count(multiline) % 2 == 1:
                    multiline = None
                continue
            if depth > 0:
                depth = max(0, depth + _bracket_delta(line))
                continue
            h = parse_header(line) if line.lstrip().startswith("[") else None
            if h is not None:
                double, parts = h
                if double:
                    n = counts.get(parts, 0)
                    counts[parts] = n + 1
                    current = (*parts, n)
                else:
                    current = parts
                self.headers.setdefault(current, lineno)
                self.keys.setdefault(current, {})
                continue
            k = _KEY_RE.match(line)
            if not k:
                continue
            self.keys.setdefault(current, {}).setdefault(_unquote(k.group(1)), lineno)
            value = line.split("=", 1)[1] if "=" in line else ""
            for delim in ('"""', "'''"):
                if value.count(delim) % 2 == 1:
                    multiline = delim
                    break
            else:
                depth = max(0, _bracket_delta(value))

    def line(self, table: tuple[Any, ...], key: str | None = None) -> int | None:
        """Line of `key` in `table`, else of the table's header, else of where it is defined."""
        if key is not None:
            if key in self.keys.get(table, {}):
                return self.keys[table][key]
            below = [line for path, line in self.headers.items()
                     if line is not None and path[:len(table) + 1] == (*table, key)]
            if below:
                return min(below)
        if self.headers.get(table) is not None:
            return self.headers[table]
        if not table:
            return None
        if isinstance(table[-1], int):
            return self.line(table[:-2], str(table[-2]))
        return self.line(table[:-1], str(table[-1]))


def _table_path(table: str | Sequence[str]) -> tuple[str, ...]:
    """`"a.b"` or `("a", "b")` as a locator path."""
    if not isinstance(table, str):
        return tuple(table)
    if not table:
        return ()
    return _split_dotted(table) or tuple(p.strip().strip("\"'") for p in table.split("."))


@dataclass(frozen=True)
class TomlFile:
    path: str
    text: str
    data: Mapping[str, Any]

    @classmethod
    def load(cls, path: str | Path, *, what: str = "TOML file") -> TomlFile:
        """Read and parse `path`; every problem (not found, too large, not UTF-8, a syntax
        error, nesting or numbers beyond `ragdiag.inputs.limits`) is a ConfigError with
        the file and, where known, the line."""
        from ragdiag.inputs.limits import read_text, toml_loads

        text = read_text(path, what=what, error=ConfigError)
        return cls(str(path), text, toml_loads(text, path=str(path), error=ConfigError))

    @cached_property
    def locator(self) -> TomlLocator:
        return TomlLocator(self.text)

    def line_of(self, table: str | Sequence[str] = "", key: str | None = None, occurrence: int = 0) -> int | None:
        """Line (1-based) of `[table]` (its `occurrence`-th header for arrays of tables), or of
        `key =` inside it; the header line when the key is not written there."""
        path = _table_path(table)
        if (*path, 0) in self.locator.headers:  # an array of tables
            path = (*path, occurrence)
        elif not path and key is None:
            return 1
        return self.locator.line(path, key)

    def error(self, message: str, table: str | Sequence[str] = "", key: str | None = None,
              occurrence: int = 0) -> ConfigError:
        return ConfigError(message, path=self.path, line=self.line_of(table, key, occurrence), key=key)


def check_keys(tf: TomlFile, table: str, data: Mapping[str, Any], allowed: Sequence[str],
               occurrence: int = 0) -> None:
    """Raise a ConfigError for the first unknown key, listing the allowed ones."""
    from ragdiag.inputs.limits import excerpt

    for k in data:
        if k not in allowed:
            where = f"[{table}]" if table else "the top level"
            raise tf.error(f"unknown key {excerpt(k, 60)} in {where}; allowed: {', '.join(allowed)}",
                           table, k, occurrence)
