"""Which part of the application a site belongs to: the request path, or ingestion, admin, evaluation, tests, scripts.

A consultant's findings are about the request path: the code that runs when
a user asks. Tests, scripts, notebooks, ingestion/indexing, evaluation and
admin code (``"*"`` queries by file name, deletes, backups) also search, but
a missing security clause in an admin script is not a leak, and ten test
searches do not make retrieval "scattered".

Classes (`SITE_CLASSES`): ``request``, ``ingestion``, ``admin``,
``evaluation``, ``test``, ``script``, ``unreachable``. The class is decided,
in this order, by

1. the path and file name (``tests/``, ``test_*.py``, ``*.spec.ts`` → test;
   ``evals/``, ``evaluate.py`` → evaluation);
2. what the site does (a ``"*"`` query, a function named ``delete_*``,
   ``backup``, ``reindex`` → admin; ``upload``/``ingest``/``index_documents``
   → ingestion);
3. reachability from entry points (`ragdiag.codescan.reach`): a site a
   request entry point reaches (a route, a lifespan, a serverless trigger, an
   agent tool, a graph a LangGraph server serves...) is on the request path,
   whatever its folder;
4. the path (``scripts/``, ``notebooks/``, ``.ipynb`` → script;
   ``ingest*/``, ``prepdocs``, ``indexer`` → ingestion; ``admin/``,
   ``backup`` → admin);
5. the entry points of another kind that reach it (a ``__main__`` block, a
   test, an evaluation);
6. in a tree without any request entry point (a library, an excerpt of an
   app) reachability cannot tell: the site stays ``request`` and its reason
   says that its reachability is unknown;
7. otherwise ``unreachable``: no entry point reaches it (dead code, or an
   entry point of a framework ragdiag does not know: the reason names the
   entry points found). Checks never judge an unreachable site as request
   path, and never pass on it either: they say what they could not reach.
"""

from __future__ import annotations

import re

from ragdiag.codescan.model import SITE_CLASSES

_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|testing|spec|e2e|cypress|playwright)(/|$)|(^|/)(test_[^/]*|[^/]*_tests?"
                        r"\.py|conftest\.py|locustfile\.py|[^/]*\.(test|spec)\.[jt]sx?)$", re.I)
_EVAL_PATH = re.compile(r"(^|/)(evals?|evaluations?|evaluators?|benchmarks?|experiments?)(/|$)|"
                        r"(^|/)[^/]*(?<![a-z])eval(uate|uation|uations|s)?(?![a-z])[^/]*$", re.I)
_INGEST_PATH = re.compile(r"(^|/)(ingest\w*|indexing|indexers?|loaders?|prepdocs\w*|prepdata\w*|data_?prep\w*|"
                          r"enrichment|pipelines?|etl|skills?|functions/File\w*)(/|\.|$)|(^|/)[^/]*(ingest|prepdocs|"
                          r"upload|create[-_]?index|index[-_]?(docs|documents|data)|load[-_]?data|seed|"
                          r"setup[-_]\w*|embed[-_]?documents|update[-_]?embeddings)[^/]*$", re.I)
_ADMIN_PATH = re.compile(r"(^|/)(admin|maintenance|migrations?|ops)(/|$)|(^|/)[^/]*(backup|restore|migrat|"
                         r"merge[-_]databases|cleanup|purge|delete)[^/]*$", re.I)
_SCRIPT_PATH = re.compile(r"(^|/)(scripts?|tools|bin|notebooks?|samples?|examples?|demos?|docs|workshop|infra|"
                          r"deploy\w*|(demo|sample|example|quickstart|tutorial)[-_][\w-]+)(/|$)|\.ipynb$", re.I)
_ADMIN_FUNC = re.compile(r"(^|[._])(delete|remove|purge|backup|restore|reindex|re_index|migrat|cleanup|clear|"
                         r"drop|export|dump|count|list_all|admin|load_chunks|get_all|fetch_all|iterate_all)", re.I)
_INGEST_FUNC = re.compile(r"(^|[._])(ingest|upload|index_(docs|documents|files|chunks)|create_index|load_(docs|data|"
                          r"documents)|add_documents|seed|populate|embed_documents|update_embeddings|"
                          r"prepdocs|prep_docs|prepare_(docs|documents|index|data)|build_index|setup_index)", re.I)
_TEST_FUNC = re.compile(r"(^|[._])test_|^Test", re.I)
_EVAL_FUNC = re.compile(r"(^|[._])(evaluat|eval_|run_eval|benchmark)", re.I)

from ragdiag.codescan.reach import (  # noqa: E402  (the call graph lives in its own module)
    CallGraph,
    FuncNode,
    _lang,
    called_names,
    entry_flags,
    js_graph,
    python_graph,
)


def path_class(rel: str) -> tuple[str | None, str]:
    """(class, reason) from the path alone; (None, "") when the path says nothing."""
    if _TEST_PATH.search(rel):
        return "test", "test path"
    if _EVAL_PATH.search(rel):
        return "evaluation", "evaluation path"
    if rel.lower().endswith(".ipynb"):
        return "script", "notebook"
    if _ADMIN_PATH.search(rel):
        return "admin", "admin path"
    if _INGEST_PATH.search(rel):
        return "ingestion", "ingestion path"
    if _SCRIPT_PATH.search(rel):
        return "script", "notebook" if rel.lower().endswith(".ipynb") else "script path"
    return None, ""


#: The reason text of a site taken as request path because the tree holds no request entry point.
UNKNOWN_REACH = "application code; no request entry point in the tree, so its reachability is unknown"


def classify(file: str, function: str, line: int, graph: CallGraph | None, *, search_text: object = None,
             call: str = "", vector: bool = False) -> tuple[str, str]:
    """(class, reason) of a site at `file:line` in `function` (see the module docstring)."""
    by_path, why = path_class(file)
    if by_path in ("test", "evaluation"):
        return by_path, why
    func_last = function.rsplit(".", 1)[-1]
    if _TEST_FUNC.search(func_last):
        return "test", f"test function {function}"
    if isinstance(search_text, str) and search_text.strip() in ("*", "") and not vector:
        return "admin", f"{search_text.strip() or 'empty'!r} query without vectors (lists the index)"
    if re.search(r"delete|upload|merge_or_upload|index_documents", call or "", re.I):
        return ("admin" if "delete" in call.lower() else "ingestion"), f"calls {call}"
    if _ADMIN_FUNC.search(func_last):
        return "admin", f"admin function {function}"
    if _INGEST_FUNC.search(func_last):
        return "ingestion", f"ingestion function {function}"
    if _EVAL_FUNC.search(func_last):
        return "evaluation", f"evaluation function {function}"
    if graph is None:
        return by_path or "request", why or "application code (no call graph)"
    node = graph.node_at(file, function, line)
    reached = graph.entry_of(node) if node is not None else None
    if reached is not None and reached[0] == "request":
        chain = graph.path(node)
        via = f" via {' -> '.join(chain[1:])}" if len(chain) > 1 else ""
        return "request", f"reachable from {reached[1]}{via}"[:300]
    if by_path is not None:
        return by_path, why
    if not graph.has_request_entries:
        # nothing in the tree says where a request comes in (a library, an excerpt of an app): reachability
        # cannot tell the request path from dead code, and says so
        if node is not None and node.kind == "module" and node.entry == "script" and function == "<module>":
            return "script", "module-level code of a script"
        return "request", f"{UNKNOWN_REACH} (entry points found: {graph.summary()})"
    if reached is not None:
        return reached[0], f"reachable only from {reached[1]}"
    return "unreachable", f"no entry point reaches it (entry points found: {graph.summary()})"


__all__ = ["SITE_CLASSES", "CallGraph", "FuncNode", "_lang", "called_names", "classify", "entry_flags", "js_graph",
           "path_class", "python_graph"]
