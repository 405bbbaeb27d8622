"""A search the app asks the database to run: `supabase.rpc('match_documents', {...})`, in both languages.

The call names a SQL function; the catalogue of the tree's `.sql` files (`sql_catalog`) says what
it does. This module turns one such call into the scanner's records, the same way for Python and
JS/TS (the language scanners resolve the arguments and hand over plain facts):

* a `SearchCallSite` of kind ``sql_similarity``: `k` from the chained `.limit(n)` or the function's
  own limit parameter (``match_count``), `score_threshold` from the argument the function compares
  the similarity with;
* a `ClientThreshold` for that cut: applied in the SQL before the limit (not after `top`), with
  the direction the SQL gives it (`x <#> q < -t` keeps similarity above t);
* permission trimming by row-level security: the tables the function reads have RLS enabled with
  policies keyed on the caller (`auth.uid()`), and the function runs as the invoker. How the
  client connects decides whether it holds: the caller's token forwarded (``Authorization`` from
  the request) trims; the service key, or a `security definer` function, bypasses it
  (``rls_bypassed``, a fail-open);
* a ``sql_function_missing`` gap when the function's SQL is not in the tree (the scanner cannot
  tell what it searches or whether it trims).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragdiag.codescan.model import AclSite, ClientThreshold, FailOpen, Gap, SearchCallSite
from ragdiag.codescan.sql_catalog import identity_policies, sql_catalog
from ragdiag.codescan.values import Val, export, lit, unknown

__all__ = ["RpcCall", "looks_like_search_rpc", "record_rpc"]

_SEARCH_NAME = re.compile(r"match|search|similar|retriev|nearest|neighbo|semantic|hybrid|embed", re.I)
_EMBED_KEY = re.compile(r"embedding|vector|query_vec|qvec", re.I)
_LIMIT_KEYS = ("match_count", "k", "top_k", "limit", "match_limit", "count", "num_results")
_THRESHOLD_KEYS = ("match_threshold", "similarity_threshold", "threshold", "min_similarity", "score_threshold")
_SERVICE_KEY = re.compile(r"service_?role|SERVICE_ROLE|service_key|SERVICE_KEY|secret_key|SECRET", re.I)
_USER_TOKEN = re.compile(r"authorization|access_token|jwt|bearer|session", re.I)


@dataclass
class RpcCall:
    """One `.rpc(name, args)` call as a language scanner resolved it."""

    file: str
    line: int
    function: str
    module: str
    language: str
    name: str
    args: Val | None
    limit: Val | None       # a chained `.limit(n)`
    client: str             # the text of the expression the client was built with (createClient(...))
    client_from_request: bool
    call: str


def looks_like_search_rpc(project: Any, name: str, args: Val | None) -> bool:
    """A known searching SQL function, or one named and called like a similarity search."""
    if name in sql_catalog(project).functions:
        return True
    keys = list(args.items or {}) if args is not None and args.kind == "dict" else []
    return bool(_SEARCH_NAME.search(name)) and (any(_EMBED_KEY.search(k) for k in keys) or not keys)


def _arg(args: Val | None, names: tuple[str, ...]) -> tuple[str, Val] | None:
    if args is None or args.kind != "dict" or not args.items:
        return None
    for n in names:
        if n and n in args.items:
            return n, args.items[n]
    return None


def record_rpc(project: Any, rpc: RpcCall, out: Any) -> SearchCallSite:
    """Add the site, its threshold, its trimming (or the gap) to `out` (a FileResult); returns the site."""
    cat = sql_catalog(project)
    fn = cat.functions.get(rpc.name)
    where = f"{rpc.file}:{rpc.line}"
    params: dict[str, Val] = {}
    limit = _arg(rpc.args, ((fn.limit_param if fn else ""), *_LIMIT_KEYS))
    if rpc.limit is not None:
        params["k"] = rpc.limit
    elif limit is not None:
        params["k"] = limit[1]
    elif fn is not None:
        params["k"] = lit(None, f"sql:{fn.name} (no limit)").copy(resolved=False, expr=f"{fn.name}() returns every match")
    cut = _arg(rpc.args, ((fn.threshold_param if fn else ""), *_THRESHOLD_KEYS))
    if cut is not None:
        params["score_threshold"] = cut[1]
    site = SearchCallSite(file=rpc.file, line=rpc.line, kind="sql_similarity", function=rpc.function,
                          module=rpc.module, params={k: export(v) for k, v in params.items()},
                          language=rpc.language, call=rpc.call)
    out.search_calls.append(site)
    if fn is None:
        out.gaps.append(Gap(file=rpc.file, line=rpc.line, kind="sql_function_missing", function=rpc.function,
                            detail=f"{rpc.name}(): its SQL is not in the scanned tree (what it searches, its limit "
                                   f"and whether it trims are unknown)", site=where, language=rpc.language))
        return site
    if cut is not None and fn.threshold_param == cut[0]:
        value = cut[1] if cut[1].kind == "scalar" else unknown(cut[1].source, cut[1].expr)
        out.thresholds.append(ClientThreshold(
            file=rpc.file, line=rpc.line, function=rpc.function, field=f"{fn.name}.{cut[0]}",
            op=">" if fn.threshold_measure == "score" else "<", value=export(value),
            measure=fn.threshold_measure or "score", keeps="above" if fn.threshold_measure == "score" else "below",
            reversed=fn.threshold_reversed, after_top=False,
            evidence=f"applied in the SQL of {fn.name} ({fn.location}, {fn.operator}) before its limit",
            language=rpc.language))
    _trimming(cat, fn, rpc, where, out)
    return site


def _trimming(cat: Any, fn: Any, rpc: RpcCall, where: str, out: Any) -> None:
    policies = identity_policies(cat, fn.tables)
    secured = sorted({p.table for p in policies})
    if not secured:
        return
    pol = policies[0]
    detail = (f"row-level security on {', '.join(secured)} ({pol.location}: {pol.identity}); "
              f"{fn.name} runs as the {'owner' if fn.security_definer else 'invoker'}")
    service = bool(_SERVICE_KEY.search(rpc.client))
    user = rpc.client_from_request or bool(_USER_TOKEN.search(rpc.client))
    detail += "; the client carries " + ("the service key" if service else "the caller's token" if user
                                         else "no visible user token")
    out.acl_sites.append(AclSite(file=rpc.file, line=rpc.line, function=rpc.function,
                                 mechanism="row_level_security", detail=detail[:300], site=where,
                                 language=rpc.language))
    if fn.security_definer:
        out.fail_open.append(FailOpen(file=rpc.file, line=rpc.line, function=rpc.function, kind="rls_bypassed",
                                      evidence=f"{fn.name} is `security definer` ({fn.location}): it reads "
                                               f"{', '.join(secured)} as its owner, which row-level security "
                                               f"does not restrict", site=where, language=rpc.language))
    elif service:
        out.fail_open.append(FailOpen(file=rpc.file, line=rpc.line, function=rpc.function, kind="rls_bypassed",
                                      evidence=f"the client is built with the service key ({rpc.client[:80]}): "
                                               f"it bypasses the row-level security of {', '.join(secured)}",
                                      site=where, language=rpc.language))
