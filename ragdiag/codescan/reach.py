"""Reachability from entry points: which code runs when a user asks, when a script runs, when a test runs.

A site is on the request path when an entry point reaches it, not because of
its name or folder. Entry points (`FuncNode.entry`, with the reason in `why`):

* **request**: web routes (``@app.get``, ``@router.post``, ``app.add_api_route``,
  Flask/Quart ``route``, websockets, ``on_event``), the module of a web app
  (``FastAPI(lifespan=...)``, Streamlit, Gradio, Chainlit), serverless HTTP
  triggers (Azure Functions ``main(req: func.HttpRequest)`` and ``@app.route``,
  AWS ``lambda_handler``), agent tools and framework callbacks (``@tool``,
  ``BaseTool._run``, bot handlers), graphs a LangGraph server serves
  (``langgraph.json``); in JavaScript/TypeScript Express/Fastify/Hono routes,
  Next.js route handlers and ``pages/api``, ``Deno.serve``, Azure Functions
  ``app.http``, exported ``handler``s;
* **script**: ``if __name__ == "__main__"`` blocks, click/typer commands,
  non-HTTP triggers (timers, queues, blobs);
* **test** and **evaluation**: functions of test and evaluation files.

The call graph is read from the text of every source file (no parse, so it
costs little and covers files the analyses skip). From an entry it follows:
names called (``f(``, ``self.f(``, ``obj.f(``, matched by name over the
tree of the same language), names handed over as values (``Depends(f)``,
``tools=[f]``, ``add_node("x", f)``: frameworks call them), functions nested in
a reached function, every method of a class built or handed over on a reached
path (the framework it is given to may call any of them: plugins, context
providers, handlers), and the module-level code of a reached file and of the
in-tree modules it imports. Matching by name over-approximates: it can only
add reach. A site that no entry point reaches is ``unreachable``.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import defaultdict, deque
from dataclasses import dataclass, field

from ragdiag.codescan.project import module_name

# ---- patterns --------------------------------------------------------------------------------------------

_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|testing|spec|e2e|cypress|playwright)(/|$)|(^|/)(test_[^/]*|[^/]*_tests?"
                        r"\.py|conftest\.py|locustfile\.py|[^/]*\.(test|spec)\.[jt]sx?)$", re.I)
_EVAL_PATH = re.compile(r"(^|/)(evals?|evaluations?|evaluators?|benchmarks?|experiments?)(/|$)|"
                        r"(^|/)[^/]*(?<![a-z])eval(uate|uation|uations|s)?(?![a-z])[^/]*$", re.I)
#: Decorators (last part, on an object: ``@app.get``) that make a function a request entry point.
_ROUTE_DECOS = frozenset({"route", "get", "post", "put", "patch", "delete", "websocket", "api_route", "http",
                          "function_name", "on_message", "on_chat_start", "tool", "message", "event",
                          "app_mention", "command", "message_handler", "on_event", "websocket_route",
                          "http_trigger", "api_view", "action", "function_tool", "kernel_function", "ai_function"})
#: Bare decorators that register a function with a framework that calls it on a request.
_BARE_REQUEST_DECOS = frozenset({"tool", "function_tool", "kernel_function", "ai_function", "api_view", "traceable"})
#: Decorators of background jobs and command lines (script entries).
_JOB_DECOS = frozenset({"timer_trigger", "schedule", "queue_trigger", "blob_trigger", "service_bus_queue_trigger",
                        "service_bus_topic_trigger", "event_grid_trigger", "event_hub_message_trigger",
                        "cosmos_db_trigger", "command", "group", "callback", "task", "shared_task", "cron"})
_CLI_OWNERS = re.compile(r"^(click|typer|cli|app|celery|huey|dramatiq|scheduler|bp|blueprint)$", re.I)
_PY_DECO = re.compile(r"^[ \t]*@([\w.]+)", re.M)
_REQUEST_METHODS = frozenset({"_run", "_arun", "_get_relevant_documents", "_aget_relevant_documents",
                              "on_message_activity", "on_turn", "invoke", "ainvoke"})
_REQUEST_BASES = re.compile(r"BaseTool|BaseRetriever|ActivityHandler|TeamsActivityHandler|Resource|View|Handler")
_WEB_APP = re.compile(r"\b(FastAPI|Flask|Quart|Starlette|Sanic|APIRouter|Blueprint|FunctionApp|Litestar)\s*\(|"
                      r"\bweb\.Application\s*\(|\b(?:uvicorn|hypercorn|web)\.run(?:_app)?\s*\(|\.serve_forever\s*\(|"
                      r"^\s*(?:import|from)\s+(streamlit|gradio|chainlit)\b|\bgr\.(?:Interface|ChatInterface|Blocks)\(",
                      re.M)
#: Substrings one of which `_WEB_APP` needs (a plain `in` test before the regular expression).
_WEB_APP_WORDS = ("FastAPI", "Flask", "Quart", "Starlette", "Sanic", "APIRouter", "Blueprint", "FunctionApp",
                  "Litestar", "web.", "uvicorn", "hypercorn", "serve_forever", "streamlit", "gradio", "chainlit", "gr.")
#: An MCP server (its tools run when a client's model calls them): FastMCP, the SDK's low-level server, a subclass.
_MCP_SERVER = re.compile(r"^\s*(?:from\s+(?:fastmcp|mcp\.server)[\w.]*\s+import|import\s+fastmcp\b)|\bFastMCP\s*[()]",
                         re.M)
_STREAMLIT = re.compile(r"^\s*import streamlit|^\s*from streamlit|\bst\.(?:chat_input|text_input|button)\(", re.M)
_ADD_ROUTE = re.compile(r"\.(?:add_api_route|add_url_rule|add_route|add_websocket_route|add_api_websocket_route)\s*\(")
_MAIN_BLOCK = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M)
_REF = re.compile(r"[(\[,=:]\s*(?:self\.|cls\.)?([A-Za-z_]\w*)\s*(?=[,)\]}\n])")
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.M)
_NEWLINE = re.compile("\n")
_JS_ROUTE = re.compile(r"\b(?:app|router|server|api|fastify|route|hono|r)\.(?:get|post|put|patch|delete|all|use|route)"
                       r"\s*\(", re.I)
_JS_SERVE = re.compile(r"\bDeno\.serve\s*\(|\bserve\s*\(\s*(?:async\s*)?(?:\(|function|[A-Za-z_$][\w$]*\s*[,)])|"
                       r"\bapp\.(?:http|storageBlob|storageQueue|timer|serviceBusQueue)\s*\(|"
                       r"export\s+(?:const|async\s+function|function)\s+handler\b|exports\.handler\s*=|"
                       r"addEventListener\(\s*['\"]fetch['\"]|\bcreateServer\s*\(|\.listen\s*\(")
_JS_FUNC = re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|"
                      # an arrow function, typed or not: `const f: H = async <T>(a: A): Promise<R> =>`
                      r"(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=\n]+)?=\s*(?:async\s*)?(?:<[^<>()]*>\s*)?"
                      r"(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]{1,200}?)?=>|"
                      r"^[ \t]*(?:public[ \t]+|private[ \t]+|protected[ \t]+|static[ \t]+|async[ \t]+)*([A-Za-z_$][\w$]*)"
                      r"[ \t]*\([^)\n]*\)[ \t]*(?::[^{;\n]*)?\{", re.M)
_JS_CLASS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)")
_NEXT_HANDLER = re.compile(r"export\s+(?:async\s+)?function\s+(GET|POST|PUT|PATCH|DELETE)\b|"
                           r"export\s+default\s+(?:async\s+)?function")
_JS_ROUTE_FILE = re.compile(r"(^|/)(app|pages)/api/|(^|/)route\.[jt]sx?$|(^|/)api/[^/]+\.[jt]s$|"
                            r"(^|/)functions/[^/]+/index\.[jt]s$")
_FRONTEND = re.compile(r"(^|/)(frontend|web|webapp|client|ui|src/(pages|components|api))(/|$)|\.(tsx|jsx)$", re.I)
_JS_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "function", "return", "constructor"})


@dataclass(slots=True)  # tens of thousands on a large tree: no per-node dict for the collector to traverse
class FuncNode:
    """A function, class or module (``<module>``) of the scanned tree, as the light pass sees it."""

    file: str
    name: str
    qual: str
    start: int
    end: int
    calls: set[str] = field(default_factory=set)
    entry: str | None = None      # "request", "script", "test", "evaluation" or None
    refs: set[str] = field(default_factory=set)
    kind: str = "func"            # "func", "class" or "module"
    imports: tuple[str, ...] = ()
    why: str = ""


def called_names(text: str, start: int = 0, end: int | None = None) -> set[str]:
    """Names written just before a `(` in `text[start:end]` (calls, over-approximately; str scans, no regex:
    a `(` is rare, so finding each and reading back is faster than any pattern).

    A call on the object itself (`self.f(`, `this.f(`) is ``self.f``: it means a method of the
    caller's own class, not every `f` of the tree."""
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
            if k >= start + 5 and text[k - 1] == "." and text[k - 5:k - 1] in ("self", "this") \
                    and (k == start + 5 or not (text[k - 6].isalnum() or text[k - 6] in "_$.")):
                out.add("self." + text[k:j])  # a method of the object's own class
            else:
                out.add(text[k:j])
        i = text.find("(", i + 1, end)
    return out


def _refs(text: str, start: int = 0, end: int | None = None) -> set[str]:
    """Names handed over as values (`Depends(f)`, `tools=[f]`, `add_node("x", f)`); over-approximate."""
    return {m.group(1) for m in _REF.finditer(text, start, len(text) if end is None else end)}


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


_DEDENT: dict[int, re.Pattern[str]] = {}


def _block_end(text: str, header_end: int, indent: int) -> int:
    """Offset where the block of a def/class header ending at `header_end` ends (the next line as little indented)."""
    rx = _DEDENT.get(indent)
    if rx is None:
        rx = _DEDENT[indent] = re.compile(r"\n(?=[ \t]{0,INDENT}[^ \t\r\n#)\]}])".replace("INDENT", str(indent)))
    m = rx.search(text, header_end)
    return m.start() + 1 if m else len(text)


def _decorators(text: str, offset: int) -> tuple[list[str], int]:
    """(dotted names of the decorators just above the def/class at `offset`, offset where they start)."""
    out: list[str] = []
    first = offset
    p = offset - 1
    while p > 0:
        q = text.rfind("\n", 0, p) + 1
        line = text[q:p].strip()
        if line.startswith("@"):
            m = _PY_DECO.match(text, q)
            if m:
                out.append(m.group(1))
            first = q
        elif not (line.startswith((")", "]")) or line.endswith((",", "(", "[")) or (not line and out)):
            break
        p = q - 1
    return out, first


def _deco_entry(decos: list[str]) -> tuple[str | None, str]:
    for d in decos:
        last = d.rsplit(".", 1)[-1]
        owner = d.rsplit(".", 1)[0] if "." in d else ""
        if last in _JOB_DECOS and (not owner or _CLI_OWNERS.match(owner.rsplit(".", 1)[-1])):
            if last != "command" or owner.rsplit(".", 1)[-1].lower() in ("click", "typer", "cli", "app", "group"):
                return "script", f"@{d}"
        if last in _ROUTE_DECOS and ("." in d or d in _BARE_REQUEST_DECOS):
            return "request", f"@{d}"
    return None, ""


def _lines_holding(text: str, word: str) -> list[int]:
    """Offsets of the starts of the lines holding `word`, in order."""
    out: list[int] = []
    i = text.find(word)
    while i != -1:
        out.append(text.rfind("\n", 0, i) + 1)
        eol = text.find("\n", i)
        if eol == -1:
            break
        i = text.find(word, eol)
    return out


def _matches_at(rx: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """`list(rx.finditer(text))` for a multi-line pattern anchored at `^` whose first line must hold a word,
    tried only at `starts` (the lines holding it): the same matches without testing every offset of the text."""
    out: list[re.Match[str]] = []
    end = 0
    for start in starts:
        if start >= end:
            m = rx.match(text, start)
            if m is not None:
                out.append(m)
                end = m.end()
    return out


def _py_imports(rel: str, text: str) -> tuple[str, ...]:
    """Absolute dotted names a Python file imports (`from . import x` made absolute), modules and `module.name`."""
    if "import" not in text:
        return ()
    package = module_name(rel).split(".")
    if not rel.endswith("__init__.py"):
        package = package[:-1]
    out: list[str] = []
    lines = _lines_holding(text, "import")
    for m in _matches_at(_PY_FROM, text, lines):
        mod = m.group(1)
        if mod.startswith("."):
            dots = len(mod) - len(mod.lstrip("."))
            base = package[:len(package) - dots + 1] if dots > 1 else package
            mod = ".".join([*base, mod.lstrip(".")]) if mod.lstrip(".") else ".".join(base)
        out.append(mod)
        for name in re.findall(r"[A-Za-z_]\w*", m.group(2).replace(" as ", " , ")):
            out.append(f"{mod}.{name}")
    for m in _matches_at(_PY_IMPORT, text, lines):
        for part in m.group(1).split(","):
            name = part.strip().split(" ")[0]
            if name:
                out.append(name)
    return tuple(dict.fromkeys(out))


def python_graph(rel: str, text: str) -> list[FuncNode]:
    """Functions, classes and the module of a Python file with what they call and hand over, and their entries."""
    defs = _py_defs(text)
    n_lines = text.count("\n") + 1
    out: list[FuncNode] = []
    stack: list[tuple[int, str, bool]] = []
    bases: dict[str, str] = {}
    top: list[tuple[int, int]] = []   # offsets of the top-level defs/classes (excluded from the module's code)
    file_request = (any(w in text for w in _WEB_APP_WORDS) and bool(_WEB_APP.search(text))) or (
        ".add_" in text and bool(_ADD_ROUTE.search(text))) or ("mcp" in text.lower() and bool(_MCP_SERVER.search(text)))
    is_test = bool(_TEST_PATH.search(rel))
    for offset, eol, line, indent, name, is_class in defs:
        while stack and stack[-1][0] >= indent:
            stack.pop()
        end_offset = _block_end(text, eol, indent)
        end = line + 1 + text.count("\n", offset, end_offset)
        decos, first = _decorators(text, offset)
        if indent == 0:
            top.append((first, end_offset))
        qual = ".".join([s[1] for s in stack] + [name])
        if is_class:
            bases[name] = text[offset:eol]
            out.append(FuncNode(rel, name, qual, line + 1, end, called_names(text, offset, eol) - {name},
                                None, _refs(text, offset, eol), "class"))
            stack.append((indent, name, True))
            continue
        body_start = eol
        calls = called_names(text, body_start, end_offset)
        calls.discard(name)
        refs = _refs(text, body_start, end_offset)
        refs.discard(name)
        cls = next((s[1] for s in reversed(stack) if s[2]), None)
        # a registry decorator on a method registers it with the object: reached when the object is built
        entry, why = _deco_entry([d for d in decos if not (cls and d in _BARE_REQUEST_DECOS)])
        if entry is None and cls and name in _REQUEST_METHODS and _REQUEST_BASES.search(bases.get(cls, "")):
            entry, why = "request", f"{cls}.{name} (framework callback)"
        header = text[offset:eol]
        if entry is None and name == "main" and "HttpRequest" in header:
            entry, why = "request", "Azure Functions HTTP trigger"
        if entry is None and name in ("lambda_handler", "handler") and "event" in header and "context" in header:
            entry, why = "request", "AWS Lambda handler"
        if entry is None and is_test and name.startswith("test"):
            entry, why = "test", "test function"
        if entry == "request" and is_test:  # a route or tool a test defines serves the test, not a user
            entry, why = "test", f"{why} in a test file"
        if entry == "request":
            file_request = True
        out.append(FuncNode(rel, name, qual, line + 1, end, calls, entry, refs, "func", why=why))
        stack.append((indent, name, False))
    # the module's own code: everything outside the top-level definitions
    gaps, pos = [], 0
    for a, b in top:
        if a > pos:
            gaps.append((pos, a))
        pos = max(pos, b)
    gaps.append((pos, len(text)))
    module_calls: set[str] = set()
    module_refs: set[str] = set()
    for a, b in gaps:
        module_calls |= called_names(text, a, b)
        module_refs |= _refs(text, a, b)
    module_entry, why = None, ""
    if "streamlit" in text and _STREAMLIT.search(text):
        module_entry, why = "request", "Streamlit app"
    elif is_test or _EVAL_PATH.search(rel):
        module_entry = "test" if is_test else "evaluation"
        why = f"{module_entry} file"
    elif file_request:
        module_entry, why = "request", "MCP server module" if _MCP_SERVER.search(text) and not _WEB_APP.search(
            text) else "web app module"
    elif "__main__" in text and _MAIN_BLOCK.search(text):
        module_entry, why = "script", "__main__ block"
    out.append(FuncNode(rel, "<module>", "<module>", 1, n_lines, module_calls, module_entry, module_refs,
                        "module", _py_imports(rel, text), why))
    return out


def js_graph(rel: str, text: str) -> list[FuncNode]:
    """Functions and classes of a JS/TS file (approximate extents) with the names they call; routes are entries."""
    newlines = [m.start() for m in _NEWLINE.finditer(text)]
    starts = []
    for m in _JS_FUNC.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3)
        if name in _JS_KEYWORDS:
            continue
        starts.append((bisect.bisect_right(newlines, m.start()), name, m.start(), _js_body_from(text, m)))
    lines_total = text.count("\n") + 1
    out: list[FuncNode] = []
    is_route_file = bool(_JS_ROUTE_FILE.search(rel))
    headers: list[tuple[int, int]] = []
    for i, (line, name, pos, body_from) in enumerate(starts):
        next_pos = starts[i + 1][2] if i + 1 < len(starts) else len(text)
        end_pos = _js_block_end(text, body_from, next_pos)
        headers.append((pos, text.find("(", pos) + 1 or pos))
        entry = "request" if (is_route_file and _NEXT_HANDLER.search(text, pos, pos + 80)) else None
        out.append(FuncNode(rel, name, name, line + 1, bisect.bisect_right(newlines, end_pos - 1) + 1,
                            called_names(text, pos, end_pos) - {name}, entry, _refs(text, pos, end_pos),
                            why="Next.js route handler" if entry else ""))
    classes = [(bisect.bisect_right(newlines, m.start()) + 1, m.group(1)) for m in _JS_CLASS.finditer(text)]
    for i, (line, name) in enumerate(classes):
        end = classes[i + 1][0] - 1 if i + 1 < len(classes) else lines_total
        out.append(FuncNode(rel, name, name, line, end, set(), None, set(), "class"))
    served = _JS_SERVE.search(text)
    module_entry, why = None, ""
    if _TEST_PATH.search(rel):
        module_entry, why = "test", "test file"
    elif served:
        module_entry, why = "request", f"server entry ({served.group(0).strip()[:30]})"
    elif _JS_ROUTE.search(text):
        module_entry, why = "request", "route registration"
    elif is_route_file:
        module_entry, why = "request", "route file"
    elif _FRONTEND.search(rel):
        module_entry, why = "request", "frontend code"
    # a route file's inline handlers (`router.post('/x', async (req, res) => {...})`) run on requests: its
    # whole text is entry code; elsewhere only the module's own top level runs when it is loaded
    top = [(0, len(text))] if module_entry == "request" else _js_top_level(text)
    top = _cut(top, headers)  # a declaration's own header is no call
    module_calls: set[str] = set()
    module_refs: set[str] = set()
    for a, b in top:
        module_calls |= called_names(text, a, b)
        module_refs |= _refs(text, a, b)
    out.append(FuncNode(rel, "<module>", "<module>", 1, lines_total, module_calls, module_entry,
                        module_refs, "module", why=why))
    if module_entry == "request":  # what a route, server or frontend module exports is called by its framework
        for f in out:
            if f.kind == "func" and not f.entry and re.match(r"\s*export\b", text[_line_start(newlines, f.start):]):
                f.entry, f.why = "request", f"exported from a {why}"
    if module_entry == "request" and _JS_ROUTE.search(text):
        for f in out:  # handlers passed to app.get(...) are named there
            if f.kind == "func" and not f.entry and re.search(
                    rf"\.(?:get|post|put|patch|delete|all|use)\s*\([^)]*\b{re.escape(f.name)}\b", text):
                f.entry, f.why = "request", "route handler"
    return out


_JS_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`|[{}]", re.S)


def _js_top_level(text: str) -> list[tuple[int, int]]:
    """Spans of a JS/TS file outside any brace block (strings, comments and templates skipped, roughly)."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for m in _JS_TOKEN.finditer(text):
        tok = m.group(0)
        if tok == "{":
            if depth == 0:
                spans.append((start, m.start()))
            depth += 1
        elif tok == "}":
            depth = max(0, depth - 1)
            if depth == 0:
                start = m.end()
    if depth == 0:
        spans.append((start, len(text)))
    return spans


def _line_start(newlines: list[int], line: int) -> int:
    return newlines[line - 2] + 1 if line >= 2 and line - 2 < len(newlines) else 0


def _js_body_from(text: str, m: re.Match[str]) -> int:
    """Where the body of the function `_JS_FUNC` matched can start: after its parameters and return type.

    A typed parameter (`props: { a: A }`) or a destructured one (`({ a, b }) =>`) holds braces that are no
    body; an arrow's match ends at its `=>`, a method's at its `{`, a declaration's at its `(`."""
    if m.group(2):
        return m.end()
    if m.group(3):
        return m.end() - 1
    depth = 0
    for i in range(m.end() - 1, min(len(text), m.end() + 4000)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return m.end()


def _js_block_end(text: str, pos: int, limit: int) -> int:
    """End of the brace block a function header at `pos` opens (the next function's start when it opens none)."""
    depth = 0
    for m in _JS_TOKEN.finditer(text, pos):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0:
                return m.end()
        if depth == 0 and m.start() >= limit:
            break
    return limit


def _cut(spans: list[tuple[int, int]], holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` without the `holes` (both sorted lists of (start, end) offsets)."""
    out = []
    for a, b in spans:
        for h0, h1 in holes:
            if h1 <= a or h0 >= b:
                continue
            if h0 > a:
                out.append((a, h0))
            a = max(a, h1)
        if a < b:
            out.append((a, b))
    return out


def langgraph_entries(text: str) -> list[str]:
    """Files a `langgraph.json` serves (``"graphs": {"agent": "./src/agent/graph.py:graph"}``)."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return []
    graphs = data.get("graphs") if isinstance(data, dict) else None
    if not isinstance(graphs, dict):
        return []
    out = []
    for spec in graphs.values():
        path = spec.get("path") if isinstance(spec, dict) else spec
        if isinstance(path, str):
            out.append(path.split(":", 1)[0].removeprefix("./"))
    return out


def _lang(rel: str) -> str:
    return "js" if rel.lower().endswith((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")) else "py"


class CallGraph:
    """Reachability over the light graph of the whole tree (see the module docstring)."""

    KINDS = ("request", "script", "test", "evaluation")

    def __init__(self, nodes: list[FuncNode], served: tuple[str, ...] = ()) -> None:
        self.nodes = nodes
        self.by_name: dict[tuple[str, str], list[FuncNode]] = defaultdict(list)
        self.by_file: dict[str, list[FuncNode]] = defaultdict(list)
        self.module_of: dict[str, FuncNode] = {}
        self.by_module: dict[str, str] = {}
        for n in nodes:
            self.by_file[n.file].append(n)
            if n.kind == "module":
                self.module_of[n.file] = n
                if n.file.endswith(".py"):
                    self.by_module[module_name(n.file)] = n.file
            else:
                self.by_name[(_lang(n.file), n.name)].append(n)
        for rel in served:  # a graph a LangGraph server serves
            node = self.module_of.get(rel)
            if node is not None and not node.entry:
                node.entry, node.why = "request", "served by langgraph.json"
        self._suffix: dict[str, list[str]] | None = None
        self._children: dict[tuple[str, str], list[FuncNode]] | None = None
        self._parent: dict[int, FuncNode] = {}
        self.reach: dict[str, dict[int, str]] = self._walk()
        self.entries = {k: sum(1 for n in nodes if n.entry == k) for k in self.KINDS}
        self.has_request_entries = self.entries["request"] > 0

    def _module_file(self, dotted: str) -> str | None:
        hit = self.by_module.get(dotted)
        if hit is not None:
            return hit
        if self._suffix is None:
            suffix: dict[str, list[str]] = defaultdict(list)
            for name, rel in self.by_module.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    suffix[".".join(parts[i:])].append(rel)
            self._suffix = suffix
        hits = self._suffix.get(dotted, ())
        return hits[0] if len(hits) == 1 else None

    def _members(self, n: FuncNode) -> list[FuncNode]:
        """Definitions nested in `n` (a function's inner functions, a class's methods), indexed once."""
        if self._children is None:
            children: dict[tuple[str, str], list[FuncNode]] = defaultdict(list)
            for m in self.nodes:
                if m.kind != "module" and "." in m.qual:
                    parts = m.qual.split(".")
                    for i in range(1, len(parts)):
                        children[(m.file, ".".join(parts[:i]))].append(m)
            self._children = children
        return self._children.get((n.file, n.qual), [])

    def _own_method(self, n: FuncNode, name: str) -> list[FuncNode]:
        """The methods `name` of the class enclosing `n` (same file), nearest class first."""
        parts = n.qual.split(".")
        for i in range(len(parts) - 1, 0, -1):
            owner = ".".join(parts[:i])
            hits = [m for m in self.by_name.get((_lang(n.file), name), ()) if m.file == n.file
                    and m.qual == f"{owner}.{name}"]
            if hits:
                return hits
        return []

    def _targets(self, n: FuncNode) -> list[FuncNode]:
        """What reaching `n` reaches: names it calls or hands over, its members, its module, its imports."""
        lang = _lang(n.file)
        out: list[FuncNode] = []
        # sorted: a set's order follows the per-process string hash, and the order of the targets decides
        # which entry point and path a node is reported reached by (`class_reason`)
        for name in sorted(n.calls | n.refs):
            if name.startswith("self."):
                own = self._own_method(n, name[5:])
                if own:
                    out.extend(own)
                    continue
                name = name[5:]  # inherited from a class elsewhere: any method of that name
            if name.startswith("__"):
                continue  # `super().__init__()`: the runtime calls dunders of a class reached otherwise
            out.extend(self.by_name.get((lang, name), ()))
        if n.kind != "module":
            out.extend(self._members(n))
        module = self.module_of.get(n.file)
        if module is not None:
            out.append(module)
        if n.kind == "module":
            for imp in n.imports:
                rel = self._module_file(imp)
                if rel is not None and rel in self.module_of:
                    out.append(self.module_of[rel])
        return out

    def _walk(self) -> dict[str, dict[int, str]]:
        """Reach of each kind of entry, in priority order (request, test, evaluation, script).

        A node reached by an earlier kind is not expanded again: what it reaches is already claimed by
        that kind, which `entry_of` reports first anyway. So every node is expanded once in all."""
        reach: dict[str, dict[int, str]] = {k: {} for k in self.KINDS}
        claimed: set[int] = set()
        # test code never runs on a request, in an evaluation or a script: those walks do not enter it
        test_files = {f for f in self.by_file if _TEST_PATH.search(f)}
        tests = {id(n) for n in self.nodes if n.file in test_files}
        for kind in ("request", "test", "evaluation", "script"):
            fence = tests if kind != "test" else set()
            seen = reach[kind]
            stack: deque[FuncNode] = deque()  # breadth first: the path to a node is a shortest one
            for s in self.nodes:
                if s.entry == kind and id(s) not in claimed:
                    claimed.add(id(s))
                    seen[id(s)] = f"{s.file}:{s.start} {s.qual if s.kind != 'module' else s.why or 'module'}"
                    stack.append(s)
            while stack:
                n = stack.popleft()
                label = seen[id(n)]
                for t in self._targets(n):
                    if id(t) not in claimed and id(t) not in fence:
                        claimed.add(id(t))
                        seen[id(t)] = label
                        self._parent[id(t)] = n
                        stack.append(t)
        return reach

    def path(self, node: FuncNode, limit: int = 5) -> list[str]:
        """The chain from the entry point that reached `node` down to it (qualified names, at most `limit`)."""
        chain: list[str] = []
        n: FuncNode | None = node
        while n is not None and len(chain) < 64:
            chain.append(n.qual if n.kind != "module" else f"{n.file} (module)")
            n = self._parent.get(id(n))
        chain.reverse()
        if len(chain) > limit:
            chain = [*chain[:2], "...", *chain[-(limit - 3):]]
        return chain

    def node_at(self, file: str, function: str, line: int) -> FuncNode | None:
        """The innermost function of `file` holding `line` (its last name part matching `function`)."""
        last = function.rsplit(".", 1)[-1]
        best = None
        for n in self.by_file.get(file, ()):
            if n.kind != "func":
                continue
            if n.start <= line < max(n.end, n.start + 1) + 1 and (best is None or n.start >= best.start):
                best = n
        if best is not None and (best.name == last or function == "<module>"):
            return best
        for n in self.by_file.get(file, ()):
            if n.kind == "func" and n.name == last:
                return n
        return self.module_of.get(file)

    def entry_of(self, node: FuncNode) -> tuple[str, str] | None:
        """(class, entry point) of the first kind of entry that reaches `node`, request first."""
        for kind in ("request", "test", "evaluation", "script"):
            where = self.reach[kind].get(id(node))
            if where is not None:
                return kind, where
        return None

    def summary(self) -> str:
        """``2 request, 1 script, 4 test`` entry points (for a reason text)."""
        parts = [f"{n} {k}" for k, n in self.entries.items() if n]
        return ", ".join(parts) or "none"


def entry_flags(kind: str, rel: str, text: str) -> frozenset[str]:
    """Cheap flags of a file (``request``, ``script``); kept for callers of the earlier light pass."""
    flags = set()
    nodes = python_graph(rel, text) if kind == "python" else js_graph(rel, text) if kind == "js" else []
    for n in nodes:
        if n.entry in ("request", "script"):
            flags.add(n.entry)
    return frozenset(flags)


__all__ = ["CallGraph", "FuncNode", "called_names", "entry_flags", "js_graph", "langgraph_entries", "python_graph"]
