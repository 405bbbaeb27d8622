"""Name patterns shared by the language scanners: security fields, budgets, request data, identity.

What a name or an expression's text *looks like*: the scanners use these to
recognise a security filter, a budget constant, request data or the caller's
identity without running anything.
"""

from __future__ import annotations

import re

#: Security field names: the usual ones, and any `*security*`, `*_groups`, `*acl*`, `*permission*`,
#: `*principal*`, `*_oids` field (`security_group`, `entra_groups`, `doc_acl`, `allowed_principals`...).
SECURITY_FIELD = (r"(?:group_ids?|groups|acls?|oids?|user_ids?|allowed_[A-Za-z0-9_]+|owner_ids?|"
                  r"[A-Za-z0-9_]*secur[A-Za-z0-9_]*|[A-Za-z0-9_]+_groups?|groups?_[A-Za-z0-9_]+|"
                  r"[A-Za-z0-9_]*_acls?|acls?_[A-Za-z0-9_]+|[A-Za-z0-9_]*permission[A-Za-z0-9_]*|"
                  r"[A-Za-z0-9_]*principal[A-Za-z0-9_]*|[A-Za-z0-9_]+_oids?|readers?|viewers?|"
                  r"access_?(?:list|groups?|ids?)|tenant_?ids?|visibility)")
SECURITY_FIELD_RE = re.compile(rf"^{SECURITY_FIELD}$", re.I)
#: A filter on a security field: `group_ids/any(`, `acl eq `, `search.in(group_ids, ...`.
SECURITY_FILTER_RE = re.compile(
    rf"\b({SECURITY_FIELD})\s*(?:/\s*(?:any|all)\s*\(|\s+(?:eq|ne)\s)"
    rf"|search\.in\s*\(\s*({SECURITY_FIELD})\b", re.I)
#: A filter whose field name is held in a variable named like a security field: `{acl_field}/any(`.
VAR_FIELD_FILTER_RE = re.compile(r"\{\s*([^{}]*?(?:acl|group|secur|oid|permission|principal|access)[^{}]*?)\s*\}"
                                 r"\s*(?:/\s*(?:any|all)\s*\(|\s+(?:eq|ne)\s)", re.I)
#: Expressions reading an LLM's tool-call / function-call arguments.
LLM_ARG_RE = re.compile(r"tool_calls?|function_call|\.arguments\b|tool_input|tool_args|llm_output|model_output|"
                        r"\bparsed\b|function\.arguments|\bargs\[|\barg\[|\bargs\.get\(", re.I)
#: Calls obtaining the user's token (on-behalf-of, MSAL, a header).
TOKEN_CALL_RE = re.compile(r"on_behalf_of|obo|acquire_token|get_token|get_auth|auth_token|user_token|"
                           r"access_token|token_for|bearer|authorization", re.I)
#: Request data the client controls (the body, the query string, "overrides").
CLIENT_DATA_RE = re.compile(r"overrides|request_json|\bbody\b|payload|\bparams\b|query_params|"
                            r"request\.(json|args|form|query|get_json|values)|req\.body|context\.get\(|"
                            r"request_body|chat_request|req\.query", re.I)
#: Conditions that look like they switch permission trimming on or off.
ACL_TOGGLE_RE = re.compile(r"acl|secur|permission|trim|access_control|enforce|oid|group|authoriz|"
                           r"query_source|use_.*filter", re.I)
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
    return any(IDENTITY_RE.search(p) for path in _paths(expr) for p in path[:2]) or is_identity_value(expr)


#: Names (snake_cased) of values that are the signed-in caller's own id: `userHashedId()`,
#: `get_current_user_id()`, `current_user.id`, `auth.uid()`, `session.user.email`, `user_oid`.
IDENTITY_VALUE_RE = re.compile(r"^(?:get_?)?(?:current_|signed_?in_|logged_?in_|auth(?:enticated)?_|session_)?user_?"
                               r"(?:hashed_?|hash_?)?(?:id|oid|sub|email|hash|principal(?:_id)?)s?$|^uid$|"
                               r"^(?:get_?)?(?:current|signed_?in|logged_?in|session|auth(?:enticated)?)_?user$",
                               re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_identity_value(expr: str) -> bool:
    """Is the expression the caller's own identity by what it calls or reads (`await userHashedId()`)?

    Every part of a dotted path is tried, camelCase read as snake_case: `session.user.id` (`user` then
    `id` do not match alone, `session_user` does not occur) is matched by its last two parts joined."""
    for path in _paths(expr):
        parts = [_CAMEL.sub("_", p).lower() for p in path if p not in ("await", "this", "self")]
        names = parts + [f"{a}_{b}" for a, b in zip(parts, parts[1:], strict=False)]
        if any(IDENTITY_VALUE_RE.search(n) for n in names):
            return True
    return False


#: A clause comparing a field with an interpolated value: `user eq '${await userHashedId()}'`, `owner eq '{uid}'`.
_VALUE_CLAUSE_RE = re.compile(r"\b([A-Za-z_][\w/]*)\s+(?:eq|ne)\s+'?\$?\{([^{}]{1,160})\}")


def identity_clauses(source: str) -> list[tuple[int, str]]:
    """(offset, field) of the filter clauses whose compared value is the caller's identity (any field name).

    A filter on a field not named like a security field (`user`, `createdBy`) trims by identity all the
    same when the value it compares with is the signed-in user's id: the value decides, not the name."""
    return [(m.start(), m.group(1)) for m in _VALUE_CLAUSE_RE.finditer(source) if is_identity_value(m.group(2))]



ESCAPE_TEXT_RE = re.compile(r"(?:escape|quote|sanitiz|search_?in_?any|search_?in_?filter|odata_?literal|"
                            r"odata_?string)\w*\s*[()]|\.replace(?:All)?\(\s*(?:/'/g|(['\"])'\1)\s*,\s*(['\"])''\2",
                            re.I)



#: Filter syntax one of which a line must hold to be tried for a security filter.
FILTER_MARKERS = (" eq ", " ne ", "/any(", "/all(", "search.in", "/any (", "/all (")


def security_offsets(source: str, low: str | None = None) -> list[int]:
    """Offsets of security-field filters, searched only in the lines that hold filter syntax (fast)."""
    low = source.lower() if low is None else low
    spans: set[tuple[int, int]] = set()
    for word in FILTER_MARKERS:
        i = low.find(word)
        while i != -1:
            start = low.rfind("\n", 0, i) + 1
            end = low.find("\n", i)
            end = len(low) if end == -1 else end
            spans.add((start, end))
            i = low.find(word, end)
    out = []
    for start, end in spans:
        m = SECURITY_FILTER_RE.search(source, start, end) or VAR_FIELD_FILTER_RE.search(source, start, end)
        if m:
            out.append(m.start())
        else:
            out.extend(start + off for off, _ in identity_clauses(source[start:end]))
    return out
