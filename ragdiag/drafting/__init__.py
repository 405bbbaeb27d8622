"""Drafting a goldset without a model: candidate cases by rules, for a human to review.

    from ragdiag.drafting import draft_goldset, write_draft
    draft = draft_goldset(target, per_intent=10, seed=0, identities=config.identities)
    write_draft(draft, "goldset-draft.yaml")

Modules: `corpus` (the target's records and their roles), `text` (content words, overlap),
`paraphrase` (templates, synonyms, word order), `rules/` (one module per rule family),
`sources` (expected sources and refusal support by search on the target), `case` (the case
model), `draft` (the orchestrator), `files` (the draft file, the review sheet, the merge),
`agreement` (the draft's own expected agreement: two seeds and its question types ranking the
policy's profiles alike, or it says it cannot be trusted), `validity` (whether the questions the
system really gets behave like the drafted ones; without them a consistent draft's validity is
unmeasured, never trusted).
"""

from __future__ import annotations

from ragdiag.drafting.draft import (
           DEFAULT_PER_INTENT,
           Draft,
           draft_for_config,
           draft_from_corpus,
           draft_goldset,
)
from ragdiag.drafting.files import accepted_cases, merge_accepted, review_sheet, write_draft

__all__ = ["DEFAULT_PER_INTENT", "Draft", "draft_goldset", "draft_for_config", "draft_from_corpus", "write_draft", "review_sheet",
           "merge_accepted", "accepted_cases"]
