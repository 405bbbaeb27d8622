"""Running an audit: open the target and inputs named by the config, run every check.

`AuditContext` is what a check receives: the target, the runner (shared cache),
the policy under audit, the goldset, the query log, identities, the client code
folder, and helpers that turn goldset cases into executed requests.
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.engine.probes import BASELINE, Probe
from ragdiag.engine.runner import Failure, Runner
from ragdiag.errors import ConfigError
from ragdiag.inputs.config import AuditConfig, load_config
from ragdiag.model import SearchRequest, Trace

EVAL_DEPTH = 50  # goldset questions are ranked this deep (recall@50), whatever the profile's top


@dataclass(frozen=True)
class GoldQuery:
    """One goldset case as the policy turns it into request(s)."""

    case: Any  # GoldCase
    intent: str
    profile: str
    requests: tuple[SearchRequest, ...]


@dataclass
class GoldRun:
    """Executed goldset queries of one policy (and probe): traces and their evaluation."""

    label: str
    queries: list[GoldQuery]
    results: list[Trace | Failure]
    _evaluation: Any = field(default=None, repr=False)

    def ranked(self) -> dict[str, list[str]]:
        return {q.case.id: list(r.keys) for q, r in zip(self.queries, self.results, strict=True)
                if isinstance(r, Trace)}

    @property
    def failures(self) -> list[Failure]:
        return [r for r in self.results if isinstance(r, Failure)]

    def traces(self) -> list[tuple[GoldQuery, Trace]]:
        return [(q, r) for q, r in zip(self.queries, self.results, strict=True) if isinstance(r, Trace)]

    def evaluation(self, goldset: Any, *, k: int = 10, recall_k: int = 50) -> Any:
        from ragdiag.metrics import evaluate

        if self._evaluation is None:
            ids = {q.case.id for q in self.queries}
            qrels = {cid: rel for cid, rel in goldset.qrels().items() if cid in ids}
            self._evaluation = evaluate(self.ranked(), qrels, k=k, recall_k=recall_k)
        return self._evaluation


class AuditContext:
    """Everything a check may use; built once per audit and shared by all checks."""

    def __init__(self, *, config: AuditConfig | None, target: Any, runner: Runner,
                 policy: Any = None, compare_policy: Any = None, goldset: Any = None,
                 query_log: Any = None, identities: dict[str, Any] | None = None,
                 client_code: Path | None = None, lang: str = "en",
                 entities: Callable[[str], Sequence[str]] | None = None,
                 log: Callable[[str], None] | None = None, budgets: dict[str, Any] | None = None) -> None:
        self.config = config
        self.target = target
        self.runner = runner
        self.policy = policy
        self.compare_policy = compare_policy
        self.goldset = goldset
        self.query_log = query_log
        self.identities = identities or {}
        self.client_code = client_code
        self.lang = lang
        self.entities = entities or (lambda q: ())
        self.log = log or (lambda m: None)
        self.budgets = budgets or {}
        self._gold_cache: dict[tuple[Any, ...], tuple[Any, GoldRun]] = {}
        self._built: dict[tuple[Any, ...], SearchRequest] = {}
        self._scan: Any = None

    # ---- inputs ------------------------------------------------------------------
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
            seen[key] = GoldCase(id=f"log-{i + 1:05d}", question=e.question, intent=e.route if e.route in INTENTS else "unknown",
                                 as_user=user)
        return list(seen.values())

    @property
    def question_source(self) -> str:
        if self.goldset is not None:
            return "goldset"
        return "query log" if self.query_log is not None else "none"

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
            req = self._build(prof, policy.security_field, case.question, ident)
            out.append(GoldQuery(case, intent, prof.name, probe.apply(req)))
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
            if len(self._built) > 50000:
                self._built.clear()
            self._built[key] = req
        return req

    def run_gold(self, policy: Any, *, profile: str | None = None, cases: Sequence[Any] | None = None,
                 probe: Probe = BASELINE, label: str | None = None) -> GoldRun:
        """Execute goldset cases under a policy (cached per policy, profile, probe and case set)."""
        # keyed by the policy object's id; the entry keeps the policy alive so the id stays unique
        key = (id(policy), profile, probe.key, None if cases is None else tuple(c.id for c in cases))
        hit = self._gold_cache.get(key)
        if hit is not None and hit[0] is policy:
            return hit[1]
        queries = self.gold_queries(policy, profile=profile, cases=cases, probe=probe)
        results = self.runner.run_fused([q.requests for q in queries], label=label or f"{policy.name}:{probe}")
        run = GoldRun(label or f"{policy.name}/{profile or 'routed'}/{probe}", queries, results)
        self._gold_cache[key] = (policy, run)
        return run


def open_target(config: AuditConfig, *, log: Callable[[str], None] | None = None, progress: bool = True) -> Any:
    """The target the config names (read-only)."""
    t = config.target
    if t.kind == "sample":
        from ragdiag.sample.system import open_sample_target

        return open_sample_target(t.variant, progress=progress, log=log)
    if t.kind == "local":
        from ragdiag.encoders import load_reranker
        from ragdiag.model.request.schema import IndexSchema
        from ragdiag.sample.system import cache_dir, sample_embedder
        from ragdiag.targets.local import LocalIndexSpec, LocalTarget

        schema = IndexSchema.load(t.schema)
        name = t.name or schema.name
        spec = LocalIndexSpec(name=name, schema=schema, vector_sources=t.vector_sources, now=t.now)
        emb = sample_embedder()
        return LocalTarget.from_jsonl(t.records, spec, index_dir=cache_dir() / "indexes" / name,
                                      embedder=emb, reranker=load_reranker(t.reranker, emb),
                                      progress=progress, log=log)
    if t.kind == "azure":
        from ragdiag.targets.azure import AzureTarget

        return AzureTarget.from_config(config)
    raise ConfigError(f"unknown target kind {t.kind!r}")


def entity_matcher(lexicon: Path | None) -> Callable[[str], Sequence[str]]:
    """Entity keys mentioned in a question, from a lexicon file {key: [name, alias, ...]}."""
    if lexicon is None or not Path(lexicon).exists():
        return lambda q: ()
    import json

    data = json.loads(Path(lexicon).read_text(encoding="utf-8"))
    names = sorted(((name.lower(), key) for key, names in data.items() for name in names),
                   key=lambda nk: -len(nk[0]))

    def match(question: str) -> Sequence[str]:
        ql = question.lower()
        found: list[str] = []
        for name, key in names:
            if name in ql and key not in found:
                found.append(key)
        return tuple(found)

    return match


def build_context(config: AuditConfig, *, log: Callable[[str], None] | None = None,
                  progress: bool = True, target: Any = None, cache_dir: Path | None = None) -> AuditContext:
    """Open the target and load every input the config names."""
    from ragdiag.policy.profile import Identity, load_policy
    from ragdiag.sample.system import cache_dir as default_cache

    target = target if target is not None else open_target(config, log=log, progress=progress)
    runner = Runner(target, cache_dir=(cache_dir or default_cache()) if config.cache else None,
                    budget=config.budget, concurrency=config.concurrency, progress=progress)
    policy = load_policy(config.profiles) if config.profiles else None
    compare = load_policy(config.compare_profiles) if config.compare_profiles else None
    goldset = None
    if config.goldset:
        from ragdiag.inputs.goldset import load_goldset, load_trec_qrels

        goldset = (load_trec_qrels(config.goldset) if config.goldset.suffix in ("", ".qrels", ".txt")
                   else load_goldset(config.goldset))
    query_log = None
    if config.query_log:
        from ragdiag.inputs.querylog import load_query_log

        query_log = load_query_log(config.query_log)
    identities = {name: Identity(name, tuple(groups)) for name, groups in config.identities.items()}
    return AuditContext(config=config, target=target, runner=runner, policy=policy, compare_policy=compare,
                        goldset=goldset, query_log=query_log, identities=identities,
                        client_code=config.client_code, lang=config.language,
                        entities=entity_matcher(config.entities),
                        log=log, budgets=dict(config.budgets))


def run_checks(ctx: AuditContext, *, checks: Sequence[str] | None = None,
               checklist_dir: Path | None = None, on_check: Callable[[str], None] | None = None) -> Any:
    """Run the registered checks (or the named subset) and collect an `AuditResult`."""
    from ragdiag.checks import resolve, run_check
    from ragdiag.inputs.checklist import default_checklist_dir, load_checklist
    from ragdiag.model.request.findings import AuditResult

    folder = checklist_dir or (ctx.config.checklist if ctx.config and ctx.config.checklist else None) \
        or default_checklist_dir()
    specs = load_checklist(folder)
    ids = list(checks) if checks else list(specs)
    unknown = [i for i in ids if i not in specs]
    if unknown:
        raise ConfigError(f"no check named {', '.join(unknown)}; available: {', '.join(specs)}")
    findings = []
    for cid in ids:
        if on_check:
            on_check(cid)
        spec = specs[cid]
        finding = run_check(resolve(spec), ctx, spec)
        findings.append(_with_texts(finding, spec, ctx.lang))
    meta = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ragdiag_version": __version__,
        "python": platform.python_version(),
        "config": ctx.config.describe() if ctx.config else {},
        "target": getattr(ctx.target, "name", ""),
        "policy": getattr(ctx.policy, "name", None),
        "runner": ctx.runner.stats.to_dict(),
        "target_stats": dict(getattr(ctx.target, "stats", {}) or {}),
    }
    if getattr(ctx.target, "unsent_parameters", None):
        meta["unsent_parameters"] = dict(ctx.target.unsent_parameters)
    return AuditResult(findings=tuple(findings), meta=meta)


def _with_texts(finding: Any, spec: Any, lang: str) -> Any:
    from dataclasses import replace

    return replace(finding, title=spec.text("title", lang), question=spec.text("question", lang))


def run_audit(config_path: str | Path | None = None, *, checks: Sequence[str] | None = None,
              log: Callable[[str], None] | None = None, progress: bool = True) -> Any:
    """Load the config (default: the embedded sample's), run the checks, return the AuditResult."""
    from ragdiag.sample.system import sample_dir

    path = Path(config_path) if config_path else sample_dir() / "audit.toml"
    config = load_config(path)
    ctx = build_context(config, log=log, progress=progress)
    return run_checks(ctx, checks=checks)
