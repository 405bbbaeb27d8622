"""Pieces shared by the Python and JS/TS scanners: resolved values, name patterns, filter clauses.

Private: the public records are in `model.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ragdiag.codescan.model import (
    BudgetConstant,
    CitationCheck,
    LLMCallSite,
    PromptRule,
    ResolvedValue,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
)

# ---- name patterns ----------------------------------------------------------------

SECURITY_FIELD = r"(?:group_ids?|groups|acls?|oids?|user_ids?|allowed_[A-Za-z0-9_]+|owner_ids?)"
SECURITY_FIELD_RE = re.compile(rf"^{SECURITY_FIELD}$", re.I)
#: A filter on a security field: `group_ids/any(`, `acl eq `, `search.in(group_ids, ...`.
SECURITY_FILTER_RE = re.compile(
    rf"\b({SECURITY_FIELD})\s*(?:/\s*(?:any|all)\s*\(|\s+(?:eq|ne)\s)"
    rf"|search\.in\s*\(\s*({SECURITY_FIELD})\b", re.I)
#: Names of helpers / variables suggesting a security filter ("acl_filter", "security_clause").
SECURITY_NAME_RE = re.compile(r"acl|secur|permission|trim|access_filter|group_filter", re.I)
BUDGET_NAME_RE = re.compile(r"(?=.*(?:MAX|BUDGET|LIMIT))(?=.*(?:TOKEN|CHAR|SOURCE|CONTEXT))|_BUDGET|BUDGET_",
                            re.I)
REQUEST_ROOTS = frozenset({"request", "req", "body", "query_params", "user_input", "question",
                           "payload", "form", "event", "request_body", "params", "ctx.request"})
IDENTITY_RE = re.compile(r"identity|principal|claims|current_user|authenticated|auth_user|"
                         r"viewer|caller|access_token|id_token|token_claims|^user$|^me$", re.I)
CONTEXT_NAME_RE = re.compile(r"context|chunk|hit|result|doc|passage|evidence|source|retriev|snippet|"
                             r"tool_output|tool_result|observation", re.I)
TRUNCATE_FUNC_RE = re.compile(r"truncat|budget|trim_?to|trim_?context|trim_?sources|fit_?to|clip_?to|limit_?context|take_?top|cap_|"
                              r"shorten|top_?n\b", re.I)
BOUND_KW_RE = re.compile(r"max_?sources|max_?context|max_?chars|max_?tokens_?context|context_?tokens|"
                         r"budget|max_?docs|max_?chunks|char_?limit|token_?limit|per_?source", re.I)
CITATION_FUNC_RE = re.compile(r"citation|cite|sources", re.I)
VALIDATION_REF_RE = re.compile(r"retriev|allowed|known|valid|registry|hit|result|source|_ids|ids$|"
                               r"doc|chunk|context", re.I)

# The placeholder an unresolved part of a string is rendered as.
PLACEHOLDER_RE = re.compile(r"\$?\{[^{}]*\}")


def placeholder(expr: str, lang: str) -> str:
    return "${" + expr + "}" if lang != "python" else "{" + expr + "}"


def root_name(expr: str) -> str:
    m = re.match(r"[A-Za-z_$][\w$]*", expr.strip())
    return m.group(0) if m else ""


_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_PATH = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)((?:\s*\.\s*[A-Za-z_$][\w$]*)*)")


def _paths(expr: str) -> list[list[str]]:
    """Dotted identifier paths in an expression's text, string literals removed."""
    text = _STRING_LITERAL.sub("''", expr)
    return [[m.group(1), *re.findall(r"[A-Za-z_$][\w$]*", m.group(2))] for m in _PATH.finditer(text)]


def is_request_expr(expr: str) -> bool:
    """Does the expression read request data (`request.x`, `req.body`, `user_input`, ...)?"""
    for path in _paths(expr):
        root = path[0].lower()
        if root in REQUEST_ROOTS or root.startswith("request") or root.endswith("_request"):
            return True
    return False


def is_identity_expr(expr: str) -> bool:
    """Does the expression read the authenticated identity (`identity.group_ids`, `claims["groups"]`)?"""
    return any(IDENTITY_RE.search(p) for path in _paths(expr) for p in path[:2])


# ---- resolved values ------------------------------------------------------------------


class Val:
    """An expression as far as static analysis resolved it (internal, language-neutral).

    kind: ``scalar`` (value is a Python scalar; for a partially known string
    `value` is the text with placeholders and `resolved` False), ``dict``
    (`items`), ``list`` (`elems`), ``call`` (`call`, `kwargs` for known
    constructors), ``unknown``. `node`/`ctx` point at the expression as
    written, so scanners can name the variable behind a value.
    """

    __slots__ = ("kind", "value", "resolved", "source", "expr", "fstring", "vars", "items", "elems",
                 "call", "kwargs", "args", "node", "ctx", "builder", "open")

    def __init__(self, kind: str, value: Any = None, resolved: bool = False, source: str = "",
                 expr: str = "", *, fstring: bool = False, vars: tuple[str, ...] = (),
                 items: dict[str, Val] | None = None, elems: list[Val] | None = None,
                 call: str | None = None, kwargs: dict[str, Val] | None = None,
                 args: list[Val] | None = None, node: Any = None, ctx: Any = None,
                 builder: str | None = None, open: bool = False) -> None:
        self.kind = kind
        self.value = value
        self.resolved = resolved
        self.source = source
        self.expr = expr
        self.fstring = fstring
        self.vars = vars
        self.items = items
        self.elems = elems
        self.call = call
        self.kwargs = kwargs
        self.args = args
        self.node = node
        self.ctx = ctx
        self.builder = builder
        self.open = open

    def copy(self, **changes: Any) -> Val:
        new = Val.__new__(Val)
        for name in Val.__slots__:
            setattr(new, name, getattr(self, name))
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    @property
    def is_str(self) -> bool:
        return self.kind == "scalar" and isinstance(self.value, str)

    def get(self, key: str) -> Val | None:
        if self.kind == "dict" and self.items is not None:
            return self.items.get(key)
        if self.kind == "call" and self.kwargs is not None:
            return self.kwargs.get(key)
        return None

    def __repr__(self) -> str:  # debugging aid
        return f"Val({self.kind}, {self.value!r}, resolved={self.resolved}, source={self.source!r})"


def lit(value: Any, source: str = "literal", node: Any = None, ctx: Any = None, expr: str = "") -> Val:
    return Val("scalar", value, True, source, expr, node=node, ctx=ctx)


def unknown(source: str, expr: str = "", node: Any = None, ctx: Any = None) -> Val:
    return Val("unknown", None, False, source, expr, node=node, ctx=ctx)


def plain(v: Val) -> Any:
    """A JSON-safe Python value for `v` (unknown parts as None)."""
    if v.kind == "scalar":
        return v.value
    if v.kind == "dict":
        return {k: plain(i) for k, i in (v.items or {}).items()}
    if v.kind == "list":
        return [plain(e) for e in (v.elems or [])]
    if v.kind == "call" and v.kwargs is not None:
        return {"call": v.call, **{k: plain(i) for k, i in v.kwargs.items()}}
    return None


def export(v: Val) -> ResolvedValue:
    return ResolvedValue(value=plain(v), resolved=bool(v.resolved), source=v.source or "unknown",
                         expression=v.expr, from_fstring=v.fstring, fstring_vars=tuple(v.vars))


def text_of(v: Val, lang: str) -> tuple[str, bool]:
    """(string form, fully known) of `v` when embedded in a string."""
    if v.kind == "scalar":
        value = v.value
        if isinstance(value, str):
            return value, v.resolved
        if isinstance(value, bool):
            return (("true" if value else "false") if lang != "python" else str(value)), v.resolved
        if value is None:
            return ("None" if lang == "python" else "null"), v.resolved
        return str(value), v.resolved
    return placeholder(v.expr or "?", lang), False


def all_resolved(vals: list[Val]) -> bool:
    return all(v.resolved for v in vals)


def make_list(elems: list[Val], node: Any = None, ctx: Any = None, expr: str = "") -> Val:
    return Val("list", None, all_resolved(elems), "literal", expr, elems=elems, node=node, ctx=ctx)


def make_dict(items: dict[str, Val], *, open: bool = False, node: Any = None, ctx: Any = None,
              expr: str = "") -> Val:
    return Val("dict", None, all_resolved(list(items.values())) and not open, "literal", expr,
               items=items, node=node, ctx=ctx, open=open)


def concat(parts: list[Val], lang: str, *, fstring: bool, source: str, expr: str = "",
           node: Any = None, ctx: Any = None, vars: tuple[str, ...] = ()) -> Val:
    """A string Val made of parts (literal or not); `vars` are the interpolated expressions."""
    texts = []
    resolved = True
    all_vars = list(vars)
    for p in parts:
        t, ok = text_of(p, lang)
        texts.append(t)
        resolved = resolved and ok
        all_vars.extend(p.vars)
        if p.fstring:
            fstring = True
    return Val("scalar", "".join(texts), resolved, source, expr, fstring=fstring,
               vars=tuple(dict.fromkeys(all_vars)), node=node, ctx=ctx)


# ---- filter clauses --------------------------------------------------------------------


def _split_top_level_and(text: str) -> list[str]:
    parts, depth, quote, start, i = [], 0, False, 0, 0
    low = text.lower()
    while i < len(text):
        ch = text[i]
        if ch == "'":
            quote = not quote
        elif not quote:
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            elif depth == 0 and low.startswith(" and ", i):
                parts.append(text[start:i])
                start = i + 5
                i += 5
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _strip_parens(text: str) -> str:
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _outside_quotes(text: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", text)


@dataclass(frozen=True)
class FilterClause:
    text: str
    fields: tuple[str, ...]
    literal: bool          # no unresolved parts at all
    opaque: bool           # an unresolved part outside string literals: may be anything


def filter_clauses(text: str) -> tuple[list[FilterClause], bool]:
    """Top-level `and` clauses of a (possibly partial) filter text, and whether the list is complete.

    Fully known text goes through `ragdiag.odata` (canonical rendering); text
    with placeholders is split naively. A placeholder outside string literals
    makes its clause opaque and the list incomplete.
    """
    from ragdiag.errors import FilterError
    from ragdiag.odata import clauses as odata_clauses
    from ragdiag.odata import parse

    if not text.strip():
        return [], True
    if not PLACEHOLDER_RE.search(text):
        try:
            return [FilterClause(c.text, tuple(sorted(c.fields)), True, False)
                    for c in odata_clauses(parse(text))], True
        except (FilterError, RecursionError, ValueError):
            pass
    # placeholders may hold quotes or parentheses of their own: protect them while splitting
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(0))
        return f"{{#{len(held) - 1}}}"

    protected = PLACEHOLDER_RE.sub(hold, text)
    if not held:
        return _clauses_raw(text)
    found, complete = _clauses_raw(protected)
    return [FilterClause(re.sub(r"\{#(\d+)\}", lambda m: held[int(m.group(1))], c.text), c.fields, c.literal,
                         c.opaque) for c in found], complete


def _clauses_raw(text: str) -> tuple[list[FilterClause], bool]:
    """`filter_clauses` on text whose placeholders hold no quotes or parentheses."""
    from ragdiag.errors import FilterError
    from ragdiag.odata import clauses as odata_clauses
    from ragdiag.odata import parse

    out: list[FilterClause] = []
    complete = True
    for raw in _split_top_level_and(text):
        raw = _strip_parens(raw)
        if not raw.strip():
            continue
        if " and " in raw.lower() and _split_top_level_and(raw) != [raw]:
            sub, sub_complete = _clauses_raw(raw)
            out.extend(sub)
            complete = complete and sub_complete
            continue
        has_ph = bool(PLACEHOLDER_RE.search(raw))
        opaque = has_ph and bool(PLACEHOLDER_RE.search(_outside_quotes(raw)))
        norm = " ".join(raw.split())
        fields: tuple[str, ...] = ()
        if not has_ph:
            try:
                parsed = odata_clauses(parse(raw))
                norm = " and ".join(c.text for c in parsed)
                fields = tuple(sorted({f for c in parsed for f in c.fields}))
            except (FilterError, RecursionError, ValueError):
                pass
        if not fields and not opaque:
            m = re.match(r"\s*(?:not\s+)?(?:search\.in\s*\(\s*)?([A-Za-z_][\w/]*)", raw)
            if m:
                fields = (m.group(1).split("/")[0],)
        out.append(FilterClause(norm, fields, not has_ph, opaque))
        complete = complete and not opaque
    return out, complete


def clause_role(fields: tuple[str, ...], text: str = "") -> str:
    """The role of a filter clause's fields: security, quality, recency, source, scope or other."""
    names = [f.lower() for f in fields]
    if any(SECURITY_FIELD_RE.match(f) for f in names) or SECURITY_FILTER_RE.search(text):
        return "security"
    if any(re.search(r"confidence|quality|score|rating|ocr|extraction", f) for f in names):
        return "quality"
    if any(re.search(r"date|time|updated|created|modified|year|fresh|timestamp", f) for f in names):
        return "recency"
    if any(re.search(r"source|doc_type|type|category|origin|language|lang", f) for f in names):
        return "source"
    if any(re.search(r"entity|tenant|parent|level|id$|_id|key", f) for f in names):
        return "scope"
    return "other"


# ---- per-file results ------------------------------------------------------------------


@dataclass
class FileResult:
    """What one file yields (picklable, merged by the walker)."""

    search_calls: list[SearchCallSite] = field(default_factory=list)
    vector_queries: list[SearchCallSite] = field(default_factory=list)
    llm_calls: list[LLMCallSite] = field(default_factory=list)
    budget_constants: list[BudgetConstant] = field(default_factory=list)
    citation_checks: list[CitationCheck] = field(default_factory=list)
    prompt_rules: list[PromptRule] = field(default_factory=list)
    security_filters: list[SecurityFilterSite] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    scanned: bool = True


def shared_channels(channels: dict[str, str | None]) -> bool:
    """True when the keyword text variable also feeds a vector text or the semantic query."""
    kw = channels.get("search_text")
    if not kw:
        return False
    return any(v == kw for k, v in channels.items() if k != "search_text" and v)


# ---- request-shape mapping ----------------------------------------------------------------

#: Python SDK keyword -> scanner parameter name.
SDK_PARAMS = {"top": "top", "filter": "filter", "query_type": "query_type",
              "semantic_configuration_name": "semantic_configuration",
              "scoring_profile": "scoring_profile", "vector_filter_mode": "vector_filter_mode",
              "select": "select", "search_fields": "search_fields"}
#: REST body key -> scanner parameter name (GET query-string forms with `$`).
REST_PARAMS = {"top": "top", "$top": "top", "filter": "filter", "$filter": "filter",
               "queryType": "query_type", "semanticConfiguration": "semantic_configuration",
               "scoringProfile": "scoring_profile", "vectorFilterMode": "vector_filter_mode",
               "select": "select", "$select": "select", "searchFields": "search_fields"}
#: JS SDK option -> scanner parameter name.
JS_SDK_PARAMS = {"top": "top", "filter": "filter", "queryType": "query_type",
                 "scoringProfile": "scoring_profile", "select": "select",
                 "searchFields": "search_fields"}


def combine(vals: list[Val], source: str) -> Val:
    """One Val standing for the same parameter over several vector queries."""
    if len(vals) == 1 or (all(v.kind == "scalar" and v.resolved for v in vals)
                          and len({repr(v.value) for v in vals}) == 1):
        inner = vals[0].source
        return vals[0].copy(source=f"{source} {inner}" if inner and inner != "literal" else source)
    return Val("list", None, all_resolved(vals), source, elems=vals)


# ---- the scanned tree ---------------------------------------------------------------------


class Project:
    """The scanned tree: relative file list, safe reading, per-process caches of parsed modules."""

    def __init__(self, root: Any, files: list[str], max_file_bytes: int, check_syntax: bool = False) -> None:
        from pathlib import Path

        self.root = Path(root)
        self.check_syntax = check_syntax
        self.files = files
        self.fileset = frozenset(files)
        self.max_file_bytes = max_file_bytes
        self.cache: dict[Any, Any] = {}
        self._py_modules: dict[str, str] | None = None
        self._py_suffix: dict[str, list[str]] | None = None

    def read_text(self, rel: str) -> str | None:
        """The file's text, or None when it is missing, too large, binary or not UTF-8."""
        try:
            path = self.root / rel
            if path.stat().st_size > self.max_file_bytes:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if b"\x00" in data[:8192]:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def py_modules(self) -> dict[str, str]:
        """Dotted module name -> relative path, for every `.py` file."""
        if self._py_modules is None:
            self._py_modules = {module_name(f): f for f in self.files if f.endswith(".py")}
        return self._py_modules

    def find_py_module(self, dotted: str) -> str | None:
        """The file of module `dotted`: exact, else the unique module whose name ends with it."""
        if not dotted:
            return None
        mods = self.py_modules
        if dotted in mods:
            return mods[dotted]
        if self._py_suffix is None:
            suffix: dict[str, list[str]] = {}
            for name, rel in mods.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    suffix.setdefault(".".join(parts[i:]), []).append(rel)
            self._py_suffix = suffix
        hits = self._py_suffix.get(dotted, [])
        return hits[0] if len(hits) == 1 else None


def module_name(rel: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`; `web/src/a.ts` -> `web.src.a`."""
    stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
    parts = [p for p in stem.split("/") if p]
    strip = ("__init__",) if rel.endswith(".py") else ("index",)
    if parts and parts[-1] in strip and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


ESCAPE_TEXT_RE = re.compile(r"(?:escape|quote|sanitiz|search_?in_?any|search_?in_?filter|odata_?literal|"
                            r"odata_?string)\w*\s*[()]|\.replace(?:All)?\(\s*(?:/'/g|(['\"])'\1)\s*,\s*(['\"])''\2",
                            re.I)


def rest_params(body: Val, ref) -> tuple[dict[str, Val], dict[str, str | None]]:
    """Scanner parameters and channel variables of a REST search body (dict Val)."""
    items = body.items or {}
    params = {REST_PARAMS[k]: v for k, v in items.items() if k in REST_PARAMS}
    channels: dict[str, str | None] = {}
    if "search" in items:
        channels["search_text"] = ref(items["search"])
    if "semanticQuery" in items:
        channels["semantic_query"] = ref(items["semanticQuery"])
    vqs = items.get("vectorQueries")
    if vqs is not None:
        entries = [e for e in (vqs.elems or []) if e.kind == "dict"] if vqs.kind == "list" else []
        if not entries:
            params["k"] = unknown("rest_body", vqs.expr)
        for pname, key in (("k", "k"), ("exhaustive", "exhaustive"), ("vector_fields", "fields"),
                           ("weight", "weight")):
            present = [e.items[key] for e in entries if e.items and key in e.items]
            if pname == "exhaustive" and present:
                present = [e.items[key] if e.items and key in e.items else lit(False, "default") for e in entries]
            if present:
                params[pname] = combine(present, "rest_body")
        n_text = n_vec = 0
        for e in entries:
            if e.items and "text" in e.items:
                n_text += 1
                channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = ref(e.items["text"])
            if e.items and "vector" in e.items:
                n_vec += 1
                channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = ref(e.items["vector"], True)
    return params, channels
