"""Target kind ``pgvector``: the client's retrieval SQL on PostgreSQL + pgvector, read-only.

``dsn_env`` names the environment variable holding the DSN (never the DSN itself); ``embedded
= "sample"`` instead starts ragdiag's own embedded server (data under the cache dir) with the
Muster AG corpus loaded, for the sample and the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.targets.registry import OptionReader

EMBEDDED = ("sample",)
DEFAULT_TIMEOUT_MS = 10000


class PgvectorKind:
    name = "pgvector"
    keys = ("dsn_env", "embedded", "table", "key", "content", "embedding", "groups", "valid_from", "valid_to",
            "metadata", "sql", "statement_timeout_ms", "now", "name", "limit", "rerank_depth")

    def validate(self, options: OptionReader) -> dict[str, Any]:
        for secret in ("dsn", "password", "url", "uri"):
            if options.has(secret):
                raise options.error("never write a DSN or password into the config: name the environment "
                                    "variable that holds it with dsn_env = \"RAG_DATABASE_URL\"", secret)
        embedded = options.string("embedded", choices=EMBEDDED)
        dsn_env = options.string("dsn_env")
        if (embedded is None) == (dsn_env is None):
            raise options.error("give exactly one of dsn_env (the environment variable with the client's DSN) "
                                "or embedded = \"sample\" (ragdiag's own server with the sample corpus)",
                                "dsn_env")
        meta = options.table.get("metadata", [])
        if not isinstance(meta, list) or not all(isinstance(x, str) and x for x in meta):
            raise options.error("'metadata' must be a list of column names", "metadata")
        out: dict[str, Any] = {"embedded": embedded, "dsn_env": dsn_env, "metadata": tuple(meta),
                               "sql": options.path("sql", required=True), "now": options.string("now"),
                               "name": options.string("name")}
        for key in ("table", "key", "content", "embedding"):
            out[key] = options.string(key, required=True)
        for key in ("groups", "valid_from", "valid_to"):
            out[key] = options.string(key)
        for key, default in (("statement_timeout_ms", DEFAULT_TIMEOUT_MS), ("limit", 30)):
            v = options.table.get(key, default)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise options.error(f"'{key}' must be a positive integer, got {v!r}", key)
            out[key] = v
        depth = options.table.get("rerank_depth")
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
            raise options.error(f"'rerank_depth' (how many candidates the client's reranker reads) must be a "
                                f"positive integer, got {depth!r}", "rerank_depth")
        out["rerank_depth"] = depth
        from ragdiag.errors import ConfigError
        from ragdiag.targets.pgvector.mapping import TableMapping
        from ragdiag.targets.pgvector.sqltemplate import SqlTemplate

        try:
            out["mapping"] = TableMapping(out["table"], out["key"], out["content"], out["embedding"],
                                          out["groups"], out["valid_from"], out["valid_to"], out["metadata"])
            from ragdiag.inputs.limits import read_text

            out["template"] = SqlTemplate(read_text(out["sql"], what="SQL template", error=ConfigError))
        except ConfigError as exc:
            raise options.error(f"{exc} ({out['sql'].name})", "sql") from None
        return out

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        from ragdiag.encoders.shared import shared_embedder
        from ragdiag.targets.pgvector.connection import ReadOnlyConnection
        from ragdiag.targets.pgvector.target import PgvectorTarget

        timeout = options["statement_timeout_ms"]
        if options.get("embedded"):
            from ragdiag.sample.pgvector import open_sample_database

            conn = ReadOnlyConnection(open_sample_database(log=log, progress=progress).uri, timeout_ms=timeout,
                                      source="the embedded sample server")
        else:
            conn = ReadOnlyConnection.from_env(options["dsn_env"], timeout_ms=timeout)
        return PgvectorTarget(conn, options["mapping"], options["template"], embedder=shared_embedder(),
                              name=options.get("name"), now=options.get("now"), default_limit=options["limit"],
                              rerank_depth=options.get("rerank_depth"))

    def plan_target(self, options: Mapping[str, Any], config: Any) -> Any:
        """For ``--plan``: the embedded server is never started (a plan sends nothing and
        changes nothing); the plan counts requests on the template alone. None for a client's
        DSN, which a plan may read like an index definition."""
        if not options.get("embedded"):
            return None
        from ragdiag.encoders.shared import shared_embedder
        from ragdiag.sample.pgvector import _records
        from ragdiag.targets.pgvector.target import PgvectorTarget

        return PgvectorTarget.offline(options["mapping"], options["template"], embedder=shared_embedder(),
                                      name=options.get("name"), now=options.get("now"),
                                      default_limit=options["limit"], rerank_depth=options.get("rerank_depth"),
                                      documents=len(_records()[0]))  # the rows the sample loads

    def describe(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"kind": "pgvector", "dsn_env": options.get("dsn_env"), "embedded": options.get("embedded"),
                "table": options.get("table"), "sql": str(options.get("sql"))}
