"""Check 10: is there a measuring stick, and what does it say?

Presence (in the config or as files in the client code), size per intent, refusal and
restricted-identity cases; validity (expected sources exist, duplicate questions); metrics per
profile and intent through ir-measures (hit rate, recall, MRR, nDCG@10, judged@10); every
profile of the policy side by side on the same questions (each question through each profile,
and a hybrid profile's keyword and vector legs alone), so comparing legs needs no second config;
the names the goldset judges (documents, sections, pages) with the chunk keys they resolved to;
the refusal gate (a minimum reranker score); seed 002's four numbers (permission leaks by the
index's groups and by the goldset's own judgements, `_goldset_leaks`); and, when a second policy
is configured, a paired comparison.

Evidence a pass needs: a goldset loaded and evaluated, i.e. answerable questions answered by the
policy and scored. Without a goldset the absence is the finding: ``fail`` when none is
configured and none was found in the client code (or there is no code to search), ``warn``
naming the goldset-like files the code holds (with expected source ids, or sources cited inside
the expected answers), ``fail`` when the files the code holds cannot measure retrieval (questions
only, or answers without source ids). Each file found is listed with its kind, its records and
fields, and whether it loads as a ragdiag goldset as it is. A goldset whose expected sources are
all missing from the index measures nothing: ``fail``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.errors import TargetError

ID = "goldset"
#: goldset kinds the scanner tells apart (`GoldsetFile.kind`)
KINDS = ("goldset", "inline_sources", "no_source_ids", "questions_only")
METRICS = ("hit_rate@10", "recall@10", "recall@50", "mrr", "ndcg@10", "judged@10")
#: evidence column key of each metric (label keys are identifiers)
COLUMNS = {m: m.replace("@", "_") for m in METRICS}
FIGURE_METRICS = ("hit_rate@10", "recall@50", "ndcg@10")


def existing_keys(ctx: Any, keys: list[str]) -> set[str] | None:
    """Which keys exist in the index; None when the target can neither list nor read documents."""
    target = ctx.target
    if ctx.supports("documents"):
        from ragdiag.odata import pick_delimiter, quote

        found: set[str] = set()
        key_field = target.schema().key_field.name
        for i in range(0, len(keys), 100):
            chunk = keys[i:i + 100]
            delim = pick_delimiter(chunk)
            flt = f"search.in({key_field}, {quote(delim.join(chunk))}, {quote(delim)})"
            found.update(str(d[key_field]) for d in target.iter_documents(select=[key_field], filter=flt))
        return found
    if ctx.supports("get_document"):
        found = set()
        for k in keys:
            try:
                target.get_document(k, select=[target.schema().key_field.name])
                found.add(k)
            except TargetError:
                pass
        return found
    return None


def _loads(v: Verdict, scan: Any, g: Any) -> Any:
    """Whether a found file loads as a ragdiag goldset as it is (cases), or why not (a message)."""
    from pathlib import Path

    from ragdiag.errors import RagdiagError
    from ragdiag.inputs.goldset import GOLDSET_SUFFIXES, load_goldset

    path = Path(scan.root) / g.path
    if path.suffix.lower() not in GOLDSET_SUFFIXES:
        return v.msg("loads_not_format", suffix=path.suffix or "-")
    try:
        return v.msg("loads_cases", n=len(load_goldset(path)))
    except RagdiagError as exc:
        return v.msg("loads_no", error=str(exc).replace(str(path), g.path)[:160])
    except Exception as exc:  # noqa: BLE001 - a client's file must never crash the check
        return v.msg("loads_no", error=f"{type(exc).__name__}: {exc}"[:160])


@register
class Goldset(Check):
    id = ID
    needs = ()
    uses = ("goldset", "profiles", "target", "client_code")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        scan = ctx.code_scan() if ctx.has("client_code") else None
        found = list(scan.goldset_files) if scan is not None else []
        files = [g.path for g in found]
        if found:
            v.table("goldset_files", "t_files", ("file", "kind", "records", "fields", "loads", "evidence",
                                                 "questions", "with_expected", "duplicates", "problems"),
                    [(g.path, v.msg(f"kind_{g.kind}") if g.kind in KINDS else g.kind, g.records, tuple(g.fields),
                      _loads(v, scan, g), g.evidence, getattr(g, "questions", 0), getattr(g, "with_expected", 0),
                      getattr(g, "duplicates", 0), tuple(getattr(g, "problems", ()))) for g in found],
                    note="n_files")
        if scan is not None and scan.eval_result_files:
            v.table("eval_result_files", "t_eval_results", ("file", "records", "fields"),
                    [(g.path, g.records, tuple(g.fields)) for g in scan.eval_result_files], note="n_eval_results")
        gs = ctx.goldset
        if gs is None:
            v.metric("cases", 0)
            v.metric("goldset_files_in_code", len(files))
            retrieval = [g for g in found if g.kind in ("goldset", "inline_sources")]
            if retrieval:
                v.warn("only_in_code", n=len(retrieval), files=tuple(g.path for g in retrieval[:5]))
                for g in retrieval:  # validated as found: what keeps it from measuring as it is
                    if getattr(g, "problems", ()):
                        v.warn("code_goldset_problems", file=g.path, problems=tuple(g.problems))
                inline = [g.path for g in retrieval if g.kind == "inline_sources"]
                if inline:
                    v.warn("inline_sources", files=tuple(inline[:5]))
                    v.recommend("rec_extract_sources", file=inline[0])
                sound = [g.path for g in retrieval if g.kind == "goldset"]
                if sound:
                    v.recommend("rec_configure_found", file=sound[0])
                for f in files:
                    v.location(f, 1, "loc_goldset_file", level="note")
                return
            if found:
                v.fail("no_retrieval_goldset", n=len(found),
                       files=tuple(v.msg("file_kind", file=g.path, kind=v.msg(f"kind_{g.kind}")) for g in found[:5]))
                v.recommend("rec_add_sources", file=found[0].path, n=spec.threshold("target_cases_per_intent"))
                for f in files:
                    v.location(f, 1, "loc_not_retrieval_goldset", level="note")
                return
            if scan is not None:
                v.fail("no_goldset_searched", files=scan.files_scanned)
            else:
                v.fail("no_goldset_no_code")
            v.recommend("rec_write_goldset", n=spec.threshold("target_cases_per_intent"))
            return
        self._presence(ctx, spec, v, gs)
        run = None
        if ctx.has("profiles") and ctx.has("target"):
            run = self._metrics(ctx, v, gs)
            self._per_profile(ctx, v, gs, run)
            self._refusal(run, spec.threshold("gate_min_reranker_score"), v)
            self._four_numbers(ctx, run, v)
            if ctx.compare_policy is not None:
                self._comparison(ctx, run, v)
        else:
            v.note("not_evaluated")
        v.nothing_observed("not_evaluated_reason", cases=len(gs))
        ndcg, recall = v.metrics.get("ndcg@10"), v.metrics.get("recall@50")
        if run is not None and (v.fails or v.warns) and ndcg is not None:
            v.note("metrics_note", ndcg=ndcg, recall=recall)
        v.passed("pass", cases=len(gs), intents=len(gs.by_intent()),
                 profiles=len({q.profile for q, _ in run.traces()}) if run else 0, ndcg=ndcg, recall=recall)

    @staticmethod
    def _presence(ctx: Any, spec: Any, v: Verdict, gs: Any) -> None:
        min_cases = spec.threshold("min_cases_per_intent")
        by_intent = gs.by_intent()
        refusals = gs.refusals()
        restricted = [c for c in gs if c.as_user and c.expect_refused]
        for name, value in (("cases", len(gs)), ("answerable", len(gs.answerable())),
                            ("refusal_cases", len(refusals)), ("restricted_identity_cases", len(restricted))):
            v.metric(name, value)
        v.table("cases_per_intent", "t_cases", ("intent", "cases", "enough"),
                [(i, len(cs), len(cs) >= min_cases) for i, cs in sorted(by_intent.items())], min=min_cases)
        small = tuple(i for i, cs in sorted(by_intent.items()) if len(cs) < min_cases)
        if small:
            v.warn("few_cases", min=min_cases, intents=small)
            v.recommend("rec_grow", min=min_cases, target=spec.threshold("target_cases_per_intent"), intents=small)
        if spec.threshold("require_refusals") and not refusals:
            v.warn("no_refusals")
            v.recommend("rec_refusals")
        if spec.threshold("require_restricted") and not restricted:
            v.warn("no_restricted")
            v.recommend("rec_restricted")
        if not gs.answerable():
            v.warn("no_answerable", cases=len(gs))
        drafts = [c for c in gs if c.draft]
        if drafts:  # figures measured on unreviewed drafts are a draft's figures
            v.metric("draft_cases", len(drafts))
            v.warn("unreviewed_drafts", n=len(drafts), cases=len(gs))
            v.recommend("rec_review_drafts")
        keys = sorted({k for c in gs for k, _ in c.expect_sources})
        existing = existing_keys(ctx, keys) if keys and ctx.has("target") else None
        if keys and existing is None:
            v.note("sources_not_verified")
        elif keys:
            missing = [k for k in keys if k not in existing]
            v.metric("expected_sources_missing", len(missing))
            if missing:
                v.table("missing_sources", "t_missing", ("key",), [(k,) for k in missing[:100]])
                if len(missing) == len(keys):
                    v.fail("all_sources_missing", keys=len(keys), cases=len(gs.answerable()))
                else:
                    v.warn("sources_missing", n=len(missing), keys=len(keys))
        dupes = gs.duplicate_questions()
        if dupes:
            v.table("duplicate_questions", "t_duplicates", ("question", "cases"), [(q, tuple(ids)) for q, ids in dupes])
            v.warn("duplicates", n=len(dupes))
        pairs = gs.paired_questions()  # one question asked as several identities: by design, not a duplicate
        v.metric("paired_questions", len(pairs))
        if pairs:
            v.table("paired_questions", "t_paired", ("question", "cases"), [(q, tuple(ids)) for q, ids in pairs[:100]],
                    note="n_paired")
        resolutions = getattr(ctx, "resolutions", ())
        if resolutions:
            v.metric("judgements_resolved", len(resolutions))
            v.table("resolved_judgements", "t_resolved", ("case", "as_judged", "matched", "chunks", "answer_chunks",
                                                          "forbidden"),
                    [(r.case_id, r.name, r.how, len(r.keys), tuple(r.answer_keys), r.forbidden) for r in resolutions[:500]],
                    note="n_resolved")
            blind = [r for r in resolutions if r.note]
            if blind:
                v.warn("answer_not_in_unit", n=len(blind), names=tuple(f"{r.case_id}: {r.name}" for r in blind[:5]))

    @staticmethod
    def _metrics(ctx: Any, v: Verdict, gs: Any) -> Any:
        run = ctx.run_gold(ctx.policy, label="baseline")
        v.requests(run)
        e = run.evaluation(gs)
        answered = {q.case.id for q, _ in run.traces()} & set(e.per_query)
        v.observed("questions_evaluated", len(answered))
        for m in METRICS:
            v.metric(m, e.aggregate.get(m))
        if not answered:
            return run
        slices: dict[tuple[str, str], list[str]] = defaultdict(list)
        for q in run.queries:
            if q.case.id in e.per_query:
                slices[("intent", q.intent)].append(q.case.id)
                slices[("profile", q.profile)].append(q.case.id)
        rows = [("all", "*", len(e.per_query), *[e.aggregate.get(m) for m in METRICS])]
        for (kind, name), ids in sorted(slices.items()):
            rows.append((kind, name, len(ids), *[e.subset(ids).aggregate.get(m) for m in METRICS]))
        v.table("metrics", "t_metrics", ("slice_kind", "slice", "queries", *COLUMNS.values()),
                [tuple(round(x, 3) if isinstance(x, float) else x for x in r) for r in rows],
                note="n_metrics", policy=ctx.policy.name)
        return run

    @staticmethod
    def _per_profile(ctx: Any, v: Verdict, gs: Any, routed: Any) -> None:
        """Every profile of the policy on every question (and a hybrid profile's legs alone):
        the same questions, side by side, so no leg needs a config of its own."""
        from collections import Counter

        from ragdiag.engine.probes import text_only, vector_only

        count = Counter(q.profile for q in routed.queries)
        rows, best = [], None
        for name, prof in ctx.policy.profiles.items():
            runs = [("leg_profile", ctx.run_gold(ctx.policy, profile=name, label=f"profile {name}"))]
            if prof.keyword_text != "none" and prof.vector_queries:
                runs += [("leg_keyword", ctx.run_gold(ctx.policy, profile=name, probe=text_only(),
                                                      label=f"profile {name}, keyword leg")),
                         ("leg_vector", ctx.run_gold(ctx.policy, profile=name, probe=vector_only(),
                                                     label=f"profile {name}, vector leg"))]
            for leg, run in runs:
                v.requests(run)
                e = run.evaluation(gs)
                if not e.per_query:
                    continue
                values = [e.aggregate.get(m) for m in METRICS]
                rows.append((name, v.msg(leg), count.get(name, 0) if leg == "leg_profile" else 0,
                             len(e.per_query), *[round(x, 3) if isinstance(x, float) else x for x in values]))
                ndcg = e.aggregate.get("ndcg@10")
                if ndcg is not None and (best is None or ndcg > best[2]):
                    best = (name, leg, ndcg)
        if not rows:
            return
        v.metric("profiles_compared", len(ctx.policy.profiles))
        v.table("per_profile", "t_per_profile", ("profile", "leg", "routed_questions", "queries", *COLUMNS.values()),
                rows, note="n_per_profile", policy=ctx.policy.name)
        routed_ndcg = v.metrics.get("ndcg@10")
        configured = [(r[0], r[3], r[4 + METRICS.index("ndcg@10")]) for r in rows if r[1].id.endswith("leg_profile")]
        if len(configured) > 1:  # what a user compares first, in the headline
            v.note("per_profile_ndcg", n=max(q for _, q, _ in configured),
                   profiles=tuple(f"{name} {ndcg:.3f}" for name, _, ndcg in configured if ndcg is not None))
        if best is not None:
            v.metric("best_profile", best[0] if best[1] == "leg_profile" else f"{best[0]}:{best[1][4:]}")
            v.metric("best_profile_ndcg@10", round(best[2], 4))
            if routed_ndcg is not None and best[2] > routed_ndcg:
                v.note("best_profile", profile=best[0], leg=v.msg(best[1]), ndcg=best[2], routed=routed_ndcg)

    @staticmethod
    def _four_numbers(ctx: Any, run: Any, v: Verdict) -> None:
        """Seed 002's four numbers, each with its sample size (`_four_numbers`); a leak fails."""
        from ragdiag.checks._acl_probes import AclReader
        from ragdiag.checks._four_numbers import NUMBERS, four_numbers

        reader = None
        field = ctx.policy.security_field if ctx.policy is not None else None
        schema = ctx.target.schema()
        if field and schema.has_field(field.split("/")[0]):
            reader = AclReader(ctx, schema.key_field.name, field)
            if not reader.method:
                reader = None  # groups unreadable: only the goldset's own judgements can count leaks
        f = four_numbers(ctx, run, reader)
        rows = []
        for name in NUMBERS:
            value, n = f.values[name], f.n[name]
            v.metric(name, round(value, 4) if isinstance(value, float) else value)
            v.metric(f"{name}_n", n)
            if value is None:
                why = ("fn_no_answers" if name in ("answer_accuracy", "refusal_accuracy") and not f.answers_given
                       else "fn_no_permissions" if name == "permission_leaks" else "fn_no_cases")
                rows.append((name, v.msg("fn_skipped", reason=v.msg(why)), n, v.msg(f"fn_goal_{name}")))
            else:
                rows.append((name, round(value, 3) if isinstance(value, float) else value, n,
                             v.msg(f"fn_goal_{name}")))
        v.metric("invalid_citations", f.invalid_citations if f.answers_given else None)
        v.metric("cases_without_answer", f.unanswered if f.answers_given else None)
        v.table("four_numbers", "t_four_numbers", ("number", "value", "cases", "goal"), rows,
                note="n_four_numbers")
        if f.answers_given and all(f.values[k] is not None for k in NUMBERS):
            # the headline says the four numbers (otherwise the table says which were skipped and why)
            v.note("fn_headline", **{k: f.values[k] for k in NUMBERS}, **{f"{k}_n": f.n[k] for k in NUMBERS})
        if f.leak_rows:
            v.table("permission_leaks", "t_permission_leaks", ("case", "as_user", "outside_keys", "cited_outside",
                                                               "forbidden_retrieved", "forbidden_by"),
                    f.leak_rows[:100])
            v.fail("fn_leaks", n=f.values["permission_leaks"], cases=f.n["permission_leaks"])
            v.recommend("rec_fn_leaks")
        if f.invalid_citations:
            v.warn("fn_invalid_citations", n=f.invalid_citations, cases=f.n["refusal_accuracy"])
        if f.unanswered:
            v.warn("fn_unanswered", n=f.unanswered)
        if f.unknown_ids:
            v.warn("fn_unknown_ids", n=len(f.unknown_ids), ids=f.unknown_ids[:5])

    @staticmethod
    def _refusal(run: Any, gate: float, v: Verdict) -> None:
        should, answerable = [], []
        for q, t in run.traces():
            scores = [h.reranker_score for h in t.hits if h.reranker_score is not None]
            refused = not t.hits or (bool(scores) and scores[0] < gate)
            (should if q.case.expect_refused else answerable).append(refused)
        refused_ok = sum(should) / len(should) if should else None
        wrongly = sum(answerable) / len(answerable) if answerable else None
        v.metric("refusal_gate", gate)
        v.metric("should_refuse_refused", refused_ok)
        v.metric("answerable_wrongly_refused", wrongly)
        if should or answerable:
            v.table("refusal", "t_refusal", ("case_kind", "cases", "refused"),
                    [("should_refuse", len(should), refused_ok), ("answerable", len(answerable), wrongly)],
                    note="n_refusal", gate=gate)

    @staticmethod
    def _comparison(ctx: Any, run: Any, v: Verdict) -> None:
        from ragdiag.metrics import compare

        other = ctx.run_gold(ctx.compare_policy, label=f"compare {ctx.compare_policy.name}")
        v.requests(other)
        e, e2 = run.evaluation(ctx.goldset), other.evaluation(ctx.goldset)
        rows = []
        for m in ("ndcg@10", "recall@10", "recall@50", "mrr"):
            c = compare(e, e2, m)
            rows.append((m, c.a_mean, c.b_mean, c.mean_delta, f"{c.wins}/{c.ties}/{c.losses}", c.p_ttest, c.p_wilcoxon))
            v.metric(f"compare_{m}_delta", c.mean_delta)
            if m in ("ndcg@10", "recall@50") and c.n:
                v.effect(m, c.a_mean, c.b_mean, p=c.p_ttest, n=c.n, action="eff_switch_policy",
                         scope="eff_scope_all", policy=ctx.compare_policy.name, current=ctx.policy.name,
                         scope_params={"n": c.n})
        v.table("comparison", "t_comparison", ("metric", "first_policy", "second_policy", "delta",
                                               "wins_ties_losses", "p_ttest", "p_wilcoxon"),
                rows, first=ctx.policy.name, second=ctx.compare_policy.name)

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "metrics", "slice_kind", "slice", *[COLUMNS[m] for m in FIGURE_METRICS])
        rows = [r for r in rows or () if r[0] == "intent"]
        if not rows:
            return None
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7, 3.2))
        width = 0.8 / len(FIGURE_METRICS)
        for j, m in enumerate(FIGURE_METRICS):
            ax.bar([i + j * width for i in range(len(rows))], [r[2 + j] or 0 for r in rows], width=width, label=m)
        ax.set_xticks([i + width for i in range(len(rows))], [str(r[1]) for r in rows], rotation=30, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(text(ID, "fig_title", lang))
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig
