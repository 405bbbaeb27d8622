"""The database side an application's code calls into: SQL functions that search, and row-level security.

A Supabase app searches with `supabase.rpc('match_documents', {embedding, match_threshold})`;
what that does is written in a migration: `create function match_documents(...) ... where
embedding <#> query < -match_threshold order by ... limit match_count`. And whether it
returns only the caller's rows is written there too: `alter table documents enable row level
security` with `create policy ... using (auth.uid() = created_by)`, unless the function runs
as its owner (`security definer`), which row-level security does not restrict.

`sql_catalog(project)` reads every `.sql` file of the tree once (text, regular expressions;
never run) and returns the functions that run a pgvector similarity (operator, the parameter
compared with the similarity and how, the parameter of its `limit`, the tables it reads,
`security definer`) and the tables with row-level security and the policies keyed on the
caller's identity (`auth.uid()`, `auth.jwt()`, `current_setting('app.user_id')`,
`current_user`). Cached per scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RlsPolicy", "SqlCatalog", "SqlFunction", "identity_policies", "sql_catalog"]

_FUNC = re.compile(r"create\s+(?:or\s+replace\s+)?function\s+(?:[\w\"]+\.)?\"?(\w+)\"?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)",
                   re.I)
_DOLLAR = re.compile(r"\$(\w*)\$")
_OPERATOR = re.compile(r"<#>|<=>|<->|<\+>")
_LIMIT = re.compile(r"\blimit\s+(?:least\s*\(\s*)?(\w+)", re.I)
_TABLES = re.compile(r"\b(?:from|join)\s+(?:only\s+)?(?:[\w\"]+\.)?\"?(\w+)\"?", re.I)
_RLS_ON = re.compile(r"alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?(?:[\w\"]+\.)?\"?(\w+)\"?\s+"
                     r"enable\s+row\s+level\s+security", re.I)
_POLICY = re.compile(r"create\s+policy\s+(\"[^\"]*\"|\w+)\s+on\s+(?:[\w\"]+\.)?\"?(\w+)\"?(.*?);", re.I | re.S)
_IDENTITY = re.compile(r"auth\.uid\s*\(\s*\)|auth\.jwt\s*\(\s*\)|auth\.email\s*\(\s*\)|"
                       r"current_setting\s*\(\s*'[^']*(?:user|jwt|claim|tenant|group|role|org|account)[^']*'|"
                       r"\bcurrent_user\b|\bsession_user\b", re.I)
_COMMAND = re.compile(r"\bfor\s+(all|select|insert|update|delete)\b", re.I)
_COMMENT = re.compile(r"--[^\n]*")


@dataclass(frozen=True)
class SqlFunction:
    """A database function that runs a pgvector similarity search."""

    name: str
    file: str
    line: int
    operator: str
    params: tuple[str, ...]
    threshold_param: str = ""
    threshold_measure: str = ""     # "score" (similarity kept above) or "distance" (kept below)
    threshold_reversed: bool = False
    limit_param: str = ""
    tables: tuple[str, ...] = ()
    security_definer: bool = False

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class RlsPolicy:
    """A row-level security policy (only those whose condition reads the caller's identity count)."""

    table: str
    name: str
    file: str
    line: int
    command: str
    identity: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class SqlCatalog:
    functions: dict[str, SqlFunction] = field(default_factory=dict)
    rls_tables: dict[str, str] = field(default_factory=dict)       # table -> file:line of `enable row level security`
    policies: list[RlsPolicy] = field(default_factory=list)
    files: int = 0


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _body(text: str, start: int) -> tuple[str, int, int]:
    """(body, its start, the offset after it) of the function whose signature ends at `start`
    (between `$tag$` delimiters, else up to the next `;`)."""
    m = _DOLLAR.search(text, start)
    semi = text.find(";", start)
    if m is None or (semi != -1 and semi < m.start()):
        end = semi if semi != -1 else len(text)
        return text[start:end], start, end
    tag = m.group(0)
    close = text.find(tag, m.end())
    if close == -1:
        return text[m.end():], m.end(), len(text)
    return text[m.end():close], m.end(), close + len(tag)


def _threshold(body: str, params: tuple[str, ...]) -> tuple[str, str, bool]:
    """(parameter, measure, reversed) of the similarity cut in `body`, or empty values without one."""
    for stmt in re.split(r"\band\b|\bwhere\b|\n", body, flags=re.I):
        op = _OPERATOR.search(stmt)
        if op is None:
            continue
        for p in params:
            # a comparison, not a pgvector operator (`<#>`, `<=>`, `<->`)
            cut = re.search(rf"(?<![<#=+-])(<=?|>=?)(?![#>=+-])\s*(-?)\s*\(?\s*{re.escape(p)}\b", stmt)
            if cut is None:
                continue
            less = cut.group(1).startswith("<")
            similarity = bool(re.search(r"1\s*-\s*\(", stmt[:op.start()])) or (op.group(0) == "<#>" and "-" in
                                                                                 stmt[:op.start()])
            if op.group(0) == "<#>" and not similarity:
                # negative inner product: `x <#> q < -t` keeps similarity above t
                return p, "score", not (less and cut.group(2) == "-")
            if similarity:
                return p, "score", less
            return p, "distance", not less
    return "", "", False


def _params(sig: str) -> tuple[str, ...]:
    out = []
    for part in re.split(r",(?![^(]*\))", sig):
        words = part.strip().split()
        if words and words[0].lower() in ("in", "out", "inout", "variadic") and len(words) > 1:
            words = words[1:]
        if words:
            out.append(words[0].strip('"'))
    return tuple(out)


def read_sql(rel: str, text: str, cat: SqlCatalog) -> None:
    """Add the searching functions, row-level security and identity policies of one SQL file."""
    clean = _COMMENT.sub(lambda m: " " * len(m.group(0)), text)
    for m in _FUNC.finditer(clean):
        body, body_start, end = _body(clean, m.end())
        op = _OPERATOR.search(body)
        if op is None:
            continue
        params = _params(m.group(2))
        header = clean[m.end():body_start]
        trailer = clean[end:end + 200].split(";", 1)[0]
        definer = bool(re.search(r"security\s+definer", header + " " + trailer, re.I))
        param, measure, reversed_ = _threshold(body, params)
        limit = next((x.group(1) for x in _LIMIT.finditer(body) if x.group(1) in params), "")
        tables = tuple(dict.fromkeys(t.group(1) for t in _TABLES.finditer(body)
                                     if t.group(1).lower() not in ("select", "lateral", "unnest")))
        cat.functions[m.group(1)] = SqlFunction(m.group(1), rel, _line(text, m.start()), op.group(0), params,
                                                param, measure, reversed_, limit, tables, definer)
    for m in _RLS_ON.finditer(clean):
        cat.rls_tables.setdefault(m.group(1), f"{rel}:{_line(text, m.start())}")
    for m in _POLICY.finditer(clean):
        rest = m.group(3)
        ident = _IDENTITY.search(rest)
        if ident is None:
            continue
        cmd = _COMMAND.search(rest)
        cat.policies.append(RlsPolicy(m.group(2), m.group(1).strip('"'), rel, _line(text, m.start()),
                                      cmd.group(1).lower() if cmd else "all", ident.group(0)))


def sql_catalog(project: Any) -> SqlCatalog:
    """The catalogue of the tree's `.sql` files (read once per scan, cached on the project)."""
    cached = project.cache.get("sql_catalog")
    if cached is not None:
        return cached
    cat = SqlCatalog()
    for rel in project.files:
        if rel.lower().endswith(".sql"):
            text = project.read_text(rel)
            if text:
                cat.files += 1
                read_sql(rel, text, cat)
    project.cache["sql_catalog"] = cat
    return cat


def identity_policies(cat: SqlCatalog, tables: tuple[str, ...]) -> list[RlsPolicy]:
    """The identity-keyed read policies on those of `tables` that have row-level security enabled."""
    return [p for p in cat.policies if p.table in tables and p.table in cat.rls_tables
            and p.command in ("all", "select")]
