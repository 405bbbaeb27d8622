"""Citations: only ids that were actually retrieved may be shown."""

from __future__ import annotations

import re
from collections.abc import Iterable

_BRACKETED_ID = re.compile(r"\[([A-Za-z0-9_-]+)\]")


def validated_citations(answer: str, retrieved_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """The cited ids split into (retrieved, not retrieved); only the first list is shown."""
    allowed = set(retrieved_ids)
    cited = list(dict.fromkeys(_BRACKETED_ID.findall(answer)))
    valid = [c for c in cited if c in allowed]
    rejected = [c for c in cited if c not in allowed]
    return valid, rejected
