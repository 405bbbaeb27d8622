"""Check 4: does one text feed the keyword leg, the vector leg and the reranker?

Compares the channel texts of the requests the profiles build for the questions (goldset or
query log) and of the query log's entries; without questions, the profiles' channel modes
(keyword_text, vector text, semantic_text) are compared statically. Lists the vector fields
each intent searches, reads the code scan for one variable feeding several channels and for
prompt rules (one query for all stages, contradictory length rules), and runs the
split-channel probe: keywords for BM25, the full question for vectors and the reranker, the
verbatim question as its own channel, fused client-side with RRF -- reporting the goldset delta.

Client code (code-only audits too): the request-path search call sites that send text to
two or more channels (keyword text, vector text or the vector, semantic query) are compared;
one variable feeding several channels warns, with file:line. Sites in tests, scripts or
notebooks are listed, not judged.

Language fidelity (`_language`): the content's language (detected per sampled record), the
questions' language, the searchable fields' analyzers and the embedder's languages are
compared; a field analysed as another language, or an embedder not trained for a language
that makes up at least `min_language_share` of the content (or the questions' language),
warns, naming the analyzer, the fields and the model. When they agree, the pass says so as
one of its parts (that part alone never makes a pass: the channel comparison does).

Evidence a pass needs: requests (built or logged), profiles, or request-path call sites with
at least two text channels compared. Without profiles, a query log or client code there is
nothing to compare (skipped by `needs`); when nothing has two channels, skipped with that
reason.
"""

from __future__ import annotations

from typing import Any

from ragdiag.checks import _language, _observed
from ragdiag.checks._ablation import judge_owned
from ragdiag.checks._code_evidence import at, locate, request_only, short, site_class
from ragdiag.checks._common import profile_used_by
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.engine.context import GoldQuery, GoldRun, with_case_vector
from ragdiag.policy.text import keywords

ID = "shared_query_text"
RUNS = ("as_configured", "split_channels")
SPLIT_METRICS = ("recall@10", "ndcg@10", "mrr")


def channel_texts(request: Any) -> tuple[str | None, tuple[str, ...], str | None]:
    vec = tuple(vq.text for vq in request.vector_queries if vq.text is not None)
    sem = request.effective_semantic_text if request.is_semantic else None
    return (request.search if request.has_text_leg else None), vec, sem


def identical(request: Any) -> bool | None:
    """True when every channel that is present gets the same text (None: fewer than two channels)."""
    kw, vec, sem = channel_texts(request)
    texts = [t for t in (kw, *vec, sem) if t]
    if len(texts) < 2:
        return None
    return len(set(texts)) == 1


def channel_modes(profile: Any) -> list[str]:
    """The text mode (verbatim | keywords) each channel of a profile receives."""
    kw = None if profile.keyword_text == "none" else profile.keyword_text
    modes = [kw] + [kw if vq.text == "keyword_text" else vq.text for vq in profile.vector_queries]
    if profile.query_type == "semantic":
        modes.append(kw if profile.semantic_text == "keyword_text" else profile.semantic_text)
    return [m for m in modes if m]


def identical_modes(profile: Any) -> bool | None:
    modes = channel_modes(profile)
    return None if len(modes) < 2 else len(set(modes)) == 1


def split_probe(question: str) -> probes.Probe:
    return probes.split_channels(keyword=keywords(question), vector=question, semantic=question,
                                 verbatim=question)


def policy_missing(ctx: Any) -> bool:
    return ctx.policy is None and ctx.query_log is None


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _show(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, tuple):
        return " | ".join(x) if x else "-"
    return str(x)


@register
class SharedQueryText(Check):
    id = ID
    needs = ("profiles|query_log|client_code|traffic",)
    uses = ("questions", "goldset", "client_code")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        policy = ctx.policy
        warn_share = spec.threshold("warn_identical_share")
        entries = list(ctx.query_log.entries) if ctx.query_log is not None else []
        v.nothing_observed("no_two_channels", profiles=len(policy.profiles) if policy else 0,
                           entries=len(entries))
        judged: list[tuple[str, float, int]] = []  # (where, share, n)
        if policy is not None:
            judged += self._profiles(ctx, policy, v)
        log_flags = [f for f in (e.shares_text for e in entries) if f is not None]
        if log_flags:
            v.observed("logged_requests_compared", len(log_flags))
            judged.append(("where_log", _share(log_flags), len(log_flags)))
            v.metric("identical_share_query_log", _share(log_flags))
        above = [v.msg(w, share=s, n=n) for w, s, n in judged if s > warn_share]
        if above:
            v.warn("identical_text", where=tuple(above))
            v.recommend("rec_separate_texts")
        code = self._code(ctx, v)
        languages = self._languages(ctx, spec, v)
        gain = self._split(ctx, spec, v) if policy is not None else None
        if policy is not None:  # text modes, vector fields and queries, search fields: each neutralised
            judge_owned(ctx, spec, v, ID)
        parts = [v.msg(w, share=s, n=n) for w, s, n in judged]
        if languages is not None:
            parts.append(languages)
        if code:
            parts.append(v.msg("where_code", n=code))
        if gain is not None:
            parts.append(v.msg("part_split", points=gain * 100))
        v.passed("pass", what=tuple(parts))

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.shared_query_text(ctx, spec, v)

    # -- the texts the profiles build (or, without questions, their channel modes) ----------
    def _profiles(self, ctx: Any, policy: Any, v: Verdict) -> list[tuple[str, float, int]]:
        used_by = profile_used_by(policy)
        rows = []
        for p in policy.profiles.values():
            vt = ", ".join(sorted({vq.text for vq in p.vector_queries})) or "-"
            fields = "; ".join(f"{'+'.join(vq.fields)} (w {vq.weight:g})" for vq in p.vector_queries) or "-"
            rows.append((p.name, ", ".join(used_by.get(p.name, [])) or "-", p.keyword_text, vt,
                         p.semantic_text if p.query_type == "semantic" else "-", fields,
                         identical_modes(p)))
        v.table("channel_modes", "t_modes", ("profile", "routes", "keyword_text", "vector_text",
                                             "semantic_text", "vector_fields_weights", "one_mode"), rows)
        field_sets = {tuple(sorted({f for vq in p.vector_queries for f in vq.fields}))
                      for p in policy.profiles.values() if p.vector_queries}
        # only a choice not taken is a finding: an index with one vector field offers no other
        choices = len(ctx.target.schema().vector_fields) if ctx.has("target") else None
        if len(field_sets) == 1 and len(policy.profiles) > 1 and (choices is None or choices > 1):
            v.warn("same_vector_field", fields=next(iter(field_sets)))
            v.recommend("rec_fields_per_type")
        if not ctx.has("questions"):
            flags = [f for f in (identical_modes(p) for p in policy.profiles.values()) if f is not None]
            v.observed("profiles_compared", len(flags))
            v.metric("identical_share_profile_modes", _share(flags))
            return [("where_profiles", _share(flags), len(flags))] if flags else []
        queries = ctx.gold_queries(policy)
        flags = [f for f in (identical(r) for q in queries for r in q.requests) if f is not None]
        v.observed("profile_requests_compared", len(flags))
        v.metric("identical_share_profiles", _share(flags))
        examples = [(q.case.id, q.profile, *[_show(x) for x in channel_texts(q.requests[0])])
                    for q in queries[:8]]
        if examples:
            v.table("example_requests", "t_examples", ("case", "profile", "keyword", "vector", "semantic"),
                    examples)
        return [("where_requests", _share(flags), len(flags))] if flags else []

    # -- language fidelity: content, questions, analyzers, embedder ------------------------------
    @staticmethod
    def _languages(ctx: Any, spec: Any, v: Verdict) -> Any:
        """Warn on every disagreement; the pass part when they agree (None: nothing to compare)."""
        if ctx.target is None:
            return None
        min_share = spec.threshold("min_language_share")
        ev = _language.gather(ctx, max_records=int(spec.threshold("language_sample_records")))
        content = ev.content_languages(min_share)
        for lang, share in content.items():
            v.metric(f"content_language_share_{lang}", share)
        v.metric("question_language", ev.question_language)
        rows = [("content", lang, share, ev.records_sampled) for lang, share in content.items()]
        if ev.question_language or ev.questions:
            rows.append(("questions", ev.question_language or "-", None, ev.questions))
        if not rows:
            return None
        analyzers = ", ".join(sorted({f"{a.analyzer}" for a in ev.analyses.values()})) or "-"
        model = ev.embedding_model or "-"
        v.table("languages", "t_languages", ("source", "language", "share", "n"), rows,
                note="n_languages")
        v.table("language_setup", "t_language_setup", ("field", "analyzer", "analysis"),
                [(f, a.analyzer, a.label) for f, a in ev.analyses.items()]
                + [("(embedder)", model, ", ".join(ev.embedder_langs) if ev.embedder_langs else "unknown")])
        unknown = {f: a.analyzer for f, a in ev.analyses.items() if not a.known}
        if unknown:
            v.note("lang_unknown_analyzer", analyzers=", ".join(sorted(set(unknown.values()))),
                   fields=", ".join(unknown))
        found = _language.mismatches(ev, min_share)
        for what, lang, share, detail in found:
            subject = (v.msg("subj_content", language=lang, share=share, n=ev.records_detected)
                       if share is not None else v.msg("subj_questions", language=lang, n=ev.questions))
            if what == "analyzer":
                v.warn("lang_analyzer", subject=subject, language=lang, detail=detail)
                v.recommend("rec_language_analyzer", language=lang)
            else:
                v.warn("lang_embedder", subject=subject, language=lang, model=detail)
                v.recommend("rec_language_embedder", language=lang)
        if found:
            v.observed("language_mismatches", len(found))
            return None
        if ev.embedder_langs is None and ev.embedding_model:
            v.note("lang_embedder_unknown", model=model)
        langs = ", ".join(f"{lang} {share:.0%}" for lang, share in content.items()) or "-"
        return v.msg("part_languages", content=langs, questions=ev.question_language or "-",
                     analyzers=analyzers, model=model)

    # -- the client code ------------------------------------------------------------------------
    @staticmethod
    def _code(ctx: Any, v: Verdict) -> int:
        """Judge the request path's call sites; returns how many sent text to two or more channels."""
        scan = ctx.code_scan()
        if scan is None:
            return 0
        multi = [s for s in scan.search_calls if sum(1 for x in s.channel_vars.values() if x) >= 2]
        if multi:
            v.table("code_channels", "t_code_channels", ("site", "site_class", "function", "channels", "shared"),
                    [(at(s), site_class(v, s), s.function,
                      ", ".join(f"{k}={x}" for k, x in s.channel_vars.items() if x), s.shared_text) for s in multi])
        # compared: the keyword text and another *text* channel (a vector query's text, the semantic
        # query), or one variable seen feeding two channels; an embedding passed as a vector under
        # another name says nothing about the text it embedded, so it is not evidence of separate texts
        judged = [s for s in request_only(multi) if s.shared_text or (
            s.channel_vars.get("search_text") and any(x for k, x in s.channel_vars.items()
                                                      if k.startswith(("vector_text", "semantic_query"))))]
        v.observed("code_sites_compared", len(judged))
        shared = [s for s in judged if s.shared_text]
        if shared:
            v.table("code_shared_text", "t_code_shared", ("file", "line", "function", "channels"),
                    [(s.file, s.line, s.function, ", ".join(f"{k}={x}" for k, x in s.channel_vars.items() if x))
                     for s in shared])
            v.warn("code_shared_text", n=len(shared), where=short(v, [at(s) for s in shared]))
            for s in shared:
                locate(v, s, "loc_shared_text", function=s.function)
        sole = scan.sole_input_rules()
        if sole:
            v.table("prompt_sole_input", "t_prompt_sole", ("file", "line", "text"),
                    [(r.file, r.line, r.text) for r in sole])
            v.warn("prompt_sole_input")
            for r in sole:
                v.location(r.file, r.line, "loc_sole_input")
        contra = scan.contradictions()
        if contra:
            v.table("prompt_contradictions", "t_contradictions", ("rule_a", "rule_b"),
                    [(f"{a.file}:{a.line} {a.text}", f"{b.file}:{b.line} {b.text}") for a, b in contra])
            v.warn("prompt_contradictions", n=len(contra))
            v.recommend("rec_one_length_rule")
        if not judged and policy_missing(ctx):
            v.nothing_observed("no_two_channels_code", files=scan.files_scanned)
        return len(judged)

    # -- the split-channel probe ------------------------------------------------------------------
    @staticmethod
    def _split(ctx: Any, spec: Any, v: Verdict) -> float | None:
        if not ctx.has("goldset") or not ctx.has("target"):
            v.note("split_not_run")
            return None
        policy = ctx.policy
        base = ctx.run_gold(policy, label="baseline")
        v.requests(base)
        split_queries = [GoldQuery(q.case, q.intent, q.profile,
                                   with_case_vector(q.case, split_probe(q.case.question).apply(q.requests[0])))
                         for q in base.queries]
        results = ctx.runner.run_fused([q.requests for q in split_queries], label="split channels")
        split = GoldRun("split channels", split_queries, results)
        v.requests(split)
        e_base, e_split = base.evaluation(ctx.goldset), split.evaluation(ctx.goldset)
        both = set(e_base.per_query) & {q.case.id for q, _ in split.traces()} & \
            {q.case.id for q, _ in base.traces()}
        if not both:
            return None
        from ragdiag.metrics import compare

        v.observed("split_probe_questions", len(both))
        gain = (e_split.aggregate.get("recall@10") or 0) - (e_base.aggregate.get("recall@10") or 0)
        for name, e in zip(RUNS, (e_base, e_split), strict=True):
            for m in SPLIT_METRICS:
                v.metric(f"{m}_{name}", e.aggregate.get(m))
        v.metric("recall@10_gain", gain)
        cmp = compare(e_base, e_split, "recall@10")
        for metric, c in (("recall@10", cmp), ("ndcg@10", compare(e_base, e_split, "ndcg@10"))):
            if c.n:
                v.effect(metric, c.a_mean, c.b_mean, p=c.p_ttest, n=c.n, action="eff_split", scope="eff_scope_all")
        v.table("split_probe", "t_split", ("run", "recall_10", "ndcg_10", "mrr", "wins_ties_losses", "p_ttest"),
                [(RUNS[0], *[e_base.aggregate.get(m) for m in SPLIT_METRICS], None, None),
                 (RUNS[1], *[e_split.aggregate.get(m) for m in SPLIT_METRICS],
                  f"{cmp.wins}/{cmp.ties}/{cmp.losses}", cmp.p_ttest)], note="n_split")
        if gain >= spec.threshold("fail_recall10_gain"):
            v.fail("split_gain", points=gain * 100)
            v.recommend("rec_split_channels")
        return gain

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "split_probe", "run", "recall_10", "ndcg_10")
        if not rows:
            return None
        names = [text(ID, f"fig_{r}", lang) if r in RUNS else str(r) for r, _, _ in rows]
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(6, 3))
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r or 0 for _, r, _ in rows], width=0.4, label="recall@10")
        ax.bar([i + 0.2 for i in x], [n or 0 for _, _, n in rows], width=0.4, label="nDCG@10")
        ax.set_xticks(list(x), names)
        ax.set_ylim(0, 1)
        ax.set_title(text(ID, "fig_title", lang))
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig
