"""The client's retrieval SQL as a template: named parameters, its WHERE clauses, its LIMIT.

A small tokenizer rather than a SQL grammar (sqlglot is on PyPI and was considered): probes
must run the client's SQL *verbatim* except for the one part they change, and a parser that
re-renders the statement would rewrite casts, operators and spacing the client wrote (pgvector's
``<=>`` is MySQL's null-safe equality in general-purpose SQL grammars). The tokenizer only has to
know what can hide a keyword: quoted strings (``'...'`` with doubled quotes, ``E'...'``),
quoted identifiers, dollar-quoted bodies, comments and parentheses. On that it finds

- named parameters ``:name`` (not ``::cast``), bound as psycopg ``%(name)s``;
- the top-level WHERE and its top-level AND clauses (``BETWEEN a AND b`` kept whole; a
  top-level OR makes the whole WHERE one clause, since its parts cannot be dropped alone);
- the top-level LIMIT and its value (a number or a parameter).

Clauses inside parentheses (sub-selects, CTEs) are never split: only the outer statement's
WHERE is the retrieval filter a probe may drop.

A template that could write is refused when it is loaded, before anything is sent: one
statement only, a SELECT (or WITH ... SELECT), no data-modifying statement at any depth
(``INSERT INTO``, ``UPDATE ... SET``, ``DELETE FROM``, ``MERGE INTO``: a CTE can hide one),
no ``SELECT ... INTO`` (it creates a table), no locking clause (``FOR UPDATE``/``SHARE``),
none of the functions in `SIDE_EFFECT_FUNCTIONS`. The READ ONLY transaction every query
runs in stays the backstop for what a tokenizer cannot see (a function that writes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragdiag.errors import ConfigError

__all__ = ["PARAMETERS", "SIDE_EFFECT_FUNCTIONS", "SqlTemplate", "WhereClause"]

#: the named parameters ragdiag binds
PARAMETERS = ("embedding", "groups", "limit", "query_text", "now")
_WORD = re.compile(r"[^\W\d][\w$]*")  # PostgreSQL identifiers may hold any Unicode letter
#: statements that write, found at any depth in the blanked template (a CTE may hold one)
_WRITES = re.compile(r"(?<![\w.$])(insert\s+into|update\s+(?:only\s+)?[^\W\d][\w$.\"]*(?:\s+(?:as\s+)?[^\W\d][\w$]*)?"
                     r"\s+set|delete\s+from|merge\s+into)(?![\w$])", re.I)
#: functions that change the server's state even in a READ ONLY transaction, or that write
SIDE_EFFECT_FUNCTIONS = ("pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
                         "pg_switch_wal", "pg_create_restore_point", "pg_promote", "pg_advisory_lock",
                         "pg_advisory_xact_lock", "pg_try_advisory_lock", "pg_try_advisory_xact_lock",
                         "pg_advisory_lock_shared", "pg_notify", "set_config", "nextval", "setval",
                         "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_from_bytea", "lo_put",
                         "dblink", "dblink_exec", "pg_file_write", "pg_logical_emit_message")
_CALL = re.compile(r"(?<![\w$])(?:[^\W\d][\w$]*\s*\.\s*)?([^\W\d][\w$]*)\s*\(")
_END_OF_WHERE = ("group", "having", "order", "limit", "offset", "window", "fetch", "for", "union",
                 "intersect", "except")


@dataclass(frozen=True)
class WhereClause:
    """One top-level AND clause of the WHERE: its text and where it sits in the template."""

    index: int
    text: str
    start: int
    end: int

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.group(1) for m in _PARAM.finditer(_blank_quoted(self.text))))


_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def _blank_quoted(sql: str) -> str:
    """`sql` with strings, quoted identifiers and comments blanked (same length), parentheses kept."""
    out = list(sql)
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        start = i
        if c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and sql.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if depth:
                raise ConfigError("the SQL template has an unterminated /* comment")
        elif c in "'\"":
            i += 1
            while True:
                j = sql.find(c, i)
                if j < 0:
                    raise ConfigError(f"the SQL template has an unterminated {c} quote starting at "
                                      f"character {start + 1}")
                if sql.startswith(c * 2, j):
                    i = j + 2
                    continue
                i = j + 1
                break
        elif c == "$":
            m = re.match(r"\$([A-Za-z_]\w*)?\$", sql[i:])
            if m and not (i and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                tag = m.group(0)
                j = sql.find(tag, i + len(tag))
                if j < 0:
                    raise ConfigError(f"the SQL template has an unterminated {tag} quote")
                i = j + len(tag)
            else:
                i += 1
                continue
        else:
            i += 1
            continue
        for k in range(start, i):
            if out[k] not in "\n":
                out[k] = " "
    return "".join(out)


def _top_words(blank: str) -> list[tuple[str, int, int]]:
    """(lower-cased word, start, end) of every word at parenthesis depth 0."""
    words, depth = [], 0
    i, n = 0, len(blank)
    while i < n:
        c = blank[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise ConfigError("the SQL template has an unbalanced ')'")
        elif c.isalpha() or c == "_":
            m = _WORD.match(blank, i)
            if m is None:  # a letter that starts no identifier (cannot happen with _WORD's classes)
                i += 1
                continue
            if depth == 0 and not (i and blank[i - 1] in ".:"):
                words.append((m.group(0).lower(), m.start(), m.end()))
            i = m.end()
            continue
        i += 1
    if depth:
        raise ConfigError("the SQL template has an unbalanced '('")
    return words


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _refuse_writes(text: str, blank: str, words: list[tuple[str, int, int]]) -> None:
    """A `ConfigError` (with the template's line) when the statement could write or lock."""
    m = _WRITES.search(blank)
    if m:
        what = " ".join(m.group(1).split()[:1]).upper()
        raise ConfigError(f"the SQL template holds a statement that writes ({what} at line "
                          f"{_line_of(text, m.start())}: {' '.join(text[m.start():m.end()].split())[:60]!r}); "
                          "ragdiag only reads: give the retrieval SELECT alone")
    for i, (w, s, _e) in enumerate(words):
        if w == "into" and not (i and words[i - 1][0] in ("insert", "merge")):
            raise ConfigError(f"the SQL template selects INTO a table (line {_line_of(text, s)}), which creates "
                              "it; ragdiag only reads: remove the INTO clause")
        if w == "for" and i + 1 < len(words) and words[i + 1][0] in ("update", "share", "no", "key"):
            raise ConfigError(f"the SQL template locks rows (FOR {words[i + 1][0].upper()} at line "
                              f"{_line_of(text, s)}); ragdiag only reads: remove the locking clause")
    for call in _CALL.finditer(blank):
        name = call.group(1).lower()
        if name in SIDE_EFFECT_FUNCTIONS:
            raise ConfigError(f"the SQL template calls {name}() (line {_line_of(text, call.start(1))}), which "
                              "changes the server's state; ragdiag only reads: remove the call")


class SqlTemplate:
    """A parsed retrieval query: render it for psycopg, and the probe variants of it."""

    def __init__(self, sql: str) -> None:
        text = sql.strip()
        while True:  # a trailing ';' (and comments after it) ends the one statement
            blank = _blank_quoted(text)
            semi = blank.rfind(";")
            if semi < 0 or blank[semi + 1:].strip():
                break
            text = text[:semi].rstrip()
        if not text:
            raise ConfigError("the SQL template is empty")
        self.sql = text
        blank = _blank_quoted(text)
        if ";" in blank:
            raise ConfigError("the SQL template holds more than one statement (a ';' inside it); "
                              "give the one retrieval SELECT")
        words = _top_words(blank)
        first = words[0][0] if words else ""
        if first not in ("select", "with"):
            raise ConfigError(f"the SQL template must be a SELECT (or WITH ... SELECT), it starts with "
                              f"{first or text[:20]!r}; ragdiag only reads")
        _refuse_writes(text, blank, words)
        positional = re.search(r"\$\d+|%s", blank)  # (a bare ? is jsonb's key operator in PostgreSQL)
        if positional:
            raise ConfigError(f"the SQL template uses the positional parameter {positional.group(0)!r}: name it "
                              "(:embedding for the question's embedding, :groups for the user's groups, :limit, "
                              ":query_text, :now) so ragdiag knows what to bind")
        self.parameters = tuple(dict.fromkeys(m.group(1) for m in _PARAM.finditer(blank)))
        unknown = [p for p in self.parameters if p not in PARAMETERS]
        if unknown:
            raise ConfigError(f"the SQL template uses unknown parameter(s) {', '.join(':' + p for p in unknown)}; "
                              f"ragdiag binds {', '.join(':' + p for p in PARAMETERS)}")
        if "embedding" not in self.parameters and "query_text" not in self.parameters:
            raise ConfigError("the SQL template binds neither :embedding nor :query_text: it cannot depend "
                              "on the question")
        wheres = [w for w in words if w[0] == "where"]
        if len(wheres) > 1:
            raise ConfigError("the SQL template has more than one top-level WHERE (UNION?); ragdiag probes "
                              "one: move the legs into CTEs")
        self.clauses: tuple[WhereClause, ...] = ()
        self._where: tuple[int, int] | None = None  # span of the WHERE keyword through its last clause
        if wheres:
            _w, ws, we = wheres[0]
            end = next((s for w, s, _e in words if s > we and w in _END_OF_WHERE), len(text))
            self._where = (ws, end)
            self.clauses = self._split(text, blank, words, we, end)
        self._limit: tuple[int, int] | None = None
        limits = [w for w in words if w[0] == "limit"]
        if limits:
            _l, _ls, le = limits[-1]
            m = re.match(r"\s*(\d+|:[A-Za-z_]\w*|all\b)", blank[le:], re.I)
            if not m:
                raise ConfigError("the SQL template's LIMIT is neither a number nor a :parameter")
            self._limit = (le + m.start(1), le + m.end(1))

    @staticmethod
    def _split(text: str, blank: str, words: list[tuple[str, int, int]], start: int,
               end: int) -> tuple[WhereClause, ...]:
        inner = [w for w in words if start <= w[1] < end]
        if any(w == "or" for w, _s, _e in inner):
            return (WhereClause(0, text[start:end].strip(), start, end),)
        cuts, between = [], False
        for w, s, e in inner:
            if w == "between":
                between = True
            elif w == "and":
                if between:
                    between = False
                else:
                    cuts.append((s, e))
        out, pos = [], start
        for s, e in cuts + [(end, end)]:
            piece = text[pos:s]
            lead = len(piece) - len(piece.lstrip())
            out.append(WhereClause(len(out), piece.strip(), pos + lead, pos + lead + len(piece.strip())))
            pos = e
        return tuple(out)

    # ---- what the template says -------------------------------------------------------------
    @property
    def limit(self) -> int | str | None:
        """The LIMIT: a number, ``":name"`` for a parameter, or None (no LIMIT)."""
        if self._limit is None:
            return None
        v = self.sql[self._limit[0]:self._limit[1]]
        return int(v) if v.isdigit() else (v if v.startswith(":") else None)

    @property
    def select_list(self) -> str:
        """The outer SELECT's column list (comments and strings blanked)."""
        blank = _blank_quoted(self.sql)
        words = _top_words(blank)
        sel = next((e for w, _s, e in words if w == "select"), 0)
        end = next((s for w, s, _e in words if w == "from" and s > sel), len(blank))
        return blank[sel:end]

    def clause_for(self, column: str) -> WhereClause | None:
        """The first WHERE clause naming `column` (as a whole word)."""
        pat = re.compile(rf"(?<![\w.]){re.escape(column)}(?!\w)|\.{re.escape(column)}(?!\w)", re.I)
        return next((c for c in self.clauses if pat.search(_blank_quoted(c.text))), None)

    # ---- variants ---------------------------------------------------------------------------
    def without(self, *indices: int) -> str:
        """The template with the WHERE clauses `indices` dropped (the WHERE too when none is left)."""
        if self._where is None or not indices:
            return self.sql
        keep = [c.text for c in self.clauses if c.index not in indices]
        ws, we = self._where
        where = f"WHERE {' AND '.join(keep)} " if keep else ""
        return self.sql[:ws] + where + self.sql[we:].lstrip()

    def with_limit(self, limit: int) -> str:
        """The template with its LIMIT set to `limit` (added when it has none)."""
        if self._limit is None:
            return f"{self.sql}\nLIMIT {int(limit)}"
        s, e = self._limit
        return self.sql[:s] + str(int(limit)) + self.sql[e:]

    def count_matching(self, drop: tuple[int, ...] = ()) -> str:
        """A count of the rows the template's WHERE admits (clauses `drop` dropped), before its LIMIT."""
        sql = SqlTemplate(self.without(*drop)) if drop else self
        body = sql.sql
        blank = _blank_quoted(body)
        words = _top_words(blank)
        cut = next((s for w, s, _e in words if w in ("order", "limit", "offset", "fetch")), len(body))
        return f"SELECT count(*) FROM ({body[:cut].rstrip()}) AS ragdiag_probe"

    def matching_keys(self, key: str, drop: tuple[int, ...] = ()) -> str:
        """The keys among ``:ragdiag_keys`` whose rows the template's WHERE admits (clauses `drop`
        dropped), before its ORDER BY and LIMIT: which clause keeps which expected source out."""
        from ragdiag.targets.pgvector.mapping import quote_ident

        sql = SqlTemplate(self.without(*drop)) if drop else self
        body = sql.sql
        words = _top_words(_blank_quoted(body))
        cut = next((s for w, s, _e in words if w in ("order", "limit", "offset", "fetch")), len(body))
        col = f"ragdiag_probe.{quote_ident(key)}::text"
        return f"SELECT {col} FROM ({body[:cut].rstrip()}) AS ragdiag_probe WHERE {col} = ANY(:ragdiag_keys)"

    @staticmethod
    def to_psycopg(sql: str) -> str:
        """`sql` with ``:name`` as ``%(name)s`` and literal ``%`` doubled (outside strings: inside too, psycopg
        reads every ``%``)."""
        blank = _blank_quoted(sql)
        out, pos = [], 0
        for m in _PARAM.finditer(blank):
            out.append(sql[pos:m.start()].replace("%", "%%"))
            out.append(f"%({m.group(1)})s")
            pos = m.end()
        out.append(sql[pos:].replace("%", "%%"))
        return "".join(out)
