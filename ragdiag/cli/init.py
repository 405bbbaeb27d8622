"""``ragdiag init``: a working audit folder from what you have.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragdiag.cli._common import _console, _log

# ---- init ------------------------------------------------------------------------
_INIT_ROUTES = {"beir": ("beir",), "trec": ("trec_docs", "trec_topics", "qrels"), "documents": ("documents",),
                "records": ("records",), "azure": ("azure_endpoint", "azure_index")}


def _init_route(args: argparse.Namespace) -> str:
    """The one route the options name (a partial or a second route is a usage error, exit 2)."""
    from ragdiag.errors import ConfigError

    given = [r for r, opts in _INIT_ROUTES.items() if any(getattr(args, o) for o in opts)]
    flags = {r: " ".join("--" + o.replace("_", "-") for o in opts) for r, opts in _INIT_ROUTES.items()}
    if len(given) != 1:
        found = "none" if not given else " and ".join(flags[r] for r in given)
        raise ConfigError("ragdiag init needs exactly one source: " + "; ".join(flags.values())
                          + f" (found {found})")
    route = given[0]
    missing = [o for o in _INIT_ROUTES[route] if not getattr(args, o)]
    if missing:
        raise ConfigError(f"{flags[route]} go together; missing: "
                          + ", ".join("--" + o.replace("_", "-") for o in missing))
    if args.schema and route != "records":
        raise ConfigError("--schema goes with --records (the definition of the exported index)")
    if (args.api_key_env or args.credential) and route != "azure":
        raise ConfigError("--api-key-env and --credential go with --azure-endpoint and --azure-index")
    if args.api_key_env and args.credential == "default":
        raise ConfigError("give either --api-key-env (a query key in that variable) or --credential default")
    if args.split and route != "beir":
        raise ConfigError("--split goes with --beir")
    return route


def cmd_init(args: argparse.Namespace) -> int:
    """Draft an audit folder from a collection, documents, an index export or a live index."""
    import time

    from ragdiag.init import init_folder

    route = _init_route(args)
    err = _console(stderr=True)
    started = time.perf_counter()

    def warn(msg: str) -> None:
        err.print(msg, markup=False, highlight=False, style="yellow", soft_wrap=True)

    options = {k: getattr(args, k) for k in ("beir", "split", "trec_docs", "trec_topics", "qrels", "documents",
                                            "records", "schema", "azure_endpoint", "azure_index", "api_key_env",
                                            "credential")}
    draft, written = init_folder(args.outdir, route, options, language=args.language, force=args.force,
                                 log=_log if not args.quiet else (lambda _m: None), warn=warn,
                                 embedding_model=args.embedding_model)
    con = _console()
    out = Path(args.outdir)
    con.print(f"audit folder written to {out} in {time.perf_counter() - started:.1f} s "
              f"(language {draft.language})", markup=False, highlight=False, soft_wrap=True)
    for path in written:
        con.print(f"  {path.name}", markup=False, highlight=False, soft_wrap=True)
    for note in draft.notes:
        con.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    con.print(f"next: edit what {out / 'README.md'} lists, then run: ragdiag audit {out / 'audit.toml'}",
              markup=False, highlight=False, soft_wrap=True)
    return 0
