"""What Python code does with the hits: score/distance cuts applied after `top`, and budgets whose units clash.

* `ClientThreshold`: `hit["@search.rerankerScore"] > t`, `[d for d, s in pairs if s < t]`,
  `score_threshold=` on a LangChain retriever. The measure's direction decides whether the cut keeps the
  better side; a cut on the hits of a search capped by `top`/`k` shrinks the pool silently.
* `BudgetUnitIssue`: a character count (`len(text)`) subtracted from or compared with a token limit; an
  LLM call that gets retrieved context with no input budget while `max_tokens` caps only the output.

A mixin of the Python file scanner, run after the sites are collected.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan.core import Ctx
from ragdiag.codescan.model import BudgetUnitIssue, ClientThreshold
from ragdiag.codescan.python_index import callee_name, dotted, unparse
from ragdiag.codescan.values import export, unknown

SCORE_KEY = re.compile(r"reranker_?score|rerankerscore|@search\.score|^score$|_score$|^relevance|similarity|"
                       r"distance|^dist$|cosine|confidence", re.I)
_FLIP = {ast.Gt: "<", ast.GtE: "<=", ast.Lt: ">", ast.LtE: ">="}
_OPS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}
_TOKEN_NAME = re.compile(r"token", re.I)
_CHAR_NAME = re.compile(r"char|len|length", re.I)


def _score_field(node: ast.AST) -> str | None:
    """The score field a node reads (`hit["@search.rerankerScore"]`, `doc.metadata["score"]`, `score`)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value if SCORE_KEY.search(node.slice.value) else None
    if isinstance(node, ast.Attribute):
        return node.attr if SCORE_KEY.search(node.attr) else None
    if isinstance(node, ast.Name):
        return node.id if re.fullmatch(r"(relevance_|similarity_|reranker_)?score|distance|dist|similarity",
                                       node.id, re.I) else None
    if isinstance(node, ast.Call) and callee_name(node) == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value if SCORE_KEY.search(node.args[0].value) else None
    return None


def _measure(field: str, distance_store: bool) -> str:
    low = field.lower()
    if "reranker" in low:
        return "reranker_score"
    if "dist" in low:
        return "distance"
    if low == "score" and distance_store:
        return "distance"
    if "relevance" in low or "similarity" in low or "cosine" in low:
        return "score"
    return "score"


class ResultsPass:
    """Client-side thresholds and budget units (mixed into `PyFileScan`)."""

    def _results_pass(self) -> None:
        low = self.low
        sites_by_func: dict[str, list[Any]] = {}
        for site, _cur in self.site_nodes:
            sites_by_func.setdefault(site.function, []).append(site)
        src = self.source  # (plain `in` tests first: the pattern over the whole file was a tenth of this pass)
        distance_store = "AzureSearch" not in src and (
            "Chroma" in src or "PGVector" in src or "similarity_search_with_score" in src
            or ("FAISS" in src and re.search(r"\bFAISS\b", src) is not None))
        want_scores = any(w in low for w in ("score", "distance", "similarity", "threshold"))
        want_tokens = "token" in low
        for qual, fn, cls in self.functions:
            low = self.fn_low(fn) if (want_scores or want_tokens) else ""
            if want_scores and any(w in low for w in ("score", "distance", "similarity", "threshold", "dist")) \
                    and any(op in low for op in (">", "<")):
                self._thresholds(qual, fn, cls, sites_by_func, distance_store)
            if want_tokens and "token" in low and "len(" in low:
                self._units(qual, fn)
        for site, _cur in self.site_nodes:
            p = site.params.get("score_threshold")
            if p is not None:
                rev = bool(re.search(r"dist", (p.expression or "") + (p.source or ""), re.I))
                self.out.thresholds.append(ClientThreshold(
                    file=self.rel, line=site.line, function=site.function, field="score_threshold", op=">=",
                    value=p, measure="score", keeps="above", reversed=rev, after_top=True,
                    evidence=("a distance passed as the relevance threshold" if rev else
                              "LangChain score_threshold: hits below it are dropped after k"), language="python"))
        for c in self.out.llm_calls:
            if c.retrieved_context and not c.context_bounded and c.output_cap is not None:
                self.out.budget_units.append(BudgetUnitIssue(
                    file=self.rel, line=c.line, function=c.function, kind="output_only",
                    expression=f"max_tokens={c.output_cap.expression or c.output_cap.value} caps the answer; "
                               f"the retrieved context has no budget", language="python"))

    def _thresholds(self, qual: str, fn: Any, cls: str | None, sites_by_func: dict[str, list[Any]],
                    distance_store: bool) -> None:
        ctx = Ctx.of(self.mod, fn, cls)
        nodes = self.mod.nodes_of(fn)
        skip_ifs: dict[int, bool] = {}
        for n in nodes.get(ast.If, ()):
            if all(isinstance(b, (ast.Continue, ast.Break)) for b in n.body):
                skip_ifs[id(n.test)] = True
        for n in nodes.get(ast.Compare, ()):
            if len(n.ops) != 1 or type(n.ops[0]) not in _OPS:
                continue
            left, right, op = n.left, n.comparators[0], type(n.ops[0])
            field = _score_field(left)
            threshold = right
            sym = _OPS[op]
            if field is None:
                field = _score_field(right)
                threshold = left
                sym = _FLIP[op]
            if field is None or _score_field(threshold) is not None:
                continue
            if isinstance(threshold, ast.Call) and callee_name(threshold) in ("len", "max", "min"):
                continue
            value = self.r.resolve(threshold, ctx)
            if value.kind not in ("scalar", "unknown") or (value.resolved and not isinstance(value.value, (int,
                                                                                                           float))):
                continue
            keeps = "above" if sym in (">", ">=") else "below"
            if skip_ifs.get(id(n)):
                keeps = "below" if keeps == "above" else "above"
            measure = _measure(field, distance_store)
            reversed_ = (measure == "distance" and keeps == "above") or (measure != "distance" and keeps == "below")
            after_top = bool(sites_by_func.get(qual)) or bool(re.search(r"results?|hits|docs|response", unparse(
                left if threshold is right else right, 80)) and self.site_nodes)
            self.out.thresholds.append(ClientThreshold(
                file=self.rel, line=n.lineno, function=qual, field=field, op=sym,
                value=export(value) if value.kind == "scalar" else export(unknown(value.source, value.expr)),
                measure=measure, keeps=keeps, reversed=reversed_, after_top=after_top,
                evidence=unparse(n, 120), language="python"))

    def _units(self, qual: str, fn: Any) -> None:
        nodes = self.mod.nodes_of(fn)
        for n in [*nodes.get(ast.BinOp, ()), *nodes.get(ast.Compare, ())]:
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub):
                left = dotted(n.left) or ""
                if _TOKEN_NAME.search(left) and not _CHAR_NAME.search(left.rsplit(".", 1)[-1]) \
                        and isinstance(n.right, ast.Call) and callee_name(n.right) == "len":
                    self.out.budget_units.append(BudgetUnitIssue(
                        file=self.rel, line=n.lineno, function=qual, kind="chars_from_tokens",
                        expression=unparse(n, 160), language="python"))
            elif isinstance(n, ast.Compare) and len(n.ops) == 1:
                sides = [n.left, n.comparators[0]]
                lens = [s for s in sides if isinstance(s, ast.Call) and callee_name(s) == "len"
                        and s.args and not re.search(r"token|encod", unparse(s.args[0], 80), re.I)]
                names = [dotted(s) or "" for s in sides if s not in lens]
                if lens and any(_TOKEN_NAME.search(x) and not _CHAR_NAME.search(x.rsplit(".", 1)[-1])
                                for x in names):
                    self.out.budget_units.append(BudgetUnitIssue(
                        file=self.rel, line=n.lineno, function=qual, kind="chars_from_tokens",
                        expression=unparse(n, 160), language="python"))


__all__ = ["ResultsPass", "SCORE_KEY"]
