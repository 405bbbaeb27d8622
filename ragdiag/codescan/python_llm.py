"""Python LLM call sites (is the retrieved context they get bounded?) and citation handlers (are cited
ids checked against the retrieved ones?). A mixin of the Python file scanner."""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
from collections import defaultdict
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import CitationCheck, LLMCallSite
from ragdiag.codescan.python_index import callee_name, dotted, param_names, unparse, walk, walk_body
from ragdiag.codescan.values import export

LC_CHAT_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream", "predict", "apredict", "batch",
                             "abatch"})
_BUILTINS = frozenset(dir(builtins)) | {"self", "cls"}
#: Calls that transform a value and produce no retrieval of their own (not matched to search functions).
_PLAIN_CALLS = frozenset({"join", "format", "get", "append", "extend", "strip", "replace", "items", "values",
                          "keys", "dumps", "loads", "lower", "upper", "split", "encode", "decode", "copy",
                          "model_dump", "dict", "json", "to_dict", "render", "substitute", "format_map",
                          "from_template", "from_messages", "invoke", "ainvoke", "create", "acreate"})


class LLMSites:
    """LLM calls, context bounds and citation checks (mixed into `PyFileScan`)."""

    # -- LLM calls ---------------------------------------------------------------------------
    def _llm_kind(self, call: ast.Call, name: str, receiver: str | None, last: str) -> str | None:
        if name.endswith(("chat.completions.create", "responses.create", "completions.create",
                          "chat.completions.parse", "beta.chat.completions.parse", "chat.completions.stream",
                          "responses.stream", "responses.parse")) \
                or name.endswith((".chat.completions.acreate",)):
            tag = None
            parts = receiver.split(".") if receiver else []
            for i in range(len(parts), 0, -1):
                prefix = ".".join(parts[:i])
                if prefix in self.typed:
                    tag = self.typed[prefix]
                    break
            if tag == "AzureOpenAI" or (tag is None and self.imports_azure_openai):
                return "azure_openai_chat"
            return "openai_chat"
        if last in LC_CHAT_METHODS and receiver is not None:
            tag = self.type_of(receiver)
            if tag == "LCChat" or re.search(r"(^|[._])(llm|chat_model|chat|model)$", receiver.lower()):
                return "langchain_chat"
            return None
        if name.endswith(("messages.create", "generate_content")) or name in ("litellm.completion",
                                                                               "litellm.acompletion",
                                                                               "completion", "ollama.chat"):
            return "other"
        return None

    def _names_in(self, nodes: list[ast.AST]) -> list[str]:
        bound: set[str] = set()
        names: list[str] = []
        for n in nodes:
            for sub in walk(n):
                if isinstance(sub, ast.comprehension):
                    for t in walk(sub.target):
                        if isinstance(t, ast.Name):
                            bound.add(t.id)
                elif isinstance(sub, ast.Lambda):
                    bound.update(param_names(sub))  # type: ignore[arg-type]
        for n in nodes:
            for sub in walk(n):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound:
                    names.append(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                        and sub.value.id == "self":
                    names.append(f"self.{sub.attr}")
        return list(dict.fromkeys(names))

    def _llm(self, call: ast.Call, qual: str, func: Any, cls: str | None, kind: str, name: str,
             via: str = "") -> None:
        exprs: list[ast.AST] = [kw.value for kw in call.keywords
                                if kw.arg in ("messages", "input", "prompt", "contents", "instructions", None,
                                              *(("json", "data", "content") if kind == "http_model" else ()))]
        exprs += list(call.args) if kind != "http_model" else []
        mod = self.mod
        closure = self._names_in(exprs)
        if func is not None:
            closure = self._expand_closure(func, closure)
        skip = set(mod.constants) | set(mod.imports) | set(mod.functions) | set(mod.classes) | _BUILTINS
        context_vars = tuple(n for n in closure if n not in skip)
        retrieved = any(C.CONTEXT_NAME_RE.search(n) for n in context_vars)
        evidence = self._bound_evidence(func, cls, set(closure), call, 0, set()) if func is not None else []
        cap_node = next((kw.value for kw in call.keywords if kw.arg in ("max_tokens", "max_completion_tokens",
                                                                       "max_output_tokens", "max_new_tokens")), None)
        output_cap = export(self.r.resolve(cap_node, self.ctx(func, cls))) if cap_node is not None else None
        # the app's own client: the prompt is a parameter of the function the model call sits in, so what it
        # holds is its callers' (found across the tree as `app_client` calls of that function's name)
        params = [p for p in param_names(func) if p not in ("self", "cls")] if func is not None and not via else []
        own = [n for n in context_vars if not n.startswith("self.")]
        # a parameter named like retrieved content (docs, hits) is judged here as before: its name says what it is
        wrapper = bool(params) and bool(own) and all(n in params or n in ("kwargs", "args") for n in own) \
            and not evidence and not retrieved
        self.out.llm_calls.append(LLMCallSite(
            file=self.rel, line=call.lineno, kind="other" if kind == "http_model" else kind,
            function=qual or "<module>",
            context_bounded=bool(evidence),
            bound_evidence="; ".join(evidence[:3]) if evidence else
            "no slice, budget comparison or truncation helper on the context in this function "
            "or the same-file functions it calls",
            context_vars=context_vars, retrieved_context=retrieved and not wrapper, output_cap=output_cap,
            module=mod.dotted, language="python", call=name, via=via,
            context_unresolved=f"the prompt is the parameter {', '.join(p for p in own if p in params)} of "
                               f"{qual}: its callers fill it" if wrapper else ""))
        if wrapper:
            self.out.llm_wrappers.append((func.name, qual, self.rel, call.lineno))
        self.__dict__.setdefault("_llm_info", []).append((len(self.out.llm_calls) - 1, func, closure))

    def _trace_llm_context(self) -> None:
        """Which search calls (here, or in the functions called) produce what each LLM call's prompt holds.

        Sets `context_from` (sites of this file whose results feed the prompt), `context_calls` (the
        functions called to produce the prompt's inputs, matched across the tree later) and
        `context_accumulated` (those inputs grow in a loop that searches)."""
        info = self.__dict__.get("_llm_info")
        if not info:
            return
        site_of = {id(node): rec for rec, (_f, _c, node) in self.site_nodes if node is not None}
        for idx, func, closure in info:
            if func is None:
                continue
            assigns, subs = self.mod.locals_of(func)
            feeders = self._feeders(func)
            direct: list[str] = []
            calls: list[str] = []
            names = set(closure)
            for name in closure:
                values = [e.value for e in assigns.get(name, ()) if e.kind == "assign" and e.value is not None]
                values += [e.value for e in subs.get(name, ()) if e.value is not None]
                values += feeders.get(name, [])
                for v in values:
                    for sub in walk(v):
                        if not isinstance(sub, ast.Call):
                            continue
                        rec = site_of.get(id(sub))
                        if rec is not None:
                            direct.append(rec.location)
                        else:
                            cn = callee_name(sub)
                            if cn and len(cn) > 2 and cn not in _BUILTINS and cn not in _PLAIN_CALLS:
                                calls.append(cn)
            accumulated = False
            search_funcs = {rec.function.rsplit(".", 1)[-1] for rec, _cur in self.site_nodes}
            handed = {n.attr for n in self.mod.nodes_of(func).get(ast.Attribute, ()) if isinstance(n.ctx, ast.Load)} | {
                n.id for n in self.mod.nodes_of(func).get(ast.Name, ())}
            for loop in [*self.mod.nodes_of(func).get(ast.For, ()), *self.mod.nodes_of(func).get(ast.AsyncFor, ())]:
                inner = [n for stmt in loop.body for n in walk(stmt)]
                grows = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                            and isinstance(n.func.value, ast.Name) and n.func.value.id in names
                            and n.func.attr in ("append", "extend", "add", "update") for n in inner) or any(
                    isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in names
                    for n in inner)
                searches = any(isinstance(n, ast.Call) and (id(n) in site_of or callee_name(n) in calls)
                               for n in inner) or (any(isinstance(n, ast.Call) for n in inner) and bool(
                    handed & search_funcs))  # the loop calls search methods the function hands over (a tools dict)
                if grows and searches:
                    accumulated = True
            if direct or calls or accumulated:
                rec = self.out.llm_calls[idx]
                self.out.llm_calls[idx] = dataclasses.replace(
                    rec, context_from=tuple(dict.fromkeys(direct)), context_calls=tuple(dict.fromkeys(calls))[:20],
                    context_accumulated=accumulated)

    def _expand_closure(self, func: Any, closure: list[str]) -> list[str]:
        """Names feeding `closure` in `func`: assigned values, `x.append(...)` arguments, loop iterables."""
        assigns, subs = self.mod.locals_of(func)
        feeders = self._feeders(func)
        out = list(closure)
        i = 0
        while i < len(out) and len(out) < 80:
            n = out[i]
            values = [e.value for e in assigns.get(n, ()) if e.kind == "assign" and e.value is not None]
            values += [e.value for e in subs.get(n, ()) if e.value is not None]
            values += feeders.get(n, [])
            for extra in self._names_in(values):
                if extra not in out:
                    out.append(extra)
            i += 1
        return out

    def _feeders(self, func: Any) -> dict[str, list[ast.AST]]:
        """What feeds each local of `func`: `x.append(...)` arguments, `x += ...`, loop iterables (cached)."""
        cache = self.__dict__.setdefault("_feeders_cache", {})
        if id(func) in cache:
            return cache[id(func)]
        feeders: dict[str, list[ast.AST]] = defaultdict(list)
        grow = ("append", "extend", "add", "write")
        nodes = self.mod.nodes_of(func)
        for node in nodes.get(ast.Call, ()):
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.attr in (*grow, "insert", "update"):
                feeders[node.func.value.id].extend([*node.args, *(k.value for k in node.keywords)])
        for node in nodes.get(ast.AugAssign, ()):
            if isinstance(node.target, ast.Name):
                feeders[node.target.id].append(node.value)
        loops = [*nodes.get(ast.For, ()), *nodes.get(ast.AsyncFor, ())]
        if loops:
            growing = [(n.lineno, n.func.value.id) for n in nodes.get(ast.Call, ())
                       if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.attr in grow]
            growing += [(n.lineno, n.target.id) for n in nodes.get(ast.AugAssign, ()) if isinstance(n.target, ast.Name)]
            for loop in loops:
                first, last = loop.lineno, loop.end_lineno or loop.lineno
                for name in {nm for ln, nm in growing if first <= ln <= last}:
                    feeders[name].append(loop.iter)
        cache[id(func)] = feeders
        return feeders

    def _bound_evidence(self, func: Any, cls: str | None, closure: set[str], skip: ast.AST | None,
                        depth: int, seen: set[int]) -> list[str]:
        if func is None or id(func) in seen:
            return []
        seen.add(id(func))
        out: list[str] = []
        budget_names = {b.name for b in self.out.budget_constants}
        skip_ids = {id(skip)} if skip is not None else set()
        prefix = f"in {func.name}(): " if depth else ""
        for node in walk_body(func.body):
            if id(node) in skip_ids:
                continue
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
                    and node.slice.upper is not None and node.slice.lower is None:
                base = dotted(node.value) or ""
                # here: a slice of what the prompt holds; in a helper: a slice of what the helper was given
                # (a helper cutting some other list, image URLs say, bounds nothing the prompt gets from the caller)
                own = closure if not depth else self._given(func)
                if base.split(".")[0] in own or base in own:
                    out.append(prefix + unparse(node, 100))
            elif isinstance(node, ast.Compare):
                names = [n.id for n in walk(node) if isinstance(n, ast.Name)]
                if any(n in budget_names or C.BUDGET_NAME_RE.search(n) or n.lower() in ("max_sources",
                                                                                        "max_tokens_context")
                       for n in names):
                    out.append(prefix + unparse(node, 100))
            elif isinstance(node, ast.Call):
                last = callee_name(node) or ""
                if C.TRUNCATE_FUNC_RE.search(last) or last == "islice":
                    out.append(prefix + unparse(node, 100))
                elif any(kw.arg and C.BOUND_KW_RE.search(kw.arg) for kw in node.keywords):
                    out.append(prefix + unparse(node, 100))
                elif depth < 2:
                    target = None
                    if isinstance(node.func, ast.Name) and node.func.id in self.mod.functions:
                        target = (self.mod.functions[node.func.id], None)
                    elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                            and node.func.value.id == "self" and cls \
                            and f"{cls}.{node.func.attr}" in self.mod.functions:
                        target = (self.mod.functions[f"{cls}.{node.func.attr}"], cls)
                    if target is not None:
                        out.extend(self._bound_evidence(target[0], target[1], closure, None, depth + 1, seen))
            elif isinstance(node, ast.Name) and node.id.lower() == "max_sources":
                out.append(prefix + node.id)
        return list(dict.fromkeys(out))

    def _given(self, func: Any) -> set[str]:
        """What a helper was given: its parameters and the loop or comprehension variables over them."""
        given = set(param_names(func))
        for n in walk_body(func.body):
            if isinstance(n, ast.comprehension) or isinstance(n, (ast.For, ast.AsyncFor)):
                root = n.iter
                while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                    root = root.func if isinstance(root, ast.Call) else root.value
                if isinstance(root, ast.Name) and root.id in given:
                    given.update(t.id for t in walk(n.target) if isinstance(t, ast.Name))
        return given

    # -- prompts and citations -------------------------------------------------------------------
    def _citations(self) -> None:
        for qual, fn, cls in self.functions:
            if not C.CITATION_FUNC_RE.search(fn.name):
                continue
            evidence = self._validation_evidence(fn, cls, 0, set())
            self.out.citation_checks.append(CitationCheck(
                file=self.rel, line=fn.lineno, function=qual, validated=bool(evidence),
                evidence="; ".join(evidence[:3]) if evidence else
                "no membership test of cited ids against the retrieved ids", language="python"))

    def _validation_evidence(self, fn: Any, cls: str | None, depth: int, seen: set[int]) -> list[str]:
        if id(fn) in seen:
            return []
        seen.add(id(fn))
        out: list[str] = []
        prefix = f"in {fn.name}(): " if depth else ""
        for node in walk_body(fn.body):
            if isinstance(node, ast.Call):
                last = callee_name(node) or ""
                if last in ("issubset", "issuperset", "intersection", "difference", "isdisjoint"):
                    out.append(prefix + unparse(node, 100))
                elif depth < 2 and re.search(r"valid|verify|check|allowed|known", last, re.I):
                    target = None
                    if isinstance(node.func, ast.Name) and node.func.id in self.mod.functions:
                        target = self.mod.functions[node.func.id]
                    elif isinstance(node.func, ast.Attribute) and cls and f"{cls}.{last}" in self.mod.functions:
                        target = self.mod.functions[f"{cls}.{last}"]
                    if target is not None:
                        out.extend(self._validation_evidence(target, cls, depth + 1, seen))
            elif isinstance(node, ast.Compare):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, (ast.Constant, ast.JoinedStr)):
                        if isinstance(right, (ast.List, ast.Tuple, ast.Set)) and all(
                                isinstance(e, ast.Constant) for e in right.elts):
                            continue
                        if C.VALIDATION_REF_RE.search(unparse(right, 120)):
                            out.append(prefix + unparse(node, 100))
                    elif isinstance(op, (ast.LtE, ast.GtE)) and "set(" in unparse(node, 200):
                        out.append(prefix + unparse(node, 100))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.BitAnd)):
                text = unparse(node, 200)
                if "set(" in text or C.VALIDATION_REF_RE.search(text):
                    if any(isinstance(s, (ast.Set, ast.SetComp)) or (isinstance(s, ast.Call) and callee_name(s) in
                                                                      ("set", "frozenset"))
                           or isinstance(s, ast.Name) for s in (node.left, node.right)):
                        out.append(prefix + unparse(node, 100))
        return list(dict.fromkeys(out))


