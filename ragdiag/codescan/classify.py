"""Which part of the application a site belongs to: the request path, or ingestion, admin, evaluation, tests, scripts.

A consultant's findings are about the request path: the code that runs when
a user asks. Tests, scripts, notebooks, ingestion/indexing, evaluation and
admin code (``"*"`` queries by file name, deletes, backups) also search, but
a missing security clause in an admin script is not a leak, and ten test
searches do not make retrieval "scattered".

Classes (`SITE_CLASSES`): ``request``, ``ingestion``, ``admin``,
``evaluation``, ``test``, ``script``. The class is decided, in this order, by

1. the path and file name (``tests/``, ``test_*.py``, ``*.spec.ts`` → test;
   ``evals/``, ``evaluate.py`` → evaluation);
2. what the site does (a ``"*"`` query, a function named ``delete_*``,
   ``backup``, ``reindex`` → admin; ``upload``/``ingest``/``index_documents``
   → ingestion);
3. the path (``scripts/``, ``notebooks/``, ``.ipynb`` → script;
   ``ingest*/``, ``prepdocs``, ``indexer`` → ingestion; ``admin/``,
   ``backup`` → admin);
4. the call graph: a function reachable from a request entry point (a route
   decorator, an HTTP-triggered function, a LangChain tool or retriever, a
   Next.js route handler...) is on the request path; one reachable only from
   a ``__main__`` block, a test or an evaluation entry takes that class;
5. otherwise ``request`` (application code whose caller is not visible).

The call graph is built from every source file by a light pass over its text
(definitions, decorators, called names), so it costs little and also covers
files the analyses do not parse. Names are matched by their last part, which
over-approximates: it can only promote to the request path, never hide a
request site.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field

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

# ---- the light call graph -------------------------------------------------------------------------------

#: Decorators (last part) that make a function a request entry point.
_ROUTE_DECOS = frozenset({"route", "get", "post", "put", "patch", "delete", "websocket", "api_route", "http",
                          "function_name", "on_message", "on_chat_start", "tool", "message", "event",
                          "app_mention", "command", "message_handler", "on_event"})
_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)|^([ \t]*)class[ \t]+(\w+)", re.M)
_PY_DECO = re.compile(r"^[ \t]*@([\w.]+)", re.M)
_CALLED = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)[ \t]*\(")
_REQUEST_METHODS = frozenset({"_run", "_arun", "_get_relevant_documents", "_aget_relevant_documents",
                              "on_message_activity", "on_turn", "invoke", "ainvoke"})
_REQUEST_BASES = re.compile(r"BaseTool|BaseRetriever|ActivityHandler|TeamsActivityHandler|Resource|View|Handler")
_JS_ROUTE = re.compile(r"\b(?:app|router|server|api|fastify|route)\.(?:get|post|put|patch|delete|all|use|route)\s*\(",
                       re.I)
_JS_FUNC = re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|"
                      r"(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>|"
                      r"^[ \t]*(?:public[ \t]+|private[ \t]+|protected[ \t]+|static[ \t]+|async[ \t]+)*([A-Za-z_$][\w$]*)"
                      r"[ \t]*\([^)\n]*\)[ \t]*(?::[^{;\n]*)?\{", re.M)
_NEXT_HANDLER = re.compile(r"export\s+(?:async\s+)?function\s+(GET|POST|PUT|PATCH|DELETE)\b|"
                           r"export\s+default\s+(?:async\s+)?function")
_STREAMLIT = re.compile(r"^\s*import streamlit|^\s*from streamlit|\bst\.(?:chat_input|text_input|button)\(", re.M)
_NEWLINE = re.compile("\n")
_MAIN_BLOCK = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M)
_FRONTEND = re.compile(r"(^|/)(frontend|web|webapp|client|ui|src/(pages|components|api))(/|$)|\.(tsx|jsx)$", re.I)


@dataclass
class FuncNode:
    """A function of the scanned tree, as the light pass sees it."""

    file: str
    name: str
    qual: str
    start: int
    end: int
    calls: set[str] = field(default_factory=set)
    entry: str | None = None      # "request", "script", "test", "evaluation" or None


def called_names(text: str, start: int = 0, end: int | None = None) -> set[str]:
    """Names written just before a `(` in `text[start:end]` (calls, over-approximately; str scans, no regex)."""
    end = len(text) if end is None else end
    out: set[str] = set()
    i = text.find("(", start, end)
    while i != -1:
        j = i
        while j > start and text[j - 1] in " \t":
            j -= 1
        k = j
        while k > start and (text[k - 1].isalnum() or text[k - 1] in "_$"):
            k -= 1
        if k < j and not text[k].isdigit():
            out.add(text[k:j])
        i = text.find("(", i + 1, end)
    return out


def _py_defs(text: str) -> list[tuple[int, int, int, int, str, bool]]:
    """(offset of the line, offset of the header end, line index, indent, name, is_class) of each def/class."""
    found: list[tuple[int, int, int, int, str, bool]] = []
    for word, is_class in (("def ", False), ("class ", True)):
        i = text.find(word)
        while i != -1:
            start = text.rfind("\n", 0, i) + 1
            prefix = text[start:i]
            if (not prefix.strip() or prefix.strip() == "async") and (i == 0 or text[i - 1] in " \t\n"):
                j = i + len(word)
                k = j
                while k < len(text) and (text[k].isalnum() or text[k] == "_"):
                    k += 1
                if k > j:
                    eol = text.find("\n", k)
                    found.append((start, len(text) if eol == -1 else eol, 0,
                                  len(prefix) - len(prefix.lstrip()), text[j:k], is_class))
            i = text.find(word, i + 1)
    found.sort()
    out = []
    line, last = 0, 0
    for start, eol, _l, indent, name, is_class in found:
        line += text.count("\n", last, start)
        last = start
        out.append((start, eol, line, indent, name, is_class))
    return out


def python_graph(rel: str, text: str) -> list[FuncNode]:
    """Functions of a Python file with the names they call and whether they are entry points."""
    defs = _py_defs(text)
    n_lines = text.count("\n") + 1
    out: list[FuncNode] = []
    stack: list[tuple[int, str, bool]] = []
    bases: dict[str, str] = {}
    for i, (offset, eol, line, indent, name, is_class) in enumerate(defs):
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if is_class:
            bases[name] = text[offset:eol]
            stack.append((indent, name, True))
            continue
        end, end_offset = n_lines, len(text)
        for offset2, _e, line2, indent2, _n, _c in defs[i + 1:]:
            if indent2 <= indent:
                end, end_offset = line2, offset2
                break
        qual = ".".join([s[1] for s in stack] + [name])
        calls = called_names(text, eol, end_offset)
        calls.discard(name)
        entry = None
        p = offset - 1
        while p > 0:  # the decorators above the def
            q = text.rfind("\n", 0, p) + 1
            deco_line = text[q:p]
            if not deco_line.lstrip().startswith("@"):
                break
            deco = _PY_DECO.match(deco_line)
            if deco and deco.group(1).rsplit(".", 1)[-1] in _ROUTE_DECOS and (
                    "." in deco.group(1) or deco.group(1) == "tool"):
                entry = "request"
            p = q - 1
        cls = next((s[1] for s in reversed(stack) if s[2]), None)
        if entry is None and cls and name in _REQUEST_METHODS and _REQUEST_BASES.search(bases.get(cls, "")):
            entry = "request"
        if entry is None and name == "main" and "HttpRequest" in text[offset:eol]:
            entry = "request"
        if entry is None and name.startswith("test") and _TEST_PATH.search(rel):
            entry = "test"
        out.append(FuncNode(rel, name, qual, line + 1, end, calls, entry))
        stack.append((indent, name, False))
    main = _MAIN_BLOCK.search(text) if "__main__" in text else None
    module_entry = None
    if "streamlit" in text and _STREAMLIT.search(text):
        module_entry = "request"
    elif main or _TEST_PATH.search(rel) or _EVAL_PATH.search(rel):
        module_entry = "test" if _TEST_PATH.search(rel) else "evaluation" if _EVAL_PATH.search(rel) else "script"
    # module-level code may call anything the file calls (an over-approximation that only adds reach)
    module_calls = called_names(text) if module_entry else set()
    out.append(FuncNode(rel, "<module>", "<module>", 1, n_lines, module_calls, module_entry))
    return out


def js_graph(rel: str, text: str) -> list[FuncNode]:
    """Functions of a JS/TS file (approximate extents) with the names they call; route handlers are entries."""
    newlines = [m.start() for m in _NEWLINE.finditer(text)]
    starts = []
    for m in _JS_FUNC.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3)
        if name in ("if", "for", "while", "switch", "catch", "function", "return"):
            continue
        starts.append((bisect.bisect_right(newlines, m.start()), name, m.start()))
    lines_total = text.count("\n") + 1
    out: list[FuncNode] = []
    is_route_file = bool(re.search(r"(^|/)(app|pages)/api/|(^|/)route\.[jt]s$", rel))
    for i, (line, name, pos) in enumerate(starts):
        end_pos = starts[i + 1][2] if i + 1 < len(starts) else len(text)
        entry = "request" if (is_route_file and _NEXT_HANDLER.search(text, pos, pos + 80)) else None
        out.append(FuncNode(rel, name, name, line + 1, (starts[i + 1][0] if i + 1 < len(starts) else lines_total),
                            called_names(text, pos, end_pos) - {name}, entry))
    module_entry = "request" if (_JS_ROUTE.search(text) or _FRONTEND.search(rel)) else None
    if _TEST_PATH.search(rel):
        module_entry = "test"
    out.append(FuncNode(rel, "<module>", "<module>", 1, lines_total, called_names(text), module_entry))
    if module_entry == "request" and _JS_ROUTE.search(text):
        for f in out:  # handlers passed to app.get(...) are named there
            f.entry = f.entry or ("request" if re.search(rf"\.(?:get|post|put|patch|delete|all|use)\s*\([^)]*\b"
                                                        rf"{re.escape(f.name)}\b", text) else None)
    return out


def entry_flags(kind: str, rel: str, text: str) -> frozenset[str]:
    """Cheap flags of a file: ``request`` (holds a request entry point), ``script`` (a `__main__` block).

    Computed for every file during the scan (str tests, no parse); the call
    graph is only built when some file has a request entry point, since without
    one reachability cannot change a site's class.
    """
    flags = set()
    if kind == "python":
        i = text.find("@")
        while i != -1:
            start = text.rfind("\n", 0, i) + 1
            if not text[start:i].strip():
                end = text.find("\n", i)
                deco = _PY_DECO.match(text[start:end if end != -1 else len(text)])
                if deco and deco.group(1).rsplit(".", 1)[-1] in _ROUTE_DECOS and (
                        "." in deco.group(1) or deco.group(1) == "tool"):
                    flags.add("request")
                    break
            i = text.find("@", i + 1)
        if any(w in text for w in ("BaseTool", "BaseRetriever", "ActivityHandler", "HttpRequest")) or (
                "streamlit" in text and _STREAMLIT.search(text)):
            flags.add("request")
        if "__main__" in text:
            flags.add("script")
    elif kind == "js":
        if _FRONTEND.search(rel) or re.search(r"(^|/)(app|pages)/api/|(^|/)route\.[jt]s$", rel) or (
                ("app." in text or "router." in text or "server." in text) and _JS_ROUTE.search(text)):
            flags.add("request")
    return frozenset(flags)


class CallGraph:
    """Name-based reachability over the light graph of the whole tree."""

    def __init__(self, nodes: list[FuncNode]) -> None:
        self.nodes = nodes
        self.by_name: dict[str, list[FuncNode]] = defaultdict(list)
        self.by_file: dict[str, list[FuncNode]] = defaultdict(list)
        for n in nodes:
            self.by_name[n.name].append(n)
            self.by_file[n.file].append(n)
        self.reach: dict[str, dict[int, str]] = {}
        for kind in ("request", "script", "test", "evaluation"):
            self.reach[kind] = self._reach([n for n in nodes if n.entry == kind])
        self.has_request_entries = any(n.entry == "request" for n in nodes)

    def _reach(self, seeds: list[FuncNode]) -> dict[int, str]:
        seen: dict[int, str] = {id(s): f"{s.file}:{s.start} {s.qual}" for s in seeds}
        stack = list(seeds)
        while stack:
            n = stack.pop()
            lang = _lang(n.file)
            for called in n.calls:
                for target in self.by_name.get(called, ()):
                    if id(target) not in seen and target.name != "<module>" and _lang(target.file) == lang:
                        seen[id(target)] = seen[id(n)]
                        stack.append(target)
        return seen

    def node_at(self, file: str, function: str, line: int) -> FuncNode | None:
        """The innermost function of `file` holding `line` (its last name part matching `function`)."""
        last = function.rsplit(".", 1)[-1]
        best = None
        for n in self.by_file.get(file, ()):
            if n.name == "<module>":
                continue
            if n.start <= line < max(n.end, n.start + 1) + 1 and (best is None or n.start >= best.start):
                best = n
        if best is not None and (best.name == last or function == "<module>"):
            return best
        for n in self.by_file.get(file, ()):
            if n.name == last:
                return n
        return next((n for n in self.by_file.get(file, ()) if n.name == "<module>"), None)

    def entry_of(self, node: FuncNode) -> tuple[str, str] | None:
        """(class, entry point) when `node` is reachable from entry points of one kind only, request first."""
        for kind in ("request", "test", "evaluation", "script"):
            where = self.reach[kind].get(id(node))
            if where is not None:
                return kind, where
        return None


def _lang(rel: str) -> str:
    return "js" if rel.lower().endswith((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")) else "py"


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
    node = graph.node_at(file, function, line) if graph is not None else None
    reached = graph.entry_of(node) if graph is not None and node is not None else None
    if by_path is not None:
        if reached is not None and reached[0] == "request" and node is not None and node.entry == "request":
            return "request", f"request entry point {reached[1]}"
        return by_path, why
    if reached is not None:
        kind, where = reached
        if kind == "request":
            return "request", f"reachable from {where}"
        if graph is not None and graph.has_request_entries:
            return kind, f"reachable only from {where}"
    if node is not None and node.name == "<module>" and node.entry == "script" and function == "<module>":
        return "script", "module-level code of a script"
    return "request", "application code"


__all__ = ["SITE_CLASSES", "CallGraph", "FuncNode", "called_names", "classify", "entry_flags", "js_graph",
           "path_class", "python_graph"]
