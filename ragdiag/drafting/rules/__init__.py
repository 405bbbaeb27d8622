"""The drafting rules, one module per family; `RULES` maps a rule name to its generator."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules import (
    comparisons,
    definitions,
    exact_id,
    facts,
    overviews,
    refusals,
    tables,
    verification,
)
from ragdiag.drafting.rules.base import RuleContext

__all__ = ["RULES"]

RULES: dict[str, Callable[[RuleContext], Iterator[Candidate]]] = {
    "exact_id": exact_id.draft,
    "fact": facts.draft,
    "definition": definitions.draft,
    "table": tables.draft,
    "comparison": comparisons.draft,
    "overview": overviews.draft,
    "verification": verification.draft,
    "refusal_out_of_corpus": refusals.out_of_corpus,
    "refusal_restricted": refusals.restricted,
}
