"""The one import the language scanners use for the shared pieces (`from ragdiag.codescan import _common as C`).

Private. The pieces live in modules of one concept each: `values` (the
resolved-value model), `patterns` (name patterns), `filters` (filter
clauses), `project` (the scanned tree, per-file results), `request_shape`
(SDK/REST parameter names); the public records are in `model`.
"""

from __future__ import annotations

from ragdiag.codescan.filters import FilterClause, clause_role, filter_clauses
from ragdiag.codescan.patterns import *  # noqa: F403
from ragdiag.codescan.patterns import is_identity_expr, is_request_expr, root_name
from ragdiag.codescan.project import FileResult, Project, module_name
from ragdiag.codescan.request_shape import (
    JS_SDK_PARAMS,
    REST_PARAMS,
    SDK_PARAMS,
    rest_params,
    rest_request,
    shared_channels,
)
from ragdiag.codescan.values import (
    PLACEHOLDER_RE,
    Val,
    all_resolved,
    combine,
    concat,
    export,
    lit,
    make_dict,
    make_list,
    placeholder,
    plain,
    text_of,
    unknown,
)

__all__ = ["PLACEHOLDER_RE", "FileResult", "FilterClause", "JS_SDK_PARAMS", "Project", "REST_PARAMS",
           "SDK_PARAMS", "Val", "all_resolved", "clause_role", "combine", "concat", "export", "filter_clauses",
           "is_identity_expr", "is_request_expr", "lit", "make_dict", "make_list", "module_name", "placeholder",
           "plain", "rest_params", "rest_request", "root_name", "shared_channels", "text_of", "unknown"]
