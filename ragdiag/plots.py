"""One figure function per check, drawn from the finding's own evidence tables.

Figures are rebuilt from a `Finding` alone (also one loaded from JSON), so the
report notebook and a CI artefact show the same picture. `figure(finding)`
returns a matplotlib Figure or None when the finding carries nothing to draw.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

FigureFn = Callable[[Any], Any]
_FIGURES: dict[str, FigureFn] = {}
WINDOW = 50


def figure_for(check_id: str) -> Callable[[FigureFn], FigureFn]:
    def deco(fn: FigureFn) -> FigureFn:
        _FIGURES[check_id] = fn
        return fn
    return deco


def figure(finding: Any) -> Any:
    """The figure of a finding, or None (skipped checks, no data)."""
    fn = _FIGURES.get(finding.check_id)
    if fn is None or finding.status == "skipped":
        return None
    return fn(finding)


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _table(finding: Any, title_start: str) -> Any:
    for e in finding.evidence:
        if e.title.startswith(title_start):
            return e
    return None


def _num(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


@figure_for("reranker_scores")
def reranker_scores(finding: Any) -> Any:
    ev = _table(finding, "Top-1 reranker score per question")
    if ev is None or not ev.rows:
        return None
    by_profile: dict[str, list[float]] = defaultdict(list)
    for _case, _intent, profile, score in ev.rows:
        if _num(score) is not None:
            by_profile[profile].append(float(score))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    bins = [i / 4 for i in range(17)]
    ax.hist(list(by_profile.values()), bins=bins, label=list(by_profile), stacked=True)
    ax.axvline(2.0, color="black", linestyle="--", linewidth=1, label="somewhat relevant (2.0)")
    ax.set_xlabel("top-1 reranker score (0-4)")
    ax.set_ylabel("questions")
    ax.set_title("Top-1 reranker scores per profile")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


@figure_for("pool_size")
def pool_size(finding: Any) -> Any:
    ev = _table(finding, "Pool size per question")
    if ev is None or not ev.rows:
        return None
    by_profile: dict[str, list[int]] = defaultdict(list)
    for _case, _intent, profile, size in ev.rows:
        by_profile[profile].append(int(size))
    names = sorted(by_profile)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([[max(v, 1) for v in by_profile[n]] for n in names], tick_labels=names, showfliers=True)
    ax.set_yscale("log")
    ax.axhline(WINDOW, color="red", linestyle="--", linewidth=1, label="reranker window (50)")
    ax.set_ylabel("candidates reaching fusion")
    ax.set_title("Post-filter candidate pool per profile")
    ax.tick_params(axis="x", rotation=30, labelsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure_for("prerank_filters")
def prerank_filters(finding: Any) -> Any:
    ev = _table(finding, "Ablation per non-relevance clause")
    if ev is None or not ev.rows:
        return None
    cols = list(ev.columns)
    labels, with_r, without_r = [], [], []
    for row in ev.rows:
        r = dict(zip(cols, row, strict=True))
        a, b = _num(r.get("recall@50 with")), _num(r.get("recall@50 without"))
        if a is None or b is None:
            continue
        labels.append(f"{r['profile']}: {r['clause']}")
        with_r.append(a)
        without_r.append(b)
    if not labels:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.6 * len(labels)))
    y = range(len(labels))
    ax.barh([i + 0.2 for i in y], without_r, height=0.4, label="without the clause")
    ax.barh([i - 0.2 for i in y], with_r, height=0.4, label="with the clause")
    ax.set_yticks(list(y), labels, fontsize=8)
    ax.set_xlabel("recall@50")
    ax.set_xlim(0, 1)
    ax.set_title("Recall cost per pre-rerank filter clause")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure_for("shared_query_text")
def shared_query_text(finding: Any) -> Any:
    ev = _table(finding, "Split-channel probe")
    if ev is None or not ev.rows:
        return None
    names = [r[0] for r in ev.rows]
    recall = [_num(r[1]) or 0 for r in ev.rows]
    ndcg = [_num(r[2]) or 0 for r in ev.rows]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], recall, width=0.4, label="recall@10")
    ax.bar([i + 0.2 for i in x], ndcg, width=0.4, label="nDCG@10")
    ax.set_xticks(list(x), names)
    ax.set_ylim(0, 1)
    ax.set_title("One shared text vs. separate channel texts")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure_for("route_counts")
def route_counts(finding: Any) -> Any:
    traffic = _table(finding, "Traffic per route")
    value = _table(finding, "Each route's profile against")
    if traffic is None and value is None:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    if traffic is not None:
        routes = [r[0] for r in traffic.rows]
        shares = [r[1] for r in traffic.rows]
        total = sum(shares) or 1
        axes[0].bar(routes, [s / total for s in shares])
        axes[0].axhline(0.02, color="red", linestyle="--", linewidth=1)
        axes[0].set_title("traffic share per route")
        axes[0].tick_params(axis="x", rotation=45, labelsize=7)
    if value is not None:
        routes = [r[0] for r in value.rows]
        deltas = [_num(str(r[5]).replace("+", "")) or 0 for r in value.rows]
        colors = ["tab:green" if r[-1] == "yes" else "tab:gray" for r in value.rows]
        axes[1].bar(routes, deltas, color=colors)
        axes[1].axhline(0, color="black", linewidth=0.8)
        axes[1].set_title("nDCG@10 gain over best single profile (points)")
        axes[1].tick_params(axis="x", rotation=45, labelsize=7)
    fig.tight_layout()
    return fig


@figure_for("goldset")
def goldset(finding: Any) -> Any:
    ev = _table(finding, "Retrieval metrics of policy")
    if ev is None:
        return None
    rows = [r for r in ev.rows if str(r[0]).startswith("intent ")]
    if not rows:
        return None
    cols = list(ev.columns)
    want = ("hit_rate@10", "recall@50", "ndcg@10")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.8 / len(want)
    for j, m in enumerate(want):
        idx = cols.index(m)
        ax.bar([i + j * width for i in range(len(rows))], [_num(r[idx]) or 0 for r in rows], width=width, label=m)
    ax.set_xticks([i + width for i in range(len(rows))], [str(r[0])[7:] for r in rows], rotation=30, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title("Goldset metrics per intent")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def available() -> tuple[str, ...]:
    return tuple(sorted(_FIGURES))


@figure_for("chunk_boundaries")
def chunk_boundaries(finding: Any) -> Any:
    hist = _table(finding, "Token size histogram")
    shares = _table(finding, "Boundary and structure shares")
    if (hist is None or not hist.rows) and (shares is None or not shares.rows):
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [1, 1.25]})
    if hist is not None and hist.rows:
        sizes = {r[0]: r[1] for r in _table(finding, "Chunk size in tokens").rows} \
            if _table(finding, "Chunk size in tokens") is not None else {}
        labels = [f"{lo}-{hi}" if hi is not None else f"{lo}+" for lo, hi, _ in hist.rows]
        counts = [int(c) for _, _, c in hist.rows]
        tiny = next((str(k) for k in sizes if str(k).startswith("tiny")), "")
        big = next((str(k) for k in sizes if str(k).startswith("oversized")), "")
        lo_lim = _num(tiny.split("<")[-1].split()[0]) if "<" in tiny else None
        hi_lim = _num(big.split(">")[-1].split()[0]) if ">" in big else None
        colors = ["tab:red" if lo_lim is not None and hi is not None and hi <= lo_lim
                  else "tab:orange" if hi_lim is not None and lo >= hi_lim else "tab:blue"
                  for lo, hi, _ in hist.rows]
        axes[0].bar(range(len(counts)), counts, color=colors)
        axes[0].set_xticks(range(len(counts)), labels, rotation=45, fontsize=7)
        axes[0].set_xlabel("tokens per chunk (red: tiny, orange: oversized)")
        axes[0].set_ylabel("chunks")
        axes[0].set_title("Chunk size")
    if shares is not None and shares.rows:
        rows = [r for r in shares.rows if _num(r[2]) is not None]
        names = [str(r[0]) for r in rows]
        vals = [float(r[2]) for r in rows]
        colors = {"fail": "tab:red", "warn": "tab:orange", "ok": "tab:green"}
        y = list(range(len(rows)))
        axes[1].barh(y, vals, color=[colors.get(str(r[4]), "tab:gray") for r in rows])
        for i, r in enumerate(rows):
            limit = str(r[3])
            if "%" in limit:
                x = _num(limit.split(">")[-1].strip().rstrip("%"))
                if x is not None:
                    axes[1].plot([x / 100, x / 100], [i - 0.4, i + 0.4], color="black", linewidth=1.5)
        for i, v in enumerate(vals):
            axes[1].text(min(v, 0.88) + 0.01, i, f"{v:.0%}", va="center", fontsize=7)
        axes[1].set_yticks(y, names, fontsize=7)
        axes[1].invert_yaxis()
        axes[1].set_xlim(0, 1)
        axes[1].set_xlabel("share of chunks (black: threshold)")
        axes[1].set_title("Boundaries and structure")
    fig.tight_layout()
    return fig


@figure_for("call_sites")
def call_sites(finding: Any) -> Any:
    ev = _table(finding, "Request builders per module")
    if ev is None or not ev.rows:
        return None
    cols = list(ev.columns)
    rows = [dict(zip(cols, r, strict=True)) for r in ev.rows]
    drift = _table(finding, "Drift between call sites")
    no_security: set[str] = set()
    no_filter: set[str] = set()
    if drift is not None:
        for param, _kind, role, value, _n, where in drift.rows:
            if value != "absent":
                continue
            if param == "security filter":
                no_security.update(where or ())
            elif str(param).startswith("filter:") and role != "scope":
                no_filter.update(where or ())
    names = [str(r["module"]) for r in rows]
    counts = [int(r["call sites"]) for r in rows]
    colors = ["tab:red" if no_security & set(r["where"] or ()) else
              "tab:orange" if no_filter & set(r["where"] or ()) else "tab:blue" for r in rows]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.35 * len(names)))
    y = list(range(len(names)))
    ax.barh(y, counts, color=colors)
    for i, c in enumerate(counts):
        ax.text(c + 0.05, i, str(c), va="center", fontsize=8)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(counts) * 1.15 + 0.5)
    ax.set_xlabel("call sites (red: security clause missing at one; orange: a filter clause missing)",
                  fontsize=8)
    ax.set_title(f"Search call sites per module ({len(names)} module(s) build requests)")
    fig.tight_layout()
    return fig


@figure_for("context_budgets")
def context_budgets(finding: Any) -> Any:
    per_q = _table(finding, "Context tokens per question")
    per_p = _table(finding, "Context tokens per profile")
    if per_q is None or not per_q.rows:
        return None
    by_profile: dict[str, list[float]] = defaultdict(list)
    for _case, profile, _sources, tokens in per_q.rows:
        if _num(tokens) is not None:
            by_profile[str(profile)].append(float(tokens))
    names = sorted(by_profile)
    budget = None
    if per_p is not None and per_p.rows and "budget" in per_p.columns:
        budget = _num(per_p.rows[0][list(per_p.columns).index("budget")])
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([by_profile[n] for n in names], tick_labels=names, showfliers=True)
    if budget is not None:
        ax.axhline(budget, color="red", linestyle="--", linewidth=1, label=f"context budget ({budget:.0f} tokens)")
        ax.legend(fontsize=8)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("context tokens (top hits' content)")
    ax.set_title("Assembled context per profile vs budget")
    ax.tick_params(axis="x", rotation=30, labelsize=8)
    fig.tight_layout()
    return fig


@figure_for("acl_trimming")
def acl_trimming(finding: Any) -> Any:
    leaks = _table(finding, "Leak probes per identity")
    inj = _table(finding, "Injection probes")
    if (leaks is None or not leaks.rows) and (inj is None or not inj.rows):
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    if leaks is not None and leaks.rows:
        cols = list(leaks.columns)
        names = [str(r[0]) for r in leaks.rows]
        req = [int(r[cols.index("requests")]) for r in leaks.rows]
        out = [int(r[cols.index("results outside rights")]) for r in leaks.rows]
        x = list(range(len(names)))
        axes[0].bar([i - 0.2 for i in x], req, width=0.4, label="probe requests", color="tab:blue")
        axes[0].bar([i + 0.2 for i in x], out, width=0.4, label="results outside rights", color="tab:red")
        for i, v in enumerate(out):
            axes[0].text(i + 0.2, v, str(v), ha="center", va="bottom", fontsize=7)
        axes[0].set_xticks(x, names, rotation=30, fontsize=8)
        axes[0].set_title("Leak probes per identity (acceptable: 0 outside)")
        axes[0].legend(fontsize=8)
    else:
        axes[0].set_axis_off()
    if inj is not None and inj.rows:
        cols = list(inj.columns)
        names = [str(r[0]) for r in inj.rows]
        evaluated = [int(r[cols.index("filters evaluated")]) for r in inj.rows]
        bad = [int(r[cols.index("admit a forbidden record")]) + int(r[cols.index("parse errors")])
               + int(_num(r[cols.index("results outside the groups")]) or 0) for r in inj.rows]
        y = list(range(len(names)))
        axes[1].barh([i - 0.2 for i in y], evaluated, height=0.4, label="filters evaluated", color="tab:blue")
        axes[1].barh([i + 0.2 for i in y], bad, height=0.4, label="not restrictive", color="tab:red")
        axes[1].set_yticks(y, names, fontsize=8)
        axes[1].invert_yaxis()
        axes[1].set_xlim(0, max(evaluated + bad + [1]) * 1.6)
        axes[1].set_title("Injection probes per hostile value")
        axes[1].legend(fontsize=8, loc="lower right")
    else:
        axes[1].set_axis_off()
    fig.tight_layout()
    return fig
