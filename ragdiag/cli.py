"""The command line: thin subcommands over the library, heavy imports only when they run.

Errors go to stderr with exit code 2 (bad input) or 1 (anything else).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _log(msg: str) -> None:
    _console(stderr=True).print(f"[dim]{msg}[/dim]")


# ---- sample ----------------------------------------------------------------------
def cmd_sample_build(args: argparse.Namespace) -> int:
    from ragdiag.sample.build import build_sample
    from ragdiag.sample_system import sample_dir

    out = Path(args.out) if args.out else sample_dir()
    summary = build_sample(out)
    _console().print(f"sample system written to {out}")
    for k, v in summary.items():
        _console().print(f"  {k}: {v}")
    return 0


def cmd_sample_ask(args: argparse.Namespace) -> int:
    """Answer the sample goldset's questions through the local target (a readable summary)."""
    import yaml
    from rich.table import Table

    from ragdiag.model import SearchRequest, VectorQuery
    from ragdiag.odata import search_in_any
    from ragdiag.sample.schema import SAMPLE_IDENTITIES
    from ragdiag.sample_system import open_sample_target, sample_dir

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
        table.add_row(c["intent"], c["question"], c["as_user"],
                      best.key if best else "-", f"{score:.2f}" if score is not None else "-", verdict)
    con.print(table)
    con.print(f"answerable questions with an expected source in the top {args.top}: "
              f"{found}/{answerable}; refusal cases below reranker score {args.min_score}: "
              f"{refused_ok}/{refusals}")
    return 0


# ---- search ----------------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ragdiag.errors import InputDataError
    from ragdiag.model import SearchRequest
    from ragdiag.sample_system import open_sample_target

    path = Path(args.request)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputDataError("request file not found", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputDataError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc
    request = SearchRequest.from_dict(body)
    target = open_sample_target(args.variant, log=_log)
    trace = target.search(request)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2, ensure_ascii=False))
        return 0
    vfields = sorted({f for h in trace.hits for f in h.vector_similarities})
    table = Table(title=f"{target.name}: {len(trace.hits)} hits, pool {trace.pool_size}, "
                        f"reranked {trace.reranked}")
    for col in ("#", "key", "@search.score", "reranker", "BM25 (rank)",
                *[f"{f} (rank)" for f in vfields], "fused rank", "boost"):
        table.add_column(col, justify="left" if col == "key" else "right")
    for i, h in enumerate(trace.hits, 1):
        table.add_row(
            str(i), h.key, f"{h.score:.5f}",
            "-" if h.reranker_score is None else f"{h.reranker_score:.2f}",
            "-" if h.text_rank is None else f"{h.text_score:.2f} ({h.text_rank})",
            *["-" if f not in h.vector_similarities else
              f"{h.vector_similarities[f]:.3f} ({h.vector_ranks[f]})" for f in vfields],
            "-" if h.fused_rank is None else str(h.fused_rank), f"{h.document_boost:.2f}")
    _console().print(table)
    if trace.partial_reason:
        _console().print(f"[yellow]semantic ranking did not run: {trace.partial_reason}[/yellow]")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragdiag", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"ragdiag {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sample = sub.add_parser("sample", help="the embedded sample system")
    ssub = sample.add_subparsers(dest="sample_command", required=True)
    b = ssub.add_parser("build", help="regenerate sample_data/ deterministically")
    b.add_argument("--out", help="output folder (default: sample_data/)")
    b.set_defaults(func=cmd_sample_build)
    a = ssub.add_parser("ask", help="answer the sample questions through the local target")
    a.add_argument("--variant", default="structured", choices=("structured", "naive"))
    a.add_argument("--per-intent", type=int, default=3, help="questions per intent (default 3)")
    a.add_argument("--top", type=int, default=5)
    a.add_argument("--min-score", type=float, default=1.5,
                   help="reranker score below which a question counts as refused")
    a.set_defaults(func=cmd_sample_ask)

    s = sub.add_parser("search", help="run one request (Azure REST body, JSON) on the sample index")
    s.add_argument("--request", required=True, help="JSON file: a search request body")
    s.add_argument("--variant", default="structured", choices=("structured", "naive"))
    s.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    s.set_defaults(func=cmd_search)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RagdiagError as exc:
        print(f"ragdiag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragdiag: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
