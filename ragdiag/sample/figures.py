"""The sample audit's figures as Markdown (``docs/sample-audit.md``), rendered from findings only.

Why: figures written into the README by hand go stale the moment a model, a package or the
numerics change (issue 33: the README said nDCG@10 0.380 after the grid made it 0.378), and
nobody can tell which build they held for. :func:`render` takes the findings JSON of each
sample audit (``ragdiag audit --json``) and writes every figure from it: each check's status
and headline, the goldset's metrics and the paired comparison of the two policies, the loss
funnel's shares, and a stamp (ragdiag version, package versions, models and the digest of the
fingerprint's instrument group) saying what the figures hold for. Nothing in the output is
typed by hand; `scripts/sample-figures.py` runs the audits and writes the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.inputs.fingerprint import flatten, group_digest

__all__ = ["AUDITS", "render"]

#: The sample audits the page shows, in column order: name -> the config (None: the default).
AUDITS: dict[str, str | None] = {
    "misconfigured": None,
    "tuned": "audit-tuned.toml",
    "pgvector": "audit-pgvector.toml",
}
#: metrics shown per audit: (check, key in its finding's metrics, label, the key of its n)
_METRICS = (("goldset", "ndcg@10", "nDCG@10", None), ("goldset", "recall@50", "recall@50", None),
            ("goldset", "recall@10", "recall@10", None), ("goldset", "mrr", "MRR", None),
            ("goldset", "hit_rate@10", "hit rate@10", None),
            ("goldset", "retrieval_hit_rate", "retrieval hit rate", "retrieval_hit_rate_n"),
            ("goldset", "answer_accuracy", "answer accuracy", "answer_accuracy_n"),
            ("goldset", "refusal_accuracy", "refusal accuracy", "refusal_accuracy_n"),
            ("goldset", "permission_leaks", "permission leaks", "permission_leaks_n"),
            ("reranker_scores", "ndcg@10_fused_order", "nDCG@10 in fused order (reranker_scores)", None),
            ("reranker_scores", "ndcg@10_reranked", "nDCG@10 reranked (reranker_scores)", None),
            ("reranker_scores", "roc_auc_relevant_vs_other", "reranker ROC AUC, relevant vs other", None))
_DASH = "–"


def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return _DASH
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _cell(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _p(value: Any) -> str:
    return _DASH if value is None else f"{float(value):.2g}"


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


def _finding(audit: Mapping[str, Any], check_id: str) -> Mapping[str, Any] | None:
    return next((f for f in audit.get("findings", []) if f.get("check_id") == check_id), None)


def _evidence(finding: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if finding is None:
        return None
    return next((e for e in finding.get("evidence", []) if isinstance(e, Mapping) and e.get("key") == key), None)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _stamp(audits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What the figures hold for: per audit the version and digests; the packages once."""
    rows, instruments = [], {}
    for name, audit in audits.items():
        fp = (audit.get("meta") or {}).get("fingerprint") or {}
        instrument = group_digest(fp, "instrument")
        instruments[name] = fp.get("instrument") or {}
        rows.append([name, _cell(audit.get("ragdiag_version", _DASH)), f"`{instrument or 'none recorded'}`",
                     f"`{fp.get('digest', 'none recorded')}`", _cell((audit.get("meta") or {}).get("policy") or _DASH)])
    out = _table(["audit", "ragdiag", "instrument digest", "fingerprint digest", "policy"], rows)
    first = next(iter(instruments.values()), {})
    reference = flatten(first)
    differ = sorted({key for inst in instruments.values() for key in set(reference) | set(flatten(inst))
                     if flatten(inst).get(key) != reference.get(key)})
    if differ:
        out += ["", "The audits were not measured by the same instrument (they differ in "
                + ", ".join(f"`{k}`" for k in differ) + "): compare their columns with care."]
    packages = first.get("packages") or {}
    if packages:
        out += ["", "Packages: " + ", ".join(f"{k} {v}" for k, v in packages.items()) + "."]
    models = first.get("models") or {}
    if models.get("embedder"):
        out += [f"Embedder: `{models['embedder']}`."]
    reranker = models.get("reranker")
    if isinstance(reranker, Mapping) and reranker.get("name"):
        out += [f"Reranker: {_cell(reranker['name'])}."]
    platform = first.get("platform") or {}
    if first.get("python"):
        out += [f"Python {first['python']}, {platform.get('system', '?')}, {platform.get('libc', '?')}."]
    return out


def _metrics(audits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = []
    for check_id, key, label, n_key in _METRICS:
        metrics = [((_finding(a, check_id) or {}).get("metrics") or {}) for a in audits.values()]
        if all(m.get(key) is None for m in metrics):
            continue
        cells = []
        for m in metrics:
            value = m.get(key)
            n = m.get(n_key) if n_key else None
            cells.append(_num(value) + (f" (n = {n})" if value is not None and n is not None else ""))
        rows.append([label, *cells])
    return _table(["metric", *audits], rows) if rows else ["No audit has goldset metrics."]


def _comparisons(audits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for name, audit in audits.items():
        table = _evidence(_finding(audit, "goldset"), "comparison")
        if not table or not table.get("rows"):
            continue
        out += ["", f"**{name}**: {_cell(table.get('title', 'policy comparison'))}", ""]
        rows = [[_cell(r[0]), _num(r[1]), _num(r[2]), f"{r[3]:+.3f}" if isinstance(r[3], float) else _cell(r[3]),
                 _cell(r[4]), _p(r[5]), _p(r[6])] for r in table["rows"]]
        out += _table(["metric", "first", "second", "delta", "wins/ties/losses", "p (paired t)", "p (Wilcoxon)"],
                      rows)
    return out


def _funnel(audits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    order: list[tuple[str, str | None]] = []
    cells: dict[str, dict[tuple[str, str | None], str]] = {}
    totals: dict[str, str] = {}
    for name, audit in audits.items():
        funnel = audit.get("loss_funnel") or {}
        cells[name] = {}
        if funnel.get("status") != "measured":
            totals[name] = "not measured" + (f": {_cell(funnel['reason'])}" if funnel.get("reason") else "")
            continue
        totals[name] = f"{funnel.get('sources_total', 0):,} sources, {funnel.get('cases', 0):,} questions"
        for row in funnel.get("totals", []):
            if row.get("route") is not None:
                continue
            key = (str(row.get("stage")), row.get("detail"))
            if key not in order:
                order.append(key)
            cells[name][key] = f"{_pct(float(row.get('share', 0.0)))} ({row.get('sources', 0):,})"
    rank: dict[str, int] = {}  # the funnel's own stage order; details keep their first-seen order
    for audit in audits.values():
        for stage in (audit.get("loss_funnel") or {}).get("stages", []):
            rank.setdefault(str(stage.get("id")), len(rank))
    order.sort(key=lambda key: rank.get(key[0], len(rank)))
    rows = [["expected sources", "", *(totals[n] for n in audits)]]
    for key in order:
        rows.append([f"`{key[0]}`", _cell(key[1]) if key[1] else "", *(cells[n].get(key, _DASH) for n in audits)])
    return _table(["stage", "detail", *audits], rows)


def _checks(audits: Mapping[str, Mapping[str, Any]]) -> list[str]:
    ids: list[str] = []
    for audit in audits.values():
        for f in audit.get("findings", []):
            if f.get("check_id") not in ids:
                ids.append(f["check_id"])
    rows = []
    for cid in ids:
        row = [f"`{cid}`"]
        for audit in audits.values():
            f = _finding(audit, cid)
            if f is None:
                row.append(_DASH)
                continue
            text = f.get("headline") or f.get("skipped_reason") or ""
            row.append(f"**{_cell(f.get('status', '?'))}**: {_cell(text)}")
        rows.append(row)
    return _table(["check", *audits], rows)


def _commands(audits: Mapping[str, Any]) -> str:
    parts = []
    for name in audits:
        if name in AUDITS:
            config = AUDITS[name]
            parts.append(f"{name}: `ragdiag audit{' sample_data/' + config if config else ''}`")
    return ("The audits: " + "; ".join(parts) + ".") if parts else ""


def render(audits: Mapping[str, Mapping[str, Any]], *, command: str = "python scripts/sample-figures.py") -> str:
    """Markdown of the sample audits' figures; `audits` maps a column name to a findings dict
    (``ragdiag audit --json``), in column order."""
    if not audits:
        raise ValueError("render() needs at least one audit's findings")
    lines = ["# The sample audit's figures", "",
             f"Generated by `{command}` from the findings JSON of each audit (`ragdiag audit --json`); "
             "do not edit by hand, regenerate. " + _commands(audits), "",
             "## What these figures hold for", "",
             "Byte-identical findings on any machine for the same inputs, package versions and model files "
             "([determinism.md](determinism.md)); the instrument digest is the SHA-256 of "
             "`meta.fingerprint.instrument` (ragdiag's version and code, the packages, Python, the OS, the models).",
             "", *_stamp(audits), "",
             "## Metrics", "", *_metrics(audits), *_comparisons(audits), "",
             "## The loss funnel", "",
             "Where the goldset's expected sources are lost, over all routes (share of the expected sources, "
             "count in brackets; [funnel.md](funnel.md)).", "", *_funnel(audits), "",
             "## Every check", "",
             "Each finding's status and headline, verbatim.", "", *_checks(audits), ""]
    return "\n".join(lines)
