"""Running an audit: open the target and inputs named by the config, run every check.

The orchestrator above the checks. What a check receives, `AuditContext`, lives below them
in `ragdiag.engine.context` (re-exported here for notebooks).
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.engine.context import EVAL_DEPTH, AuditContext, GoldQuery, GoldRun
from ragdiag.engine.runner import Runner
from ragdiag.errors import ConfigError
from ragdiag.inputs.config import AuditConfig, load_config
from ragdiag.inputs.entities import entity_matcher  # re-exported: it lived here before

__all__ = ["EVAL_DEPTH", "NONDETERMINISTIC_META", "Audit", "AuditContext", "GoldQuery", "GoldRun", "open_target",
           "build_context", "run_checks", "open_audit", "run_audit", "entity_matcher"]

#: The only parts of an audit's findings JSON that differ between two runs of the same audit
#: (same inputs, index and code) -- e.g. an interrupted audit resumed from the trace store and
#: an uninterrupted one: keys of ``meta``. ``date`` is the wall clock; ``runner`` counts how
#: requests were answered (sent, from memory, from the store, over budget); ``target_stats``
#: is a live target's own request and timing counters. Everything else, findings included, is
#: equal byte for byte.
NONDETERMINISTIC_META: tuple[str, ...] = ("date", "runner", "target_stats")

def open_target(config: AuditConfig, *, log: Callable[[str], None] | None = None, progress: bool = True) -> Any:
    """The target the config names (read-only), opened by its kind; None for a code-only audit."""
    if config.target is None:
        return None
    from ragdiag.targets.base import missing_members
    from ragdiag.targets.registry import get_kind

    target = get_kind(config.target.kind).open(config.target.options, config, log=log, progress=progress)
    missing = missing_members(target)
    if missing:
        raise ConfigError(f"target kind '{config.target.kind}' opened a target that lacks "
                          f"{', '.join(missing)} (see ragdiag.targets.base.Target)")
    return target


class Audit(AuditContext):
    """The context the orchestrator builds (`build_context`, `open_audit`): it runs its own
    checklist, ``audit.run()``. Checks receive it as an `AuditContext`."""

    def run(self, checks: Sequence[str] | None = None, **kwargs: Any) -> Any:
        """Run the checklist (or the named checks) and return the `AuditResult`."""
        return run_checks(self, checks=checks, **kwargs)


def build_context(config: AuditConfig, *, log: Callable[[str], None] | None = None,
                  progress: bool = True, target: Any = None, cache_dir: Path | None = None,
                  validate: bool = True, plan: bool = False) -> Audit:
    """Open the target and load every input the config names, checked against the target
    before any request (`ragdiag.inputs.validate`; `validate=False` skips that, for tests of
    what the checks do with broken inputs). `plan`: for ``--plan``, a kind's `plan_target`
    (when it has one) stands in for the target, so nothing is started (the embedded
    PostgreSQL), and no trace store is written."""
    from ragdiag.cache import cache_dir as default_cache
    from ragdiag.policy import Identity, load_policy

    if config.client_code is not None:  # an unreadable code folder is an input error, not an empty code base
        from ragdiag.codescan.tree import check_root

        check_root(config.client_code)
    policy = load_policy(config.profiles) if config.profiles else None
    compare = load_policy(config.compare_profiles) if config.compare_profiles else None
    goldset = None
    if config.goldset:
        from ragdiag.inputs.goldset import (
            QRELS_SUFFIXES,
            is_trec_qrels,
            load_goldset,
            load_trec_qrels,
        )

        if is_trec_qrels(config.goldset):
            if config.goldset_topics is None:
                # qrels hold judgments, not questions: an audit would search for empty strings
                raise ConfigError("a TREC qrels goldset holds no questions: set [inputs] topics to the "
                                  "TREC topics file (<top> blocks, 'qid<TAB>text' lines or BEIR's "
                                  "queries.jsonl)", path=str(config.path),
                                  line=_config_line(config, "goldset"), key="inputs.topics")
            goldset = load_trec_qrels(config.goldset, config.goldset_topics)
        else:
            if config.goldset_topics is not None:
                raise ConfigError("[inputs] topics only applies to a TREC qrels goldset "
                                  f"(a file ending in {', '.join(repr(s) for s in QRELS_SUFFIXES if s)} "
                                  "or without a suffix)", path=str(config.path),
                                  line=_config_line(config, "topics") or _config_line(config, "goldset_topics"),
                                  key="inputs.topics")
            goldset = load_goldset(config.goldset)
    answers = None
    if config.answers:
        from ragdiag.inputs.answers import load_answers

        answers = load_answers(config.answers)
    query_log = None
    if config.query_log:
        from ragdiag.inputs.querylog import load_query_log

        query_log = load_query_log(config.query_log)
    observed = None
    if config.traffic or config.traces:  # what the application really sent (ragdiag.observe)
        from ragdiag.observe import load_observed

        observed = load_observed(traffic=config.traffic, traces=config.traces)
    identities = {name: Identity(name, tuple(groups)) for name, groups in config.identities.items()}
    for case in goldset or ():
        if case.as_groups is not None:  # an inline identity (as_user: groups=[a, b])
            identities.setdefault(case.as_user, Identity(case.as_user, case.as_groups))
    # goldset names (a document, a section, a page) become chunk keys before anything is
    # checked: from the records file of a local index before it is built, else from the target
    resolved: dict[str, Any] = {"problems": [], "resolutions": [], "done": goldset is None}

    def resolve(view: Any, schema: Any) -> None:
        nonlocal goldset
        from ragdiag.inputs.judgements import needs_resolution, resolve_goldset

        resolved["done"] = True
        if goldset is None or not needs_resolution(goldset):
            return
        goldset, resolved["problems"], resolved["resolutions"] = resolve_goldset(
            goldset, view, _chunk_fields(config, schema))

    def check(schema: Any, query_dim: int | None, embed_dim: int | None = None) -> None:
        from ragdiag.errors import InputValidationError
        from ragdiag.inputs.validate import input_problems

        problems = [*resolved["problems"], *input_problems(
            config, schema=schema, policies=(policy, compare), goldset=goldset,
            identities=config.identities, query_dim=query_dim, embed_dim=embed_dim)]
        if problems:
            raise InputValidationError(problems)

    early = _schema_before_opening(config) if target is None else None
    if early is not None:  # a local index is built when opened: its inputs are checked first
        view = _records_before_opening(config, early) if not resolved["done"] else None
        if view is not None:
            resolve(view, early)
        if validate:
            dim = _embedder_dim_before_opening(config)  # the model is named, nothing is embedded
            check(early, dim if _has_vector_queries(policy, compare) else None, dim)
    if target is None and plan and config.target is not None:
        from ragdiag.targets.registry import get_kind

        planner = getattr(get_kind(config.target.kind), "plan_target", None)
        target = planner(config.target.options, config) if callable(planner) else None
    target = target if target is not None else open_target(config, log=log, progress=progress)
    if not resolved["done"] and target is not None:
        from ragdiag.inputs.judgements import TargetRecords
        from ragdiag.targets.base import has_capability

        if has_capability(target, "documents"):
            resolve(TargetRecords(target, target.schema().key_field.name), target.schema())
    if validate:
        from ragdiag.inputs.validate import query_dimension

        check(target.schema() if target is not None else None,
              query_dimension(target) if _has_vector_queries(policy, compare) else None)
    runner = Runner(target, cache_dir=(cache_dir or default_cache()) if config.cache and not plan else None,
                    budget=config.budget, concurrency=config.concurrency, progress=progress,
                    max_consecutive_failures=config.max_consecutive_failures)
    return Audit(config=config, target=target, runner=runner, policy=policy, compare_policy=compare,
                 goldset=goldset, query_log=query_log, identities=identities,
                 client_code=config.client_code, lang=config.language,
                 entities=entity_matcher(config.entities),
                 log=log, budgets=dict(config.budgets), answers=answers, observed=observed,
                 resolutions=tuple(resolved["resolutions"]))


def _chunk_fields(config: AuditConfig, schema: Any) -> Any:
    """The field roles (document, section, page, content) of `schema`, ``[target] fields`` first."""
    from ragdiag.chunks.fields import ChunkFields

    roles = config.target.options.get("fields") if config.target is not None else None
    try:
        return ChunkFields.from_schema(schema, roles=roles or None)
    except ConfigError:  # a role naming a missing field: reported with the other input problems
        return ChunkFields.from_schema(schema)


def _records_before_opening(config: AuditConfig, schema: Any) -> Any:
    """The records of a target whose kind can read them without opening the target
    (``peek_records(options)``: a local index's records file), as a record view; else None."""
    from ragdiag.targets.registry import get_kind

    peek = getattr(get_kind(config.target.kind), "peek_records", None) if config.target is not None else None
    if not callable(peek):
        return None
    from ragdiag.inputs.judgements import MemoryRecords

    return MemoryRecords(peek(config.target.options), schema.key_field.name)


def _embedder_dim_before_opening(config: AuditConfig) -> int | None:
    """The dimension of the embedder a target kind will use (``peek_embedding_dim(options)``),
    known before it embeds anything; None when the kind does not say."""
    from ragdiag.targets.registry import get_kind

    peek = getattr(get_kind(config.target.kind), "peek_embedding_dim", None) if config.target is not None else None
    return peek(config.target.options) if callable(peek) else None


def _schema_before_opening(config: AuditConfig) -> Any:
    """The index schema, when the target's kind can read it without opening the target
    (``peek_schema(options)``, e.g. a local target's schema file); else None."""
    if config.target is None:
        return None
    from ragdiag.targets.registry import get_kind

    peek = getattr(get_kind(config.target.kind), "peek_schema", None)
    return peek(config.target.options) if callable(peek) else None


def _config_line(config: AuditConfig, key: str) -> int | None:
    """Line of `key` in the config's [inputs] (None when the file cannot be read again)."""
    from ragdiag.inputs.tomlfile import TomlFile

    try:
        tf = TomlFile.load(config.path, what="audit config")
    except (ConfigError, OSError):
        return None
    return tf.locator.keys.get(("inputs",), {}).get(key)


def _has_vector_queries(*policies: Any) -> bool:
    return any(p.vector_queries for policy in policies if policy is not None for p in policy.profiles.values())


def run_checks(ctx: AuditContext, *, checks: Sequence[str] | None = None,
               checklist_dir: Path | None = None, on_check: Callable[[str], None] | None = None,
               stop_on_signals: bool = True) -> Any:
    """Run the registered checks (or the named subset) and collect an `AuditResult`.

    An audit that cannot finish still returns its result: when the runner's circuit breaker
    opens (the search service stopped answering, `ragdiag.engine.breaker`), nothing more is
    sent, the checks finish with what was measured and ``meta["circuit_breaker"]`` says why.
    With `stop_on_signals` (in the main thread), SIGINT and SIGTERM stop sending the same
    way: the check that is running finishes with what it measured, the checks not yet
    started are ``error`` ("not run"), and ``meta["interrupted"]`` names the signal and the
    process exit code it stands for (130, 143). A second signal stops the running check too.
    """
    from ragdiag.checks import resolve, run_check
    from ragdiag.inputs.checklist import default_checklist_dir, load_checklist
    from ragdiag.model.findings import AuditResult, Finding

    folder = checklist_dir or (ctx.config.checklist if ctx.config and ctx.config.checklist else None) \
        or default_checklist_dir()
    specs = load_checklist(folder)
    ids = list(checks) if checks else list(specs)
    unknown = [i for i in ids if i not in specs]
    if unknown:
        raise ConfigError(f"no check named {', '.join(unknown)}; available: {', '.join(specs)}")
    breaker = getattr(ctx.runner, "breaker", None)
    if breaker is not None:
        breaker.reset()  # a new run gets a new chance (e.g. a notebook re-run after an outage)
        if breaker.on_open is None and ctx.log is not None:
            breaker.on_open = ctx.log
    anonymous, logged, users = ctx.anonymous_log_questions()
    if anonymous and ctx.log is not None:
        shown = ", ".join(users[:5]) + (f" and {len(users) - 5} more" if len(users) > 5 else "")
        ctx.log(f"warning: {anonymous} of {logged} logged questions come from users not in [identities] "
                f"({shown}): they are searched without an identity clause, so measured pools and hits are "
                "an unrestricted user's; add the users and their groups to [identities]")
    ctx.prepare()  # once per context: one batched embedding call for the audit's query texts
    findings = []
    with _StopOnSignals(breaker, enabled=stop_on_signals) as stop:
        if _measures(ctx, ids, checks):
            # measured before the checks judge: every profile element ablated, every expected
            # source followed through the stages (shared by the owner checks, the report, the JSON)
            # (`on_check` is called with "ablation" and "loss_funnel" too: the plan counts their requests)
            for name, compute in (("ablation", ctx.ablation), ("loss_funnel", ctx.loss_funnel)):
                if stop.hard:
                    break
                stop.current = name
                if on_check:
                    on_check(name)
                compute()
                if stop.signal is not None:
                    stop.hard = True  # interrupted while measuring: no check is started
        for cid in ids:
            spec = specs[cid]
            if stop.hard:
                findings.append(_with_texts(Finding.errored(
                    cid, f"not run: the audit was interrupted by {stop.signal}"), spec, ctx.lang))
                stop.not_run.append(cid)
                continue
            stop.current = cid
            if on_check:
                on_check(cid)
            stop.in_check = True
            try:
                finding = run_check(resolve(spec), ctx, spec)
            except KeyboardInterrupt:
                if stop.signal is None:
                    raise  # not one of ours (no handler installed): the caller's to handle
                finding = Finding.errored(cid, f"interrupted by {stop.signal} while running")
            finally:
                stop.in_check = False
            findings.append(_with_texts(finding, spec, ctx.lang))
            if stop.signal is not None:
                stop.hard = True  # the running check finished: the rest are not started
    meta = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ragdiag_version": __version__,
        "python": platform.python_version(),
        "config": ctx.config.describe() if ctx.config else {},
        "target": ctx.target.name if ctx.target is not None else "",
        "policy": getattr(ctx.policy, "name", None),
        "runner": ctx.runner.stats.to_dict(),
        "target_stats": dict(ctx.target.stats or {}) if ctx.supports("stats") else {},
    }
    if getattr(ctx, "observed", None) is not None:  # what the observed verdicts rest on
        meta["observed"] = ctx.observed.summary()
    if ctx.config is not None and ctx.config.init:  # what `ragdiag init` skipped, never refused
        meta["init"] = dict(ctx.config.init)
    from ragdiag.inputs.fingerprint import fingerprint

    # what the figures depend on (inputs, package versions, models), for `ragdiag diff`
    meta["fingerprint"] = fingerprint(ctx.config, ctx.target, checklist_dir=Path(folder))
    if anonymous:
        meta["anonymous_log_questions"] = {"questions": anonymous, "logged_questions": logged,
                                           "users": users[:50]}
    if ctx.supports("description"):  # what was audited: the kind and, for a database, its version string
        meta["target_info"] = ctx.target.describe()
    if ctx.supports("text_analysis") and callable(ctx.target.text_analysis):
        meta["text_analysis"] = ctx.target.text_analysis()  # what the local keyword leg imitates, per field
    if ctx.supports("embedding_model") and ctx.target.embedding_model:
        meta["embedding_model"] = ctx.target.embedding_model
    if ctx.supports("unsent_parameters") and ctx.target.unsent_parameters:
        meta["unsent_parameters"] = dict(ctx.target.unsent_parameters)
    if breaker is not None and breaker.kind == "circuit_open":
        meta["circuit_breaker"] = breaker.to_dict()
    if stop.signal is not None:
        meta["interrupted"] = {"signal": stop.signal, "exit_code": 128 + stop.signum,
                               "during": stop.during, "not_run": list(stop.not_run)}
    measured = getattr(ctx, "measurements_done", False)
    return AuditResult(findings=tuple(findings), meta=meta,
                       loss_funnel=ctx.loss_funnel().to_dict() if measured else None,
                       ablation=ctx.ablation().to_dict() if measured else None)


#: the checks whose verdicts read the ablation or the funnel (their owners)
MEASURING_CHECKS: tuple[str, ...] = ("reranker_scores", "pool_size", "prerank_filters", "shared_query_text",
                                     "route_counts", "context_budgets")


def _measures(ctx: AuditContext, ids: Sequence[str], checks: Sequence[str] | None) -> bool:
    """Whether this run measures the funnel and the ablation: the whole checklist, or a subset
    holding one of their owners (a run of chunk_boundaries alone does not pay for them)."""
    if not getattr(ctx, "measure", False) or not callable(getattr(ctx, "ablation", None)):
        return False
    return checks is None or any(cid in MEASURING_CHECKS for cid in ids)


class _StopOnSignals:
    """SIGINT/SIGTERM handlers for one `run_checks` call (main thread only): the first signal
    trips the runner's breaker (nothing more is sent) and lets the running check finish; a
    second raises KeyboardInterrupt in it. The previous handlers come back afterwards."""

    SIGNALS = ("SIGINT", "SIGTERM")

    def __init__(self, breaker: Any, *, enabled: bool) -> None:
        self.breaker = breaker
        self.enabled = enabled
        self.signal: str | None = None
        self.signum = 0
        self.during: str | None = None
        self.hard = False
        self.not_run: list[str] = []
        self._previous: dict[int, Any] = {}
        self.current: str | None = None
        self.in_check = False

    def __enter__(self) -> _StopOnSignals:
        import signal
        import threading

        if not self.enabled or threading.current_thread() is not threading.main_thread():
            return self
        for name in self.SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except (ValueError, OSError):  # not allowed here (an embedded interpreter)
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal

        for signum, previous in self._previous.items():
            try:
                signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
            except (ValueError, OSError):
                pass

    def _handle(self, signum: int, frame: Any) -> None:
        import os
        import signal

        name = signal.Signals(signum).name
        if self.signal is not None:
            self.hard = True
            if self.in_check:
                raise KeyboardInterrupt(name)  # the second signal: stop the running check now
            return
        self.signal, self.signum, self.during = name, signum, self.current
        if self.breaker is not None:
            self.breaker.trip(f"the audit was interrupted by {name}")
        try:  # os.write: a print could re-enter a stream the interrupted code is writing
            os.write(2, f"ragdiag: {name}: no more requests are sent; the running check finishes "
                        "with what it measured and the findings are written (signal again to stop "
                        "it now)\n".encode())
        except OSError:
            pass


def _with_texts(finding: Any, spec: Any, lang: str) -> Any:
    from dataclasses import replace

    return replace(finding, title=spec.text("title", lang), question=spec.text("question", lang))


def open_audit(config_path: str | Path | None = None, *, log: Callable[[str], None] | None = None,
               progress: bool = True) -> Audit:
    """Load the config (default: the embedded sample's) and open its target and inputs.

    The returned context runs the checklist with ``.run()`` and feeds the tuner.
    """
    from ragdiag.sample.system import sample_dir

    path = Path(config_path) if config_path else sample_dir() / "audit.toml"
    return build_context(load_config(path), log=log, progress=progress)


def run_audit(config_path: str | Path | None = None, *, checks: Sequence[str] | None = None,
              log: Callable[[str], None] | None = None, progress: bool = True) -> Any:
    """Load the config (default: the embedded sample's), run the checks, return the AuditResult."""
    return run_checks(open_audit(config_path, log=log, progress=progress), checks=checks)
