"""python_index's node walks: the same children, in the same order, as the `ast` module's own."""

from __future__ import annotations

import ast

from ragdiag.codescan.python_index import children, walk, walk_body

#: Every kind of statement and expression the grammar has, with the fields that hold None or names.
SOURCE = '''
from __future__ import annotations
import os, sys as system
from .pkg import (a as b, c)
x: int = 1
y = {**other, "k": [1, *rest], 2: (3,)}
global_name = lambda p, /, q=1, *args, r, s=2, **kw: p if q else r
@decorator(arg=1)
async def f(a: int, /, b: str = "x", *c, d, e=None, **g) -> list[int]:
    global gx
    nonlocal_unused = [i async for i in aiter() if i > 0]
    async with ctx() as (h, i), other():
        await thing
    async for j in src:
        yield j
    return (yield from gen())

class K(Base, metaclass=Meta):
    """doc"""
    field: str
    def m(self):
        nonlocal_free = 0
        if nonlocal_free == 0:
            def inner():
                nonlocal nonlocal_free
                del nonlocal_free
        try:
            pass
        except* ValueError as err:
            raise RuntimeError("x") from err
        else:
            assert self, "msg"
        finally:
            pass
        match self.value:
            case {"k": 1, **rest}:
                pass
            case [1, *others] | (2 | 3) as alt if alt:
                pass
            case Point(x=0, y=_) | None | True:
                pass
        while not (a < b <= c != d is not e in f not in g):
            x += -y ** ~z // 2 @ m
            break
        for k, v in {k: v for k, v in items()}.items():
            continue
        s = f"{x!r:>{width}} {y=}"[1:2:3]
        t = {q for q in range(3)}, (g for g in []), ...
        return x if y else z and w or not v
'''


def test_children_are_ast_iter_child_nodes_for_every_node_kind():
    tree = ast.parse(SOURCE)
    nodes = list(ast.walk(tree))
    kinds = {type(n).__name__ for n in nodes}
    assert {"Dict", "arguments", "MatchMapping", "TryStar", "Nonlocal", "Global", "ImportFrom", "Compare",
            "JoinedStr", "AsyncFunctionDef", "Lambda", "Starred", "MatchClass", "MatchOr", "Slice"} <= kinds
    for n in nodes:
        assert children(n) == list(ast.iter_child_nodes(n)), ast.dump(n)[:120]
    # the two lists of the grammar that hold None: `{**other}`'s key, a keyword-only parameter without default
    d = next(n for n in nodes if isinstance(n, ast.Dict) and None in n.keys)
    assert len(children(d)) == len(d.keys) + len(d.values) - 1
    args = next(n for n in nodes if isinstance(n, ast.arguments) and None in n.kw_defaults)
    assert None not in children(args)


def test_children_of_nodes_built_by_hand_with_missing_fields():
    built = [ast.Name("create"), ast.Call(func=ast.Name("f"), args=[], keywords=[ast.keyword("a", ast.Constant(1))]),
             ast.Attribute(value=ast.Name("self"), attr="x"), ast.Dict(keys=[None], values=[ast.Name("d")])]
    for n in built:
        assert children(n) == list(ast.iter_child_nodes(n))


def test_walk_is_ast_walk_in_order():
    tree = ast.parse(SOURCE)
    assert list(walk(tree)) == list(ast.walk(tree))
    assert [type(n) for n in walk(ast.parse("x = 1"))] == [ast.Module, ast.Assign, ast.Name, ast.Constant, ast.Store]


def test_walk_body_does_not_enter_nested_definitions():
    tree = ast.parse(SOURCE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef))
    seen = list(walk_body(method.body))
    assert not any(isinstance(n, ast.Nonlocal) for n in seen)  # only inside `inner`, nested in an `if`
    assert not any(isinstance(n, ast.FunctionDef) for n in seen)
    assert any(isinstance(n, ast.If) for n in seen)
    assert any(isinstance(n, ast.TryStar) for n in seen)
