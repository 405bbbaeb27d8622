"""TOML files with line numbers for error messages.

`tomllib` parses but forgets where things were; users need "file:line: key"
when a config is wrong. `TomlFile` keeps the text and finds the line of a
table header or a `key =` line inside a table by scanning the source.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*(\"[^\"]+\"|'[^']+'|[A-Za-z0-9_.-]+)\s*=")


def _norm(name: str) -> str:
    return ".".join(p.strip().strip("\"'") for p in name.split("."))


@dataclass(frozen=True)
class TomlFile:
    path: str
    text: str
    data: Mapping[str, Any]

    @classmethod
    def load(cls, path: str | Path) -> TomlFile:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ConfigError("file not found", path=str(p)) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text: {exc}", path=str(p)) from exc
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"line (\d+)", str(exc))
            raise ConfigError(f"TOML syntax error: {exc}", path=str(p),
                              line=int(m.group(1)) if m else None) from exc
        return cls(str(p), text, data)

    def line_of(self, table: str | Sequence[str] = "", key: str | None = None, occurrence: int = 0) -> int | None:
        """Line (1-based) of `[table]` (its `occurrence`-th header for arrays of tables), or of
        `key =` inside it; the header line when the key is not written there."""
        tname = table if isinstance(table, str) else ".".join(table)
        lines = self.text.splitlines()
        current = ""
        seen = -1
        header_line = None
        for i, line in enumerate(lines, 1):
            m = _HEADER.match(line)
            if m and not line.lstrip().startswith("#"):
                current = _norm(m.group(1))
                if current == tname:
                    seen += 1
                    if seen == occurrence:
                        header_line = i
                        if key is None:
                            return i
                continue
            if key is not None and current == tname and (seen == occurrence or tname == ""):
                km = _KEY.match(line)
                if km and _norm(km.group(1)) == key:
                    return i
            # dotted keys at top level, e.g. `profiles.fact.top = 3`, are rare: header line suffices
        if tname == "" and key is None:
            return 1
        return header_line

    def error(self, message: str, table: str | Sequence[str] = "", key: str | None = None,
              occurrence: int = 0) -> ConfigError:
        return ConfigError(message, path=self.path, line=self.line_of(table, key, occurrence), key=key)


def check_keys(tf: TomlFile, table: str, data: Mapping[str, Any], allowed: Sequence[str],
               occurrence: int = 0) -> None:
    """Raise a ConfigError for the first unknown key, listing the allowed ones."""
    for k in data:
        if k not in allowed:
            where = f"[{table}]" if table else "the top level"
            raise tf.error(f"unknown key '{k}' in {where}; allowed: {', '.join(allowed)}", table, k,
                           occurrence)
