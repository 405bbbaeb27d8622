"""The drafted case: what a rule proposes, and how it is written as a goldset case.

A rule yields `Candidate`s (a question, the passage it was drawn from, the answer span);
drafting adds the expected sources found on the target and the identity that asks, and
writes a `DraftCase` in the goldset format ragdiag loads (`ragdiag.inputs.goldset`), with
the review metadata `draft: true`, `rule` and `evidence` (the sentence it was drawn from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragdiag.drafting.corpus import Passage

__all__ = ["Candidate", "DraftCase", "RULE_INTENTS"]

#: rule family -> the question type (intent) its cases belong to
RULE_INTENTS: dict[str, str] = {
    "exact_id": "exact_id",
    "fact": "fact",
    "definition": "definition",
    "table": "table",
    "comparison": "comparison",
    "overview": "overview",
    "verification": "verification",
    "refusal_out_of_corpus": "fact",
    "refusal_restricted": "fact",
}


@dataclass(frozen=True)
class Candidate:
    """One question a rule proposes, before sources and identity are resolved."""

    rule: str
    question: str
    passages: tuple[Passage, ...]  # drawn from (a comparison has two); empty for out-of-corpus
    evidence: str  # the sentence/cell/title the question was made from
    answer: tuple[str, ...] = ()
    language: str = "en"
    refused: bool = False
    intent: str | None = None  # overrides RULE_INTENTS (a refusal asked as an overview, ...)
    as_user: str | None = None  # set by the restricted-document rule
    also_relevant: tuple[str, ...] = ()  # keys the rule itself knows are relevant (an id's other mentions)

    @property
    def question_intent(self) -> str:
        return self.intent or RULE_INTENTS[self.rule]


@dataclass
class DraftCase:
    """A drafted goldset case, ready to write."""

    id: str
    question: str
    intent: str
    rule: str
    language: str
    sources: list[tuple[str, int]] = field(default_factory=list)
    as_user: str | None = None
    refused: bool = False
    answer: tuple[str, ...] = ()
    evidence: str = ""
    overlap: float | None = None  # share of question content words found in the source (title, section, text)
    capped_overlap: float | None = None  # the share the cap applies to (without the named document)

    def to_goldset(self) -> dict[str, Any]:
        """The case as a goldset mapping (keys of `ragdiag.inputs.goldset.ALLOWED_KEYS`)."""
        out: dict[str, Any] = {"id": self.id, "question": self.question, "intent": self.intent}
        if self.as_user:
            out["as_user"] = self.as_user
        if self.refused:
            out["expect"] = "refused"
        else:
            out["expect_sources"] = [{"key": k, "grade": g} for k, g in self.sources]
        if self.answer:
            out["expect_answer_contains"] = list(self.answer)
        out["draft"] = True
        out["rule"] = self.rule
        if self.evidence:
            out["evidence"] = self.evidence
        return out
