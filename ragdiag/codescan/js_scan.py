"""JavaScript / TypeScript client code, read with tree-sitter (never run).

Finds REST calls to `/docs/search` (fetch, axios, ky/got, `client.post`),
the Azure JS SDK `searchClient.search(text, options)`, LangChain.js / LlamaIndex.TS
retrievers, FAISS-node `index.search`, pgvector SQL, OpenAI / LangChain chat
calls, prompt and budget constants, citation handlers and security filters.
Resolution mirrors the Python scanner: literals, template strings, `+`
concatenation, top-level constants (also imported from a sibling module of the
scanned tree), simple locals of the enclosing functions, object literals, and
same-module helper functions returning an object literal.
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx, LanguageScanner, register
from ragdiag.codescan.js_index import (
    FUNC_TYPES,
    JSModule,
    args_of,
    ctor_tag,
    field,
    func_name,
    line,
    parser,
    short,
    text,
    unwrap,
)
from ragdiag.codescan.js_llm import _SQL_RE, LLMSites, is_string_expr, language
from ragdiag.codescan.js_resolve import JSResolver
from ragdiag.codescan.js_results import ResultsPass
from ragdiag.codescan.js_sites import SearchSites
from ragdiag.codescan.model import BudgetConstant, FrontendDefault, SearchCallSite, Skipped
from ragdiag.codescan.prompts import prompt_rules
from ragdiag.codescan.values import Val, export

#: State names that hold a retrieval setting (a count, a threshold, a mode, a filter).
_UI_SETTING = re.compile(r"(?i:top|count|retriev|^k$|threshold|minimum|semantic|rerank|exclude|category|"
                         r"strict|vectorfield|hybrid|retrievalmode|searchmode)|min[A-Z]|Score")


class JSFileScan(SearchSites, LLMSites, ResultsPass):
    """One JS/TS file: a collecting walk, then the analyses (the mixins) over what it collected."""

    def __init__(self, project: C.Project, rel: str, source: str, tree: Any) -> None:
        self.project = project
        self.rel = rel
        self.source = source
        self.mod = JSModule(project, rel, tree)
        self.r = JSResolver(project)
        self.out = C.FileResult()
        self.calls: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.strings: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.prompt_decls: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.state_decls: list[tuple[Any, Any, str, tuple[Any, ...], str | None]] = []
        self.functions: list[tuple[str, Any, str | None]] = []
        self.typed: dict[str, str] = {}
        self.want_strings = bool(_SQL_RE.search(source) or C.security_offsets(source.replace("${", "{")))
        self.azure_openai = "AzureOpenAI" in source
        self.langchain = "@langchain" in source or "langchain" in source
        self.llamaindex = "llamaindex" in source or "llama-index" in source

    # -- collection ------------------------------------------------------------------------
    def _walk(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None, in_string: bool) -> None:
        for child in node.children:
            t = child.type
            if t == "comment":
                continue
            if t in FUNC_TYPES:
                name = func_name(child, node)
                if t == "method_definition" and cls and name:
                    q = f"{cls}.{name}"
                elif name:
                    q = f"{qual}.{name}" if qual and not (cls and qual == cls and t != "method_definition") \
                        else name
                else:
                    q = qual
                if name:
                    self.functions.append((q, child, cls))
                self._walk(child, q, (child, *funcs), cls, False)
                continue
            if t in ("class_declaration", "class"):
                cname_node = field(child, "name")
                cname = text(cname_node) if cname_node is not None else (cls or "<class>")
                self._walk(child, cname, funcs, cname, False)
                continue
            if t in ("call_expression", "new_expression"):
                self.calls.append((child, qual, funcs, cls))
            elif t == "variable_declarator":
                self._declarator(child, qual, funcs, cls)
            elif t in ("assignment_expression", "public_field_definition", "field_definition"):
                self._assignment(child)
            if self.want_strings and not in_string and t in ("string", "template_string", "binary_expression") \
                    and is_string_expr(child):
                self.strings.append((child, qual, funcs, cls))
                self._walk(child, qual, funcs, cls, True)
                continue
            self._walk(child, qual, funcs, cls, in_string)

    def _declarator(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        name = field(node, "name")
        value = unwrap(field(node, "value"))
        if name is None or value is None:
            return
        n = text(name)
        if value.type == "new_expression":
            tag = ctor_tag(text(field(value, "constructor")))
            if tag:
                self.typed[n] = tag
        if "prompt" in n.lower() and value.type in ("string", "template_string", "binary_expression"):
            self.prompt_decls.append((value, qual, funcs, cls))
        if name.type == "array_pattern" and value.type == "call_expression" and \
                text(field(value, "function")).rsplit(".", 1)[-1] in ("useState", "useRef", "signal"):
            first = next((c for c in name.named_children if c.type == "identifier"), None)
            if first is not None and _UI_SETTING.search(text(first)):
                self.state_decls.append((first, value, qual, funcs, cls))

    def _assignment(self, node: Any) -> None:
        left = field(node, "left") or field(node, "name") or field(node, "property")
        right = unwrap(field(node, "right") or field(node, "value"))
        if left is None or right is None or right.type != "new_expression":
            return
        tag = ctor_tag(text(field(right, "constructor")))
        if tag:
            target = text(left)
            if node.type != "assignment_expression":
                target = f"this.{target}"
            self.typed[target] = tag

    def type_of(self, receiver: str) -> str | None:
        if receiver in self.typed:
            return self.typed[receiver]
        tail = receiver.rsplit(".", 1)[-1]
        for k, v in self.typed.items():
            if k.rsplit(".", 1)[-1] == tail:
                return v
        return None

    def ctx(self, funcs: tuple[Any, ...], cls: str | None) -> Ctx:
        return Ctx(self.mod, funcs, cls)

    def ref(self, v: Val | None, vector: bool = False) -> str | None:
        if v is None:
            return None
        node = v.node
        if node is None:
            return v.expr or None
        node = unwrap(node) or node
        if node.type in ("string", "template_string", "number"):
            return None
        if vector:
            if node.type == "identifier" and isinstance(v.ctx, Ctx):
                for func in v.ctx.funcs:
                    entries = [e for e in v.ctx.mod.locals_of(func)[0].get(text(node), ()) if e.kind == "assign"]
                    if entries:
                        val = unwrap(entries[-1].value)
                        if val is not None and val.type == "call_expression":
                            node = val
                        break
            if node.type == "call_expression":
                for a in args_of(node):
                    a = unwrap(a)
                    if a is not None and a.type in ("identifier", "member_expression"):
                        return text(a)
        return short(node, 80)

    def site(self, kind: str, node: Any, qual: str, params: dict[str, Val], channels: dict[str, str | None],
             builder: str | None, callee: str, is_async: bool = False) -> SearchCallSite:
        return SearchCallSite(
            file=self.rel, line=line(node), kind=kind, function=qual or "<module>", module=self.mod.dotted,
            params={k: export(v) for k, v in params.items()}, channel_vars=dict(channels),
            shared_text=C.shared_channels(channels), builder=builder, language=language(self.rel),
            call=callee, is_async=is_async)

    # -- analyses ------------------------------------------------------------------------------
    def run(self) -> C.FileResult:
        self._walk(self.mod.root, "", (), None, False)
        self._budget_constants()
        for node, qual, funcs, cls in self.calls:
            self._call(node, qual, funcs, cls)
        for node, qual, funcs, cls in self.strings:
            self._string(node, qual, funcs, cls)
        for value, _qual, funcs, cls in self.prompt_decls:
            v = self.r.resolve(value, self.ctx(funcs, cls))
            if v.is_str and v.value:
                self.out.prompt_rules.extend(prompt_rules(v.value, file=self.rel, first_line=line(value)))
        self._citations()
        self._frontend_defaults()
        self._results_pass()
        self._trace_llm_context()
        return self.out

    def _frontend_defaults(self) -> None:
        """React state holding a retrieval setting, and the request key it is sent as."""
        for ident, value, _qual, funcs, cls in self.state_decls:
            name = text(ident)
            args = args_of(value)
            v = self.r.resolve(args[0], self.ctx(funcs, cls)) if args else None
            if v is None or not v.resolved or v.kind != "scalar" or v.value is None:
                continue
            m = re.search(rf"([A-Za-z_$][\w$]*)\s*:\s*{re.escape(name)}\b(?!\s*\()", self.source) or \
                re.search(rf"[{{,]\s*({re.escape(name)})\s*[,}}]", self.source)
            if m is None and isinstance(v.value, bool):
                continue
            self.out.frontend_defaults.append(FrontendDefault(
                file=self.rel, line=line(ident), name=name,
                value=export(v.copy(source=f"ui_state:{name}", prov=f"{self.rel}:{line(ident)}",
                                    override=f"ui:{name}")),
                sent_as=m.group(1) if m else "", language=language(self.rel)))

    def _budget_constants(self) -> None:
        for name, (value, _line) in self.mod.constants.items():
            if C.BUDGET_NAME_RE.search(name):
                v = self.r.resolve(value, Ctx(self.mod))
                self.out.budget_constants.append(BudgetConstant(self.rel, _line, name,
                                                                C.plain(v), language(self.rel)))
        self.out.budget_constants.sort(key=lambda b: b.line)


def scan_js(project: C.Project, rel: str, source: str) -> C.FileResult:
    """Scan one JavaScript/TypeScript file (already read as text)."""
    tree = parser(rel).parse(source.encode("utf-8"))
    scan = JSFileScan(project, rel, source, tree)
    result = scan.run()
    if tree.root_node.has_error:
        line = first_error_line(tree.root_node)
        result.skipped.append(Skipped(rel, f"syntax error near line {line} (tree-sitter); scanned partially"))
    return result


def first_error_line(node: Any) -> int:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return line(n)
        stack.extend(reversed(n.children))
    return line(node)


class JSScanner(LanguageScanner):
    """JavaScript and TypeScript files, read with tree-sitter."""

    name = "js"
    suffixes = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")

    def scan(self, project: C.Project, rel: str, text: str) -> C.FileResult:
        return scan_js(project, rel, text)


register(JSScanner())
