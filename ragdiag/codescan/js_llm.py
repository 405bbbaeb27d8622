"""JS/TS LLM call sites (is the retrieved context bounded?), citation handlers, security filter strings,
SQL strings and prompts. A mixin of the JS file scanner."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import security_fields, security_filter_site
from ragdiag.codescan.js_index import (
    args_of,
    field,
    func_name,
    line,
    param_names,
    short,
    string_value,
    text,
    walk_all,
    walk_scope,
)
from ragdiag.codescan.model import CitationCheck, LLMCallSite
from ragdiag.codescan.values import Val, lit

LLM_METHODS = frozenset({"invoke", "stream", "batch", "call", "predict"})
#: The OpenAI SDK's completion endpoints, however a call reaches them: `create`, and the helpers that send
#: the same request (`beta.chat.completions.stream`, `.parse`, `.runTools`, `responses.stream`).
COMPLETION_CALLS = ("chat.completions.create", "responses.create", "completions.create", "chat.completions.stream",
                    "chat.completions.parse", "chat.completions.runTools", "responses.stream", "responses.parse")
#: Calls that transform a value and do no retrieval of their own (not matched to search functions).
_PLAIN_CALLS = frozenset({"map", "join", "filter", "slice", "json", "stringify", "parse", "trim", "replace", "toString",
                          "concat", "push", "then", "select", "limit", "order", "eq", "single", "get", "codeBlock",
                          "create", "invoke", "reduce", "forEach", "flatMap", "split", "entries", "keys", "values"})
_SQL_RE = re.compile(r"<->|<=>|<#>|cosine_distance")
_SQL_KEYWORDS = re.compile(r"\b(select|order\s+by|limit)\b", re.I)


class LLMSites:
    """LLM calls, their context bounds, citations and security strings (mixed into `JSFileScan`)."""

    # -- LLM calls -------------------------------------------------------------------------------
    def _llm_kind(self, name: str, receiver: str | None, last: str) -> str | None:
        if name.endswith(COMPLETION_CALLS):
            tag = self.type_of(receiver.split(".")[0]) if receiver else None
            return "azure_openai_chat" if tag == "AzureOpenAI" or (tag is None and self.azure_openai) \
                else "openai_chat"
        if last in LLM_METHODS and receiver is not None:
            tag = self.type_of(receiver)
            if tag == "LCChat" or re.search(r"(^|\.)(llm|chatModel|model|chat)$", receiver):
                return "langchain_chat"
        if name.endswith(("messages.create", "generateContent", "generateText")):
            return "other"
        return None

    def _identifiers(self, nodes: list[Any]) -> list[str]:
        bound: set[str] = set()
        names: list[str] = []
        for n in nodes:
            stack = [n]
            while stack:
                x = stack.pop()
                if x.type in ("arrow_function", "function_expression"):
                    bound.update(param_names(x))
                if x.type in ("identifier", "shorthand_property_identifier") and \
                        (x.parent is None or x.parent.type not in ("formal_parameters", "required_parameter")):
                    names.append(text(x))
                elif x.type == "member_expression" and text(field(x, "object")) == "this":
                    names.append(text(x))
                stack.extend(reversed(x.children))
        return [n for n in dict.fromkeys(names) if n not in bound]

    def _llm(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None, kind: str, name: str,
             args: list[Any], via: str = "") -> None:
        closure = self._identifiers(args)
        for func in funcs:
            local = self.mod.locals_of(func)
            i = 0
            while i < len(closure) and len(closure) < 60:
                values = [e.value for e in local[0].get(closure[i], ()) if e.kind == "assign" and e.value is not None]
                values += [s.value for s in local[1].get(closure[i], ()) if s.value is not None]
                for extra in self._identifiers(values):
                    if extra not in closure:
                        closure.append(extra)
                i += 1
        skip = set(self.mod.constants) | set(self.mod.imports) | set(self.mod.functions) | {
            "JSON", "Math", "console", "Promise", "Object", "Array", "String", "Number", "undefined"}
        context_vars = tuple(n for n in closure if n not in skip)
        evidence = self._bound_evidence(funcs[0], cls, set(closure), node, 0, set()) if funcs else []
        retrieved = any(C.CONTEXT_NAME_RE.search(n) for n in context_vars)
        # the app's own model client: the prompt is a parameter of the function the call sits in (see Python)
        params = [p for p in param_names(funcs[0])] if funcs and not via else []
        own = [n for n in context_vars if not n.startswith("this.")]
        wrapper = bool(params) and bool(own) and all(n in params for n in own) and not evidence and not retrieved
        self.out.llm_calls.append(LLMCallSite(
            file=self.rel, line=line(node), kind=kind, function=qual or "<module>",
            context_bounded=bool(evidence),
            bound_evidence="; ".join(evidence[:3]) if evidence else
            "no slice, budget comparison or truncation helper on the context in this function "
            "or the same-file functions it calls",
            context_vars=context_vars, retrieved_context=retrieved,
            module=self.mod.dotted, language=language(self.rel), call=name, via=via,
            context_unresolved=f"the prompt is the parameter {', '.join(own)} of {qual}: its callers fill it"
            if wrapper else ""))
        if wrapper:
            self.out.llm_wrappers.append((qual.rsplit(".", 1)[-1], qual, self.rel, line(node)))
        self.__dict__.setdefault("_llm_info", []).append((len(self.out.llm_calls) - 1, funcs, closure))

    def _trace_llm_context(self) -> None:
        """The search calls whose results feed each LLM call's prompt (see the Python scanner's twin)."""
        info = self.__dict__.get("_llm_info")
        if not info:
            return
        site_lines = {s.line: s for s in self.out.search_calls}
        for idx, funcs, closure in info:
            if not funcs:
                continue
            names = set(closure)
            direct: list[str] = []
            calls: list[str] = []
            for func in funcs:
                body = field(func, "body") or func
                for n in walk_scope(body):
                    if n.type == "variable_declarator":
                        pattern, value = field(n, "name"), field(n, "value")
                        if pattern is None or value is None:
                            continue
                        bound = {text(x) for x in [pattern, *walk_scope(pattern)]
                                 if x.type in ("identifier", "shorthand_property_identifier_pattern")}
                    elif n.type == "assignment_expression" and field(n, "left") is not None \
                            and field(n, "left").type == "identifier":
                        value, bound = field(n, "right"), {text(field(n, "left"))}
                    else:
                        continue
                    if not (bound & names) or value is None:
                        continue
                    first, last = value.start_point[0] + 1, value.end_point[0] + 1
                    direct += [s.location for ln, s in site_lines.items() if first <= ln <= last]
                    for sub in [value, *walk_all(value)]:
                        if sub.type == "call_expression":
                            callee = text(field(sub, "function")).rsplit(".", 1)[-1]
                            if len(callee) > 2 and callee not in _PLAIN_CALLS:
                                calls.append(callee)
            rec = self.out.llm_calls[idx]
            if not (direct or calls) and rec.retrieved_context:
                # the prompt's content comes from the results by a path not traced (`arr.push(...)` in a loop
                # over a helper's output): the searches this function calls before the model call fill it
                for func in funcs[:1]:
                    for n in walk_scope(field(func, "body") or func):
                        if n.type == "call_expression" and n.start_point[0] + 1 < rec.line:
                            callee = text(field(n, "function")).rsplit(".", 1)[-1]
                            if len(callee) > 2 and callee not in _PLAIN_CALLS:
                                calls.append(callee)
            if direct or calls:
                self.out.llm_calls[idx] = dataclasses.replace(
                    rec, context_from=tuple(dict.fromkeys(direct)), context_calls=tuple(dict.fromkeys(calls))[:20])

    def _bound_evidence(self, func: Any, cls: str | None, closure: set[str], skip: Any, depth: int,
                        seen: set[int]) -> list[str]:
        if func is None or func.id in seen:
            return []
        seen.add(func.id)
        out: list[str] = []
        budget_names = {b.name for b in self.out.budget_constants}
        fname = func_name(func, func.parent) or "<anonymous>"
        prefix = f"in {fname}(): " if depth else ""
        body = field(func, "body") or func
        for n in walk_all(body):
            if skip is not None and n.start_byte >= skip.start_byte and n.end_byte <= skip.end_byte:
                continue
            t = n.type
            if t == "call_expression":
                fn = field(n, "function")
                callee = text(fn)
                last = callee.rsplit(".", 1)[-1]
                if fn is not None and fn.type == "member_expression" and last in ("slice", "substring", "substr"):
                    obj = text(field(fn, "object"))
                    if depth or obj.split(".")[0] in closure:
                        out.append(prefix + short(n, 100))
                elif C.TRUNCATE_FUNC_RE.search(last):
                    out.append(prefix + short(n, 100))
                elif any(p.type == "pair" and C.BOUND_KW_RE.search(text(field(p, "key")))
                         for a in args_of(n) if a.type == "object" for p in a.named_children):
                    out.append(prefix + short(n, 100))
                elif depth < 2 and fn is not None:
                    target = None
                    if fn.type == "identifier" and callee in self.mod.functions:
                        target = self.mod.functions[callee]
                    elif fn.type == "member_expression" and text(field(fn, "object")) == "this" and cls \
                            and f"{cls}.{last}" in self.mod.functions:
                        target = self.mod.functions[f"{cls}.{last}"]
                    if target is not None:
                        out.extend(self._bound_evidence(target, cls, closure, None, depth + 1, seen))
            elif t == "binary_expression" and text(field(n, "operator")) in ("<", "<=", ">", ">="):
                names = re.findall(r"[A-Za-z_$][\w$]*", text(n))
                if any(x in budget_names or C.BUDGET_NAME_RE.search(x) for x in names):
                    out.append(prefix + short(n, 100))
        return list(dict.fromkeys(out))

    # -- strings, citations -------------------------------------------------------------------
    def _string(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        own = literal_text(node)
        source = text(node)
        is_security = bool(C.SECURITY_FILTER_RE.search(own) or C.VAR_FIELD_FILTER_RE.search(source.replace("${", "{"))
                           or C.identity_clauses(source))
        is_sql = bool(_SQL_RE.search(own)) and bool(_SQL_KEYWORDS.search(own) or "cosine_distance" in own)
        if not (is_security or is_sql):
            return
        v = self.r.resolve(node, self.ctx(funcs, cls))
        resolved_text, _ = C.text_of(v, "js")
        if is_sql:
            params: dict[str, Val] = {}
            m = re.search(r"\blimit\s+(\d+)", resolved_text, re.I)
            if m:
                params["k"] = lit(int(m.group(1)))
            self.out.search_calls.append(self.site("sql_similarity", node, qual, params, {}, None, "sql"))
        if not is_security:
            return
        related: dict[str, list[str]] = {var: [var] for var in v.vars}
        for var in v.vars:
            root = re.match(r"[A-Za-z_$][\w$]*", var)
            if root:
                for func in funcs:
                    entries = [e for e in self.mod.locals_of(func)[0].get(root.group(0), ()) if e.kind == "assign"
                               and e.line <= line(node)]
                    if entries:
                        related[var].append(short(entries[-1].value, 400))
                        break
        self.out.security_filters.append(security_filter_site(
            self.rel, line(node), qual, short(node, 300), resolved_text, tuple(v.vars), related,
            security_fields(own, source.replace("${", "{")), language(self.rel)))

    def _citations(self) -> None:
        for qual, fn, _cls in self.functions:
            name = qual.rsplit(".", 1)[-1]
            if not C.CITATION_FUNC_RE.search(name):
                continue
            evidence = []
            body = field(fn, "body") or fn
            for n in [body, *walk_all(body)]:
                if n.type == "call_expression":
                    f = field(n, "function")
                    if f is not None and f.type == "member_expression":
                        prop = text(field(f, "property"))
                        obj = text(field(f, "object"))
                        if prop in ("isSubsetOf", "difference", "intersection", "isDisjointFrom"):
                            evidence.append(short(n, 100))
                        elif prop in ("has", "includes") and C.VALIDATION_REF_RE.search(obj):
                            evidence.append(short(n, 100))
                elif n.type == "binary_expression" and text(field(n, "operator")) == "in" \
                        and C.VALIDATION_REF_RE.search(text(field(n, "right"))):
                    evidence.append(short(n, 100))
            evidence = list(dict.fromkeys(evidence))
            self.out.citation_checks.append(CitationCheck(
                file=self.rel, line=line(fn), function=qual, validated=bool(evidence),
                evidence="; ".join(evidence[:3]) if evidence else
                "no membership test of cited ids against the retrieved ids", language=language(self.rel)))



def language(rel: str) -> str:
    return "typescript" if rel.lower().endswith((".ts", ".tsx", ".mts", ".cts")) else "javascript"


def is_string_expr(node: Any) -> bool:
    if node.type in ("string", "template_string"):
        return True
    if node.type == "binary_expression" and text(field(node, "operator")) == "+":
        return is_string_expr(field(node, "left")) or is_string_expr(field(node, "right"))
    return False


def literal_text(node: Any) -> str:
    if node.type == "string":
        return string_value(node)
    if node.type == "template_string":
        return "".join(text(c) if c.type == "string_fragment" else "{}" for c in node.named_children)
    if node.type == "binary_expression":
        return literal_text(field(node, "left")) + literal_text(field(node, "right"))
    return "{}"


