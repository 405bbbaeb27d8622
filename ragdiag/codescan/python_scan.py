"""Python client code, read with `ast` (never imported, never run).

One pass over the tree collects calls, strings, functions and assignments;
the analyses then resolve what they need: literals, module constants
(also `from .settings import TOP_K` from a sibling module of the scanned
tree), simple locals of the same function, f-strings, concatenations,
`str.format`, `" and ".join([...])`, dict literals passed as `**kwargs` or as
REST bodies, and helper functions that return such a dict (the "builder").
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx, LanguageScanner, register
from ragdiag.codescan.model import BudgetConstant, SearchCallSite, Skipped
from ragdiag.codescan.python_acl import AclPass
from ragdiag.codescan.python_agents import AgentsPass
from ragdiag.codescan.python_callers import CallerValues
from ragdiag.codescan.python_index import PyModule, children, ctor_tag, dotted, unparse
from ragdiag.codescan.python_llm import LLMSites
from ragdiag.codescan.python_resolve import PyResolver
from ragdiag.codescan.python_results import ResultsPass
from ragdiag.codescan.python_retrieval import DelegatedSites
from ragdiag.codescan.python_sites import SearchSites
from ragdiag.codescan.python_sql import SqlSimilaritySites
from ragdiag.codescan.python_strings import StringSites, is_string_expr
from ragdiag.codescan.values import Val, export
from ragdiag.codescan.vector_db import VECTOR_DB_WORDS

_CITATION_TRIGGER = re.compile(r"def\s+\w*(?:citation|cite|sources)", re.I)
#: Lower-case substrings of everything the analyses look for (plain `in` tests are fast).
_KEYWORDS = (".search(", "vectoriz", "vectoris", "docs/search", "similarity_search", "as_retriever",
             "as_query_engine", "as_chat_engine", "retriever", "vectorstore", "hybrid_search", "<->", "<=>",
             "<#>", "cosine_distance", "l2_distance", "max_inner_product", ".create(", "invoke(", ".stream(",
             ".predict(", "completion", ".batch(", "generate_content", ".chat(", ".parse(", "requests",
             "httpx", "aiohttp", "urllib", ".post(", ".request(", "prompt", "search_in", "retrieve(",
             "data_sources", "extra_body", "query_source", "query-source", "azureaisearch", "faiss",
             "add_node", "rerankerscore", "reranker_score", "score_threshold", "top_n_documents", "strictness",
             "in_scope", ".rpc(")

_KEYWORDS += VECTOR_DB_WORDS  # native vector-database clients (ragdiag.codescan.vector_db)


def _triggered(source: str, low: str | None = None) -> bool:
    """Could the file yield anything at all? (If not, it is not even parsed.) `low`: `source.lower()`."""
    low = source.lower() if low is None else low
    return _first_keyword(low) < len(_KEYWORDS) or _triggered_without_keywords(source, low)


def _first_keyword(low: str) -> int:
    """Index of the first of `_KEYWORDS` in `low` (len(_KEYWORDS): none): those before it are absent."""
    for i, k in enumerate(_KEYWORDS):
        if k in low:
            return i
    return len(_KEYWORDS)


def _triggered_without_keywords(source: str, low: str) -> bool:
    """The gate's tests after the keywords: a citation function, a security filter, a budget constant."""
    if ("cit" in low or "sources" in low) and _CITATION_TRIGGER.search(source):
        return True
    if _security_offsets(source, low):
        return True
    return _has_budget_constant(source, low)


_ASSIGNED_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def _has_budget_constant(source: str, low: str) -> bool:
    """Is some line an assignment to a budget-like name? (Only lines holding max/budget/limit are tried.)"""
    for word in ("max", "budget", "limit"):
        i = low.find(word)
        while i != -1:
            start = low.rfind("\n", 0, i) + 1
            m = _ASSIGNED_NAME.match(source, start)
            if m and C.BUDGET_NAME_RE.search(m.group(1)):
                return True
            end = low.find("\n", i)
            if end == -1:
                break
            i = low.find(word, end)
    return False


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar,
             ast.Match, ast.match_case, ast.ExceptHandler)
#: Lower-case words marking the lines the collecting walk must visit.
_LINE_WORDS = (*_KEYWORDS, "searchclient", "openai", "faiss", "vectorstoreindex", "azuresearch", "chroma",
               "pgvector", "chat", "max_marginal_relevance", "l1_distance", "client.", "session.", ".put(",
               "urlopen", "search.in", "add_edge",
               "add_conditional_edges", "stategraph", "recursion_limit", "retrieve", "knowledge", "datasource",
               "documentstore", "vectorstore", "chroma", "pgvector", ".rpc(")


#: `_LINE_WORDS` without the words holding another one (a line holding "vectorstoreindex" holds
#: "vectorstore"): the same lines, found with fewer passes over the text.
_LINE_WORDS_MIN = tuple(w for w in dict.fromkeys(_LINE_WORDS)
                        if not any(o != w and o in w for o in _LINE_WORDS))


#: Per index i of `_first_keyword`: the line words without `_KEYWORDS[:i]` (known absent from the file).
_LINE_WORDS_MIN_AFTER = tuple(tuple(w for w in _LINE_WORDS_MIN if w not in _KEYWORDS[:i])
                              for i in range(len(_KEYWORDS) + 1))
_LINE_WORDS_AFTER = tuple(tuple(w for w in _LINE_WORDS if w not in _KEYWORDS[:i]) for i in range(len(_KEYWORDS) + 1))


def _security_offsets(source: str, low: str) -> list[int]:
    return C.security_offsets(source, low)


_SQL_EXEC_WORDS = (".execute(", ".executemany(", ".fetch(", ".fetchrow(", ".fetchval(", ".fetch_all(",
                   ".fetch_one(", "exec_driver_sql(")


def _interesting_lines(source: str, low: str | None = None, security: list[int] | None = None,
                       first_keyword: int = 0) -> list[int]:
    """Sorted numbers of the lines holding a trigger word, a security field filter or an SQL operator
    (`low`: `source.lower()`, `security`: `_security_offsets(source, low)`, when the caller has them;
    `first_keyword`: `_first_keyword(low)`, the gate's keywords before it are not searched again)."""
    low = source.lower() if low is None else low
    offsets: set[int] = set()
    same_length = len(low) == len(source)  # (a few characters lower-case to two: offsets then drift)
    for word in (_LINE_WORDS_MIN_AFTER if same_length else _LINE_WORDS_AFTER)[first_keyword]:
        i = low.find(word)
        while i != -1:
            offsets.add(i)
            eol = low.find("\n", i) if same_length else i  # one offset per line is enough for the walk
            if eol == -1:
                break
            i = low.find(word, eol + 1)
    offsets.update(_security_offsets(source, low) if security is None else security)
    if any(op in source for op in ("<->", "<=>", "<#>")):  # the calls that run an SQL similarity query
        for word in _SQL_EXEC_WORDS:
            i = low.find(word)
            while i != -1:
                offsets.add(i)
                i = low.find(word, i + 1)
    # the line of an offset is 1 + the newlines before it: counted between consecutive offsets
    lines: list[int] = []
    line, prev = 1, 0
    for off in sorted(offsets):
        line += source.count("\n", prev, off)
        prev = max(prev, off)
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


class PyFileScan(SearchSites, DelegatedSites, LLMSites, StringSites, SqlSimilaritySites, AclPass, ResultsPass,
                 AgentsPass, CallerValues):
    """One Python file: a collecting walk, then the analyses (the mixins) over what it collected."""

    def __init__(self, project: C.Project, rel: str, source: str, tree: ast.Module, low: str | None = None,
                 first_keyword: int = 0) -> None:
        self.project = project
        self.rel = rel
        self.source = source
        #: `source.lower()`, made once per file (the passes test words in it)
        self.low = low = source.lower() if low is None else low
        self._security: list[int] | None = None
        self._first_keyword = first_keyword  # the gate's keywords before this index are absent
        self.mod = PyModule(project, rel, tree)
        self.r = PyResolver(project)
        self.out = C.FileResult()
        self.calls: list[tuple[ast.Call, str, Any, str | None]] = []
        self.awaited: set[int] = set()
        self.strings: list[tuple[ast.AST, str, Any, str | None]] = []
        self.prompt_assigns: list[tuple[str, ast.expr, str, Any, str | None]] = []
        self.functions: list[tuple[str, Any, str | None]] = []
        self.typed: dict[str, str] = {}
        self.typed_tail: dict[str, str] = {}
        self.site_nodes: list[tuple[SearchCallSite, tuple[Any, Any, Any]]] = []
        self._cur: tuple[Any, Any, Any] = (None, None, None)
        self._fail_seen: set[tuple[str, str]] = set()
        self._fn_low: dict[int, str] = {}
        self._lines: list[str] | None = None
        self.want_strings = any(op in source for op in ("<->", "<=>", "<#>", "cosine_distance")) or \
            bool(self.security_offsets())
        self.want_prompts = "prompt" in low
        self.has_http = any(k in low for k in ("docs/search", "requests", "httpx", "aiohttp", "urllib", ".post(",
                                               ".request("))
        self.want_llm = any(k in low for k in (".create(", "invoke(", ".stream(", ".predict(", "completion",
                                               ".batch(", "generate_content", ".chat(", ".parse("))
        self.imports_azure_search = "azure.search.documents" in source
        self.imports_azure_openai = "AzureOpenAI" in source

    # -- collection ------------------------------------------------------------------------
    def security_offsets(self) -> list[int]:
        """`_security_offsets` of the file, computed once (the gate, the string pass and the walk ask)."""
        if self._security is None:
            self._security = _security_offsets(self.source, self.low)
        return self._security

    def collect(self) -> None:
        self.lines = _interesting_lines(self.source, self.low, self.security_offsets(), self._first_keyword)
        self._walk(self.mod.tree, "", None, None, False, filtered=True)

    def _hit(self, node: ast.AST) -> bool:
        """Does `node` span a line holding a trigger word?"""
        start = getattr(node, "lineno", None)
        if start is None:
            return True
        end = getattr(node, "end_lineno", None) or start
        lines = self.lines
        i = bisect.bisect_left(lines, start)
        return i < len(lines) and lines[i] <= end

    def _walk(self, node: ast.AST, qual: str, func: Any, cls: str | None, in_string: bool,
              filtered: bool = False) -> None:
        """Visit the children of `node`; with `filtered`, only simple statements and expressions that
        span a trigger line are visited (definitions and compound statements are always entered)."""
        for child in children(node):
            t = type(child)
            if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                q = f"{qual}.{child.name}" if qual else child.name  # type: ignore[attr-defined]
                self.functions.append((q, child, cls))
                for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs):  # type: ignore[attr-defined]
                    if a.annotation is not None:
                        tag = ctor_tag(dotted(a.annotation) or "")
                        if tag:
                            self.typed[a.arg] = tag
                self._walk(child, q, child, cls, False, filtered)
            elif t is ast.ClassDef:
                q = f"{qual}.{child.name}" if qual else child.name  # type: ignore[attr-defined]
                self._walk(child, q, None, child.name, False, filtered)  # type: ignore[attr-defined]
            elif filtered and isinstance(child, _COMPOUND):
                self._walk(child, qual, func, cls, in_string, True)
            elif filtered and not self._hit(child):
                continue
            elif t is ast.Call:
                self.calls.append((child, qual, func, cls))  # type: ignore[arg-type]
                if self.want_strings and not in_string and is_string_expr(child):
                    self.strings.append((child, qual, func, cls))
                    self._walk(child, qual, func, cls, True)
                else:
                    self._walk(child, qual, func, cls, in_string)
            elif t is ast.Await:
                if isinstance(child.value, ast.Call):  # type: ignore[attr-defined]
                    self.awaited.add(id(child.value))  # type: ignore[attr-defined]
                self._walk(child, qual, func, cls, in_string)
            elif t is ast.Expr and isinstance(child.value, ast.Constant):  # type: ignore[attr-defined]
                continue  # docstrings and bare strings
            elif t is ast.Assign or t is ast.AnnAssign:
                self._assignment(child, qual, func, cls)
                self._walk(child, qual, func, cls, in_string)
            elif self.want_strings and not in_string and (t is ast.JoinedStr or t is ast.BinOp
                                                           or (t is ast.Constant and isinstance(child.value, str))):  # type: ignore[attr-defined]
                if is_string_expr(child):
                    self.strings.append((child, qual, func, cls))
                    self._walk(child, qual, func, cls, True)
                else:
                    self._walk(child, qual, func, cls, in_string)
            else:
                self._walk(child, qual, func, cls, in_string)

    def _assignment(self, node: Any, qual: str, func: Any, cls: str | None) -> None:
        value = node.value
        if value is None:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        call = value.value if isinstance(value, ast.Await) else value
        if isinstance(call, ast.Call):
            tag = ctor_tag(dotted(call.func) or "")
            if tag:
                for t in targets:
                    d = dotted(t)
                    if d:
                        self.typed[d] = tag
                        self.typed_tail[d.rsplit(".", 1)[-1]] = tag
        if self.want_prompts:
            for t in targets:
                d = dotted(t)
                if d and "prompt" in d.rsplit(".", 1)[-1].lower():
                    self.prompt_assigns.append((d, value, qual, func, cls))

    # -- helpers -------------------------------------------------------------------------------
    def fn_low(self, fn: Any) -> str:
        """The lower-cased source text of function `fn` (cached): cheap word tests before a walk."""
        key = id(fn)
        text = self._fn_low.get(key)
        if text is None:
            if self._lines is None:
                self._lines = self.source.split("\n")
            text = "\n".join(self._lines[fn.lineno - 1:fn.end_lineno or fn.lineno]).lower()
            self._fn_low[key] = text
        return text

    def ctx(self, func: Any, cls: str | None) -> Ctx:
        return Ctx.of(self.mod, func, cls)

    def type_of(self, receiver: str | None) -> str | None:
        if not receiver:
            return None
        if receiver in self.typed:
            return self.typed[receiver]
        return self.typed_tail.get(receiver.rsplit(".", 1)[-1])

    def ref(self, v: Val | None, vector: bool = False) -> str | None:
        """The variable (or expression) a channel value is written as; None for literals."""
        if v is None:
            return None
        node, ctx = v.node, v.ctx
        if node is None:
            return v.expr or None
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            return None
        if vector:
            if isinstance(node, ast.Name) and isinstance(ctx, Ctx) and ctx.func is not None:
                assigns, _ = ctx.mod.locals_of(ctx.func)
                entries = [e for e in assigns.get(node.id, ()) if e.line < getattr(node, "lineno", 10**9)]
                if entries and entries[-1].kind == "assign" and isinstance(entries[-1].value, (ast.Call, ast.Await)):
                    node = entries[-1].value
            if isinstance(node, ast.Await):
                node = node.value
            if isinstance(node, ast.Call):
                for a in [*node.args, *(k.value for k in node.keywords)]:
                    d = dotted(a)
                    if d:
                        return d
        d = dotted(node)
        return d if d else unparse(node, 80)

    def site(self, kind: str, call: ast.AST, qual: str, params: dict[str, Val],
             channels: dict[str, str | None], builder: str | None, callee: str = "",
             is_async: bool = False) -> SearchCallSite:
        rec = SearchCallSite(
            file=self.rel, line=call.lineno, kind=kind, function=qual or "<module>",
            module=self.mod.dotted, params={k: export(v) for k, v in params.items()},
            channel_vars=dict(channels), shared_text=C.shared_channels(channels), builder=builder,
            language="python", call=callee, is_async=is_async)
        self.site_nodes.append((rec, self._cur))
        return rec

    # -- analyses ------------------------------------------------------------------------------
    def run(self) -> C.FileResult:
        self._budget_constants()
        self.collect()
        for call, qual, func, cls in self.calls:
            self._call(call, qual, func, cls, self.want_llm)
        for node, qual, func, cls in self.strings:
            self._string(node, qual, func, cls)
        for name, value, _qual, func, cls in self.prompt_assigns:
            self._prompt(name, value, func, cls)
        self._citations()
        self._delegated_pass()
        self._sql_pass()
        self._acl_pass()
        self._results_pass()
        self._agents_pass()
        self._trace_llm_context()
        return self.out

    def _budget_constants(self) -> None:
        for name, (value, line) in self.mod.constants.items():
            if C.BUDGET_NAME_RE.search(name):
                v = self.r.resolve(value, Ctx(self.mod))
                self.out.budget_constants.append(BudgetConstant(self.rel, line, name, C.plain(v)))
        self.out.budget_constants.sort(key=lambda b: b.line)


def scan_python(project: C.Project, rel: str, source: str) -> C.FileResult:
    """Scan one Python file (already read as text).

    A file with no trigger word (search, vector, retriever, completion, prompt,
    citation, an HTTP client, a security field, a budget-like constant) cannot
    yield anything, so it is not parsed unless `project.check_syntax` is set.
    """
    low = source.lower()
    first = _first_keyword(low)
    if not project.check_syntax and first == len(_KEYWORDS) and not _triggered_without_keywords(source, low):
        return C.FileResult(scanned=True)
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError as exc:
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"syntax error at line {exc.lineno}: {exc.msg}"))
        return result
    except (ValueError, RecursionError, MemoryError) as exc:
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"could not parse: {type(exc).__name__}"))
        return result
    scan = PyFileScan(project, rel, source, tree, low, first)
    return scan.run()


class PythonScanner(LanguageScanner):
    """Python files, read with `ast`."""

    name = "python"
    suffixes = (".py", ".pyi")

    def scan(self, project: C.Project, rel: str, text: str) -> C.FileResult:
        return scan_python(project, rel, text)


register(PythonScanner())
