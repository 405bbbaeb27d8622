"""The context budget: what the answer step may receive."""

from __future__ import annotations


def approx_tokens(text: str) -> int:
    """A cheap token estimate (about four characters per token for German and English prose)."""
    return len(text) // 4 + 1


def fit_to_budget(hits: list[dict], *, max_tokens: int, max_sources: int,
                  max_chars_per_source: int) -> list[dict]:
    """The best hits that fit the budget: at most `max_sources`, each cut, `max_tokens` in total."""
    kept: list[dict] = []
    used = 0
    for hit in hits[:max_sources]:
        text = hit["content"][:max_chars_per_source]
        cost = approx_tokens(text)
        if used + cost > max_tokens:
            break
        kept.append({**hit, "content": text})
        used += cost
    return kept
