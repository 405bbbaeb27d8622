"""What a check receives: the target, the runner, the inputs, and goldset execution.

`AuditContext` sits below the checks and the orchestrator (it imports neither; the context the
orchestrator builds, `ragdiag.audit.Audit`, adds `run()`):
it holds the opened target (or None for a code-only audit), the shared runner, the policy,
goldset, query log, identities and client code, says which inputs are present (`has`), and
turns goldset cases into executed requests (`run_gold`).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.engine.gold import GoldQuery, GoldRun
from ragdiag.engine.probes import BASELINE, Probe
from ragdiag.engine.runner import Runner
from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.model import SearchRequest

if TYPE_CHECKING:
    from ragdiag.inputs.config import AuditConfig

EVAL_DEPTH = 50  # goldset questions are ranked this deep (recall@50), whatever the profile's top
#: goldset runs the context holds by strong reference, the most recently asked for; an older run
#: is still found while a check holds it and is otherwise run again from the runner's memory and
#: trace store (same traces, same ranking). Unbounded, a 2,000-question audit kept 25 runs and
#: their 28,000 traces to its end (benchmarks/README.md, "Speed, wave 6").
GOLD_RUNS_KEPT = 4
#: built requests memoised, the most recently used (a request and its vector queries are ~2 KB
#: of Python objects; the memo held up to 50,000 before it was cleared whole)
BUILT_REQUESTS_KEPT = 16384


def with_query_vector(request: SearchRequest, vector: Sequence[float]) -> SearchRequest:
    """`request` with every text vector query sent as the client's own vector (`kind: "vector"`):
    the goldset's `query_vector`, for indexes without an integrated vectorizer or whose record
    vectors come from a model ragdiag does not run."""
    if not any(vq.text is not None for vq in request.vector_queries):
        return request
    vqs = tuple(dataclasses.replace(vq, text=None, vector=tuple(vector)) if vq.text is not None else vq
                for vq in request.vector_queries)
    return request.replace(vector_queries=vqs)


def with_case_vector(case: Any, requests: tuple[SearchRequest, ...]) -> tuple[SearchRequest, ...]:
    """A case's requests with its goldset `query_vector` (if any) in place of query text."""
    vector = getattr(case, "query_vector", None)
    if vector is None:
        return requests
    return tuple(with_query_vector(r, vector) for r in requests)


class AuditContext:
    """Everything a check may use; built once per audit and shared by all checks."""

    def __init__(self, *, config: AuditConfig | None, target: Any, runner: Runner,
                 policy: Any = None, compare_policy: Any = None, goldset: Any = None,
                 query_log: Any = None, identities: dict[str, Any] | None = None,
                 client_code: Path | None = None, lang: str = "en",
                 entities: Callable[[str], Sequence[str]] | None = None,
                 log: Callable[[str], None] | None = None, budgets: dict[str, Any] | None = None,
                 answers: Any = None, observed: Any = None, resolutions: Sequence[Any] = ()) -> None:
        self.config = config
        self.target = target
        self.runner = runner
        self.policy = policy
        self.compare_policy = compare_policy
        self.goldset = goldset
        self.query_log = query_log
        self.answers = answers  # the client's answers to the goldset (ragdiag.inputs.answers), or None
        self.observed = observed  # recorded traffic, traces, statements (ragdiag.observe.Observed), or None
        #: what each goldset name (a document, a section, a page) resolved to (inputs.judgements)
        self.resolutions = tuple(resolutions)
        self.identities = identities or {}
        self.client_code = client_code
        self.lang = lang
        self.entities = entities or (lambda q: ())
        self.log = log or (lambda m: None)
        self.budgets = budgets or {}
        # the last GOLD_RUNS_KEPT runs held; every run still alive found through _gold_alive
        self._gold_cache: OrderedDict[tuple[Any, ...], tuple[Any, GoldRun]] = OrderedDict()
        self._gold_alive: dict[tuple[Any, ...], tuple[Any, weakref.ReferenceType[GoldRun]]] = {}
        self._built: OrderedDict[tuple[Any, ...], SearchRequest] = OrderedDict()
        self._scan: Any = None
        self.code_scan_reads = 0  # how often a check asked for the scan (`Check.run` notes unreadable code)
        self._prepared = False
        #: measure the loss funnel and the ablation (`loss_funnel`, `ablation`); off only for
        #: benchmarks of the audit without them
        self.measure = True
        self._funnel: Any = None
        self._ablation: Any = None

    def __repr__(self) -> str:
        name = getattr(self.target, "name", None) or "no target (code-only)"
        return (f"<AuditContext {name}; policy {getattr(self.policy, 'name', None)}; "
                f"{len(self.question_cases()) if (self.goldset or self.query_log) else 0} questions>")

    # ---- inputs ------------------------------------------------------------------
    def has(self, name: str) -> bool:
        """Whether the audit has the input `name` (see `ragdiag.checks.base.INPUTS`)."""
        if name == "target":
            return self.target is not None
        if name == "profiles":
            return self.policy is not None
        if name == "questions":
            return self.goldset is not None or self.query_log is not None
        if name == "goldset":
            return self.goldset is not None
        if name == "query_log":
            return self.query_log is not None
        if name == "identities":
            return bool(self.identities)
        if name == "client_code":
            return self.client_code is not None and Path(self.client_code).exists()
        if name == "traffic":  # observed search requests (ragdiag record, Postgres statement logs)
            return self.observed is not None and self.observed.has_traffic
        if name == "traces":  # observed spans (OpenTelemetry / OpenInference)
            return self.observed is not None and self.observed.has_traces
        raise ValueError(f"unknown audit input {name!r}")

    def supports(self, capability: str) -> bool:
        """Whether the target declares `capability` (see `ragdiag.targets.base`)."""
        from ragdiag.targets.base import has_capability

        return has_capability(self.target, capability)

    def identity(self, name: str | None) -> Any:
        if not name:
            return None
        ident = self.identities.get(name)
        if ident is None:
            raise ConfigError(f"goldset identity '{name}' is not defined in [identities]; known: "
                              f"{', '.join(sorted(self.identities)) or 'none'}")
        return ident

    def code_scan(self) -> Any:
        """The client-code scan, computed once (None when no code folder is configured)."""
        if self._scan is None and self.client_code is not None:
            from ragdiag.codescan import scan_path

            self._scan = scan_path(self.client_code)
        self.code_scan_reads += 1
        return self._scan

    # ---- the question set ----------------------------------------------------------
    def question_cases(self) -> list[Any]:
        """Questions for runtime checks: the goldset's cases, else the query log's distinct
        questions (with the logged user and route), else none."""
        if self.goldset is not None:
            return list(self.goldset)
        if self.query_log is None:
            return []
        from ragdiag.inputs.goldset import GoldCase
        from ragdiag.policy.routing import INTENTS

        seen: dict[str, Any] = {}
        for i, e in enumerate(self.query_log.entries):
            key = " ".join(e.question.lower().split())
            if key in seen:
                continue
            user = e.user if e.user in self.identities else None
            # a logged user without [identities] entry is searched without an identity clause:
            # see `anonymous_log_questions` (the audit says so; pools are an unrestricted user's)
            seen[key] = GoldCase(id=f"log-{i + 1:05d}", question=e.question, intent=e.route if e.route in INTENTS else "unknown",
                                 as_user=user)
        return list(seen.values())

    def anonymous_log_questions(self) -> tuple[int, int, list[str]]:
        """(questions searched without an identity because their logged user is not in
        [identities], all logged questions, those users): 0 when a goldset supplies the questions."""
        if self.goldset is not None or self.query_log is None:
            return 0, 0, []
        cases = self.question_cases()
        logged = {" ".join(e.question.lower().split()): e.user for e in self.query_log.entries}
        users = sorted({u for u in logged.values() if u and u not in self.identities})
        anonymous = sum(1 for c in cases if c.as_user is None and logged.get(" ".join(c.question.lower().split())))
        return anonymous, len(cases), users

    @property
    def question_source(self) -> str:
        if self.goldset is not None:
            return "goldset"
        return "query log" if self.query_log is not None else "none"

    # ---- preparing the target -------------------------------------------------------
    def plan_requests(self) -> list[SearchRequest]:
        """Every question through every profile of the policy and the comparison policy: the
        requests most of the runtime checks send (route_counts sends all of them)."""
        out: list[SearchRequest] = []
        if self.target is None or not self.has("questions"):
            return out
        cases = self.question_cases()
        for policy in (self.policy, self.compare_policy):
            if policy is None:
                continue
            for name in policy.profiles:
                try:
                    queries = self.gold_queries(policy, profile=name, cases=cases)
                except RagdiagError:
                    continue  # e.g. an unknown identity: the checks report it
                out.extend(r for q in queries for r in q.requests)
        return out

    def prepare(self) -> None:
        """Before the checks: let the target prepare the audit's requests at once (the local
        target embeds all their query texts in one batched call). Optional for targets."""
        if self._prepared:
            return
        self._prepared = True
        if self.supports("prepare"):
            self.runner.prepare(self.plan_requests())

    # ---- measurements shared by the checks ------------------------------------------
    def ablation(self) -> Any:
        """Every profile element neutralised on the goldset (`ragdiag.engine.ablation`), computed
        once per audit; skipped with the reason without a target, profiles or goldset."""
        if self._ablation is None:
            from ragdiag.engine.ablation import measure_ablation, skipped_ablation

            if not self.measure:
                self._ablation = skipped_ablation("measurement switched off for this run")
            else:
                base = self.run_gold(self.policy, label="baseline") if self._measurable() else None
                self._ablation = measure_ablation(self, base_run=base)
        return self._ablation

    def loss_funnel(self) -> Any:
        """Where every expected source of the goldset went (`ragdiag.engine.funnel`), computed once
        per audit (after the ablation, whose what-ifs it reuses)."""
        if self._funnel is None:
            from ragdiag.engine.funnel import measure_funnel, skipped_funnel

            if not self.measure:
                self._funnel = skipped_funnel("measurement switched off for this run")
            else:
                base = self.run_gold(self.policy, label="baseline") if self._measurable() else None
                self._funnel = measure_funnel(self, run=base)
        return self._funnel

    @property
    def measurements_done(self) -> bool:
        return self._funnel is not None or self._ablation is not None

    def _measurable(self) -> bool:
        return self.target is not None and self.policy is not None and self.goldset is not None

    # ---- goldset execution -----------------------------------------------------
    def gold_queries(self, policy: Any, *, profile: str | None = None, cases: Sequence[Any] | None = None,
                     probe: Probe = BASELINE) -> list[GoldQuery]:
        """Requests for goldset cases: routed by the case's intent, or all through `profile`."""
        out = []
        for case in cases if cases is not None else self.question_cases():
            ident = self.identity(case.as_user)
            intent = case.intent
            if profile is not None:
                prof = policy.profiles[profile]
            else:
                known = intent if intent and intent != "unknown" else None
                route = policy.route(case.question) if known is None else policy.route_intent(known)
                prof, intent = route.profile, route.intent
            reqs = with_case_vector(case, probe.apply(self._build(prof, policy.security_field,
                                                                  case.question, ident)))
            out.append(GoldQuery(case, intent, prof.name, reqs))
        return out

    def _build(self, profile: Any, security_field: str, question: str, identity: Any) -> SearchRequest:
        """A profile's request for a goldset question, memoised: what-ifs change one profile and
        rebuild every question, so the unchanged profiles answer from here."""
        key = (profile, security_field, question, identity)
        req = self._built.get(key)
        if req is None:
            req = profile.build(question, identity, security_field=security_field,
                                entities=self.entities(question))
            # rank at least EVAL_DEPTH deep so recall@50 is measurable; users still see `top`
            req = req.replace(top=max(req.top, EVAL_DEPTH))
            self._built[key] = req
            if len(self._built) > BUILT_REQUESTS_KEPT:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(key)
        return req

    def run_gold(self, policy: Any, *, profile: str | None = None, cases: Sequence[Any] | None = None,
                 probe: Probe = BASELINE, label: str | None = None) -> GoldRun:
        """Execute goldset cases under a policy (cached per policy, profile, probe and case set)."""
        # keyed by the policy object's id; the entry keeps the policy alive so the id stays unique
        # a case set is keyed by what the search depends on, not by ids alone: two goldsets can
        # share ids (a draft and the real set) and must not share rankings
        key = (id(policy), profile, probe.key, None if cases is None else tuple(_case_key(c) for c in cases))
        hit = self._gold_cache.get(key)
        if hit is not None and hit[0] is policy:
            self._gold_cache.move_to_end(key)
            return hit[1]
        alive = self._gold_alive.get(key)
        run = alive[1]() if alive is not None and alive[0] is policy else None
        if run is None:
            queries = self.gold_queries(policy, profile=profile, cases=cases, probe=probe)
            results = self.runner.run_fused([q.requests for q in queries], label=label or f"{policy.name}:{probe}")
            run = GoldRun(label or f"{policy.name}/{profile or 'routed'}/{probe}", queries, results)
            # the policy is held with the entry, so its id in the key stays its own
            self._gold_alive[key] = (policy, weakref.ref(run))
        self._gold_cache[key] = (policy, run)
        while len(self._gold_cache) > GOLD_RUNS_KEPT:
            self._gold_cache.popitem(last=False)
        return run

    def forget_gold_runs(self) -> None:
        """Forget every memoised goldset run (the runner's traces stay)."""
        self._gold_cache.clear()
        self._gold_alive.clear()


def _case_key(case: Any) -> tuple[Any, ...]:
    """What a goldset case's search depends on: its question, route, identity and vector."""
    return (case.id, case.question, case.intent, case.as_user, getattr(case, "as_groups", None),
            getattr(case, "query_vector", None))
