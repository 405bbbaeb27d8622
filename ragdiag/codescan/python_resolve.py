"""The Python resolver: `ast` expressions to `Val`s, on the shared core (`ragdiag.codescan.core`).

Resolves literals, f-strings, `+`/`%`/`str.format`/`" and ".join([...])`,
containers, `dict(...)`/`**kwargs`, helpers returning a dict (the builder),
module constants (also imported from a scanned sibling), locals of the
enclosing function, parameter defaults, `self.x` set in a method (also from
an `__init__` parameter's default), fields of pydantic-settings / dataclass /
model classes (`settings.top_k` with `top_k: int = Field(default=5)`),
`os.getenv("X", "3")` / `os.environ.get`, and `x or 3` / `d.get("k", 3)` /
`a if c else 3` (the fallback is the default, `x` what overrides it).
Every value read from a definition carries its `file:line`.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx, Resolver
from ragdiag.codescan.python_index import (
    PyModule,
    callee_name,
    dotted,
    load_module,
    unparse,
    walk,
    walk_body,
)
from ragdiag.codescan.values import Val, lit, unknown

VECTOR_CTORS = frozenset({"VectorizedQuery", "VectorizableTextQuery", "VectorizableImageUrlQuery",
                          "VectorizableImageBinaryQuery"})
ENV_CALLS = frozenset({"os.environ.get", "os.getenv", "getenv", "environ.get", "env.get", "os.environ.setdefault"})


class PyResolver(Resolver):
    """Resolves Python expressions (see the module docstring)."""

    lang = "python"

    def __init__(self, project: C.Project) -> None:
        super().__init__(project)
        self._ctor_ctx: dict[int, Ctx] = {}
        self._annotated: dict[tuple[int, str], tuple[PyModule, dict[str, ast.AnnAssign]]] = {}

    # -- syntax hooks -------------------------------------------------------------------------------
    def text(self, node: Any) -> str:
        return unparse(node)

    def line(self, node: Any) -> int:
        return node.lineno

    def imported(self, name: str, ctx: Ctx, node: Any) -> Val:
        if name not in ctx.mod.imports:
            return unknown(f"name:{name}", name, node, ctx)
        module, attr = ctx.mod.imports[name]
        if attr is None:
            return Val("unknown", None, False, f"module:{module}", module, node=node, ctx=ctx)
        target_rel = self.project.find_py_module(module)
        if target_rel is not None:
            target = load_module(self.project, target_rel, attr)
            if target is not None and attr in target.constants:
                return self.constant(target, attr, node, ctx, source=f"import:{module}.{attr}")
        return unknown(f"import:{module}.{attr}", attr, node, ctx)

    def _resolve(self, node: ast.AST, ctx: Ctx) -> Val:
        t = type(node)
        if t is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if value is None or isinstance(value, (str, int, float, bool)):
                return lit(value, "literal", node, ctx)
            return unknown("literal", unparse(node), node, ctx)
        if t is ast.JoinedStr:
            return self._fstring(node, ctx)  # type: ignore[arg-type]
        if t is ast.Name:
            return self.name(node.id, ctx, node.lineno, node)  # type: ignore[attr-defined]
        if t is ast.Attribute:
            return self._attribute(node, ctx)  # type: ignore[arg-type]
        if t is ast.BinOp:
            return self._binop(node, ctx)  # type: ignore[arg-type]
        if t is ast.UnaryOp:
            operand = self.resolve(node.operand, ctx)  # type: ignore[attr-defined]
            if operand.kind == "scalar" and operand.resolved:
                op = node.op  # type: ignore[attr-defined]
                if isinstance(op, ast.USub) and isinstance(operand.value, (int, float)) \
                        and not isinstance(operand.value, bool):
                    return lit(-operand.value, operand.source, node, ctx)
                if isinstance(op, ast.Not):
                    return lit(not operand.value, operand.source, node, ctx)
            return unknown("expression", unparse(node), node, ctx)
        if t is ast.Dict:
            return self._dict(node, ctx)  # type: ignore[arg-type]
        if t in (ast.List, ast.Tuple, ast.Set):
            elems = [self.resolve(e, ctx) for e in node.elts]  # type: ignore[attr-defined]
            return C.make_list(elems, node, ctx)
        if t is ast.Call:
            return self._call(node, ctx)  # type: ignore[arg-type]
        if t is ast.Subscript:
            base = self.resolve(node.value, ctx)  # type: ignore[attr-defined]
            key = node.slice  # type: ignore[attr-defined]
            if isinstance(key, ast.Constant):
                if base.kind == "dict" and isinstance(key.value, str) and base.items and key.value in base.items:
                    return base.items[key.value]
                if base.kind == "list" and isinstance(key.value, int) and base.elems \
                        and -len(base.elems) <= key.value < len(base.elems):
                    return base.elems[key.value]
            return unknown("subscript", unparse(node), node, ctx)
        if t is ast.IfExp:
            a = self.resolve(node.body, ctx)  # type: ignore[attr-defined]
            b = self.resolve(node.orelse, ctx)  # type: ignore[attr-defined]
            if a.kind == b.kind == "scalar" and a.resolved and b.resolved and a.value == b.value:
                return a
            where = self.where(ctx.mod, node)
            sent = self.when(a, b, unparse(node.test, 80), unparse(node), node, ctx, where)  # type: ignore[attr-defined]
            if sent is not None:
                return sent
            if b.resolved and not a.resolved:
                return self.with_fallback(a, b, unparse(node), node, ctx, where)
            if a.resolved and not b.resolved:
                return self.with_fallback(b, a, unparse(node), node, ctx, where)
            return unknown("conditional", unparse(node), node, ctx)
        if t is ast.BoolOp:
            return self._boolop(node, ctx)  # type: ignore[arg-type]
        if t is ast.Await:
            return self.resolve(node.value, ctx)  # type: ignore[attr-defined]
        return unknown("expression", unparse(node), node, ctx)

    # -- strings --------------------------------------------------------------------------
    def _fstring(self, node: ast.JoinedStr, ctx: Ctx) -> Val:
        parts: list[Val] = []
        vars_: list[str] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(lit(str(piece.value)))
            elif isinstance(piece, ast.FormattedValue):
                expr = unparse(piece.value)
                vars_.append(expr)
                inner = self.resolve(piece.value, ctx)
                if inner.kind == "scalar" and inner.resolved and piece.conversion == -1 \
                        and piece.format_spec is None:
                    parts.append(inner)
                elif inner.kind == "scalar" and inner.resolved:
                    try:
                        value = inner.value
                        if piece.conversion == ord("r"):
                            value = repr(value)
                        elif piece.conversion == ord("s"):
                            value = str(value)
                        spec = ""
                        if piece.format_spec is not None:
                            spec_val = self._fstring(piece.format_spec, ctx)  # type: ignore[arg-type]
                            if not spec_val.resolved:
                                raise ValueError
                            spec = spec_val.value
                        parts.append(lit(format(value, spec)))
                    except (ValueError, TypeError):
                        parts.append(unknown("fstring", expr))
                else:
                    parts.append(inner.copy(expr=expr) if inner.kind != "scalar" else inner)
            else:
                parts.append(unknown("fstring", unparse(piece)))
        return C.concat(parts, "python", fstring=True, source="fstring", node=node, ctx=ctx,
                        vars=tuple(vars_))

    def _binop(self, node: ast.BinOp, ctx: Ctx) -> Val:
        left = self.resolve(node.left, ctx)
        right = self.resolve(node.right, ctx)
        op = node.op
        if isinstance(op, ast.Add):
            if left.is_str or right.is_str:
                extra = tuple(x.expr for x in (left, right) if not x.resolved and not x.is_str)
                return C.concat([left, right], "python", fstring=False, source="concat", node=node,
                                ctx=ctx, vars=extra)
            if left.kind == right.kind == "list":
                return C.make_list((left.elems or []) + (right.elems or []), node, ctx)
        if isinstance(op, ast.Mod) and left.is_str:
            return self._percent(left, node.right, ctx, node)
        if left.kind == right.kind == "scalar" and left.resolved and right.resolved \
                and isinstance(left.value, (int, float)) and isinstance(right.value, (int, float)) \
                and not isinstance(left.value, bool) and not isinstance(right.value, bool):
            try:
                if isinstance(op, ast.Add):
                    return lit(left.value + right.value, "expression", node, ctx)
                if isinstance(op, ast.Sub):
                    return lit(left.value - right.value, "expression", node, ctx)
                if isinstance(op, ast.Mult):
                    return lit(left.value * right.value, "expression", node, ctx)
                if isinstance(op, ast.FloorDiv) and right.value:
                    return lit(left.value // right.value, "expression", node, ctx)
                if isinstance(op, ast.Div) and right.value:
                    return lit(left.value / right.value, "expression", node, ctx)
            except (OverflowError, ArithmeticError):
                pass
        return unknown("expression", unparse(node), node, ctx)

    def _percent(self, fmt: Val, arg: ast.AST, ctx: Ctx, node: ast.AST) -> Val:
        args = list(arg.elts) if isinstance(arg, ast.Tuple) else [arg]
        vals = [self.resolve(a, ctx) for a in args]
        pieces = re.split(r"(%[-#0 +]*\d*(?:\.\d+)?[sdrfi])", fmt.value)
        parts: list[Val] = []
        i = 0
        for p in pieces:
            if re.fullmatch(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfi]", p) and i < len(vals):
                parts.append(vals[i])
                i += 1
            else:
                parts.append(lit(p))
        return C.concat(parts, "python", fstring=True, source="format", node=node, ctx=ctx,
                        vars=tuple(unparse(a) for a in args))

    def _format(self, fmt: Val, call: ast.Call, ctx: Ctx) -> Val:
        args = [self.resolve(a, ctx) for a in call.args]
        kws = {k.arg: self.resolve(k.value, ctx) for k in call.keywords if k.arg}
        parts: list[Val] = []
        auto = 0
        for piece in re.split(r"(\{[^{}]*\})", fmt.value):
            m = re.fullmatch(r"\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}", piece)
            if not m:
                parts.append(lit(piece.replace("{{", "{").replace("}}", "}")))
                continue
            field_name = m.group(1)
            if field_name == "":
                v = args[auto] if auto < len(args) else unknown("format", piece)
                auto += 1
            elif field_name.isdigit():
                idx = int(field_name)
                v = args[idx] if idx < len(args) else unknown("format", piece)
            else:
                v = kws.get(field_name, unknown("format", field_name))
            parts.append(v)
        exprs = tuple(unparse(a) for a in call.args) + tuple(unparse(k.value) for k in call.keywords)
        return C.concat(parts, "python", fstring=True, source="format", node=call, ctx=ctx, vars=exprs)


    def _module_of(self, name: str, ctx: Ctx) -> tuple[PyModule | None, list[str]]:
        """The scanned module a dotted name starts with (via imports), and the remaining parts."""
        parts = name.split(".")
        head = parts[0]
        imp = ctx.mod.imports.get(head)
        if imp is None:
            return None, parts
        module, attr = imp
        base = module if attr is None else f"{module}.{attr}"
        rest = parts[1:]
        # walk into submodules while they exist in the scanned tree
        best: tuple[PyModule | None, list[str]] = (None, parts)
        for i in range(len(rest) + 1):
            name = ".".join([base, *rest[:i]])
            rel = self.project.find_py_module(name)
            if rel is not None:
                best = (load_module(self.project, rel), rest[i:])
        return best

    def _boolop(self, node: ast.BoolOp, ctx: Ctx) -> Val:
        vals = [self.resolve(v, ctx) for v in node.values]
        if isinstance(node.op, ast.Or):
            for i, v in enumerate(vals):
                if not (v.kind == "scalar" and v.resolved):
                    rest = vals[i + 1:]
                    if rest and rest[-1].resolved:
                        return self.with_fallback(v, rest[-1], unparse(node), node, ctx, self.where(ctx.mod, node))
                    break
                if v.value:
                    return v
            else:
                return vals[-1]
        return unknown("expression", unparse(node), node, ctx)

    def class_of(self, node: ast.AST, ctx: Ctx, depth: int = 0) -> tuple[PyModule, str, ast.Call | None] | None:
        """The scanned class an expression is an instance of: (module, class, constructor call or None)."""
        if depth > 4 or node is None:
            return None
        if isinstance(node, ast.Await):
            return self.class_of(node.value, ctx, depth + 1)
        if isinstance(node, ast.Call):
            target = self._class_named(node.func, ctx)
            if target is not None:
                self._ctor_ctx[id(node)] = ctx
                return target[0], target[1], node
            fn = self._function_target(node.func, ctx)
            if fn is not None:
                mod, _qual, f = fn
                if f.returns is not None:
                    found = self._class_named(f.returns, Ctx(mod))
                    if found is not None:
                        return found[0], found[1], None
                rets = [n.value for n in walk(f) if isinstance(n, ast.Return) and n.value is not None]
                if len(rets) == 1:
                    return self.class_of(rets[0], Ctx.of(mod, f), depth + 1)
            return None
        if isinstance(node, ast.Name):
            name, line = node.id, getattr(node, "lineno", 10**9)
            for func in ctx.funcs:
                assigns, _ = ctx.mod.locals_of(func)
                entries = [e for e in assigns.get(name, ()) if e.line < line]
                if entries:
                    last = entries[-1]
                    return self.class_of(last.value, ctx, depth + 1) if last.kind == "assign" else None
                for p in ctx.mod.params_of(func):
                    if p.name == name and p.annotation:
                        ann = re.sub(r"^(?:Optional|Annotated)\[|\]$|\s*\|\s*None$", "", p.annotation).split(",")[0]
                        hit = self._class_by_text(ann.strip(), ctx)
                        return (hit[0], hit[1], None) if hit else None
            if name in ctx.mod.constants:
                return self.class_of(ctx.mod.constants[name][0], Ctx(ctx.mod), depth + 1)
            imp = ctx.mod.imports.get(name)
            if imp is not None and imp[1] is not None:
                rel = self.project.find_py_module(imp[0])
                target = load_module(self.project, rel, imp[1]) if rel else None
                if target is not None and imp[1] in target.constants:
                    return self.class_of(target.constants[imp[1]][0], Ctx(target), depth + 1)
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and ctx.cls:
            assigned = ctx.mod.self_attrs(ctx.cls).get(node.attr, [])
            if len(assigned) == 1:
                method, value = assigned[0]
                return self.class_of(value, Ctx.of(ctx.mod, method, ctx.cls), depth + 1)
            if not assigned:  # set in a base class's __init__ (`self.env_helper = env_helper`)
                for bmod, bcls in self._bases(ctx.mod, ctx.cls):
                    inherited = bmod.self_attrs(bcls).get(node.attr, [])
                    if len(inherited) == 1:
                        method, value = inherited[0]
                        return self.class_of(value, Ctx.of(bmod, method, bcls), depth + 1)
            sub = self._annotated_names(ctx.mod, ctx.cls).get(node.attr)
            if sub is not None:
                hit = self._class_by_text(dotted(sub.annotation) or "", ctx)
                return (hit[0], hit[1], None) if hit else None
        return None

    def _annotated_names(self, mod: PyModule, cls: str) -> dict[str, ast.AnnAssign]:
        """Name -> the first `name: T` annotation anywhere in class `cls` (in `ast.walk` order), indexed once."""
        key = (id(mod), cls)
        hit = self._annotated.get(key)
        if hit is None:
            first: dict[str, ast.AnnAssign] = {}
            for sub in walk(mod.classes.get(cls) or ast.Pass()):
                if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                    first.setdefault(sub.target.id, sub)
            hit = self._annotated[key] = (mod, first)  # (the module held: its id stays its own)
        return hit[1]

    def _bases(self, mod: PyModule, cls: str, depth: int = 0) -> list[tuple[PyModule, str]]:
        """The scanned base classes of `cls`, nearest first (same module or imported)."""
        out: list[tuple[PyModule, str]] = []
        if depth > 3:
            return out
        for base in mod.class_bases.get(cls, []):
            hit = (mod, base) if base in mod.classes and base != cls else self._class_by_text(base, Ctx(mod))
            if hit is not None and hit != (mod, cls):
                out.append(hit)
                out.extend(self._bases(hit[0], hit[1], depth + 1))
        return out

    def _class_named(self, func: ast.AST, ctx: Ctx) -> tuple[PyModule, str] | None:
        name = dotted(func)
        return self._class_by_text(name, ctx) if name else None

    def _class_by_text(self, name: str, ctx: Ctx, bases_among: tuple[str, ...] = ()) -> tuple[PyModule, str] | None:
        """The scanned class `name` names; with `bases_among`, a class of another module is looked for only
        when that module's text names one of these (the caller wants a subclass of one of them)."""
        if not name:
            return None
        if name in ctx.mod.classes:
            return ctx.mod, name
        head, _, tail = name.partition(".")
        imp = ctx.mod.imports.get(head)
        if imp is not None:
            module, attr = imp
            cls = tail or attr
            mod_name = module if attr is None or tail else module
            if attr is not None and tail:
                mod_name = f"{module}.{attr}"
            rel = self.project.find_py_module(mod_name)
            target = load_module(self.project, rel, cls, "class", bases_among) if rel else None
            if target is not None and cls in target.classes:
                return target, cls
        return None

    def class_field(self, mod: PyModule, cls: str, field: str, ctor: ast.Call | None, ctor_ctx: Ctx | None,
                    node: ast.AST, ctx: Ctx) -> Val | None:
        """A field of a scanned class: the constructor's keyword if visible, else the class-level default."""
        if ctor is not None and ctor_ctx is not None:
            for kw in ctor.keywords:
                if kw.arg == field:
                    v = self.resolve(kw.value, ctor_ctx)
                    return v.copy(prov=v.prov or self.where(ctor_ctx.mod, kw.value))
        fields = mod.class_fields.get(cls, {})
        if field not in fields:
            for base in mod.class_bases.get(cls, []):
                if base in mod.classes and base != cls:
                    return self.class_field(mod, base, field, None, None, node, ctx)
            # `self.FIELD = ...` set once in a method (a settings helper's __init__: EnvHelper)
            assigned = mod.self_attrs(cls).get(field, [])
            if len(assigned) == 1:
                method, value = assigned[0]
                v = self.guarded(("selfattr", mod.rel, cls, field), node, ctx,
                                 lambda: self.resolve(value, Ctx.of(mod, method, cls)), f"attribute:{cls}.{field}")
                return v.copy(source=v.source if v.source.startswith("env:") else f"attribute:{cls}.{field}",
                              prov=v.prov or self.where(mod, value))
            return None
        value, line = fields[field]
        if isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] in ("Field", "field"):
            default = next((k.value for k in value.keywords if k.arg == "default"), None)
            factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
            if default is None and isinstance(factory, ast.Name) and factory.id in ("dict", "list"):
                default = ast.Dict(keys=[], values=[]) if factory.id == "dict" else ast.List(elts=[], ctx=ast.Load())
                ast.copy_location(default, factory)
            if default is None and value.args and not (isinstance(value.args[0], ast.Constant)
                                                       and value.args[0].value is Ellipsis):
                default = value.args[0]
            if default is None:
                return unknown(f"settings:{cls}.{field}", f"{cls}.{field}", node, ctx)
            value = default
        v = self.guarded(("field", mod.rel, cls, field), node, ctx, lambda: self.resolve(value, Ctx(mod)),
                         f"settings:{cls}.{field}")
        kind = mod.settings_kind(cls)
        if kind == "settings":
            override = f"env:{mod.env_prefix(cls)}{field}".upper().replace("ENV:", "env:")
        elif re.search(r"request|override|body|payload|params|query", cls, re.I):
            override = f"request:{cls}.{field}"
        else:
            override = f"constructor:{cls}.{field}"
        return v.copy(source=f"settings:{cls}.{field}", prov=f"{mod.rel}:{line}", override=override)

    def _attribute(self, node: ast.Attribute, ctx: Ctx) -> Val:
        name = dotted(node)
        if name is None:
            return unknown("attribute", unparse(node), node, ctx)
        parts = name.split(".")
        enum = _sdk_enum(parts)
        if enum is not None:
            return lit(enum, f"enum:{name}", node, ctx)
        if parts[0] == "self" and ctx.cls and len(parts) == 2:
            assigned = ctx.mod.self_attrs(ctx.cls).get(parts[1], [])
            if len(assigned) == 1:
                method, value = assigned[0]
                v = self.guarded(("self", ctx.mod.rel, ctx.cls, parts[1]), node, ctx,
                                 lambda: self.resolve(value, Ctx.of(ctx.mod, method, ctx.cls)), f"attribute:{name}")
                if v.resolved:
                    return v.copy(source=f"attribute:{name}", prov=v.prov or self.where(ctx.mod, value))
            hit = self.class_field(ctx.mod, ctx.cls, parts[1], None, None, node, ctx) \
                if ctx.mod.settings_kind(ctx.cls) else None
            if hit is not None and hit.resolved:
                return hit
            return unknown(f"attribute:{name}", name, node, ctx)
        if len(parts) == 2 and parts[0] in ctx.mod.class_consts and parts[1] in ctx.mod.class_consts[parts[0]]:
            v = self.resolve(ctx.mod.class_consts[parts[0]][parts[1]], Ctx(ctx.mod))
            return v.copy(source=f"constant:{name}", prov=v.prov or self.where(ctx.mod, node))
        if parts[0] == "os" and "environ" in parts:
            return unknown("env", name, node, ctx)
        target, rest = self._module_of(name, ctx)
        if target is not None and len(rest) == 1 and rest[0] in target.constants:
            return self.constant(target, rest[0], node, ctx, source=f"import:{target.dotted}.{rest[0]}")
        inst = self.class_of(node.value, ctx)
        if inst is not None:
            mod, cls, ctor = inst
            v = self.class_field(mod, cls, node.attr, ctor, self._ctor_ctx.get(id(ctor)) if ctor is not None
                                 else None, node, ctx)
            if v is not None:
                return v
        return unknown(f"attribute:{name}", name, node, ctx)

    # -- containers and calls ---------------------------------------------------------------
    def _dict(self, node: ast.Dict, ctx: Ctx) -> Val:
        items: dict[str, Val] = {}
        open_ = False
        builder = None
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                extra = self.resolve(v, ctx)
                if extra.kind == "dict":
                    items.update(extra.items or {})
                    open_ = open_ or extra.open
                    builder = builder or extra.builder
                else:
                    open_ = True
                continue
            key = self.resolve(k, ctx)
            if key.kind == "scalar" and key.resolved and isinstance(key.value, (str, int, float, bool)):
                items[str(key.value)] = self.resolve(v, ctx)
            else:
                open_ = True
        out = C.make_dict(items, open=open_, node=node, ctx=ctx)
        out.builder = builder
        return out

    def _call(self, node: ast.Call, ctx: Ctx) -> Val:
        func = node.func
        name = dotted(func) or ""
        last = callee_name(node) or ""
        if isinstance(func, ast.Attribute) and last in ("format", "join", "strip", "lower", "upper"):
            base = self.resolve(func.value, ctx)
            if base.is_str:
                if last == "format":
                    return self._format(base, node, ctx)
                if last == "join" and len(node.args) == 1:
                    seq = self.resolve(node.args[0], ctx)
                    if seq.kind == "list" and seq.elems is not None:
                        parts: list[Val] = []
                        for i, e in enumerate(seq.elems):
                            if i:
                                parts.append(base)
                            parts.append(e)
                        return C.concat(parts, "python", fstring=False, source="join", node=node, ctx=ctx)
                    return unknown("join", unparse(node), node, ctx)
                if base.resolved and not node.args:
                    return lit(getattr(base.value, last)(), base.source, node, ctx)
        if name in ("json.dumps", "dumps") and node.args:
            return self.resolve(node.args[0], ctx)
        if name == "dict":
            items: dict[str, Val] = {}
            open_ = False
            if node.args:
                base = self.resolve(node.args[0], ctx)
                if base.kind == "dict":
                    items.update(base.items or {})
                else:
                    open_ = True
            for kw in node.keywords:
                if kw.arg is None:
                    extra = self.resolve(kw.value, ctx)
                    if extra.kind == "dict":
                        items.update(extra.items or {})
                    else:
                        open_ = True
                else:
                    items[kw.arg] = self.resolve(kw.value, ctx)
            return C.make_dict(items, open=open_, node=node, ctx=ctx)
        if name in ENV_CALLS or (name.endswith(("environ.get", ".getenv")) and node.args):
            key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
            if key == "?" and node.args:  # a helper's parameter: `os.getenv(var_name, default)`
                named = self.resolve(node.args[0], ctx)
                if named.resolved and isinstance(named.value, str):
                    key = named.value
            default_node = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "default"), None)
            default = self.resolve(default_node, ctx) if default_node is not None else None
            return self.env_default(str(key), default, unparse(node), node, ctx, self.where(ctx.mod, node))
        if name in ("str", "int", "float", "bool") and len(node.args) == 1:
            inner = self.resolve(node.args[0], ctx)
            if inner.kind == "scalar" and inner.resolved:
                try:
                    value = {"str": str, "int": int, "float": float, "bool": _truthy}[name](inner.value)
                    return inner.copy(value=value, node=node, ctx=ctx, expr=unparse(node))
                except (TypeError, ValueError):
                    pass
            return unknown(f"call:{name}", unparse(node), node, ctx).copy(override=inner.override)
        if last == "get" and isinstance(func, ast.Attribute) and node.args and (len(node.args) > 1 or any(
                k.arg == "default" for k in node.keywords)):
            base = self.resolve(func.value, ctx)
            key_v = self.resolve(node.args[0], ctx)
            if base.kind == "dict" and key_v.resolved and isinstance(key_v.value, str) and base.items \
                    and key_v.value in base.items:
                return base.items[key_v.value]
            fallback = self.resolve(node.args[1] if len(node.args) > 1 else next(
                k.value for k in node.keywords if k.arg == "default"), ctx)
            primary = unknown("subscript", unparse(node), node, ctx)
            return self.with_fallback(primary, fallback, unparse(node), node, ctx, self.where(ctx.mod, node))
        if last in VECTOR_CTORS:
            kwargs = {k.arg: self.resolve(k.value, ctx) for k in node.keywords if k.arg}
            return Val("call", None, all(v.resolved for v in kwargs.values()), f"call:{last}",
                       unparse(node), call=last, kwargs=kwargs, node=node, ctx=ctx)
        target = self._function_target(func, ctx)
        if target is not None and ctx.depth < self.MAX_CALL_DEPTH:
            return self._call_builder(target, node, ctx)
        return Val("call", None, False, f"call:{name or last}", unparse(node), call=name or last,
                   node=node, ctx=ctx)

    def _function_target(self, func: ast.AST, ctx: Ctx):
        """(module, qualname, node) of a function in the scanned tree that `func` names."""
        mod = ctx.mod
        if isinstance(func, ast.Name):
            if func.id in mod.functions:
                return mod, func.id, mod.functions[func.id]
            imp = mod.imports.get(func.id)
            if imp is not None and imp[1] is not None:
                rel = self.project.find_py_module(imp[0])
                if rel is not None:
                    target = load_module(self.project, rel, imp[1], "def")
                    if target is not None and imp[1] in target.functions:
                        return target, imp[1], target.functions[imp[1]]
            return None
        name = dotted(func)
        if name is None:
            return None
        parts = name.split(".")
        if parts[0] in ("self", "cls") and ctx.cls and len(parts) == 2:
            q = f"{ctx.cls}.{parts[1]}"
            if q in mod.functions:
                return mod, q, mod.functions[q]
            return None
        target, rest = self._module_of(name, ctx)
        if target is not None and len(rest) == 1 and rest[0] in target.functions:
            return target, rest[0], target.functions[rest[0]]
        return None

    def _call_builder(self, target, node: ast.Call, ctx: Ctx) -> Val:
        mod, qual, fn = target
        positional = [None if isinstance(a, ast.Starred) else a for a in node.args]
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        bindings = self.bind_call(mod, fn, positional, keywords, ctx, skip_first="." in qual)
        returns = [n.value for n in walk_body(fn.body) if isinstance(n, ast.Return) and n.value is not None]
        return self.follow(mod, qual, fn, returns, bindings, node, ctx)


#: Well-known SDK enums and their wire values.
_ENUMS = {"QueryType": {"SEMANTIC": "semantic", "SIMPLE": "simple", "FULL": "full"},
          "VectorFilterMode": {"PRE_FILTER": "preFilter", "POST_FILTER": "postFilter",
                               "STRICT_POST_FILTER": "strictPostFilter"},
          "SearchMode": {"ANY": "any", "ALL": "all"},
          "QueryCaptionType": {"EXTRACTIVE": "extractive", "NONE": "none"},
          "QueryAnswerType": {"EXTRACTIVE": "extractive", "NONE": "none"}}


def _sdk_enum(parts: list[str]) -> str | None:
    if len(parts) >= 2 and parts[-2] in _ENUMS:
        return _ENUMS[parts[-2]].get(parts[-1])
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
