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

__all__ = ["EVAL_DEPTH", "NONDETERMINISTIC_META", "AuditContext", "GoldQuery", "GoldRun", "open_target",
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
    from ragdiag.model.findings import AuditResult

    folder = checklist_dir or (ctx.config.checklist if ctx.config and ctx.config.checklist else None) \
        or default_checklist_dir()
    specs = load_checklist(folder)
    ids = list(checks) if checks else list(specs)
    unknown = [i for i in ids if i not in specs]
    if unknown:
        raise ConfigError(f"no check named {', '.join(unknown)}; available: {', '.join(specs)}")
    ctx.prepare()  # once per context: one batched embedding call for the audit's query texts
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


def open_audit(config_path: str | Path | None = None, *, log: Callable[[str], None] | None = None,
               progress: bool = True) -> AuditContext:
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
