"""How a client's table (or view) maps onto ragdiag's model: which column is what."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragdiag.errors import ConfigError

__all__ = ["TableMapping", "quote_ident"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def quote_ident(name: str) -> str:
    """A column or table name as a SQL identifier; a dotted `schema.table` quotes each part."""
    parts = name.split(".")
    if not all(_IDENT.fullmatch(p) for p in parts):
        raise ConfigError(f"{name!r} is not a plain SQL name (letters, digits, _ and one optional schema.)")
    return ".".join(f'"{p}"' for p in parts)


@dataclass(frozen=True)
class TableMapping:
    """The table or view the retrieval SQL reads, and its columns by role."""

    table: str
    key: str
    content: str
    embedding: str
    groups: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    metadata: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in self.columns + (self.table,):
            quote_ident(name)

    @property
    def columns(self) -> tuple[str, ...]:
        """Every mapped column but the embedding, key first."""
        cols = [self.key, self.content] + [c for c in (self.groups, self.valid_from, self.valid_to) if c]
        return tuple(dict.fromkeys(cols + list(self.metadata)))
