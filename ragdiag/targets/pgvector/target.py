"""`PgvectorTarget`: runs the client's own retrieval SQL on PostgreSQL + pgvector, read-only.

A `SearchRequest` (what a profile builds) becomes the template's named parameters:

- ``:embedding``: the question embedded by ragdiag's encoder (or the request's raw vector),
  as a pgvector literal; its dimension must match the table's;
- ``:groups``: the identity's groups, read from the request's identity clause
  (``groups/any(g: search.in(g, '...'))``): the groups of the table a record holding only that
  group would be admitted with; a request without an identity clause is asked with no groups;
- ``:limit``: the first vector query's ``k`` (the candidate depth), ``:query_text``: the
  keyword text (else the question), ``:now``: the config's ``now`` (else the current time).

Other OData clauses are refused: the client's filters live in its SQL, where the probes drop
them one by one (`probe`). The trace's pool is the rows the SQL returned in its order, scored
by the cosine similarity of each row's embedding to the question; its hits are the first
``top`` of them (what the client passes on to the model). Documents, `count` and security
values are read from the mapped table; OData filters on them are evaluated by ragdiag on the
rows (read-only, no SQL is built from a filter).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from ragdiag import odata
from ragdiag.errors import ConfigError, RagdiagError, TargetError
from ragdiag.model import RankedList, SearchRequest, Trace
from ragdiag.model.schema import DATETIME, STRING, STRING_COLLECTION, VECTOR, Field, IndexSchema
from ragdiag.model.trace import Hit
from ragdiag.targets.pgvector.connection import ReadOnlyConnection
from ragdiag.targets.pgvector.mapping import TableMapping, quote_ident
from ragdiag.targets.pgvector.sqltemplate import SqlTemplate

__all__ = ["PgvectorTarget", "KIND"]

KIND = "pgvector"
PAGE = 2000
SEMANTICS_VERSION = 1


def _plain(v: Any) -> Any:
    """A database value as the JSON-like value ragdiag's records hold (dates as ISO strings)."""
    if isinstance(v, datetime):
        v = v if v.tzinfo else v.replace(tzinfo=UTC)
        return v.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(v, date):
        return v.isoformat() + "T00:00:00Z"
    if isinstance(v, tuple):
        return list(v)
    return v


class PgvectorTarget:
    """The client's retrieval SQL over a mapped table, every stage it can report."""

    capabilities = frozenset({"documents", "get_document", "security_values", "sql_probes", "embedder",
                              "description", "stats"})

    def __init__(self, conn: ReadOnlyConnection, mapping: TableMapping, template: SqlTemplate, *,
                 embedder: Any = None, name: str | None = None, now: str | None = None,
                 default_limit: int = 30, rerank_depth: int | None = None) -> None:
        self.conn = conn
        self.mapping = mapping
        self.template = template
        self.embedder = embedder
        self.name = name or f"{KIND}:{mapping.table}"
        self.now = now
        self.default_limit = int(default_limit)
        #: how many of the SQL's candidates the client's own reranker reads (None: it has none)
        self.rerank_depth = rerank_depth
        self.kind = KIND
        self.stats: dict[str, int] = {"sql_queries": 0}
        self.server_version = str(conn.query("SELECT version()")[0][0])
        t, m = quote_ident(mapping.table), mapping
        try:
            row = conn.query(f"SELECT vector_dims({quote_ident(m.embedding)}) FROM {t} "
                             f"WHERE {quote_ident(m.embedding)} IS NOT NULL LIMIT 1")
        except TargetError as exc:
            raise ConfigError(f"[target] table {m.table!r} with embedding column {m.embedding!r} cannot be read: "
                              f"{exc}") from None
        self.dimensions = int(row[0][0]) if row else None
        missing = [c for c in m.columns if not self._has_column(c)]
        if missing:
            raise ConfigError(f"[target] table {m.table!r} has no column(s) {', '.join(missing)}; check "
                              "key, content, groups, valid_from, valid_to and metadata")
        self._universe: tuple[str, ...] = ()
        if m.groups:
            self._universe = tuple(r[0] for r in conn.query(
                f"SELECT DISTINCT g FROM {t}, unnest({quote_ident(m.groups)}) AS g WHERE g IS NOT NULL ORDER BY g"))
        self._fingerprint: str | None = None
        self._columns: dict[str, tuple[str, ...]] = {}

    @classmethod
    def offline(cls, mapping: TableMapping, template: SqlTemplate, *, embedder: Any = None, name: str | None = None,
                now: str | None = None, default_limit: int = 30, rerank_depth: int | None = None,
                documents: int | None = None) -> PgvectorTarget:
        """A target that knows its template and mapping but has no connection: what
        ``ragdiag audit --plan`` counts requests with, so that no server is started or asked
        (`count` answers `documents`, the rows the table is known to hold; `fingerprint` is a
        plan's own)."""
        self = cls.__new__(cls)
        self.conn = None  # type: ignore[assignment]
        self.mapping, self.template, self.embedder = mapping, template, embedder
        self.name = name or f"{KIND}:{mapping.table}"
        self.now, self.default_limit, self.rerank_depth = now, int(default_limit), rerank_depth
        self.kind = KIND
        self.stats = {"sql_queries": 0}
        self.server_version = "not contacted (plan)"
        self.dimensions = None
        self._universe = ()
        self._fingerprint = f"{self.name}:plan"
        self._columns = {}
        self._offline_rows = documents
        return self

    def _has_column(self, column: str) -> bool:
        try:
            self.conn.query(f"SELECT {quote_ident(column)} FROM {quote_ident(self.mapping.table)} LIMIT 0")
            return True
        except TargetError:
            return False

    # ---- identity and description ----------------------------------------------------------
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            m, t = self.mapping, quote_ident(self.mapping.table)
            cols = " || '|' || ".join(f"coalesce({quote_ident(c)}::text, '')" for c in m.columns + (m.embedding,))
            try:  # a digest of every mapped value: a changed row never answers from a stale trace cache
                digest = self.conn.query(f"SELECT count(*), md5(coalesce(string_agg(md5({cols}), '' ORDER BY "
                                         f"{quote_ident(m.key)}), '')) FROM {t}")[0]
            except TargetError:  # too big for the statement timeout: a unique identity, never a cache hit
                import uuid

                digest = ("uncached", uuid.uuid4().hex)
            h = hashlib.sha256()
            for part in (self.server_version, self.template.sql, repr(m), str(digest), str(self.now),
                         str(getattr(self.embedder, "cache_id", None) or getattr(self.embedder, "model_id", None)),
                         str(SEMANTICS_VERSION)):
                h.update(part.encode())
                h.update(b"\0")
            self._fingerprint = f"{self.name}:{h.hexdigest()[:24]}"
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        """What a report says was audited (`meta`): the kind, the server, the table, the SQL."""
        return {"kind": KIND, "server_version": self.server_version, "table": self.mapping.table,
                "sql": self.template.sql, "where_clauses": [c.text for c in self.template.clauses],
                "limit": self.template.limit}

    def schema(self) -> IndexSchema:
        m = self.mapping
        fields = [Field(m.key, STRING, key=True, filterable=True),
                  Field(m.content, STRING, searchable=True)]
        if m.groups:  # retrievable when the client's SELECT list returns it to the application
            shown = bool(re.search(rf"(?<!\w){re.escape(m.groups)}(?!\w)|\*", self.template.select_list))
            fields.append(Field(m.groups, STRING_COLLECTION, filterable=True, retrievable=shown))
        for c in (m.valid_from, m.valid_to):
            if c:
                fields.append(Field(c, DATETIME, filterable=True, sortable=True))
        fields += [Field(c, STRING, filterable=True) for c in m.metadata if c not in (m.key, m.content)]
        fields.append(Field(m.embedding, VECTOR, dimensions=self.dimensions, retrievable=False))
        return IndexSchema(name=m.table, fields=tuple(fields))

    # ---- request -> parameters ---------------------------------------------------------------
    def groups_of(self, flt: str | None) -> list[str]:
        """The groups a request's identity clause admits (its other clauses are refused)."""
        g = self.mapping.groups
        if not flt:
            return []
        try:
            parsed = odata.parse(flt)
        except RagdiagError as exc:
            raise TargetError(f"cannot read the request's filter {flt[:120]!r}: {exc}") from None
        identity, other = [], []
        for c in odata.clauses(parsed):
            # `false` (an identity without groups) has no field: it admits nothing, like no groups
            (identity if g and set(c.fields) <= {g} else other).append(c)
        if other:
            raise TargetError(f"the pgvector target runs the client's SQL, whose WHERE holds the filters; "
                              f"a request filter other than the identity clause on {g!r} cannot be applied: "
                              f"{other[0].text[:120]!r} (remove it from the profile)")
        return [x for x in self._universe if all(odata.evaluate(c.expr, {g: [x]}) for c in identity)]

    def _vector(self, request: SearchRequest) -> list[float] | None:
        if "embedding" not in self.template.parameters:
            return None
        vq = request.vector_queries[0] if request.vector_queries else None
        if vq is not None and vq.vector is not None:
            vec = list(vq.vector)
        else:
            text = vq.text if vq is not None else request.search
            if not text:
                raise TargetError("the SQL template needs :embedding but the request has no question text")
            if self.embedder is None:
                raise TargetError("the SQL template needs :embedding and no embedder is configured")
            vec = [float(x) for x in self.embedder.embed([text], progress=False)[0]]
        if self.dimensions is not None and len(vec) != self.dimensions:
            raise TargetError(f"the question embedding has {len(vec)} dimensions, the column "
                              f"{self.mapping.embedding!r} {self.dimensions}: the client's embedding model is "
                              "not ragdiag's; pass vectors in the requests")
        return vec

    def limit_of(self, request: SearchRequest) -> int | None:
        """The candidate LIMIT the template applies to `request` (its number, or what `:limit` binds)."""
        lim = self.template.limit
        if isinstance(lim, str):
            vq = request.vector_queries[0] if request.vector_queries else None
            return int(vq.k) if vq is not None else self.default_limit
        return lim

    def clause_columns(self, index: int) -> frozenset[str]:
        """The mapped columns WHERE clause `index` names (what the checks classify it by)."""
        text = self.template.clauses[index].text
        cols = self.mapping.columns + (self.mapping.embedding,)
        return frozenset(c for c in cols if re.search(rf"(?<![\w]){re.escape(c)}(?!\w)", text))

    def parameters(self, request: SearchRequest) -> dict[str, Any]:
        """The named parameters of the template for `request`."""
        p: dict[str, Any] = {}
        vec = self._vector(request)
        if vec is not None:
            p["embedding"] = "[" + ",".join(repr(float(x)) for x in vec) + "]"
        vq = request.vector_queries[0] if request.vector_queries else None
        p["groups"] = self.groups_of(request.filter)
        p["limit"] = int(vq.k) if vq is not None else self.default_limit
        question = vq.text if vq is not None and vq.text else request.search
        p["query_text"] = request.search if request.has_text_leg else (question or "")
        p["now"] = self.now or datetime.now(UTC).isoformat()
        return {k: v for k, v in p.items() if k in self.template.parameters}

    # ---- search and probes -------------------------------------------------------------------
    def _keys(self, sql: str, params: Mapping[str, Any]) -> list[str]:
        self.stats["sql_queries"] += 1
        rows = self.conn.query(SqlTemplate.to_psycopg(sql), params)
        if not rows:
            return []
        cols = self._columns.get(sql)
        if cols is None:  # the result's column names, once per SQL text
            cols = self.conn.column_names(SqlTemplate.to_psycopg(f"SELECT * FROM ({sql}) AS ragdiag_cols LIMIT 0"),
                                          params)
            self._columns[sql] = cols
        key = self.mapping.key
        if key not in cols:
            raise TargetError(f"the SQL template's result has no column {key!r} (the mapped key); it returns "
                              f"{', '.join(cols)}: select the key or alias it (AS {key})")
        i = cols.index(key)
        return [str(r[i]) for r in rows]

    def _rows(self, keys: Sequence[str], select: Sequence[str] | None,
              embedding: str | None) -> dict[str, tuple[dict[str, Any], float | None]]:
        m, t = self.mapping, quote_ident(self.mapping.table)
        cols = [c for c in (select or m.columns) if c in m.columns and c != m.key]
        sim = f", 1 - ({quote_ident(m.embedding)} <=> %(e)s::vector)" if embedding else ""
        sql = (f"SELECT {quote_ident(m.key)}{''.join(', ' + quote_ident(c) for c in cols)}{sim} FROM {t} "
               f"WHERE {quote_ident(m.key)}::text = ANY(%(k)s)")
        out = {}
        for r in self.conn.query(sql, {"k": list(keys), "e": embedding}):
            rec = {m.key: str(r[0]), **{c: _plain(v) for c, v in zip(cols, r[1:1 + len(cols)], strict=True)}}
            out[str(r[0])] = (rec, float(r[-1]) if embedding and r[-1] is not None else None)
        return out

    def run(self, request: SearchRequest, sql: str | None = None, *, label: str = "sql",
            overrides: Mapping[str, Any] | None = None) -> Trace:
        """Run `sql` (default: the template) for `request`: the pool in SQL order, hits its first `top`."""
        t0 = time.perf_counter()
        params = {**self.parameters(request), **(overrides or {})}
        keys = self._keys(sql or self.template.sql, params)
        t1 = time.perf_counter()
        rows = self._rows(keys, request.select, params.get("embedding")) if keys else {}
        sims = [rows.get(k, ({}, None))[1] for k in keys]
        scores = [s if s is not None else 1.0 / (i + 1) for i, s in enumerate(sims)]
        pool = RankedList(label, keys, scores)
        vectors: tuple[RankedList, ...] = ()
        emb = self.mapping.embedding
        if "embedding" in params:
            order = sorted(range(len(keys)), key=lambda i: (-(sims[i] or 0.0), keys[i]))
            vectors = (RankedList(f"vector:{emb}", [keys[i] for i in order], [sims[i] or 0.0 for i in order]),)
        vrank = {k: r for r, k in enumerate(vectors[0].keys, 1)} if vectors else {}
        top = request.top if request.top else len(keys)
        hits = tuple(Hit(key=k, score=scores[i], fields=rows.get(k, ({}, None))[0],
                         vector_similarities={emb: sims[i]} if sims[i] is not None else {},
                         vector_ranks={emb: vrank[k]} if k in vrank else {}, fused_score=scores[i],
                         fused_rank=i + 1)
                     for i, k in enumerate(keys[request.skip:request.skip + top], start=request.skip))
        timings = {"sql": (t1 - t0) * 1000, "rows": (time.perf_counter() - t1) * 1000}
        return Trace(request=request, hits=hits, vectors=vectors, pool=pool, count=len(keys),
                     timings_ms=timings, target=self.name)

    def search(self, request: SearchRequest) -> Trace:
        return self.run(request)

    def probe(self, request: SearchRequest, *, drop: Sequence[int] = (), limit: int | None = None,
              leg: str | None = None) -> Trace:
        """The request with the template's WHERE clauses `drop` dropped, its LIMIT set to `limit`, and/or
        only one leg of a hybrid template (`leg` = ``"vector"``).

        ``"vector"`` binds an empty ``:query_text``: ``plainto_tsquery('')`` (and the other tsquery
        builders) is empty and matches no row, so the full-text leg returns nothing. A text-only
        probe has no such neutral value (every embedding ranks every row), so ``"text"`` is refused:
        give the text leg as its own template.
        """
        sql = self.template.without(*drop) if drop else self.template.sql
        if limit is not None:
            sql = SqlTemplate(sql).with_limit(limit)
        label = "sql" + "".join(f"-clause{i + 1}" for i in drop) + (f"-limit{limit}" if limit is not None else "")
        overrides: dict[str, Any] = {}
        if leg == "vector":
            if not {"embedding", "query_text"} <= set(self.template.parameters):
                raise TargetError("a vector-only probe needs a hybrid template (both :embedding and :query_text)")
            overrides["query_text"] = ""
            label += "-vector-only"
        elif leg is not None:
            raise TargetError(f"no {leg!r}-only probe: an embedding cannot be bound so that it ranks nothing; "
                              "run the text leg as its own template")
        return self.run(request, sql, label=label, overrides=overrides)

    def clause_admission(self, request: SearchRequest, keys: Sequence[str]) -> tuple[set[str], list[set[str]]]:
        """Which of `keys` the template's FROM admits with no WHERE clause (the rows exist and join),
        and which each WHERE clause admits on its own: the loss funnel's filter stages, per clause."""
        n = len(self.template.clauses)
        wanted = sorted(set(keys))
        params: dict[str, Any] | None = None

        def admitted(drop: tuple[int, ...]) -> set[str]:
            nonlocal params
            sql = self.template.matching_keys(self.mapping.key, drop)
            if params is None:  # the embedding is computed only if the cut SQL still needs it
                needs_vector = ":embedding" in sql
                params = self.parameters(request) if needs_vector else {
                    k: v for k, v in self._parameters_without_vector(request).items()}
            self.stats["sql_queries"] += 1
            rows = self.conn.query(SqlTemplate.to_psycopg(sql), {**params, "ragdiag_keys": wanted})
            return {str(r[0]) for r in rows}

        if not wanted:
            return set(), [set() for _ in range(n)]
        in_from = admitted(tuple(range(n)))
        return in_from, [admitted(tuple(j for j in range(n) if j != i)) for i in range(n)]

    def _parameters_without_vector(self, request: SearchRequest) -> dict[str, Any]:
        vq = request.vector_queries[0] if request.vector_queries else None
        question = vq.text if vq is not None and vq.text else request.search
        p: dict[str, Any] = {"groups": self.groups_of(request.filter),
                             "limit": int(vq.k) if vq is not None else self.default_limit,
                             "query_text": request.search if request.has_text_leg else (question or ""),
                             "now": self.now or datetime.now(UTC).isoformat()}
        return {k: v for k, v in p.items() if k in self.template.parameters}

    def stage_counts(self, request: SearchRequest) -> list[tuple[str, int]]:
        """Candidates before the WHERE, after each of its clauses in turn, and what the LIMIT keeps."""
        params = self.parameters(request)
        n = len(self.template.clauses)
        out = []
        for upto in range(n + 1):
            drop = tuple(range(upto, n))
            sql = self.template.count_matching(drop)
            label = "no WHERE clause" if upto == 0 else f"after clause {upto}: {self.template.clauses[upto - 1].text}"
            self.stats["sql_queries"] += 1
            out.append((label, int(self.conn.query(SqlTemplate.to_psycopg(sql), params)[0][0])))
        return out

    # ---- documents -----------------------------------------------------------------------------
    def _all_rows(self, select: Sequence[str] | None) -> Iterator[dict[str, Any]]:
        m, t = self.mapping, quote_ident(self.mapping.table)
        cols = list(dict.fromkeys([m.key] + [c for c in (select or m.columns) if c in m.columns]))
        last: str | None = None
        while True:
            where = f"WHERE {quote_ident(m.key)}::text > %(last)s " if last is not None else ""
            rows = self.conn.query(f"SELECT {', '.join(quote_ident(c) for c in cols)} FROM {t} {where}"
                                   f"ORDER BY {quote_ident(m.key)}::text LIMIT {PAGE}", {"last": last})
            for r in rows:
                yield {c: (str(v) if c == m.key else _plain(v)) for c, v in zip(cols, r, strict=True)}
            if len(rows) < PAGE:
                return
            last = str(rows[-1][0])

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        """The mapped rows (`select` columns); an OData `filter` is evaluated by ragdiag on each row."""
        if not filter:
            yield from self._all_rows(select)
            return
        expr = odata.parse(filter)
        need = sorted(set(select or self.mapping.columns) | set(odata.fields_of(expr)))
        for rec in self._all_rows(need):
            if odata.evaluate(expr, rec):
                yield {k: v for k, v in rec.items() if select is None or k in select or k == self.mapping.key}

    def count(self, filter: str | None = None) -> int:
        if self.conn is None:  # an offline (plan) target
            if filter or getattr(self, "_offline_rows", None) is None:
                raise TargetError("an offline pgvector target (for --plan) cannot count rows")
            return int(self._offline_rows)  # type: ignore[arg-type]
        if not filter:
            return int(self.conn.query(f"SELECT count(*) FROM {quote_ident(self.mapping.table)}")[0][0])
        return sum(1 for _ in self.iter_documents(select=[self.mapping.key], filter=filter))

    def get_document(self, key: str, select: Sequence[str] | None = None) -> dict[str, Any]:
        rows = self._rows([key], select, None)
        if key not in rows:
            raise TargetError(f"no row with {self.mapping.key} = {key!r} in {self.mapping.table}")
        return rows[key][0]

    def security_values(self, keys: Sequence[str], field: str) -> dict[str, tuple[str, ...] | None]:
        if field != self.mapping.groups:
            return {k: None for k in keys}
        rows = self._rows(list(keys), [field], None)
        out: dict[str, tuple[str, ...] | None] = {}
        for k in keys:
            v = rows.get(k, ({}, None))[0].get(field)
            out[k] = tuple(str(x) for x in v) if isinstance(v, list) else None
        return out

    def close(self) -> None:
        self.conn.close()
