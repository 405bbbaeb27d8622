"""The JS/TS resolver: tree-sitter expressions to `Val`s, on the shared core (`ragdiag.codescan.core`).

Literals, template strings, `+`, `??`/`||` fallbacks, object literals and
spreads, `JSON.stringify`, `.join`, top-level constants (also imported from a
scanned sibling), locals of the enclosing functions, parameter defaults,
`process.env.X ?? "3"`, React state (`const [k, setK] = useState(3)`: the
initial value, overridable in the UI) and helpers returning an object.
"""

from __future__ import annotations

from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx, Resolver
from ragdiag.codescan.js_index import (
    UNWRAP_TYPES,
    args_of,
    field,
    line,
    load_module,
    number,
    short,
    string_value,
    text,
    unwrap,
    walk_scope,
)
from ragdiag.codescan.values import Val, lit, unknown

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "`": "`", "$": "$", "0": "\0"}


class JSResolver(Resolver):
    """Resolves JS/TS expressions (see the module docstring)."""

    lang = "js"
    conditional_label = "reassigned"

    def text(self, node: Any) -> str:
        return short(node)

    def line(self, node: Any) -> int:
        return line(node)

    def imported(self, name: str, ctx: Ctx, node: Any) -> Val:
        mod = ctx.mod
        if name not in mod.imports:
            return unknown(f"name:{name}", name, node, ctx)
        target_rel, attr = mod.imports[name]
        if target_rel is not None and attr not in ("*", "default"):
            target = load_module(self.project, target_rel)
            if target is not None and attr in target.constants:
                return self.constant(target, attr, node, ctx, source=f"import:{target.dotted}.{attr}")
        return unknown(f"import:{name}", name, node, ctx)

    def _resolve(self, node: Any, ctx: Ctx) -> Val:
        t = node.type
        if t == "string":
            return lit(string_value(node), "literal", node, ctx)
        if t == "template_string":
            return self._template(node, ctx)
        if t == "number":
            n = number(text(node))
            return lit(n, "literal", node, ctx) if n is not None else unknown("literal", text(node), node, ctx)
        if t in ("true", "false"):
            return lit(t == "true", "literal", node, ctx)
        if t in ("null", "undefined"):
            return lit(None, "literal", node, ctx)
        if t == "identifier" or t == "shorthand_property_identifier":
            return self.name(text(node), ctx, line(node), node)
        if t in UNWRAP_TYPES:
            inner = unwrap(node)
            return self.resolve(inner, ctx) if inner is not None else unknown("expression", short(node))
        if t == "member_expression":
            return self._member(node, ctx)
        if t == "subscript_expression":
            base = self.resolve(field(node, "object"), ctx)
            idx = self.resolve(field(node, "index"), ctx)
            if base.kind == "dict" and idx.kind == "scalar" and idx.resolved and base.items \
                    and str(idx.value) in base.items:
                return base.items[str(idx.value)]
            if base.kind == "list" and idx.kind == "scalar" and isinstance(idx.value, int) and base.elems \
                    and 0 <= idx.value < len(base.elems):
                return base.elems[idx.value]
            return unknown("subscript", short(node), node, ctx)
        if t == "binary_expression":
            return self._binary(node, ctx)
        if t == "unary_expression":
            arg = self.resolve(field(node, "argument"), ctx)
            op = text(field(node, "operator"))
            if arg.kind == "scalar" and arg.resolved and op == "-" and isinstance(arg.value, (int, float)) \
                    and not isinstance(arg.value, bool):
                return lit(-arg.value, arg.source, node, ctx)
            if arg.kind == "scalar" and arg.resolved and op == "!":
                return lit(not arg.value, arg.source, node, ctx)
            return unknown("expression", short(node), node, ctx)
        if t == "object":
            return self._object(node, ctx)
        if t == "array":
            elems = [self.resolve(e, ctx) for e in node.named_children if e.type != "comment"]
            return C.make_list(elems, node, ctx)
        if t == "call_expression":
            return self._call(node, ctx)
        if t == "new_expression":
            ctor = text(field(node, "constructor"))
            return Val("call", None, False, f"call:new {ctor}", short(node), call=ctor, node=node, ctx=ctx)
        if t == "ternary_expression":
            a = self.resolve(field(node, "consequence"), ctx)
            b = self.resolve(field(node, "alternative"), ctx)
            if a.kind == b.kind == "scalar" and a.resolved and b.resolved and a.value == b.value:
                return a
            sent = self.when(a, b, short(field(node, "condition"), 80), short(node), node, ctx,
                             self.where(ctx.mod, node))
            if sent is not None:
                return sent
            if b.resolved and not a.resolved:
                return self.with_fallback(a, b, short(node), node, ctx, self.where(ctx.mod, node))
            if a.resolved and not b.resolved:
                return self.with_fallback(b, a, short(node), node, ctx, self.where(ctx.mod, node))
            return unknown("conditional", short(node), node, ctx)
        return unknown("expression", short(node), node, ctx)

    def _template(self, node: Any, ctx: Ctx) -> Val:
        parts: list[Val] = []
        vars_: list[str] = []
        for c in node.named_children:
            if c.type == "string_fragment":
                parts.append(lit(text(c)))
            elif c.type == "escape_sequence":
                t = text(c)
                parts.append(lit(_ESCAPES.get(t[1:2], t[1:])))
            elif c.type == "template_substitution":
                inner_nodes = c.named_children
                if not inner_nodes:
                    continue
                expr = short(inner_nodes[0])
                vars_.append(expr)
                v = self.resolve(inner_nodes[0], ctx)
                parts.append(v if v.kind == "scalar" else v.copy(expr=expr))
        return C.concat(parts, "js", fstring=True, source="template", node=node, ctx=ctx, vars=tuple(vars_))

    def _binary(self, node: Any, ctx: Ctx) -> Val:
        op = text(field(node, "operator"))
        left = self.resolve(field(node, "left"), ctx)
        right = self.resolve(field(node, "right"), ctx)
        if op == "+" and (left.is_str or right.is_str):
            extra = tuple(x.expr for x in (left, right) if not x.resolved and not x.is_str)
            return C.concat([left, right], "js", fstring=False, source="concat", node=node, ctx=ctx, vars=extra)
        if op in ("??", "||") and not left.resolved and right.resolved:
            return self.with_fallback(left, right, short(node), node, ctx, self.where(ctx.mod, node))
        if op in ("??", "||") and left.resolved and left.kind == "scalar":
            return left if (left.value is not None and (op == "??" or left.value)) else right
        if left.kind == right.kind == "scalar" and left.resolved and right.resolved \
                and isinstance(left.value, (int, float)) and isinstance(right.value, (int, float)) \
                and not isinstance(left.value, bool) and not isinstance(right.value, bool):
            try:
                value = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                         "/": lambda a, b: a / b}[op](left.value, right.value)
                return lit(value, "expression", node, ctx)
            except (KeyError, ArithmeticError):
                pass
        return unknown("expression", short(node), node, ctx)

    def _object(self, node: Any, ctx: Ctx) -> Val:
        items: dict[str, Val] = {}
        open_ = False
        builder = None
        for c in node.named_children:
            if c.type == "pair":
                key = field(c, "key")
                value = field(c, "value")
                if key is None or value is None:
                    continue
                if key.type == "property_identifier":
                    k = text(key)
                elif key.type == "string":
                    k = string_value(key)
                elif key.type == "number":
                    k = text(key)
                else:
                    kv = self.resolve(key.named_children[0] if key.named_children else key, ctx)
                    if not (kv.kind == "scalar" and kv.resolved):
                        open_ = True
                        continue
                    k = str(kv.value)
                items[k] = self.resolve(value, ctx)
            elif c.type == "shorthand_property_identifier":
                items[text(c)] = self.resolve(c, ctx)
            elif c.type == "spread_element":
                inner = c.named_children[0] if c.named_children else None
                extra = self.resolve(inner, ctx) if inner is not None else unknown("spread")
                if extra.kind == "dict":
                    items.update(extra.items or {})
                    open_ = open_ or extra.open
                    builder = builder or extra.builder
                else:
                    open_ = True
        out = C.make_dict(items, open=open_, node=node, ctx=ctx)
        out.builder = builder
        return out

    def _member(self, node: Any, ctx: Ctx) -> Val:
        src = text(node)
        if src.startswith(("process.env.", "import.meta.env.")):
            var = src.rsplit(".", 1)[-1]
            return unknown(f"env:{var}", src, node, ctx).copy(override=f"env:{var}")
        obj = field(node, "object")
        prop = text(field(node, "property"))
        if obj is not None and obj.type == "identifier" and text(obj) in ctx.mod.imports:
            target_rel, attr = ctx.mod.imports[text(obj)]
            if attr == "*" and target_rel is not None:
                target = load_module(self.project, target_rel)
                if target is not None and prop in target.constants:
                    return self.constant(target, prop, node, ctx, source=f"import:{target.dotted}.{prop}")
        if obj is not None and obj.type != "this":
            base = self.resolve(obj, ctx)
            if base.kind == "dict" and base.items and prop in base.items:
                return base.items[prop]
        return unknown(f"attribute:{short(node, 80)}", src, node, ctx)

    def _call(self, node: Any, ctx: Ctx) -> Val:
        fn = field(node, "function")
        name = text(fn)
        args = args_of(node)
        if name == "JSON.stringify" and args:
            return self.resolve(args[0], ctx)
        if fn is not None and fn.type == "member_expression" and text(field(fn, "property")) == "join":
            seq = self.resolve(field(fn, "object"), ctx)
            sep = self.resolve(args[0], ctx) if args else lit(",")
            if seq.kind == "list" and seq.elems is not None and sep.is_str:
                parts: list[Val] = []
                for i, e in enumerate(seq.elems):
                    if i:
                        parts.append(sep)
                    parts.append(e)
                return C.concat(parts, "js", fstring=False, source="join", node=node, ctx=ctx)
        if name in ("String", "Number", "parseInt", "parseFloat") and len(args) >= 1:
            inner = self.resolve(args[0], ctx)
            if inner.kind == "scalar" and inner.resolved:
                value = str(inner.value) if name == "String" else number(str(inner.value))
                if value is not None:
                    return inner.copy(value=value, node=node, ctx=ctx, expr=short(node))
            return unknown(f"call:{name}", short(node), node, ctx).copy(override=inner.override)
        if name.rsplit(".", 1)[-1] in ("useState", "useRef", "signal", "ref") and args:
            initial = self.resolve(args[0], ctx)
            holder = node.parent
            while holder is not None and holder.type in UNWRAP_TYPES:
                holder = holder.parent
            var = ""
            if holder is not None and holder.type == "variable_declarator":
                pattern = field(holder, "name")
                first = next((c for c in pattern.named_children if c.type == "identifier"), None) \
                    if pattern is not None else None
                var = text(first) if first is not None else ""
            if initial.resolved and initial.kind == "scalar":
                return initial.copy(source=f"ui_state:{var or '?'}", prov=self.where(ctx.mod, node),
                                    override=f"ui:{var or '?'}", node=node, ctx=ctx, expr=short(node))
            return unknown(f"ui_state:{var or '?'}", short(node), node, ctx)
        target = self._function_target(fn, ctx)
        if target is not None and ctx.depth < self.MAX_CALL_DEPTH:
            return self._call_builder(target, node, args, ctx)
        return Val("call", None, False, f"call:{name}", short(node), call=name, node=node, ctx=ctx)

    def _function_target(self, fn: Any, ctx: Ctx):
        if fn is None:
            return None
        mod = ctx.mod
        if fn.type == "identifier":
            name = text(fn)
            if name in mod.functions:
                return mod, name, mod.functions[name]
            imp = mod.imports.get(name)
            if imp is not None and imp[0] is not None:
                target = load_module(self.project, imp[0])
                if target is not None and imp[1] in target.functions:
                    return target, imp[1], target.functions[imp[1]]
        elif fn.type == "member_expression":
            obj = field(fn, "object")
            prop = text(field(fn, "property"))
            if obj is not None and obj.type == "this" and ctx.cls and f"{ctx.cls}.{prop}" in mod.functions:
                return mod, f"{ctx.cls}.{prop}", mod.functions[f"{ctx.cls}.{prop}"]
            if obj is not None and obj.type == "identifier" and text(obj) in mod.imports:
                target_rel, attr = mod.imports[text(obj)]
                if attr == "*" and target_rel is not None:
                    target = load_module(self.project, target_rel)
                    if target is not None and prop in target.functions:
                        return target, prop, target.functions[prop]
        return None

    def _call_builder(self, target, node: Any, args: list[Any], ctx: Ctx) -> Val:
        mod, qual, fn = target
        positional = [None if a.type == "spread_element" else a for a in args]
        bindings = self.bind_call(mod, fn, positional, {}, ctx)
        body = field(fn, "body")
        if body is not None and body.type != "statement_block":
            returns = [body]
        else:
            rets = [n for n in walk_scope(body) if n.type == "return_statement"] if body is not None else []
            returns = [r.named_children[0] for r in rets if r.named_children]
        return self.follow(mod, qual, fn, returns, bindings, node, ctx)
