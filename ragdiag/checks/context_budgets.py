"""Check 8: does each downstream step get a bounded context, and is citability enforced in code?

Code half (client-code scan, never run): LLM call sites and whether the
retrieved context they receive is bounded (slice, budget comparison,
truncation helper), budget constants, citation handlers and whether they check
cited ids against the retrieved ids, budgets whose units do not add up (a
character count taken from a token limit) and calls whose only cap is the
answer's `max_tokens`, and the chunk count a delegated retrieval puts into the
context (On your data `top_n_documents`, a retriever's `k`). Only request-path
calls are judged; evaluation scripts, tests and notebooks are listed.

Profiles: a profile's `top` is what reaches the model. A profile whose top is
more than ``max_top_ratio`` times the median top of the other profiles, or that
fills the reranker's 50-document window, warns with the tokens it costs (top x
the measured median chunk tokens, else the spec's ``estimated_chunk_tokens``).

Runtime half (only with a target, profiles and questions): the context each
profile would assemble = the content tokens (tiktoken cl100k, offline encoding)
of the first `top` hits of the profile's own request, for every goldset or
query-log question. Per profile p50 / p95 / max are compared with the declared
budget (the strictest of a token budget constant in the client code and the audit config's
``[budgets] context_tokens``, `ragdiag.engine.declared`; declarations that disagree warn, each
named with its source; with neither, ``default_budget_tokens`` is assumed) and with the model
window minus the answer reserve. A profile "exceeds" a budget when its p95 does.

Evidence a pass needs: an LLM call receiving retrieved content judged bounded,
or a measured context within the budget. With neither it is ``skipped`` (no LLM
call recognised: ragdiag cannot tell whether context is bounded).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._code_evidence import (
    at,
    gap_parts,
    locate,
    on_request_path,
    report_gaps,
    request_only,
    short,
    shown,
    site_class,
)
from ragdiag.checks._common import profile_used_by, quantile
from ragdiag.checks._context_tokens import (
    Tokens,
    citable_fields,
    code_budgets,
    content_fields,
    count_tokens,
    encoder_label,
    top_outliers,
)
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.codescan.result import LLM_GAPS
from ragdiag.model import RERANK_WINDOW

__all__ = ["ContextBudgets", "code_budgets", "count_tokens", "top_outliers"]

ID = "context_budgets"
#: the setting that caps how many chunks a delegated retrieval puts into the context
BOUND_SETTINGS = ("top_n_documents", "k", "similarity_top_k", "top")


@register
class ContextBudgets(Check):
    id = ID
    needs = ("client_code|questions|traces",)
    uses = ("target", "profiles")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        window = int(ctx.budgets.get("model_window_tokens") or spec.threshold("model_window_tokens"))
        reserve = int(ctx.budgets.get("answer_reserve_tokens") or spec.threshold("answer_reserve_tokens"))
        scan = ctx.code_scan() if ctx.has("client_code") else None
        v.metric("model_window_tokens", window)
        v.metric("answer_reserve_tokens", reserve)
        caps = code_budgets(scan)
        # every declared budget (config and code), reported with its source; a conflict is a
        # finding and the strictest (smallest) is the one judged
        budget, declared, source = self._declared_budget(ctx, spec, v, caps)
        v.metric("budget_tokens", budget)
        v.metric("budget_declared", declared)

        bounded, unbounded, delegated, gaps = self._code_half(ctx, spec, v, scan, budget)
        measured, no_text = self._runtime_half(ctx, v, budget, source, declared, window, reserve)
        chunk = measured["chunk"] if measured else None
        self._profile_tops(ctx, spec, v, chunk, budget)

        # -- recommendations ----------------------------------------------------------------------
        tops = [p.top for p in ctx.policy.profiles.values()] if ctx.has("profiles") else []
        n_sources = max(tops, default=10)
        if chunk:
            n_sources = max(1, min(n_sources, math.floor(budget / chunk)))
        if "sources" in caps:
            n_sources = min(n_sources, int(caps["sources"].value))
        for c in unbounded:
            v.recommend("rec_cap_context", budget=budget, sources=n_sources, where=at(c), function=c.function)
        for name, p95, top in measured["over"] if measured else ():
            per_hit = p95 / top if top else p95
            fit = max(1, math.floor(budget / per_hit)) if per_hit else top
            v.recommend("rec_lower_top_budget", profile=name, top=top, fit=fit, budget=budget, p95=p95)
        if not declared:
            v.recommend("rec_declare_budget", budget=budget, sources=n_sources)

        # -- what a pass says, and why nothing could be judged -------------------------------------
        if scan is not None:
            calls = request_only(scan.llm_calls)
            with_context = [c for c in calls if c.retrieved_context]
            if not calls and scan.llm_calls:
                v.nothing_observed("no_request_llm_call", calls=len(scan.llm_calls), files=scan.files_scanned)
            elif not calls:
                v.nothing_observed("no_llm_call", files=scan.files_scanned)
            elif not with_context:
                v.nothing_observed("no_llm_call_with_context", calls=len(calls), files=scan.files_scanned)
            else:
                v.nothing_observed("unbounded_not_judged", calls=len(unbounded), files=scan.files_scanned)
            if delegated and not with_context:
                v.nothing_observed("delegated_not_judged", parts=delegated, files=scan.files_scanned)
            if gaps and not bounded and not unbounded:
                v.nothing_observed("code_gaps_only", parts=gap_parts(v, gaps), files=scan.files_scanned)
            elif gaps and not measured:
                v.warn("code_gaps", parts=gap_parts(v, gaps))
        else:
            v.nothing_observed("nothing_measured", why=self._runtime_missing(ctx, v))
        if no_text is not None and not bounded:  # hits without text measure nothing, never 0 tokens
            v.nothing_observed("runtime_not_run", why=no_text)
        if measured and bounded:
            v.passed("pass_both", bounded=bounded, calls=bounded + len(unbounded), p95=measured["p95"],
                     budget=budget, questions=measured["questions"])
        elif measured:
            # against ragdiag's assumed budget the pass says so: the system declared none
            v.passed("pass_measured" if declared else "pass_measured_assumed", p95=measured["p95"], budget=budget,
                     questions=measured["questions"])
        elif bounded:
            v.passed("pass_code", bounded=bounded, calls=bounded + len(unbounded), files=scan.files_scanned)

    # ---- declared inputs -----------------------------------------------------------------------
    @staticmethod
    def _declared_budget(ctx: Any, spec: Any, v: Verdict, caps: dict[str, Any]) -> tuple[int, bool, Any]:
        """(budget judged, declared at all, its source): the strictest of the config's and the code's."""
        from ragdiag.engine.declared import declared_values

        dv = declared_values(ctx)
        budgets = dv.of("context_tokens")
        tops = dv.of("top")
        places: dict[tuple[str, Any, str], list[str]] = {}
        for d in budgets + tops:  # one row per distinct value of each source, its places listed
            places.setdefault((d.name, d.value, d.source), []).append(d.where)
        rows = [(name, value, v.msg(f"src_{source}"), tuple(where)) for (name, value, source), where in places.items()]
        if rows:
            v.table("declared_values", "t_declared", ("quantity", "value", "source", "declared_at"), rows,
                    note="n_declared")
        for name, items in dv.conflicts():
            if name not in ("context_tokens", "top"):
                continue
            groups: dict[tuple[Any, str], list[Any]] = {}
            for d in items:  # one entry per distinct (value, source), with its first place
                groups.setdefault((d.value, d.source), []).append(d)
            shown = tuple(v.msg("declared_item" if len(ds) == 1 else "declared_items", value=value,
                                source=v.msg(f"src_{source}"), where=ds[0].where, more=len(ds) - 1)
                          for (value, source), ds in list(groups.items())[:5])
            strict = dv.strictest(name)
            if name == "context_tokens":
                v.warn("declared_conflict", quantity=name, items=shown, n=len(items),
                       judged=strict.value if strict is not None else "-")
            else:  # the measured context is each profile's own top; the code sends others too
                v.warn("declared_conflict_top", items=shown, n=len(items),
                       largest=strict.value if strict is not None else "-")
            v.recommend("rec_declared_conflict", quantity=name)
        strict = dv.strictest("context_tokens")
        if strict is None:
            budget = int(spec.threshold("default_budget_tokens"))
            return budget, False, v.msg("budget_default", value=budget)
        if strict.source == "code" and "tokens" in caps:
            b = caps["tokens"]
            return int(b.value), True, v.msg("budget_code", where=b.location, name=b.name, value=b.value)
        return int(strict.value), True, v.msg("budget_config", value=int(strict.value))
    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.context_budgets(ctx, spec, v)

    # ---- code ------------------------------------------------------------------------------------
    def _code_half(self, ctx: Any, spec: Any, v: Verdict, scan: Any, budget: int
                   ) -> tuple[int, list[Any], tuple[Any, ...]]:
        """Judge the request path's LLM call sites; returns (bounded calls with retrieved context, unbounded ones).

        Calls of every class are listed; an evaluation script or a notebook is not the request
        path, so it neither warns nor passes the check.
        """
        if scan is None:
            v.note("code_not_run")
            return 0, [], (), []
        calls = request_only(scan.llm_calls)
        everything = list(scan.unbounded_llm_calls("request"))
        counted = [c for c in everything if c.count_bound is not None]
        unbounded = [c for c in everything if c.count_bound is None]
        bounded = [c for c in calls if c.retrieved_context and c.context_bounded]
        v.metric("llm_calls", len(calls))
        v.metric("llm_calls_all", len(scan.llm_calls))
        v.metric("unbounded_llm_calls", len(unbounded))
        v.metric("budget_constants", len(scan.budget_constants))
        v.metric("citations_validated", scan.citations_validated())
        v.metric("files_scanned", scan.files_scanned)
        v.observed("bounded_llm_calls", len(bounded))
        v.table("llm_calls", "t_llm_calls", ("site", "site_class", "function", "kind", "retrieved_context", "bounded",
                                              "bound_found", "output_cap"),
                [(at(c), site_class(v, c), c.function, c.kind, c.retrieved_context, c.context_bounded,
                  c.bound_evidence if c.context_bounded or c.retrieved_context else "",
                  shown(c.output_cap)) for c in scan.llm_calls])
        if scan.budget_constants:
            v.table("budget_constants", "t_budget_constants", ("site", "name", "value"),
                    [(b.location, b.name, b.value) for b in scan.budget_constants])
        if scan.citation_checks:
            v.table("citation_handlers", "t_citations", ("site", "function", "validated", "evidence"),
                    [(c.location, c.function, c.validated, c.evidence) for c in scan.citation_checks])
        if unbounded:
            where = tuple(at(c) for c in unbounded)
            if bool(spec.threshold("warn_unbounded_call")):
                v.warn("unbounded_calls", n=len(unbounded), where=short(v, where))
                for c in unbounded:
                    locate(v, c, "loc_unbounded")
            else:
                v.note("unbounded_not_warned", n=len(unbounded), where=where)
        if counted:
            # bounded by count, not by a budget: the whole chunks of a fixed number of results
            where = tuple(at(c) for c in counted)
            if bool(spec.threshold("warn_unbounded_call")):
                v.warn("count_only_calls", n=len(counted), where=short(v, where), evidence=counted[0].bound_evidence)
                for c in counted:
                    locate(v, c, "loc_count_only", level="note", n=c.count_bound)
            else:
                v.note("unbounded_not_warned", n=len(counted), where=where)
        gaps = report_gaps(v, scan, LLM_GAPS)
        self._units(v, scan)
        delegated = self._delegated(v, scan)
        validated = scan.citations_validated()
        if validated is False:
            bad = [c for c in scan.citation_checks if not c.validated]
            v.note("citations_not_validated", where=short(v, [c.location for c in bad]))
            for c in bad:
                v.recommend("rec_validate_citations", where=c.location, function=c.function)
        elif validated is None and calls:
            v.note("no_citation_handling")
            v.recommend("rec_validate_citations_somewhere")
        return len(bounded), [*unbounded, *counted], delegated, gaps

    @staticmethod
    def _units(v: Verdict, scan: Any) -> None:
        """Budgets whose units do not add up (characters taken from tokens), caps that bound only the answer."""
        if not scan.budget_units:
            return
        v.table("budget_units", "t_budget_units", ("site", "site_class", "function", "kind", "expression"),
                [(at(b), site_class(v, b), b.function, v.msg(f"unit_{b.kind}"), b.expression)
                 for b in scan.budget_units], note="n_budget_units")
        req = request_only(scan.budget_units)
        chars = [b for b in req if b.kind == "chars_from_tokens"]
        if chars:
            v.warn("chars_from_tokens", n=len(chars), where=short(v, [at(b) for b in chars]),
                   expression=chars[0].expression)
            for b in chars:
                locate(v, b, "loc_chars_from_tokens", expression=b.expression)
                v.recommend("rec_count_tokens", where=at(b), expression=b.expression)
        output = [b for b in req if b.kind == "output_only"]
        if output:
            v.warn("output_only", n=len(output), where=short(v, [at(b) for b in output]))
            for b in output:
                locate(v, b, "loc_output_only")

    @staticmethod
    def _delegated(v: Verdict, scan: Any) -> tuple[Any, ...]:
        """What bounds the context when retrieval is delegated: the number of chunks the service or framework returns.

        Evidence, not a pass: the conversation history and whatever else the app sends with the
        delegated call are not visible as a bound."""
        rows, parts = [], []
        for d in scan.delegated:
            name = next((n for n in BOUND_SETTINGS if n in d.settings or n in d.defaults), None)
            if name is None:
                continue
            p = d.settings.get(name)
            value = d.value(name)
            source = p.source if p is not None else f"library_default:{d.framework}"
            override = p.override if p is not None else ""
            if p is None:  # the store's default gives way to what its retriever calls in the file pass
                passed = [s.params["k"] for s in scan.search_calls if s.file == d.file
                          and s.kind in ("langchain", "llamaindex") and s.params.get("k") is not None
                          and s.params["k"].resolved and not s.params["k"].source.startswith("library_default")]
                if passed:
                    value, source, override = passed[0].value, passed[0].source, passed[0].override
            rows.append((at(d), site_class(v, d), d.kind, d.framework, name, value, source, override))
            if on_request_path(d) and isinstance(value, int) and not isinstance(value, bool):
                parts.append(v.msg("delegated_bound", where=at(d), framework=d.framework, name=name, value=value))
        if rows:
            v.table("delegated_context", "t_delegated_context", ("site", "site_class", "kind", "framework",
                                                                 "setting", "value", "source", "override"),
                    rows, note="n_delegated_context")
        if parts:
            v.note("delegated_context", parts=tuple(parts[:3]))
        return tuple(parts[:3])

    # ---- runtime -----------------------------------------------------------------------------------
    def _runtime_missing(self, ctx: Any, v: Verdict) -> Any:
        if not ctx.has("target"):
            return v.msg("why_no_target")
        if not ctx.has("profiles"):
            return v.msg("why_no_profiles")
        return v.msg("why_no_questions")

    def _runtime_half(self, ctx: Any, v: Verdict, budget: int, source: Any, declared: bool, window: int,
                      reserve: int) -> tuple[dict[str, Any] | None, Any]:
        """(what was measured, or None; why nothing was, when the hits carried no text)."""
        schema = ctx.target.schema() if ctx.has("target") else None
        cit = citable_fields(schema) if schema is not None else []
        if not (schema is not None and ctx.has("profiles") and ctx.has("questions")):
            v.note("runtime_not_run", why=self._runtime_missing(ctx, v))
            self._citability(v, schema, cit, None)
            return None, None
        policy = ctx.policy
        run = ctx.run_gold(policy, label="context budgets")
        v.requests(run)
        fields = content_fields(schema)
        tokens = Tokens(ctx, fields, cit[0].name if cit else None)
        per_profile: dict[str, list[int]] = defaultdict(list)
        sources: dict[str, list[int]] = defaultdict(list)
        chunk_tokens: list[int] = []
        question_rows = []
        for q, trace in run.traces():
            hits = trace.hits[:policy.profiles[q.profile].top]
            counts = [tokens.of(h) for h in hits]
            chunk_tokens.extend(counts)
            per_profile[q.profile].append(sum(counts))
            sources[q.profile].append(len(hits))
            question_rows.append((q.case.id, q.profile, len(hits), sum(counts)))
        self._citability(v, schema, cit, tokens)
        all_vals = [x for vals in per_profile.values() for x in vals]
        if not all_vals:
            return None, None
        hits = len(chunk_tokens)
        v.metric("hits_without_text", tokens.without_text)
        if not hits or tokens.without_text == hits:  # 0 tokens read is no measurement, not a small context
            why = (v.msg("why_no_hit_text", hits=hits, fields=", ".join(fields)) if hits
                   else v.msg("why_no_hits", questions=len(all_vals)))
            v.note("runtime_not_run", why=why)
            return None, why
        if tokens.without_text:
            v.note("some_hits_without_text", n=tokens.without_text, hits=hits, fields=", ".join(fields))
        v.observed("contexts_measured", len(all_vals))
        chunk = quantile(chunk_tokens, 0.5)
        rows, over = [], []
        for name in sorted(per_profile):
            vals, top = per_profile[name], policy.profiles[name].top
            p50, p95, mx = quantile(vals, 0.5), quantile(vals, 0.95), max(vals)
            rows.append((name, len(vals), top, quantile(sources[name], 0.5), round(p50), round(p95), mx, budget,
                         source, sum(x > budget for x in vals), round(window - p95)))
            if p95 > window - reserve:
                v.fail("window_left", profile=name, p95=p95, left=window - p95, window=window, reserve=reserve)
            if p95 > budget:
                over.append((name, p95, top))
                (v.fail if declared else v.warn)("over_budget", profile=name, p95=p95, top=top, max=mx,
                                                 budget=budget, source=source)
        p95_all = quantile(all_vals, 0.95)
        v.metric("questions", len(all_vals))
        v.metric("context_tokens_p50", quantile(all_vals, 0.5))
        v.metric("context_tokens_p95", p95_all)
        v.metric("context_tokens_max", max(all_vals))
        v.metric("chunk_tokens_p50", chunk)
        v.metric("profiles_over_budget", len(over))
        v.metric("tokenizer", encoder_label())
        v.table("context_per_profile", "t_per_profile",
                ("profile", "questions", "top", "sources_median", "p50_tokens", "p95_tokens", "max_tokens", "budget",
                 "budget_source", "questions_over_budget", "window_left"), rows,
                note="n_per_profile", fields=fields, tokenizer=encoder_label(), source=ctx.question_source)
        v.table("context_per_question", "t_per_question", ("case", "profile", "sources", "tokens"), question_rows)
        return {"chunk": chunk, "over": over, "p95": p95_all, "questions": len(all_vals)}, None

    def _citability(self, v: Verdict, schema: Any, cit: list[Any], tokens: Tokens | None) -> None:
        if schema is None:
            return
        if not cit:
            v.metric("schema_citable_field", None)
            v.note("no_citable_marker")
            v.recommend("rec_mark_citable", index=schema.name)
            return
        f = cit[0]
        vals = [bool(x) for x in (tokens.citable.values() if tokens else ()) if x is not None]
        v.metric("schema_citable_field", f.name)
        v.table("citability", "t_citability", ("field", "type", "filterable", "retrievable", "share_citable"),
                [(f.name, f.type, f.filterable, f.retrievable, round(sum(vals) / len(vals), 3) if vals else None)])

    # ---- profiles: what reaches the model ------------------------------------------------------------
    def _profile_tops(self, ctx: Any, spec: Any, v: Verdict, chunk: float | None, budget: int) -> None:
        if not ctx.has("profiles"):
            return
        policy = ctx.policy
        ratio = float(spec.threshold("max_top_ratio"))
        measured = chunk is not None and chunk > 0
        per_chunk = float(chunk) if measured else float(spec.threshold("estimated_chunk_tokens"))
        chunk_source = v.msg("chunk_measured" if measured else "chunk_estimated")
        used_by = profile_used_by(policy)
        rows = []
        for p, median, far, fills in top_outliers(list(policy.profiles.values()), ratio):
            cost = round(p.top * per_chunk)
            rows.append((p.name, tuple(used_by.get(p.name, ())), p.top, median, far, fills, round(per_chunk), cost))
            if not (far or fills):
                continue
            why = ((v.msg("why_siblings", ratio=p.top / median, median=median),) if far else ()) + \
                ((v.msg("why_window", window=RERANK_WINDOW),) if fills else ())
            routes = tuple(used_by.get(p.name, ())) or v.msg("no_route")
            v.warn("top_outlier", profile=p.name, routes=routes, top=p.top, why=why, tokens=cost, chunk=per_chunk,
                   chunk_source=chunk_source)
            to = int(median) if median and median < RERANK_WINDOW else max(1, min(RERANK_WINDOW - 1,
                                                                                 math.floor(budget / per_chunk)))
            v.recommend("rec_lower_top", profile=p.name, top=p.top, to=to, chunk=per_chunk, window=RERANK_WINDOW)
        v.metric("profiles_top_outliers", sum(1 for r in rows if r[4] or r[5]))
        v.table("profile_tops", "t_tops", ("profile", "routes", "top", "median_other_top", "far_above",
                                            "fills_window", "chunk_tokens", "tokens_at_top"), rows,
                note="n_tops_measured" if measured else "n_tops_estimated", ratio=ratio, window=RERANK_WINDOW)

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "context_per_question", "profile", "tokens")
        if not rows:
            return None
        per_profile = column_values(finding, "context_per_profile", "budget") or []
        by_profile: dict[str, list[float]] = defaultdict(list)
        for profile, tokens in rows:
            if isinstance(tokens, int | float):
                by_profile[str(profile)].append(float(tokens))
        names = sorted(by_profile)
        budget = next((float(b) for (b,) in per_profile if isinstance(b, int | float)), None)
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7, 3.2))
        ax.boxplot([by_profile[n] for n in names], tick_labels=names, showfliers=True)
        if budget is not None:
            ax.axhline(budget, color="red", linestyle="--", linewidth=1,
                       label=text(ID, "fig_budget", lang, budget=budget))
            ax.legend(fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(text(ID, "fig_ylabel", lang))
        ax.set_title(text(ID, "fig_title", lang))
        ax.tick_params(axis="x", rotation=30, labelsize=8)
        fig.tight_layout()
        return fig
