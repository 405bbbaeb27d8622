"""`ragdiag init OUTDIR`: a working audit folder from what a newcomer has.

Five routes, one module each: a BEIR folder (`beir`), TREC files (`trec`), a folder of
documents (`documents`, parsed by `parse`), an index export (`export`) and a live Azure
index (`azure`). Each fills a `Draft` (`draft`: the index definition, records, goldset or a
template, the policy from `profiles`, the language from `lang`); `writer` writes it and reads
every file back through the audit's own loaders. Then ``ragdiag audit OUTDIR/audit.toml`` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.init.draft import Draft
from ragdiag.init.writer import check_outdir, write_folder

ROUTES = ("beir", "trec", "documents", "records", "azure")

__all__ = ["ROUTES", "Draft", "draft_for", "init_folder", "write_folder"]


def _quiet(_: str) -> None:
    pass


def draft_for(route: str, options: dict[str, Any], *, language: str = "auto",
              log: Callable[[str], None] = _quiet, warn: Callable[[str], None] = _quiet) -> Draft:
    """Read the source of `route` (options as the CLI names them) into a Draft."""
    if route == "beir":
        from ragdiag.init.beir import beir_draft

        return beir_draft(options["beir"], language=language, split=options.get("split"), log=log, warn=warn)
    if route == "trec":
        from ragdiag.init.trec import trec_draft

        return trec_draft(options["trec_docs"], options["trec_topics"], options["qrels"], language=language,
                          log=log, warn=warn)
    if route == "documents":
        from ragdiag.init.documents import documents_draft

        return documents_draft(options["documents"], language=language, log=log, warn=warn)
    if route == "records":
        from ragdiag.init.export import records_draft

        return records_draft(options["records"], options.get("schema"), language=language, log=log, warn=warn)
    if route == "azure":
        from ragdiag.init.azure import azure_draft

        return azure_draft(options["azure_endpoint"], options["azure_index"], api_key_env=options.get("api_key_env"),
                           credential=options.get("credential"), language=language, log=log, warn=warn)
    raise ConfigError(f"no init route {route!r}; routes: {', '.join(ROUTES)}")


def init_folder(outdir: str | Path, route: str, options: dict[str, Any], *, language: str = "auto",
                force: bool = False, log: Callable[[str], None] = _quiet,
                warn: Callable[[str], None] = _quiet, embedding_model: str | None = None) -> tuple[Draft, list[Path]]:
    """Draft and write an audit folder; the folder is checked before anything is read. A local
    index gets the embedder of its language (`ragdiag.init.embedder`) unless `embedding_model`."""
    from ragdiag.init.embedder import apply_embedder

    check_outdir(Path(outdir), force)
    draft = draft_for(route, options, language=language, log=log, warn=warn)
    apply_embedder(draft, embedding_model, warn)
    return draft, write_folder(draft, outdir, force=force, log=log)
