"""The loss funnel: for every goldset case and expected source, the stage where it was lost.

Retrieval is a chain of decisions, each of which can lose the right passage before the model
sees it (seed article 000). ragdiag follows every expected source (grade >= 1) of every
answerable goldset case through the stages of the request its route builds, and names the
**first** stage that lost it -- or ``top`` when it reached what the model gets. The stages, in
the order a document meets them (`STAGES`):

============  ==========================================================================
stage         the expected source ...
============  ==========================================================================
not_in_index  is not a document of the index (or of the client's table)
rights        exists, but the asking identity may not read it (legitimate: reported apart)
filter        is excluded by a filter clause of the profile (``detail``: the first clause
              that excludes it, ``clauses``: all of them; ``mode``: pre or post for the
              vector legs); on PostgreSQL a WHERE clause of the client's SQL
retrieval     passes every filter but no leg returned it within its depth: the keyword leg
              within ``max_text_recall_size``, each vector leg within its ``k``, or the SQL's
              LIMIT (``ranks`` say which legs saw it)
window        was retrieved but fused below the reranker's window (Azure's 50; on PostgreSQL
              the client reranker's ``rerank_depth``)
boost         would have reached the top without the scoring profile, which pushed it out
              (``detail``: the scoring profile); measured by the same request without it
rerank        was inside the window; the reranker ranked it below the profile's ``top``
rank          was retrieved, not reranked, and ranked below ``top`` in the fused order
threshold     reached ``top`` but a client-side score cut in the code drops it
budget        reached ``top`` but the context budget (tokens) ends before it
top           reached what the model gets
============  ==========================================================================

How the stages are read depends on the target (`method`): the local hybrid target traces
every stage (``trace``: keyword leg with its recall size, each vector leg per query and
field, the fused pool after boosts, the rerank window, the page), filters are evaluated on
the records, and the pool without the scoring profile is one cached what-if. A live Azure
index shows only hits, so each stage is a probe (``probes``): the keyword leg alone (no
reranker, at most 1,000 results), each vector field alone at its ``k``, the fused pool
without reranking (the reranker's window is its first 50), that pool without the scoring
profile; documents and clauses are asked with ``search.in`` filters on the key. What a
target cannot show is listed in `LossFunnel.not_derived`. PostgreSQL + pgvector runs the
client's SQL (``sql``): each WHERE clause is asked on its own for the expected keys, the
LIMIT is the retrieval depth and a declared ``rerank_depth`` the window.

The data model (`LossFunnel.to_dict`, the top-level ``loss_funnel`` of the findings JSON,
schema'd in ``ragdiag/model/findings.schema.json``): one `SourceFate` per case and expected
source, and aggregates per route and per stage (`FunnelRow`: sources, share of the route's
expected sources, graded gain lost and its share; the gain of a source is its grade, the
gain trec_eval's nDCG counts). The tuner's per-question "lost at" (`ragdiag.tuner.drilldown`)
is a view of the same classification (`classify`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag import odata
from ragdiag.errors import RagdiagError
from ragdiag.model import RERANK_WINDOW, RankedList, Trace
from ragdiag.targets.base import has_capability

__all__ = ["STAGES", "STAGE_IDS", "LOST_STAGES", "Stage", "StageView", "Admission", "SourceFate", "FunnelRow",
           "LossFunnel", "classify", "measure_funnel", "view_of_trace", "skipped_funnel", "why_not_measurable"]

PROBE_TEXT_TOP = 1000  # the most keyword results one Azure page returns: the keyword leg is seen this deep


@dataclass(frozen=True)
class Stage:
    """One stage of the funnel: its id, the check that owns what is lost there, and whether a
    loss there is legitimate (``rights``: the identity may not read the document)."""

    id: str
    owner: str | None
    legitimate: bool = False


STAGES: tuple[Stage, ...] = (
    Stage("not_in_index", "goldset"),
    Stage("rights", "acl_trimming", legitimate=True),
    Stage("filter", "prerank_filters"),
    Stage("retrieval", "pool_size"),
    Stage("window", "pool_size"),
    Stage("boost", "reranker_scores"),
    Stage("rerank", "reranker_scores"),
    Stage("rank", "shared_query_text"),
    Stage("threshold", "reranker_scores"),
    Stage("budget", "context_budgets"),
    Stage("top", None),
)
STAGE_IDS: tuple[str, ...] = tuple(s.id for s in STAGES)
#: stages that lose the source before the model (everything but ``top``)
LOST_STAGES: tuple[str, ...] = STAGE_IDS[:-1]
UNMEASURED = "unmeasured"  # the case's request failed: its sources are counted apart


# ---------------------------------------------------------------------------
# what one request shows, and what is known about one document


@dataclass(frozen=True)
class StageView:
    """The stages one executed request shows, however they were obtained.

    `legs`: the keyword leg and each vector leg as ranked lists (None: the target cannot show
    them, so a source absent from the pool is lost at ``retrieval``); `pool`: the fused
    candidates after filters and boosts, best first; `unboosted`: the same pool without the
    scoring profile (None: no scoring profile, or not measured); `final`: the ranking the
    request returned; `window`: how many of the pool the reranker reads (None: not reranked).
    """

    final: Sequence[str]
    pool: RankedList | None = None
    legs: tuple[RankedList, ...] | None = None
    unboosted: RankedList | None = None
    reranked: bool = False
    window: int | None = None
    scoring_profile: str | None = None
    #: depth of each leg (name -> recall size or k), for the detail of a retrieval loss
    depths: Mapping[str, int] = field(default_factory=dict)
    #: reranker score of a returned key (None when not reranked), for client thresholds
    score_of: Callable[[str], float | None] | None = None
    #: "LIMIT 30" and the like: what bounds retrieval where there are no legs
    retrieval_bound: str | None = None
    #: the final ranking without the scoring profile (the counterfactual of the ``boost`` stage)
    unboosted_final: Sequence[str] | None = None


@dataclass(frozen=True)
class Admission:
    """What the filters say about one document: does it exist, does a leg's filter admit it,
    and which clauses reject it (``access`` marks the identity clause)."""

    exists: bool | None = True
    admitted: bool | None = True
    failing: tuple[tuple[str, bool], ...] = ()  # (clause text, is the identity clause)
    mode: str | None = None  # "pre" | "post": how the failing filter acts on the vector legs


@dataclass(frozen=True)
class PostTopCut:
    """What cuts the top after retrieval, where known: a client score threshold (the reranker
    score a hit needs) and a context budget (tokens per key, the budget)."""

    min_reranker_score: float | None = None
    threshold_where: str | None = None
    budget_tokens: int | None = None
    tokens_of: Callable[[str], int] | None = None


@dataclass(frozen=True)
class SourceFate:
    """Where one expected source of one goldset case went."""

    case: str
    route: str
    profile: str
    key: str
    grade: int
    stage: str
    detail: str | None = None
    clauses: tuple[str, ...] = ()
    ranks: Mapping[str, int | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "route": self.route, "profile": self.profile, "key": self.key,
                "grade": self.grade, "stage": self.stage, "detail": self.detail, "clauses": list(self.clauses),
                "ranks": dict(self.ranks)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SourceFate:
        return cls(case=str(d["case"]), route=str(d.get("route", "")), profile=str(d.get("profile", "")),
                   key=str(d["key"]), grade=int(d.get("grade", 1)), stage=str(d["stage"]),
                   detail=d.get("detail"), clauses=tuple(d.get("clauses") or ()),
                   ranks=dict(d.get("ranks") or {}))


@dataclass(frozen=True)
class FunnelRow:
    """One stage of one route (``route`` None: all routes): how many expected sources it lost,
    their share of the route's expected sources, the graded gain lost and its share."""

    route: str | None
    stage: str
    detail: str | None
    sources: int
    share: float | None
    gain: int
    gain_share: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"route": self.route, "stage": self.stage, "detail": self.detail, "sources": self.sources,
                "share": self.share, "gain": self.gain, "gain_share": self.gain_share}


# ---------------------------------------------------------------------------
# classification (pure)


def _rank(lst: RankedList | None, key: str) -> int | None:
    return lst.rank_of(key) if lst is not None else None


def classify(view: StageView, key: str, admission: Admission, *, top: int,
             cut: PostTopCut | None = None, before: Sequence[str] = ()) -> tuple[str, str | None,
                                                                                tuple[str, ...], dict[str, int | None]]:
    """(stage, detail, failing clauses, ranks) of `key` under `view`: the first stage that lost it.

    `top` is what the model gets (the profile's ``top``); `before` the returned keys ranked
    above this one (for the budget); `cut` the post-top cuts known (threshold, budget).
    """
    ranks: dict[str, int | None] = {}
    for leg in view.legs or ():
        ranks[leg.name] = leg.rank_of(key)
    pool_rank = _rank(view.pool, key)
    ranks["pool"] = pool_rank
    final = {k: i for i, k in enumerate(view.final, 1)}
    ranks["final"] = final.get(key)
    if view.unboosted_final is not None:
        ranks["final_without_boost"] = next((i for i, k in enumerate(view.unboosted_final, 1) if k == key), None)
    if admission.exists is False:
        return "not_in_index", None, (), ranks
    if admission.admitted is False:
        if any(access for _text, access in admission.failing):
            return "rights", None, tuple(t for t, access in admission.failing if not access), ranks
        texts = tuple(t for t, _a in admission.failing)
        return "filter", texts[0] if texts else None, texts, ranks
    in_legs = None if view.legs is None else any(ranks.get(leg.name) is not None for leg in view.legs)
    f = final.get(key)
    if f is not None and f <= top:
        return _after_top(key, f, view, cut, before), _cut_detail(key, f, view, cut, before), (), ranks
    if in_legs is False or (pool_rank is None and f is None):
        return "retrieval", _retrieval_detail(view), (), ranks
    if view.unboosted_final is not None:
        # the scoring profile's own counterfactual: without it, the source reaches the top
        u = next((i for i, k in enumerate(view.unboosted_final, 1) if k == key), None)
        if u is not None and u <= top:
            return "boost", view.scoring_profile, (), ranks
    unboosted = _rank(view.unboosted, key)
    if view.reranked:
        window = view.window if view.window is not None else RERANK_WINDOW
        if pool_rank is None or pool_rank > window:
            if unboosted is not None and unboosted <= window:
                return "boost", view.scoring_profile, (), ranks
            return "window", str(window), (), ranks
        return "rerank", f"top {top}", (), ranks
    if view.window is not None and (pool_rank is None or pool_rank > view.window):
        # a client reranker that reads only the first `window` candidates (pgvector rerank_depth)
        return "window", str(view.window), (), ranks
    if unboosted is not None and unboosted <= top:
        return "boost", view.scoring_profile, (), ranks
    return "rank", f"top {top}", (), ranks


def _retrieval_detail(view: StageView) -> str | None:
    if view.retrieval_bound:
        return view.retrieval_bound
    if not view.depths:
        return None
    return ", ".join(f"{name} {depth}" for name, depth in view.depths.items())


def _after_top(key: str, rank: int, view: StageView, cut: PostTopCut | None, before: Sequence[str]) -> str:
    if cut is None:
        return "top"
    if cut.min_reranker_score is not None and view.score_of is not None:
        s = view.score_of(key)
        if s is not None and s < cut.min_reranker_score:
            return "threshold"
    if cut.budget_tokens is not None and cut.tokens_of is not None:
        used = sum(cut.tokens_of(k) for k in before) + cut.tokens_of(key)
        if used > cut.budget_tokens:
            return "budget"
    return "top"


def _cut_detail(key: str, rank: int, view: StageView, cut: PostTopCut | None, before: Sequence[str]) -> str | None:
    stage = _after_top(key, rank, view, cut, before)
    if stage == "threshold":
        return cut.threshold_where if cut else None
    if stage == "budget":
        return f"{cut.budget_tokens} tokens" if cut else None
    return None


# ---------------------------------------------------------------------------
# the funnel of an audit


@dataclass(frozen=True)
class LossFunnel:
    """Every expected source's fate and the aggregates per route and stage (see the module doc)."""

    status: str  # "measured" | "skipped"
    reason: str | None = None
    method: str | None = None  # "trace" | "probes" | "sql"
    target_kind: str | None = None
    not_derived: tuple[str, ...] = ()
    fates: tuple[SourceFate, ...] = ()
    cases: int = 0
    unmeasured_cases: tuple[str, ...] = ()
    post_top: Mapping[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return self.status == "measured"

    # ---- views --------------------------------------------------------------------
    def for_case(self, case_id: str) -> list[SourceFate]:
        """The fates of one case's expected sources (the tuner's per-question view)."""
        return [f for f in self.fates if f.case == case_id]

    def lost_at(self, case_id: str, key: str) -> str | None:
        return next((f.stage for f in self.fates if f.case == case_id and f.key == key), None)

    def routes(self) -> list[str]:
        return list(dict.fromkeys(f.route for f in self.fates))

    def rows(self, route: str | None = None) -> list[FunnelRow]:
        """Per stage (filter and boost also per clause / scoring profile), in stage order, for
        one route or (None) all of them; stages that lost nothing are left out (``top`` too
        when nothing reached it)."""
        fates = [f for f in self.fates if route is None or f.route == route]
        total, gain = len(fates), sum(f.grade for f in fates)
        groups: dict[tuple[str, str | None], list[SourceFate]] = defaultdict(list)
        for f in fates:
            groups[(f.stage, f.detail if f.stage in ("filter", "boost") else None)].append(f)
        order = {s: i for i, s in enumerate(STAGE_IDS)}
        out = []
        for (stage, detail), items in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99),
                                                                               kv[0][1] or "")):
            g = sum(f.grade for f in items)
            out.append(FunnelRow(route, stage, detail, len(items), len(items) / total if total else None,
                                 g, g / gain if gain else None))
        return out

    def share(self, stage: str, route: str | None = None, detail: str | None = None) -> float:
        fates = [f for f in self.fates if route is None or f.route == route]
        if not fates:
            return 0.0
        hit = [f for f in fates if f.stage == stage and (detail is None or f.detail == detail)]
        return len(hit) / len(fates)

    def lost_by(self, stage: str, detail: str | None = None, profile: str | None = None) -> list[SourceFate]:
        return [f for f in self.fates if f.stage == stage and (detail is None or f.detail == detail)
                and (profile is None or f.profile == profile)]

    # ---- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ``loss_funnel`` of the findings JSON (schema: findings.schema.json)."""
        if not self.measured:
            return {"status": self.status, "reason": self.reason}
        routes = []
        for r in self.routes():
            fates = [f for f in self.fates if f.route == r]
            routes.append({"route": r, "profiles": sorted({f.profile for f in fates}),
                           "cases": len({f.case for f in fates}), "sources": len(fates),
                           "gain": sum(f.grade for f in fates),
                           "stages": [row.to_dict() for row in self.rows(r)]})
        return {
            "status": self.status, "reason": self.reason, "method": self.method, "target_kind": self.target_kind,
            "not_derived": list(self.not_derived),
            "stages": [{"id": s.id, "owner": s.owner, "legitimate": s.legitimate} for s in STAGES],
            "cases": self.cases, "sources_total": len(self.fates), "gain_total": sum(f.grade for f in self.fates),
            "unmeasured_cases": list(self.unmeasured_cases), "post_top": dict(self.post_top),
            "totals": [row.to_dict() for row in self.rows(None)],
            "routes": routes,
            "sources": [f.to_dict() for f in self.fates],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> LossFunnel | None:
        if not d:
            return None
        return cls(status=str(d.get("status", "skipped")), reason=d.get("reason"), method=d.get("method"),
                   target_kind=d.get("target_kind"), not_derived=tuple(d.get("not_derived") or ()),
                   fates=tuple(SourceFate.from_dict(x) for x in d.get("sources") or ()),
                   cases=int(d.get("cases") or 0), unmeasured_cases=tuple(d.get("unmeasured_cases") or ()),
                   post_top=dict(d.get("post_top") or {}))

    def __repr__(self) -> str:
        if not self.measured:
            return f"<LossFunnel skipped: {self.reason}>"
        top = self.share("top")
        return (f"<LossFunnel {len(self.fates)} expected sources of {self.cases} cases ({self.method}); "
                f"{top:.0%} reach the top>")

    def _repr_html_(self) -> str:
        import html

        if not self.measured:
            return f"<p>loss funnel skipped: {html.escape(self.reason or '')}</p>"
        rows = "".join(f"<tr><td>{html.escape(r.stage)}</td><td>{html.escape(r.detail or '')}</td>"
                       f"<td>{r.sources}</td><td>{(r.share or 0):.0%}</td><td>{r.gain}</td></tr>"
                       for r in self.rows(None))
        return ("<table><thead><tr><th>stage</th><th>detail</th><th>sources</th><th>share</th><th>gain</th>"
                f"</tr></thead><tbody>{rows}</tbody></table>")


def skipped_funnel(reason: str) -> LossFunnel:
    return LossFunnel(status="skipped", reason=reason)


# ---------------------------------------------------------------------------
# reading the stages of a trace (local target) and asking about documents


def view_of_trace(trace: Trace, *, unboosted: Trace | None = None, window: int | None = None) -> StageView:
    """The stages a trace carries (local target: every leg; others: the pool or the hits)."""
    req = trace.request
    legs: tuple[RankedList, ...] | None = None
    depths: dict[str, int] = {}
    if trace.text is not None or trace.vectors:
        legs = ((trace.text,) if trace.text is not None else ()) + tuple(trace.vectors)
        if trace.text is not None:
            depths[trace.text.name] = req.effective_max_text_recall_size
        for v in trace.vectors:
            i = _vq_index(v.name)
            if i is not None and i < len(req.vector_queries):
                depths[v.name] = req.vector_queries[i].k
    reranked = bool(trace.reranked)
    score_map: dict[str, float | None] | None = None

    def score_of(key: str) -> float | None:
        nonlocal score_map
        if score_map is None:
            score_map = {h.key: (h.reranker_boosted_score if h.reranker_boosted_score is not None
                                 else h.reranker_score) for h in trace.hits}
        return score_map.get(key)

    return StageView(final=trace.keys, pool=trace.pool, legs=legs,
                     unboosted=unboosted.pool if unboosted is not None else None,
                     unboosted_final=unboosted.keys if unboosted is not None else None,
                     reranked=reranked, window=(len(trace.rerank_window) or RERANK_WINDOW) if reranked else window,
                     scoring_profile=req.scoring_profile, depths=depths,
                     score_of=score_of if reranked else None)


def _vq_index(name: str) -> int | None:
    """`vector[2]:field` -> 2."""
    if name.startswith("vector[") and "]" in name:
        try:
            return int(name[7:name.index("]")])
        except ValueError:
            return None
    return None


class _Documents:
    """Which of a set of keys exist and which a filter admits, asked of the target in batches:
    the local target's filter masks, else one listing per filter (``search.in`` on the key)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.error: str | None = None
        key = target.schema().key_field
        self.key = key.name if key.filterable else None
        if self.key is None:
            self.error = f"the key field '{key.name}' is not filterable"

    def matching(self, keys: Iterable[str], flt: str | None) -> set[str] | None:
        wanted = sorted(set(keys))
        if not wanted:
            return set()
        fast = self.target.matching_keys if has_capability(self.target, "local_records") else None
        try:
            if fast is not None:
                return set(fast(wanted, flt))
            if self.key is None:
                return None
            delim = odata.pick_delimiter(wanted)
            cond = f"search.in({self.key}, {odata.quote(delim.join(wanted))}, {odata.quote(delim)})"
            docs = self.target.iter_documents(select=[self.key], filter=f"{cond} and ({flt})" if flt else cond)
            return {str(d.get(self.key)) for d in docs} & set(wanted)
        except RagdiagError as exc:
            self.error = str(exc)
            return None


# ---------------------------------------------------------------------------
# measuring


def measure_funnel(ctx: Any, policy: Any = None, run: Any = None) -> LossFunnel:
    """The funnel of `policy` (default: the audit's) on the goldset's answerable cases.

    Skipped (with the reason) without a target, a policy or a goldset with expected sources.
    `run` is the policy's routed goldset run when the caller has it (`ctx.run_gold(policy)`).
    """
    policy = policy if policy is not None else ctx.policy
    gap = why_not_measurable(ctx, policy, "without expected sources there is nothing to follow")
    if gap:
        return skipped_funnel(gap)
    qrels = ctx.goldset.qrels()
    if run is None:
        run = ctx.run_gold(policy, label="baseline")
    sql = ctx.supports("sql_probes")
    staged = ctx.supports("stages")
    method = "sql" if sql else ("trace" if staged else "probes")
    items = []  # (query, trace, relevant keys with grades)
    unmeasured: list[str] = []
    for q, r in zip(run.queries, run.results, strict=True):
        rel = {k: g for k, g in qrels.get(q.case.id, {}).items() if g >= 1}
        if not rel:
            continue
        if not isinstance(r, Trace):
            unmeasured.append(q.case.id)
            continue
        items.append((q, r, rel))
    cut = _post_top(ctx)
    not_derived: list[str] = []
    if sql:
        views, admissions = _sql_stages(ctx, items, not_derived)
    elif staged:
        views, admissions = _trace_stages(ctx, policy, items, not_derived)
    else:
        views, admissions = _probe_stages(ctx, policy, items, not_derived)
    fates = []
    for (q, trace, rel), view, adm in zip(items, views, admissions, strict=True):
        top = policy.profiles[q.profile].top if q.profile in policy.profiles else trace.request.top
        final = list(view.final)
        position = {k: i for i, k in enumerate(final)}
        for key, grade in sorted(rel.items(), key=lambda kv: (-kv[1], kv[0])):
            f = position.get(key)
            stage, detail, clauses, ranks = classify(view, key, adm.get(key, Admission()), top=top, cut=cut,
                                                     before=final[:f] if f is not None and f < top else ())
            fates.append(SourceFate(q.case.id, q.intent, q.profile, key, int(grade), stage, detail, clauses,
                                    ranks))
    post: dict[str, Any] = {"tops": {name: prof.top for name, prof in policy.profiles.items()}}
    if cut.min_reranker_score is not None:
        post["threshold"] = {"min_reranker_score": cut.min_reranker_score, "where": cut.threshold_where}
    if cut.budget_tokens is not None:
        post["budget_tokens"] = cut.budget_tokens
    kind = getattr(ctx.target, "kind", None) or (getattr(getattr(ctx.config, "target", None), "kind", None)
                                                 if ctx.config is not None else None)
    return LossFunnel(status="measured", method=method, target_kind=kind, not_derived=tuple(not_derived),
                      fates=tuple(fates), cases=len(items), unmeasured_cases=tuple(unmeasured), post_top=post)


def why_not_measurable(ctx: Any, policy: Any, no_goldset: str) -> str | None:
    """Why the funnel or the ablation cannot be measured (None: it can): a target, profiles and
    a goldset with expected sources are needed."""
    if ctx.target is None:
        return "no search target (a code-only audit)"
    if policy is None:
        return "no query profiles were supplied"
    if ctx.goldset is None:
        return f"no goldset: {no_goldset}"
    if not ctx.goldset.qrels():
        return "the goldset has no case with expected sources"
    return None


def _identity_clause(ctx: Any, policy: Any, q: Any) -> str | None:
    """The rendered identity clause of a case's request (None: asked without an identity)."""
    ident = ctx.identity(q.case.as_user) if q.case.as_user else None
    prof = policy.profiles.get(q.profile)
    if ident is None or prof is None or not prof.security_trimming:
        return None
    return odata.render(odata.parse(odata.search_in_any(policy.security_field, ident.groups)))


def _leg_filters(requests: Sequence[Any]) -> list[str | None]:
    """The filter each leg searches under (a vector query's override replaces the top-level filter)."""
    out: list[str | None] = []
    for r in requests:
        if r.has_text_leg or not r.vector_queries:
            out.append(r.filter)
        out += [vq.filter_override if vq.filter_override is not None else r.filter for vq in r.vector_queries]
    return list(dict.fromkeys(out))


def _admissions(ctx: Any, policy: Any, items: Sequence[tuple[Any, Trace, dict[str, int]]], docs: _Documents,
                not_derived: list[str]) -> list[dict[str, Admission]]:
    """Per item: each relevant key's admission (exists, admitted by a leg's filter, failing clauses)."""
    all_keys = {k for _q, _t, rel in items for k in rel}
    exists = docs.matching(all_keys, None)
    need: dict[str | None, set[str]] = defaultdict(set)
    legs_of = []
    for q, _t, rel in items:
        legs = _leg_filters(q.requests)
        legs_of.append(legs)
        for f in legs:
            if f:
                need[f].update(rel)
    admitted = {f: docs.matching(keys, f) for f, keys in need.items()}
    clause_need: dict[str, set[str]] = defaultdict(set)
    pending = []
    for (q, _t, rel), legs in zip(items, legs_of, strict=True):
        rejected = set()
        for k in rel:
            if exists is not None and k not in exists:
                continue
            ok = [None if not f else admitted[f] for f in legs]
            if any(a is None and f is None for a, f in zip(ok, legs, strict=True)):
                continue  # an unfiltered leg admits everything
            if any(a is None for a in ok):
                continue  # cannot tell
            if not any(k in a for a in ok if a is not None):
                rejected.add(k)
        flt = q.requests[0].filter if q.requests else None
        flt = flt if flt in legs else next((f for f in legs if f), None)
        pending.append((rejected, flt))
        if rejected and flt:
            for c in odata.clauses(odata.parse(flt)):
                clause_need[c.text].update(rejected)
    clause_ok = {text: docs.matching(keys, text) for text, keys in clause_need.items()}
    if docs.error:
        not_derived.append(f"which documents exist and which clauses reject them could not be asked: {docs.error}")
    out = []
    for (q, _t, rel), (rejected, flt) in zip(items, pending, strict=True):
        ident = _identity_clause(ctx, policy, q)
        secure = _secure_fields(ctx, policy)
        mode = "post" if q.requests and q.requests[0].vector_queries and \
            q.requests[0].vector_filter_mode != "preFilter" else "pre"
        adm: dict[str, Admission] = {}
        for k in rel:
            if exists is not None and k not in exists:
                adm[k] = Admission(exists=False, admitted=False)
            elif k in rejected:
                failing = []
                for c in odata.clauses(odata.parse(flt)) if flt else ():
                    got = clause_ok.get(c.text)
                    if got is not None and k not in got:
                        failing.append((c.text, c.text == ident or bool(c.fields & secure)))
                adm[k] = Admission(exists=True, admitted=False, failing=tuple(failing), mode=mode)
            else:
                adm[k] = Admission(exists=None if exists is None else True, admitted=True)
        out.append(adm)
    return out


def _secure_fields(ctx: Any, policy: Any) -> frozenset[str]:
    try:
        schema = ctx.target.schema()
        names = {f.name for f in schema.security_fields}
    except (RagdiagError, AttributeError):
        names = set()
    return frozenset(names | {policy.security_field.split("/")[0]})


def _unboosted_requests(q: Any) -> tuple[Any, ...]:
    return tuple(r.replace(scoring_profile=None, scoring_parameters=()) for r in q.requests)


def _trace_stages(ctx: Any, policy: Any, items: Sequence[tuple[Any, Trace, dict[str, int]]],
                  not_derived: list[str]) -> tuple[list[StageView], list[dict[str, Admission]]]:
    """Local target: the legs, pool and window are in the trace; filters asked of the records; the
    pool without the scoring profile is one cached what-if, run only where a source fell out."""
    docs = _Documents(ctx.target)
    admissions = _admissions(ctx, policy, items, docs, not_derived)
    boosted_out = []
    for i, (q, t, rel) in enumerate(items):
        req = t.request
        if not req.scoring_profile or len(q.requests) != 1:
            continue
        # every case under a scoring profile: which sources it pushes out of the top and which it
        # pulls in (the ablation ran the same requests without the profile: answered from memory)
        if any(admissions[i][k].admitted is not False for k in rel):
            boosted_out.append(i)
    unboosted: dict[int, Trace] = {}
    if boosted_out:
        res = ctx.runner.run_fused([_unboosted_requests(items[i][0]) for i in boosted_out],
                                   label="funnel: pools without the scoring profile")
        unboosted = {i: r for i, r in zip(boosted_out, res, strict=True) if isinstance(r, Trace)}
    views = [view_of_trace(t, unboosted=unboosted.get(i)) for i, (_q, t, _rel) in enumerate(items)]
    return views, admissions


def _probe_stages(ctx: Any, policy: Any, items: Sequence[tuple[Any, Trace, dict[str, int]]],
                  not_derived: list[str]) -> tuple[list[StageView], list[dict[str, Admission]]]:
    """A target that shows only hits (Azure): every stage is a probe, for the cases whose expected
    sources did not all reach the top (the others need none)."""
    from ragdiag.engine import probes

    docs = _Documents(ctx.target)
    admissions = _admissions(ctx, policy, items, docs, not_derived)
    not_derived += [
        f"the keyword leg is seen through a keyword-only probe without reranking, at most {PROBE_TEXT_TOP} "
        "results deep (the service returns no leg lists)",
        "each vector leg is a vector-only probe of one field at its k; the reranker's window is the first "
        f"{RERANK_WINDOW} of a probe without reranking (what the service reranks)",
    ]
    groups: list[tuple[Any, ...]] = []
    plan: list[dict[str, Any]] = []
    for q, t, rel in items:
        req = t.request
        top = policy.profiles[q.profile].top if q.profile in policy.profiles else req.top
        final = {k: n for n, k in enumerate(t.keys, 1)}
        entry: dict[str, Any] = {}
        if len(q.requests) == 1 and any((final.get(k) or 10**9) > top for k in rel):
            base = q.requests[0]
            entry["pool"] = len(groups)
            groups.append(probes.pool(max(RERANK_WINDOW, top)).apply(base))
            if base.scoring_profile:
                entry["unboosted"] = len(groups)
                groups.append(probes.pool(max(RERANK_WINDOW, top)).apply(_unboosted_requests(q)[0]))
                entry["unboosted_final"] = len(groups)
                groups.append(_unboosted_requests(q))
            legs = []
            if base.has_text_leg:
                legs.append(("text", len(groups), req.effective_max_text_recall_size))
                groups.append((probes.no_rerank().apply(base.replace(vector_queries=()))[0]
                               .replace(top=min(req.effective_max_text_recall_size, PROBE_TEXT_TOP)),))
            for i, vq in enumerate(base.vector_queries):
                for fname in vq.fields:
                    one = _one_field(vq, fname)
                    legs.append((f"vector[{i}]:{fname}", len(groups), vq.k))
                    groups.append((probes.no_rerank().apply(base.replace(
                        search=None, vector_queries=(one,), semantic_query=None))[0].replace(top=vq.k),))
            entry["legs"] = legs
        plan.append(entry)
    results = ctx.runner.run_fused(groups, label="funnel probes") if groups else []
    views = []
    for (_q, t, _rel), entry in zip(items, plan, strict=True):
        if not entry:
            views.append(view_of_trace(t))
            continue

        def got(i: int | None) -> Trace | None:
            r = results[i] if i is not None else None
            return r if isinstance(r, Trace) else None

        pool_t = got(entry.get("pool"))
        pool = RankedList("fused", pool_t.keys, tuple(0.0 for _ in pool_t.keys)) if pool_t is not None else None
        unb_t = got(entry.get("unboosted"))
        unboosted = RankedList("fused", unb_t.keys, tuple(0.0 for _ in unb_t.keys)) if unb_t is not None else None
        legs, depths, complete = [], {}, True
        for name, i, depth in entry.get("legs", ()):
            lt = got(i)
            if lt is None:
                complete = False
                continue
            legs.append(RankedList(name, lt.keys, tuple(0.0 for _ in lt.keys)))
            depths[name] = depth
        base = view_of_trace(t)
        unb_final = got(entry.get("unboosted_final"))
        views.append(StageView(final=t.keys, pool=pool, legs=tuple(legs) if complete else None, unboosted=unboosted,
                               reranked=bool(t.reranked), window=RERANK_WINDOW if t.reranked else None,
                               scoring_profile=t.request.scoring_profile, depths=depths, score_of=base.score_of,
                               unboosted_final=unb_final.keys if unb_final is not None else None))
    return views, admissions


def _one_field(vq: Any, fname: str) -> Any:
    import dataclasses

    return dataclasses.replace(vq, fields=(fname,))


def _sql_stages(ctx: Any, items: Sequence[tuple[Any, Trace, dict[str, int]]],
                not_derived: list[str]) -> tuple[list[StageView], list[dict[str, Admission]]]:
    """PostgreSQL + pgvector: the client's SQL is the request. Each WHERE clause is asked on its own
    for the expected keys (`PgvectorTarget.clause_admission`); the LIMIT bounds retrieval; a
    declared ``rerank_depth`` is the client reranker's window."""
    t = ctx.target
    groups_col = t.mapping.groups  # the members of capability sql_probes (checked when opened)
    clauses = list(t.template.clauses)
    depth = t.rerank_depth
    by_filter: dict[Any, list[int]] = defaultdict(list)
    for i, (q, _t, _rel) in enumerate(items):
        by_filter[q.requests[0].filter].append(i)
    answers: dict[int, tuple[set[str] | None, list[set[str] | None]]] = {}
    for _flt, idx in by_filter.items():
        keys = sorted({k for i in idx for k in items[i][2]})
        try:
            got = t.clause_admission(items[idx[0]][0].requests[0], keys)
        except RagdiagError as exc:
            not_derived.append(f"the WHERE clauses could not be asked one by one: {exc}")
            got = (None, [None] * len(clauses))
        for i in idx:
            answers[i] = got
    not_derived.append("the client's reranker is not run: a source inside its rerank_depth but below top in "
                       "the SQL's order is counted at 'rank'" if depth else
                       "no client reranker is declared ([target] rerank_depth): the SQL's order is the final one")
    views, admissions = [], []
    for i, (_q, trace, rel) in enumerate(items):
        in_from, per_clause = answers.get(i, (None, []))
        adm: dict[str, Admission] = {}
        for k in rel:
            if in_from is not None and k not in in_from:
                adm[k] = Admission(exists=False, admitted=False)
                continue
            failing = []
            for c, ok in zip(clauses, per_clause, strict=False):
                if ok is not None and k not in ok:
                    access = bool(groups_col) and groups_col in t.clause_columns(c.index)
                    failing.append((c.text, access))
            adm[k] = Admission(exists=True if in_from is not None else None, admitted=not failing,
                               failing=tuple(failing))
        admissions.append(adm)
        limit = t.limit_of(trace.request)
        views.append(StageView(final=trace.keys, pool=trace.pool, legs=None, reranked=False, window=depth,
                               retrieval_bound=f"LIMIT {limit}" if limit is not None else None))
    return views, admissions


def _post_top(ctx: Any) -> PostTopCut:
    """The client threshold (a request-path reranker-score cut, resolved in code) and the context
    budget (the strictest declared one) that act after the top, where known."""
    from ragdiag.engine.declared import declared_values

    threshold = where = None
    scan = ctx.code_scan() if ctx.has("client_code") else None
    for t in getattr(scan, "thresholds", ()) if scan is not None else ():
        value = t.value.value if t.value.resolved else None
        if (t.site_class == "request" and t.measure == "reranker_score" and t.keeps == "above"
                and not t.reversed and isinstance(value, int | float) and not isinstance(value, bool)):
            if threshold is None or value > threshold:  # the strictest cut
                threshold, where = float(value), f"{t.file}:{t.line}"
    budget = declared_values(ctx).strictest("context_tokens")
    tokens_of = None
    if budget is not None and ctx.supports("get_document"):
        tokens_of = _token_counter(ctx)
    return PostTopCut(min_reranker_score=threshold, threshold_where=where,
                      budget_tokens=int(budget.value) if budget is not None and tokens_of is not None else None,
                      tokens_of=tokens_of)


def _token_counter(ctx: Any) -> Callable[[str], int]:
    from ragdiag.checks._context_tokens import content_fields, count_tokens

    fields = content_fields(ctx.target.schema())
    cache: dict[str, int] = {}

    def of(key: str) -> int:
        if key not in cache:
            try:
                doc = ctx.target.get_document(key, select=list(fields))
            except RagdiagError:
                doc = {}
            cache[key] = count_tokens("\n".join(str(doc.get(f) or "") for f in fields))
        return cache[key]

    return of
