"""The optional report section "From the current to the proposed policy", drawn from an optimize.json.

`render_optimization(data, lang)` is pure (HTML from the `ragdiag optimize` result); a report
without an optimizer result has no such section (`render_optimization(None)` is "").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragdiag.report.format import _e, _fmt
from ragdiag.report.texts import _t

METRIC_ROWS = ("ndcg@10", "recall@10", "recall@50", "mrr")


def load_optimization(path: str | Path | None) -> dict[str, Any] | None:
    """The optimize.json at `path` (a file or the folder holding it); None for an empty path."""
    if not path:
        return None
    from ragdiag.optimize.result import load_result

    return load_result(path)


def _p(value: Any) -> str:
    return "–" if value is None else format(value, ".2g")


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="evidence"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def render_optimization(data: dict[str, Any] | None, lang: str = "en") -> str:
    """The section: what was searched, held-out figures (current, proposed, comparison), the path."""
    if not data:
        return ""
    base, prop, comp = data["baseline"], data["proposed"], data.get("compare")
    split = prop.get("split", {})
    parts = [f"<h2>{_e(_t('opt_title', lang))}</h2>",
             "<p>" + _e(_t("opt_intro", lang, train=base["train"]["n"], n=base["test"]["n"],
                              test_is=split.get("test_is", ""))) + "</p>",
             "<p><b>" + _e(_t("opt_verdict", lang, base=_fmt(base["test"]["ndcg@10"], lang),
                                 prop=_fmt(prop["test"]["ndcg@10"], lang), p=_p(data["p_value"]))) + "</b></p>"]
    decision = data.get("decision")
    if decision and decision.get("message"):
        # the decision's own sentence (figures included): proposed, use an existing profile, or keep
        parts.append("<p><b>" + _e(decision["message"]) + "</b></p>")
    if comp:
        parts.append("<p>" + _e(_t("opt_compare", lang, name=comp["policy"], value=_fmt(comp["test"]["ndcg@10"], lang),
                                   p=_p(comp.get("p_value")))) + "</p>")
    if prop.get("budget_reached"):
        parts.append("<p>" + _e(_t("opt_budget", lang)) + "</p>")
    head = [_t("col_metric", lang), _t("col_split", lang), _t("col_current", lang), _t("col_proposed", lang)]
    if comp:
        head.append(_t("col_compare", lang))
    rows = []
    for m in METRIC_ROWS:
        for split_key, label in (("train", "split_train"), ("test", "split_test")):
            row = [m, f"{_t(label, lang)} (n={base[split_key]['n']})", _fmt(base[split_key].get(m), lang),
                   _fmt(prop[split_key].get(m), lang)]
            if comp:
                row.append(_fmt(comp["test"].get(m), lang) if split_key == "test" else "–")
            rows.append(row)
    parts.append(_table(head, rows))
    alt_rows = []
    for name, m in ((decision or {}).get("test", {}).get("existing") or {}).items():
        alt_rows.append([f"profile '{name}'", _fmt(m.get("ndcg@10"), lang), _fmt(m.get("recall@50"), lang)])
    tuned = (data.get("alternatives") or {}).get("tuned_hybrid")
    if tuned:
        alt_rows.append(["simple hybrid, tuned weight", _fmt(tuned["test"].get("ndcg@10"), lang),
                         _fmt(tuned["test"].get("recall@50"), lang)])
    if alt_rows:
        alt_rows.insert(0, ["proposed", _fmt(prop["test"].get("ndcg@10"), lang), _fmt(prop["test"].get("recall@50"), lang)])
        parts.append(_table([_t("col_profile", lang), "nDCG@10 (test)", "recall@50 (test)"], alt_rows))
    changes = data.get("changes") or []
    if not changes:
        parts.append("<p>" + _e(_t("opt_none", lang)) + "</p>")
    else:
        parts.append(f"<h3>{_e(_t('opt_path', lang))}</h3>")
        rows = [[c["profile"], c["knob"], _fmt(c["from"], lang), _fmt(c["to"], lang),
                 f"{_fmt(c['train_ndcg@10'][0], lang)} → {_fmt(c['train_ndcg@10'][1], lang)}"] for c in changes]
        parts.append(_table([_t("col_profile", lang), _t("col_knob", lang), _t("col_from", lang),
                             _t("col_to", lang), _t("col_train_ndcg", lang)], rows))
    return '<section class="optimization">' + "".join(parts) + "</section>"


__all__ = ["load_optimization", "render_optimization"]
