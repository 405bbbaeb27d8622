"""``ragdiag sample build|querylog|ask``: the embedded sample system.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdiag.cli._common import _console, _log


# ---- sample ----------------------------------------------------------------------
def cmd_sample_build(args: argparse.Namespace) -> int:
    from ragdiag.sample.build import build_sample
    from ragdiag.sample.system import sample_dir

    out = Path(args.out) if args.out else sample_dir()
    summary = build_sample(out)
    _console().print(f"sample system written to {out}", markup=False)
    for k, v in summary.items():
        _console().print(f"  {k}: {v}")
    return 0


def cmd_sample_querylog(args: argparse.Namespace) -> int:
    """Regenerate the sample query logs by running each policy over the question mix."""
    import yaml

    from ragdiag.audit import entity_matcher
    from ragdiag.policy import Identity, load_policy
    from ragdiag.sample.querylog_sim import (
        SAMPLE_CASCADES,
        SAMPLE_INTENT_WEIGHTS,
        simulate,
        write_jsonl,
    )
    from ragdiag.sample.schema import SAMPLE_IDENTITIES
    from ragdiag.sample.system import open_sample_target, sample_dir

    base = sample_dir()
    target = open_sample_target("structured", log=_log)
    cases = yaml.safe_load((base / "goldset.yaml").read_text(encoding="utf-8"))
    identities = {u: Identity(u, tuple(g)) for u, g in SAMPLE_IDENTITIES.items()}
    for name, out, cascades in (("misconfigured", "query_log.jsonl", SAMPLE_CASCADES),
                                ("tuned", "query_log_tuned.jsonl", ())):
        policy = load_policy(base / "profiles" / f"{name}.toml")
        entries = simulate(target, policy, cases, identities, n=args.n, intent_weights=SAMPLE_INTENT_WEIGHTS,
                           cascades=cascades, entities=entity_matcher(base / "entities.json"))
        write_jsonl(entries, base / out)
        _console().print(f"{out}: {len(entries)} entries ({name} policy)")
    return 0


def cmd_sample_ask(args: argparse.Namespace) -> int:
    """Answer the sample goldset's questions through the local target (a readable summary)."""
    import yaml
    from rich.markup import escape
    from rich.table import Table

    from ragdiag.model import SearchRequest, VectorQuery
    from ragdiag.odata import search_in_any
    from ragdiag.sample.schema import SAMPLE_IDENTITIES
    from ragdiag.sample.system import open_sample_target, sample_dir

    target = open_sample_target(args.variant, log=_log)
    cases = yaml.safe_load((sample_dir() / "goldset.yaml").read_text(encoding="utf-8"))
    per_intent: dict[str, list[dict[str, Any]]] = {}
    for c in cases:
        per_intent.setdefault(c["intent"], []).append(c)
    chosen = [c for group in per_intent.values() for c in group[: args.per_intent]]
    con = _console()
    found = answerable = refused_ok = refusals = 0
    table = Table(title=f"Sample questions on {target.name} (hybrid, semantic reranking, top {args.top})")
    table.add_column("intent")
    table.add_column("question", max_width=48)
    table.add_column("as user")
    table.add_column("top hit", max_width=24)
    table.add_column("reranker", justify="right")
    table.add_column("verdict")
    for c in chosen:
        groups = SAMPLE_IDENTITIES[c["as_user"]]
        req = SearchRequest(
            search=c["question"], query_type="semantic", semantic_configuration="default",
            vector_queries=(VectorQuery(fields=("content_vector",), text=c["question"], k=50),),
            filter=f"level eq 'evidence' and {search_in_any('group_ids', groups)}",
            top=args.top, select=("title", "content", "page"))
        trace = target.search(req)
        best = trace.hits[0] if trace.hits else None
        score = best.reranker_score if best else None
        if c.get("expect") == "refused":
            refusals += 1
            ok = best is None or (score is not None and score < args.min_score)
            refused_ok += ok
            verdict = "refused (correct)" if ok else "answered: should refuse"
        else:
            answerable += 1
            expected = {s["key"] for s in c.get("expect_sources", [])}
            hit = bool(expected & set(trace.keys))
            found += hit
            verdict = f"source in top {args.top}" if hit else "source missed"
        table.add_row(*(escape(str(x)) for x in (c["intent"], c["question"], c["as_user"],
                                                 best.key if best else "-")),
                      f"{score:.2f}" if score is not None else "-", verdict)
    con.print(table)
    con.print(f"answerable questions with an expected source in the top {args.top}: "
              f"{found}/{answerable}; refusal cases below reranker score {args.min_score}: "
              f"{refused_ok}/{refusals}")
    return 0
