"""What JS/TS code does with the hits: score/distance cuts after `top`, and budgets whose units clash.

The JS/TS side of `python_results`: `hit["@search.rerankerScore"] >= minScore`,
`doc.score < cutoff`, `maxTokens - text.length`. A mixin of the JS file scanner.
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan.js_index import FUNC_TYPES, field, line, short, string_value, text, walk_all
from ragdiag.codescan.js_llm import language
from ragdiag.codescan.model import BudgetUnitIssue, ClientThreshold
from ragdiag.codescan.python_results import SCORE_KEY
from ragdiag.codescan.values import export, unknown

_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _score_field(node: Any) -> str | None:
    if node is None:
        return None
    if node.type == "member_expression":
        prop = text(field(node, "property"))
        return prop if SCORE_KEY.search(prop) else None
    if node.type == "subscript_expression":
        idx = field(node, "index")
        if idx is not None and idx.type == "string":
            key = string_value(idx)
            return key if SCORE_KEY.search(key) else None
    if node.type == "identifier" and re.fullmatch(r"(relevance|similarity|reranker)?_?[sS]core|distance|dist",
                                                   text(node)):
        return text(node)
    return None


class ResultsPass:
    """Client-side thresholds and budget units (mixed into `JSFileScan`)."""

    def _results_pass(self) -> None:
        low = self.source.lower()
        want_scores = any(w in low for w in ("score", "distance", "similarity", "threshold"))
        want_tokens = "token" in low and ".length" in low
        if not (want_scores or want_tokens):
            return
        site_funcs = {s.function for s in self.out.search_calls}
        for qual, fn, cls in self.functions:
            for n in walk_all(field(fn, "body") or fn):
                if n.type in FUNC_TYPES:
                    continue
                if n.type == "binary_expression":
                    op = text(field(n, "operator"))
                    if want_scores and op in _FLIP:
                        self._threshold(n, op, qual, fn, cls, qual in site_funcs)
                    elif want_tokens and op == "-":
                        left, right = field(n, "left"), field(n, "right")
                        if re.search(r"token", text(left), re.I) and right is not None \
                                and right.type == "member_expression" and text(field(right, "property")) == "length":
                            self.out.budget_units.append(BudgetUnitIssue(
                                file=self.rel, line=line(n), function=qual, kind="chars_from_tokens",
                                expression=short(n, 160), language=language(self.rel)))

    def _threshold(self, n: Any, op: str, qual: str, fn: Any, cls: str | None, after_top: bool) -> None:
        left, right = field(n, "left"), field(n, "right")
        fld, threshold, sym = _score_field(left), right, op
        if fld is None:
            fld, threshold, sym = _score_field(right), left, _FLIP[op]
        if fld is None or threshold is None or _score_field(threshold) is not None:
            return
        v = self.r.resolve(threshold, self.ctx((fn,), cls))
        if v.resolved and not isinstance(v.value, (int, float)):
            return
        low = fld.lower()
        measure = "reranker_score" if "reranker" in low else "distance" if "dist" in low else "score"
        keeps = "above" if sym in (">", ">=") else "below"
        reversed_ = (measure == "distance" and keeps == "above") or (measure != "distance" and keeps == "below")
        self.out.thresholds.append(ClientThreshold(
            file=self.rel, line=line(n), function=qual, field=fld, op=sym,
            value=export(v) if v.kind == "scalar" else export(unknown(v.source, v.expr)), measure=measure,
            keeps=keeps, reversed=reversed_, after_top=after_top or bool(self.out.search_calls),
            evidence=short(n, 120), language=language(self.rel)))


__all__ = ["ResultsPass"]
