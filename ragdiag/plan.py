"""`ragdiag audit --plan`: how many requests the audit will send, per check, before sending any.

The checks run against a dry-run target that records every request and answers
empty. Which requests a check needs depends on the policy, the goldset and the
query log, not on what the index answers, so the count is the audit's real
request plan. The inputs were checked against the target when the context was built
(`ragdiag.inputs.validate`), so a plan is never made for requests the index would refuse. Cached requests are counted once, for the first check needing
them. Document streaming is estimated at one request per 1,000 documents.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ragdiag.model import RankedList, SearchRequest, Trace

PAGE = 1000


class DryRunTarget:
    """Answers every search with nothing and counts what was asked."""

    capabilities: frozenset[str] = frozenset()

    def __init__(self, schema: Any, documents: int, name: str, *, needs_vectorizer: bool = False) -> None:
        self._schema = schema
        self.documents = documents
        self.name = f"plan:{name}"
        self.searches = 0
        self.other = 0
        #: a target that embeds query text only through an integrated vectorizer (Azure):
        #: searches it would refuse before sending, and the vector fields that lack one
        self.needs_vectorizer = needs_vectorizer
        self.refused = 0
        self.fields_without_vectorizer: list[str] = []

    def fingerprint(self) -> str:
        return self.name

    def schema(self) -> Any:
        return self._schema

    def search(self, request: SearchRequest) -> Trace:
        self.searches += 1
        if self.needs_vectorizer:
            from ragdiag.targets.azure.target import text_queries_without_vectorizer

            missing = text_queries_without_vectorizer(self._schema, request)
            if missing:
                self.refused += 1
                self.fields_without_vectorizer += [f for f in missing if f not in self.fields_without_vectorizer]
        return Trace(request=request, hits=(), pool=RankedList("fused", (), ()), target=self.name)

    def count(self, filter: str | None = None) -> int:
        self.other += 1
        return self.documents

    def iter_documents(self, select: Sequence[str] | None = None, filter: str | None = None) -> Iterator[dict]:
        self.other += max(1, math.ceil(self.documents / PAGE))
        return iter(())


class DrySqlTarget(DryRunTarget):
    """A dry run of a target that runs the client's SQL (``sql_probes``): its template, counted probes."""

    capabilities = frozenset({"sql_probes"})

    def __init__(self, real: Any, documents: int) -> None:
        super().__init__(real.schema(), documents, getattr(real, "name", "target"))
        self._real = real
        self.template, self.mapping, self.rerank_depth = real.template, real.mapping, real.rerank_depth

    def limit_of(self, request: SearchRequest) -> int | None:
        return self._real.limit_of(request)

    def clause_columns(self, index: int) -> frozenset[str]:
        return self._real.clause_columns(index)

    def probe(self, request: SearchRequest, **_variant: Any) -> Trace:
        return self.search(request)

    def clause_admission(self, request: SearchRequest, keys: Sequence[str]) -> tuple[set[str], list[set[str]]]:
        self.other += len(self.template.clauses) + 1
        return set(), [set() for _ in self.template.clauses]

    def stage_counts(self, request: SearchRequest) -> list[tuple[str, int]]:
        self.other += len(self.template.clauses) + 1
        return [("", 0)] * (len(self.template.clauses) + 1)


@dataclass(frozen=True)
class PlanRow:
    check_id: str
    searches: int
    other: int


def plan_audit(ctx: Any, *, checks: Sequence[str] | None = None) -> tuple[list[PlanRow], dict[str, Any]]:
    """Per-check request counts for the audit `ctx` describes (no request reaches the real target)."""
    from ragdiag.audit import run_checks
    from ragdiag.engine.context import AuditContext
    from ragdiag.engine.runner import Runner

    real = ctx.target
    if real is None:  # a code-only audit (no [target]): nothing is ever sent
        from ragdiag.inputs.checklist import default_checklist_dir, load_checklist

        folder = ctx.config.checklist if ctx.config is not None and ctx.config.checklist else None
        ids = list(checks) if checks else list(load_checklist(folder or default_checklist_dir()))
        return [PlanRow(cid, 0, 0) for cid in ids], {
            "questions": len(ctx.question_cases()), "profiles": len(ctx.policy.profiles) if ctx.policy else 0,
            "searches": 0, "other_requests": 0, "total_requests": 0, "requests_per_question_and_profile": None,
            "refused_without_vectorizer": 0, "fields_without_vectorizer": []}
    from ragdiag.targets.base import has_capability

    dry = DrySqlTarget(real, _document_count(real)) if has_capability(real, "sql_probes") else \
        DryRunTarget(real.schema(), _document_count(real), real.name,
                     needs_vectorizer=has_capability(real, "vectorizer_required"))
    dctx = AuditContext(config=ctx.config, target=dry, runner=Runner(dry), policy=ctx.policy,
                        compare_policy=ctx.compare_policy, goldset=ctx.goldset, query_log=ctx.query_log,
                        identities=ctx.identities, client_code=ctx.client_code, lang=ctx.lang,
                        entities=ctx.entities, budgets=ctx.budgets)
    rows: list[PlanRow] = []
    last = [0, 0]

    def on_check(cid: str) -> None:
        _close(rows, dry, last)
        rows.append(PlanRow(cid, 0, 0))

    run_checks(dctx, checks=checks, on_check=on_check)
    _close(rows, dry, last)
    questions = len(dctx.question_cases())
    profiles = len(ctx.policy.profiles) if ctx.policy is not None else 0
    total = sum(r.searches + r.other for r in rows)
    summary = {"questions": questions, "profiles": profiles, "searches": sum(r.searches for r in rows),
               "other_requests": sum(r.other for r in rows), "total_requests": total,
               "requests_per_question_and_profile": (total / (questions * profiles)) if questions and profiles
               else None,
               # text vector queries on fields without an integrated vectorizer: refused unsent
               "refused_without_vectorizer": dry.refused,
               "fields_without_vectorizer": list(dry.fields_without_vectorizer)}
    return rows, summary


def _close(rows: list[PlanRow], dry: DryRunTarget, last: list[int]) -> None:
    """Attribute the requests made since the previous check to the last row."""
    if rows:
        r = rows[-1]
        rows[-1] = PlanRow(r.check_id, dry.searches - last[0], dry.other - last[1])
    last[0], last[1] = dry.searches, dry.other


def _document_count(target: Any) -> int:
    try:
        return int(target.count())
    except Exception:  # a plan must not fail because the count could not be read
        return 0
