"""Document keys Azure AI Search accepts, made from the ids a collection or a folder uses.

Azure allows letters, digits, ``_``, ``-`` and ``=`` in a key (not starting with ``_``), at
most 1,024 characters. Collections use ids with ``/``, ``#``, dots or spaces; the drafted
index keeps such an id in a ``original_id`` field and cites the record by a key made from it,
so the goldset and the records always agree.
"""

from __future__ import annotations

import hashlib
import re

MAX_KEY = 1024
_VALID = re.compile(r"[A-Za-z0-9\-=][A-Za-z0-9_\-=]*")
_INVALID_CHAR = re.compile(r"[^A-Za-z0-9_\-=]")


def is_valid_key(key: str) -> bool:
    """Whether Azure AI Search accepts `key` as a document key."""
    return len(key) <= MAX_KEY and _VALID.fullmatch(key) is not None


class KeyMaker:
    """Valid, unique keys for raw ids: a valid id is kept; others are rewritten, with a hash
    suffix when the rewrite would collide."""

    def __init__(self) -> None:
        self.by_raw: dict[str, str] = {}
        self._used: set[str] = set()
        self.rewritten = 0

    def key(self, raw: str) -> str:
        if raw in self.by_raw:
            return self.by_raw[raw]
        key = raw
        if not is_valid_key(raw):
            self.rewritten += 1
            key = _INVALID_CHAR.sub("-", raw).lstrip("_") or "doc"
            key = key[:MAX_KEY - 12]
        if key in self._used:
            key = f"{key[:MAX_KEY - 12]}-{hashlib.sha256(raw.encode('utf-8')).hexdigest()[:10]}"
        self._used.add(key)
        self.by_raw[raw] = key
        return key
