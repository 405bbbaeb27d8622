"""Drafting a goldset: run every rule, resolve sources and identities, keep N per intent.

`draft_goldset` walks each rule's candidates (in a seeded order), drops questions asked
twice, finds the expected sources on the target, picks the least-privileged identity that
may read them, checks refusals against the corpus, measures the lexical overlap of each
question with its source, and stops at `per_intent` cases per question type (refusals:
`per_intent` in all, half out of corpus, half restricted). Deterministic for a seed.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag.drafting.case import Candidate, DraftCase
from ragdiag.drafting.corpus import Corpus, Passage, load_corpus
from ragdiag.drafting.rules import RULES
from ragdiag.drafting.rules.base import RuleContext, context_of
from ragdiag.drafting.sources import REFUSAL_SUPPORT, SourceFinder
from ragdiag.drafting.text import (
    CAP_EXEMPT,
    NAMES_CONTEXT,
    OVERLAP_CAP,
    lexical_overlap,
    lexical_overlap_without,
    searchable_text,
)
from ragdiag.inputs.goldset import normalise_question

__all__ = ["Draft", "draft_goldset", "draft_from_corpus", "draft_for_config", "DEFAULT_PER_INTENT"]

DEFAULT_PER_INTENT = 10
#: a rule whose candidates keep failing its checks is abandoned after this many per case wanted
MAX_TRIES_PER_CASE = 40


@dataclass
class Draft:
    """The drafted cases and what drafting observed (per rule: drafted, overlap, why short)."""

    cases: list[DraftCase]
    seed: int
    per_intent: int
    rejected: Counter[str] = field(default_factory=Counter)  # "rule: reason" -> count
    requests: int = 0
    notes: list[str] = field(default_factory=list)
    overlap_cap: float = OVERLAP_CAP
    flagged: list[str] = field(default_factory=list)  # ids of kept cases above the cap (ids, terms)
    agreement: dict[str, Any] | None = None  # the draft's own expected agreement (drafting.agreement)

    def by_rule(self) -> dict[str, list[DraftCase]]:
        out: dict[str, list[DraftCase]] = {}
        for c in self.cases:
            out.setdefault(c.rule, []).append(c)
        return out

    def overlap_by_rule(self) -> dict[str, dict[str, float | int]]:
        """Per rule: cases, mean and median share of question content words found in the source."""
        out: dict[str, dict[str, float | int]] = {}
        for rule, cases in self.by_rule().items():
            vals = [c.overlap for c in cases if c.overlap is not None]
            if vals:
                out[rule] = {"cases": len(cases), "mean": round(statistics.fmean(vals), 3),
                             "median": round(statistics.median(vals), 3)}
        return out

    def summary(self) -> dict[str, Any]:
        return {"cases": len(self.cases), "seed": self.seed, "per_intent": self.per_intent,
                "per_rule": {r: len(c) for r, c in self.by_rule().items()},
                "overlap": self.overlap_by_rule(), "overlap_cap": self.overlap_cap,
                "above_cap_flagged": list(self.flagged), "rejected": dict(self.rejected),
                "requests": self.requests, "notes": list(self.notes), "agreement": self.agreement}


def _least_privileged(p: Passage, identities: Mapping[str, tuple[str, ...]]) -> tuple[str | None, bool]:
    """(identity that may read `p` with the fewest groups, whether anyone may)."""
    if p.groups is None or not identities:
        return None, True
    readers = sorted((len(g), name) for name, g in identities.items() if set(g) & set(p.groups))
    if not readers:
        return None, False
    return readers[0][1], True


def draft_from_corpus(corpus: Corpus, target: Any, *, per_intent: int = DEFAULT_PER_INTENT, seed: int = 0,
                      identities: Mapping[str, Sequence[str]] | None = None,
                      rules: Sequence[str] | None = None,
                      log: Callable[[str], None] | None = None, overlap_cap: float = OVERLAP_CAP) -> Draft:
    """Draft cases from an already loaded corpus (the target answers the searches); a case whose
    question keeps more than `overlap_cap` of its words from its source is dropped."""
    idents = {k: tuple(v) for k, v in (identities or {}).items()}
    ctx = RuleContext(corpus, seed=seed, identities=idents)
    finder = SourceFinder(target, corpus)
    draft = Draft([], seed, per_intent, overlap_cap=overlap_cap)
    seen_questions: set[str] = set()
    seen_facts: set[tuple[str, str]] = set()  # (document, answer): one question per fact
    wanted = {name: per_intent for name in RULES}
    wanted["refusal_out_of_corpus"] = (per_intent + 1) // 2
    wanted["refusal_restricted"] = per_intent // 2
    if not idents:
        draft.notes.append("refusal_restricted: no [identities] in the config, so no restricted-document cases")
    elif all(p.groups is None for p in corpus.passages):
        draft.notes.append("refusal_restricted: the index has no security field, so no restricted-document cases")
    for name in rules or RULES:
        made = 0
        tries = 0
        for cand in RULES[name](ctx):
            if made >= wanted[name] or tries >= MAX_TRIES_PER_CASE * max(1, wanted[name]):
                break
            tries += 1
            norm = normalise_question(cand.question)
            if norm in seen_questions:
                draft.rejected[f"{name}: question already drafted"] += 1
                continue
            fact = _fact_key(cand)
            if fact is not None and fact in seen_facts:
                draft.rejected[f"{name}: fact already asked"] += 1
                continue
            case, reason = _resolve(cand, finder, idents, len(draft.cases) + 1, corpus)
            if case is None:
                draft.rejected[f"{name}: {reason}"] += 1
                continue
            if case.capped_overlap is not None and case.capped_overlap > draft.overlap_cap:
                if cand.rule not in CAP_EXEMPT:
                    draft.rejected[f"{name}: over the overlap cap ({draft.overlap_cap:.2f})"] += 1
                    continue
                draft.flagged.append(case.id)
            if fact is not None:
                seen_facts.add(fact)
            seen_questions.add(norm)
            draft.cases.append(case)
            made += 1
        if made < wanted[name]:
            draft.notes.append(f"{name}: {made} of {wanted[name]} cases (the corpus offered no more that pass)")
        if log:
            log(f"{name}: {made} case(s)")
    draft.requests = finder.requests
    return draft


def _fact_key(c: Candidate) -> tuple[str, str] | None:
    """(document, answer) of a fact-like candidate: the same fact is asked once, whatever the rule."""
    if c.refused or not c.answer or not c.passages or c.rule not in ("fact", "verification", "table"):
        return None
    return c.passages[0].doc_id, " ".join(c.answer[0].lower().split())


def _resolve(c: Candidate, finder: SourceFinder, identities: Mapping[str, tuple[str, ...]],
             number: int, corpus: Corpus | None = None) -> tuple[DraftCase | None, str]:
    case_id = f"draft-{c.rule.replace('_', '-')}-{number:03d}"
    if c.rule == "refusal_out_of_corpus":
        support, key = finder.support(c.question, c.language)
        if support >= REFUSAL_SUPPORT:
            return None, f"the corpus may answer it ({key} holds {support:.0%} of its weighted words)"
        return DraftCase(case_id, c.question, c.question_intent, c.rule, c.language, refused=True,
                         as_user=_any_identity(identities)), ""
    if c.rule == "refusal_restricted":
        groups = set(identities.get(c.as_user or "", ()))

        def readable(p: Passage) -> bool:
            return p.groups is None or bool(set(p.groups) & groups)

        support, key = finder.support(c.question, c.language, readable=readable)
        if support >= REFUSAL_SUPPORT:
            return None, f"{c.as_user} may read a passage that answers it ({key})"
        return DraftCase(case_id, c.question, c.question_intent, c.rule, c.language, as_user=c.as_user,
                         refused=True, answer=(), evidence=c.evidence), ""
    drawn = [p.key for p in c.passages]
    who, anyone = _least_privileged(c.passages[0], identities)
    for p in c.passages[1:]:
        other, ok = _least_privileged(p, identities)
        anyone = anyone and ok
        if who is not None and other != who:  # both documents: an identity that reads both
            both = sorted((len(g), n) for n, g in identities.items()
                          if all(q.groups is None or set(g) & set(q.groups) for q in c.passages))
            who = both[0][1] if both else None
            anyone = anyone and bool(both)
    if not anyone:
        return None, "no identity of the config may read its source"
    grades = {k: 3 for k in drawn}
    if c.rule == "overview":  # a question about the document: every passage of it is a source
        for k in drawn[1:]:
            grades[k] = 2
    for k in c.also_relevant:
        grades.setdefault(k, 2)
    if corpus is not None and c.answer and c.rule in ("fact", "verification", "table"):
        # the other passages of the document that hold the answer (a fact restated elsewhere)
        needle = " ".join(c.answer[0].lower().split())
        for p in corpus.documents().get(c.passages[0].doc_id, []):
            if p.key not in grades and p.citable and needle in " ".join(p.text.lower().split()):
                grades[p.key] = 2
    evidence_parts = c.evidence.split(" / ") if c.rule == "comparison" else [c.evidence]
    # a question that names its document (by title) is answered only inside that document
    documents = {p.doc_id for p in c.passages} if all(p.title for p in c.passages) else None
    for part in evidence_parts:
        for k in finder.near_duplicates(part, exclude=grades, documents=documents):
            grades.setdefault(k, 1)
    source_text = " ".join(searchable_text(p) for p in c.passages)
    overlap = lexical_overlap(c.question, source_text, c.language)
    capped = (lexical_overlap_without(c.question, source_text, " ".join(context_of(p) for p in c.passages),
                                      c.language) if c.rule in NAMES_CONTEXT else overlap)
    return DraftCase(case_id, c.question, c.question_intent, c.rule, c.language,
                     sources=list(grades.items()), as_user=who, answer=c.answer, evidence=c.evidence,
                     overlap=None if overlap is None else round(overlap, 3),
                     capped_overlap=None if capped is None else round(capped, 3)), ""


def _any_identity(identities: Mapping[str, tuple[str, ...]]) -> str | None:
    if not identities:
        return None
    return sorted(identities, key=lambda n: (len(identities[n]), n))[0]


def draft_goldset(target: Any, *, per_intent: int = DEFAULT_PER_INTENT, seed: int = 0,
                  identities: Mapping[str, Sequence[str]] | None = None, security_field: str | None = "group_ids",
                  rules: Sequence[str] | None = None, log: Callable[[str], None] | None = None) -> Draft:
    """Draft a goldset from the target's own records (capability ``documents``)."""
    corpus = load_corpus(target, security_field=security_field)
    return draft_from_corpus(corpus, target, per_intent=per_intent, seed=seed, identities=identities,
                             rules=rules, log=log)




def draft_for_config(config_path: Any = None, *, per_intent: int = DEFAULT_PER_INTENT, seed: int = 0,
                     log: Callable[[str], None] | None = None, progress: bool = False,
                     agreement: bool = True) -> Draft:
    """Draft from the target, identities and policy security field an audit config names
    (default: the embedded sample). With `agreement` and a policy in the config, a second draft
    (seed + 1) is made to measure the draft's own expected agreement (`drafting.agreement`):
    both rank the policy's profiles, and the questions the system really gets (the config's query
    log, else its goldset's questions: `drafting.validity`) are compared with the drafted ones;
    the tau, the status and the verdict go to `Draft.agreement`."""
    from ragdiag.audit import open_target
    from ragdiag.errors import ConfigError
    from ragdiag.inputs.config import load_config
    from ragdiag.policy import load_policy
    from ragdiag.sample.system import sample_config

    config = load_config(config_path or sample_config())
    target = open_target(config, log=log, progress=progress)
    if target is None:
        raise ConfigError("drafting a goldset needs a [target] to read the corpus from and to search",
                          path=str(config.path), key="target")
    policy = load_policy(config.profiles) if config.profiles else None
    security_field = policy.security_field if policy else "group_ids"
    corpus = load_corpus(target, security_field=security_field)
    draft = draft_from_corpus(corpus, target, per_intent=per_intent, seed=seed, identities=config.identities,
                              log=log)
    if agreement and policy is not None:
        from ragdiag.drafting.agreement import expected_agreement
        from ragdiag.drafting.validity import real_questions_of

        other = draft_from_corpus(corpus, target, per_intent=per_intent, seed=seed + 1,
                                  identities=config.identities)
        # the questions the system really gets: without them the draft's validity is unmeasured
        real, source = real_questions_of(config)
        draft.agreement = expected_agreement(target, policy, [draft, other], identities=config.identities,
                                             real_questions=real, real_source=source)
        draft.notes.append(f"expected agreement: {draft.agreement['verdict']}")
    elif agreement:
        draft.notes.append("expected agreement: not measured (no [inputs] profiles to rank)")
    return draft
