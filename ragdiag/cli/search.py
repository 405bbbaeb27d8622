"""``ragdiag search``: one request on a config's target, every stage's score.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragdiag.cli._common import _config_target, _console


# ---- search ----------------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from ragdiag.errors import InputDataError
    from ragdiag.inputs.limits import loads_json_lined, read_text
    from ragdiag.model import SearchRequest

    path = Path(args.request)
    body = loads_json_lined(read_text(path, what="request file"), path=str(path), what="request file")
    try:
        request = SearchRequest.from_dict(body)
    except InputDataError as exc:  # the file and the line of the object holding the bad value
        raise InputDataError(str(exc), path=str(path), line=exc.line or 1) from None
    target = _config_target(args.config, args.variant, command="search")
    from ragdiag.errors import InputValidationError
    from ragdiag.inputs.validate import query_dimension, request_problems

    problems = request_problems(request, target.schema(), path=str(path),
                                query_dim=query_dimension(target) if request.vector_queries else None)
    if problems:  # refused before it is sent
        raise InputValidationError(problems)
    trace = target.search(request)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2, ensure_ascii=False))
        return 0
    vfields = sorted({f for h in trace.hits for f in h.vector_similarities})
    table = Table(title=escape(f"{target.name}: {len(trace.hits)} hits, pool {trace.pool_size}, "
                               f"reranked {trace.reranked}"))
    for col in ("#", "key", "@search.score", "reranker", "BM25 (rank)",
                *[f"{f} (rank)" for f in vfields], "fused rank", "boost"):
        table.add_column(escape(col), justify="left" if col == "key" else "right")
    for i, h in enumerate(trace.hits, 1):
        table.add_row(
            str(i), escape(h.key), f"{h.score:.5f}",
            "-" if h.reranker_score is None else f"{h.reranker_score:.2f}",
            "-" if h.text_rank is None else f"{h.text_score:.2f} ({h.text_rank})",
            *["-" if f not in h.vector_similarities else
              f"{h.vector_similarities[f]:.3f} ({h.vector_ranks[f]})" for f in vfields],
            "-" if h.fused_rank is None else str(h.fused_rank), f"{h.document_boost:.2f}")
    _console().print(table)
    if trace.partial_reason:
        _console().print(f"[yellow]semantic ranking did not run: {escape(str(trace.partial_reason))}[/yellow]")
    return 0
