"""Report tables: cell formatting, duplicate rows collapsed with counts, folding, summaries.

Evidence tables are rendered here without pandas, so a missing value is always "–" (never
``nan``), a share is a percentage and a p-value reads "< 0.001". Identical rows are shown
once with their count. A table longer than the body allows is summarised in its check's
section (a check-specific summary where one exists, e.g. the call sites x parameters drift
matrix) and printed in full in the appendix; narrow long tables are folded into side-by-side
column groups there, wide ones go on landscape pages.
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag.report.format import MAX_CELL_CHARS, _e
from ragdiag.report.texts import _t

#: rows an evidence table may have in a check's section; longer ones are summarised there
BODY_MAX_ROWS = 10
#: rows of one table in the appendix (the audit's JSON holds every row)
APPENDIX_MAX_ROWS = 400
#: columns from which a table is printed on a landscape page
LANDSCAPE_COLUMNS = 12
#: tables that only the appendix prints (their figure or a summary stands in the section)
APPENDIX_ONLY_SUFFIXES = ("_per_question", "token_histogram", "examples")


# ---------------------------------------------------------------------------
# cells


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and not math.isfinite(v)


def fmt_p(p: Any, lang: str = "en") -> str:
    """A p-value as text: "p < 0.001", "p = 0.018"; "–" when not computed."""
    if p is None or _is_nan(p):
        return "–"
    p = float(p)
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def fmt_number(v: Any, lang: str = "en", *, share: bool = False, signed: bool = False,
               decimals: int | None = None) -> str:
    """A number in the report's convention: 3 significant decimals (or exactly `decimals`),
    thousands with ',' (en) or "'" (de), shares as percentages."""
    if v is None or _is_nan(v):
        return "–"
    if isinstance(v, bool):
        return _t("yes" if v else "no", lang)
    if decimals is not None and isinstance(v, numbers.Real):
        return f"{float(v):+.{decimals}f}" if signed else f"{float(v):.{decimals}f}"
    if share and -1.0 <= float(v) <= 1.0:
        pct = 100 * float(v)
        text = f"{pct:+.0f}%" if signed else f"{pct:.1f}%" if 0 < abs(pct) < 1 else f"{pct:.0f}%"
        return text.replace("%", " %") if lang == "de" else text
    if isinstance(v, numbers.Integral):
        text = f"{int(v):+,}" if signed else f"{int(v):,}"
    else:
        f = float(v)
        if abs(f) >= 1000:
            text = f"{f:+,.0f}" if signed else f"{f:,.0f}"
        elif abs(f) >= 100:
            text = f"{f:+.1f}" if signed else f"{f:.1f}"
        elif f != 0 and abs(f) < 0.001:
            text = f"{f:+.1e}" if signed else f"{f:.1e}"
        else:
            text = f"{f:+.3f}" if signed else f"{f:.3f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            if text in ("+0", "-0", "-0.0"):
                text = "0"
    return text.replace(",", "'") if lang == "de" else text


def is_share_key(key: str) -> bool:
    k = key.lower()
    return "share" in k or k in ("refused", "precision", "recall") or k.endswith("_share")


def is_p_key(key: str) -> bool:
    k = key.lower()
    return k == "p" or k.startswith("p_") or k.startswith("p ")


def fmt_cell(value: Any, key: str = "", lang: str = "en") -> str:
    """One evidence cell as text: "–" for nothing (None, NaN), yes/no, numbers by column kind."""
    if value is None or _is_nan(value):
        return "–"
    if isinstance(value, bool):
        return _t("yes" if value else "no", lang)
    if isinstance(value, numbers.Real):
        if is_p_key(key):
            p = float(value)
            return "< 0.001" if p < 0.001 else f"{p:.3f}"
        return fmt_number(value, lang, share=is_share_key(key))
    if isinstance(value, list | tuple):
        return ", ".join(fmt_cell(v, "", lang) for v in value) or "–"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={fmt_cell(v, '', lang)}" for k, v in value.items()) or "–"
    text = str(value)
    if not text.strip():
        return "–"
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS - 1] + "…"


# ---------------------------------------------------------------------------
# a table to render


@dataclass
class Table:
    """Columns (labels), their stable keys, rows of raw cells, and what to say about them."""

    columns: list[str]
    keys: list[str]
    rows: list[list[Any]]
    title: str = ""
    note: str = ""
    notes: list[str] = field(default_factory=list)  # report notes (collapsed, shortened, see appendix)
    counted: bool = False  # the last column is the count of identical rows

    @classmethod
    def of(cls, ev: Any) -> Table:
        return cls(list(ev.columns), list(ev.column_keys), [list(r) for r in ev.rows], ev.title, ev.note)

    def collapsed(self, lang: str) -> Table:
        """Identical rows once, with a count column ("×") when any row repeats."""
        counts: Counter[tuple] = Counter()
        first: dict[tuple, list[Any]] = {}
        for r in self.rows:
            k = tuple(_hashable(c) for c in r)
            counts[k] += 1
            first.setdefault(k, r)
        if len(first) == len(self.rows):
            return self
        rows = [first[k] + [counts[k]] for k in first]
        return Table(self.columns + ["×"], self.keys + ["__count"], rows, self.title, self.note,
                     self.notes + [_t("collapsed", lang, rows=len(self.rows), distinct=len(rows))], True)


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, Mapping):
        return tuple(sorted((str(k), _hashable(x)) for k, x in v.items()))
    return v


def _width_class(t: Table) -> str:
    n = len(t.columns)
    return " rd-wide" if n >= 8 else " rd-mid" if n >= 5 else ""


def transposed(t: Table, lang: str) -> Table:
    """A short wide table turned on its side: one row per column, one column per row."""
    cols = [_t("col_field", lang)] + ([""] if len(t.rows) == 1 else [str(i + 1) for i in range(len(t.rows))])
    rows = [[c] + [fmt_cell(r[j], k, lang) for r in t.rows] for j, (c, k) in enumerate(zip(t.columns, t.keys,
                                                                                         strict=True))]
    return Table(cols, ["field"] + [f"r{i}" for i in range(len(t.rows))], rows, t.title, t.note, list(t.notes),
                 False)


#: characters of unwrapped folded-table text a portrait line holds (6.5 pt)
FOLDED_LINE_CHARS = 150
#: characters of table text a portrait line holds, by table class (font size)
_LINE_CHARS = {" rd-wide": 135, " rd-mid": 120, "": 105}


def _em(word: str) -> int:
    """A word's width in average characters: capitals, '@', 'm' and 'w' are wider, so a short
    unbreakable cell ("nDCG@10") gets the room it takes and never runs into the next column."""
    return math.ceil(sum(1.35 if c.isupper() or c in "@%mwMW" else 1.0 for c in word))


def _widths(cells: list[list[str]], columns: Sequence[str], capacity: int = 120) -> list[float]:
    """Column widths (percent) from the text they hold: every column at least as wide as its
    header's longest word (headers never break mid-word) and its longest short word (so a short
    code never breaks); long identifiers and paths may break anywhere. The room left is shared
    by what the columns would like to hold (their 90th-percentile text)."""
    mins, wants = [], []
    # each cell's padding and border take about two characters of the line
    capacity = max(capacity - 2 * len(columns), len(columns) * 4)
    for j, c in enumerate(columns):
        lens = sorted(len(r[j]) for r in cells) or [0]
        p90 = lens[min(len(lens) - 1, int(0.9 * len(lens)))]
        longest_word = max([_em(w) for r in cells for w in r[j].split()] + [0])
        head_word = max([len(w) for w in str(c).split()] + [1])
        # a bold header word needs about 10 % more room than its characters
        lo = max(math.ceil(head_word * 1.1), min(longest_word, 12), 3) + 1
        mins.append(lo)
        wants.append(max(lo, min(p90, 120) + 1))
    if sum(wants) <= capacity:
        out = wants
    else:
        extra = max(capacity - sum(mins), 0)
        spread = sum(w - lo for w, lo in zip(wants, mins, strict=True)) or 1
        out = [lo + extra * (w - lo) / spread for w, lo in zip(wants, mins, strict=True)]
    total = sum(out) or 1
    return [100 * w / total for w in out]


_BREAK_AFTER = re.compile(r"([/._:=,])(?=[^\s/._:=,])")


def _breakable(text: str) -> str:
    """Escaped cell text whose long identifiers and paths may wrap after `/ . _ : = ,` (a <wbr>)
    rather than at an arbitrary letter."""
    return " ".join(_BREAK_AFTER.sub(r"\1<wbr>", _e(w)) if len(w) > 20 else _e(w) for w in text.split(" "))


def table_html(t: Table, lang: str = "en", *, max_rows: int | None = None, fold: bool = False,
               extra_class: str = "", fold_min_rows: int = 30, landscape: bool = False) -> str:
    """A table as HTML: header, cells formatted by column key, escaped. A short table with many
    columns is transposed; `fold` prints a long narrow table as side-by-side column groups
    (header repeated); tables of five columns or more get widths from their content."""
    if len(t.rows) <= 2 and len(t.columns) >= 8:
        t = transposed(t, lang)
    rows = t.rows if max_rows is None else t.rows[:max_rows]
    cells = [[fmt_cell(c, k, lang) for c, k in zip(r, t.keys, strict=False)] for r in rows]
    num = [all((isinstance(r[j], numbers.Real) and not isinstance(r[j], bool)) or r[j] is None for r in rows)
           and any(r[j] is not None for r in rows) if rows else False for j in range(len(t.columns))]
    groups = 1
    if fold and len(t.columns) <= 4 and len(cells) > fold_min_rows:
        # as many side-by-side groups as fit a line of unwrapped cells
        per_group = sum(max([len(x) for x in (r[j] for r in cells)] + [max(len(w) for w in str(c).split() or [""])])
                        + 2 for j, c in enumerate(t.columns)) + 2
        groups = max(1, min(3, FOLDED_LINE_CHARS // per_group))
    per = math.ceil(len(cells) / groups) if cells else 0
    fixed = groups == 1 and len(t.columns) >= 5 and bool(cells)

    def th(j: int, c: str) -> str:
        cls = ' class="rd-num"' if num[j] else ""
        return f"<th{cls}>{_e(c)}</th>"

    def td(j: int, text: str) -> str:
        cls = "rd-num" if num[j] else ("rd-nw" if len(text) <= 12 and " " not in text else "")
        return f'<td class="{cls}">{_e(text)}</td>' if cls else f"<td>{_breakable(text)}</td>"

    sep = '<th class="rd-gap"></th>'
    head = sep.join("".join(th(j, c) for j, c in enumerate(t.columns)) for _ in range(groups))
    body = []
    for i in range(per):
        parts = []
        for g in range(groups):
            idx = g * per + i
            if idx < len(cells):
                parts.append("".join(td(j, x) for j, x in enumerate(cells[idx])))
            else:
                parts.append("<td></td>" * len(t.columns))
        body.append("<tr>" + '<td class="rd-gap"></td>'.join(parts) + "</tr>")
    cls = f"rd-table{_width_class(t) if groups == 1 else ' rd-folded'}{' rd-fixed' if fixed else ''}{extra_class}"
    widths = _widths(cells, t.columns, 200 if landscape else _LINE_CHARS.get(_width_class(t), 120))
    colgroup = ("<colgroup>" + "".join(f'<col style="width:{w:.1f}%"/>' for w in widths)
                + "</colgroup>") if fixed else ""
    return (f'<table class="{cls}">{colgroup}<thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


# ---------------------------------------------------------------------------
# summaries of long evidence for a check's section


Summary = Callable[[Any, Any, str], "Table | None"]
_SUMMARIES: dict[tuple[str, str], Summary] = {}
#: tables a summary stands in for (not printed in the section, printed in the appendix)
_REPLACED: dict[tuple[str, str], tuple[str, ...]] = {}
#: columns a section leaves out (long lists; the appendix prints them)
_BODY_DROP: dict[tuple[str, str], tuple[str, ...]] = {
    ("call_sites", "sites_per_kind"): ("where",),
    ("call_sites", "builders"): ("function_names", "where"),
}


def summary(check_id: str, key: str, *, replaces: tuple[str, ...] = ()) -> Callable[[Summary], Summary]:
    def deco(fn: Summary) -> Summary:
        _SUMMARIES[(check_id, key)] = fn
        if replaces:
            _REPLACED[(check_id, key)] = replaces
        return fn
    return deco


def _short_sites(sites: Sequence[str]) -> dict[str, str]:
    """Each `path:line` site by the shortest path tail that still tells it from the others
    (`search_agent.py:44` rather than `muster_assistant/agents/search_agent.py:44`), so a summary
    matrix keeps its room for the parameters; the appendix keeps the full paths."""
    parts = {s: s.replace("\\", "/").split("/") for s in sites}
    out: dict[str, str] = {}
    for s, segs in parts.items():
        for n in range(1, len(segs) + 1):
            tail = "/".join(segs[-n:])
            if sum(1 for o in parts.values() if "/".join(o[-n:]) == tail) == 1:
                break
        out[s] = tail
    return out


@summary("call_sites", "call_sites", replaces=("drift",))
def _drift_matrix(finding: Any, ev: Any, lang: str) -> Table | None:
    """Call sites x drifting parameters: the value each site passes (✓ / ✗ for a clause)."""
    drift = finding.evidence_table("drift")
    if drift is None or not drift.rows:
        return None
    params: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for r in drift.records():
        p = str(r["parameter"])
        kinds[p] = str(r.get("kind") or "")
        cell = {"present": "✓", "absent": "✗"}.get(str(r["value"]), str(r["value"]))
        for site in r.get("where") or ():
            params.setdefault(p, {})[str(site)] = cell
    order = sorted(params, key=lambda p: (kinds[p] != "security_clause", kinds[p] != "filter_clause", p))
    sites = sorted({s for vals in params.values() for s in vals})
    label = {"security filter": _t("col_security_filter", lang)}
    cols = [_t("col_site", lang)] + [label.get(p, p.removeprefix("filter: ")) for p in order]
    short = _short_sites(sites)
    rows = [[short[s]] + [params[p].get(s, "") for p in order] for s in sites]
    t = Table(cols, ["site"] + [f"p{i}" for i in range(len(order))], rows, _t("drift_matrix", lang),
              _t("drift_matrix_note", lang))
    return t


@summary("prerank_filters", "cascades")
def _cascade_patterns(finding: Any, ev: Any, lang: str) -> Table | None:
    """Fallback cascades grouped by their filter sequence, the identity clause masked."""
    rows = ev.records()
    if not rows:
        return None
    mask = _t("security_clause_short", lang)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[_mask_identity(str(r.get("filters") or ""), mask)].append(r)
    out = []
    for seq, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        users = sorted({str(r.get("user")) for r in rs})
        questions = Counter(str(r.get("question")) for r in rs)
        out.append([seq, rs[0].get("attempts"), len(rs), len(users), len(questions),
                    questions.most_common(1)[0][0]])
    return Table([_t("col_filters_sequence", lang), ev.columns[ev.column_keys.index("attempts")]
                  if "attempts" in ev.column_keys else "attempts",
                  _t("col_cascades", lang), _t("col_users", lang), _t("col_distinct_questions", lang),
                  _t("col_example_question", lang)],
                 ["filters", "attempts", "n", "users", "questions", "question"], out,
                 _t("cascade_patterns", lang), _t("cascade_patterns_note", lang, mask=mask))


_IDENTITY = re.compile(r"\w+/any\(\w+:\s*(?:search\.in\([^()]*\)|\w+ eq '[^']*')\)")


def _mask_identity(text: str, mask: str) -> str:
    return _IDENTITY.sub(mask, text)


@summary("prerank_filters", "unreachable_documents")
def _unreachable_groups(finding: Any, ev: Any, lang: str) -> Table | None:
    rows = ev.records()
    if not rows:
        return None
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(str(r.get("clause")), fmt_cell(r.get("excluded_by"), "", lang))].append(r)
    out = [[c, by, len(rs), len({r.get("case") for r in rs})]
           for (c, by), rs in sorted(groups.items(), key=lambda kv: -len(kv[1]))]
    cols = dict(zip(ev.column_keys, ev.columns, strict=True))
    return Table([cols.get("clause", "clause"), cols.get("excluded_by", "excluded by"),
                  _t("col_documents", lang), _t("col_questions_n", lang)],
                 ["clause", "excluded_by", "documents", "questions"], out, ev.title, ev.note)


@summary("chunk_boundaries", "boundary_shares")
def _judged_shares(finding: Any, ev: Any, lang: str) -> Table | None:
    keep = [r for r in ev.rows if r[ev.column_keys.index("threshold")] is not None] \
        if "threshold" in ev.column_keys else []
    if not keep:
        return None
    t = Table(list(ev.columns), list(ev.column_keys), [list(r) for r in keep], ev.title, ev.note)
    t.notes.append(_t("judged_only", lang, shown=len(keep), total=len(ev.rows)))
    return t


@summary("chunk_boundaries", "chunk_size")
def _size_pivot(finding: Any, ev: Any, lang: str) -> Table | None:
    """level x statistic as statistic rows and one column per level."""
    if not {"level", "statistic", "value"} <= set(ev.column_keys):
        return None
    levels: list[str] = []
    stats: list[str] = []
    grid: dict[tuple[str, str], Any] = {}
    for r in ev.records():
        lv, st = str(r["level"]), str(r["statistic"])
        if lv not in levels:
            levels.append(lv)
        if st not in stats:
            stats.append(st)
        grid[(st, lv)] = r["value"]
    cols = dict(zip(ev.column_keys, ev.columns, strict=True))
    return Table([cols["statistic"]] + levels, ["statistic"] + [f"l{i}" for i in range(len(levels))],
                 [[st] + [grid.get((st, lv)) for lv in levels] for st in stats], ev.title, ev.note)


@dataclass
class BodyTable:
    """What a check's section prints for one evidence table."""

    table: Table | None  # None: not printed in the section
    in_appendix: bool  # the full table is printed in the appendix


def body_tables(finding: Any, lang: str) -> list[tuple[Any, BodyTable]]:
    """For each evidence table of a finding: what its section shows and whether the appendix
    prints it in full."""
    replaced = {k for (cid, key), ks in _REPLACED.items() if cid == finding.check_id
                and finding.evidence_table(key) is not None for k in ks}
    out = []
    for ev in finding.evidence:
        key = (finding.check_id, ev.key)
        full = Table.of(ev).collapsed(lang)
        if ev.key in replaced:
            out.append((ev, BodyTable(None, True)))
            continue
        if any(ev.key.endswith(s) for s in APPENDIX_ONLY_SUFFIXES) and len(full.rows) > BODY_MAX_ROWS:
            out.append((ev, BodyTable(None, True)))
            continue
        drop = _BODY_DROP.get(key, ())
        summ = _SUMMARIES.get(key)
        if summ is not None and (len(ev.rows) > BODY_MAX_ROWS or key in _REPLACED):
            t = summ(finding, ev, lang)
            if t is not None:
                out.append((ev, BodyTable(t.collapsed(lang), True)))
                continue
        if drop:
            idx = [i for i, k in enumerate(full.keys) if k not in drop]
            body = Table([full.columns[i] for i in idx], [full.keys[i] for i in idx],
                         [[r[i] for i in idx] for r in full.rows], full.title, full.note, list(full.notes),
                         full.counted)
            out.append((ev, BodyTable(body if len(body.rows) <= BODY_MAX_ROWS else _cut(body, lang), True)))
            continue
        if len(full.rows) > BODY_MAX_ROWS:
            out.append((ev, BodyTable(_cut(full, lang), True)))
        else:
            out.append((ev, BodyTable(full, False)))
    return out


def _cut(t: Table, lang: str) -> Table:
    return Table(t.columns, t.keys, t.rows[:BODY_MAX_ROWS], t.title, t.note,
                 t.notes + [_t("first_rows", lang, shown=BODY_MAX_ROWS, total=len(t.rows))], t.counted)


def is_landscape(t: Table) -> bool:
    """Printed on a landscape page: very wide and not short (a short one is transposed)."""
    return len(t.columns) >= LANDSCAPE_COLUMNS and len(t.rows) > 2


def shown(rows: Sequence[Any], limit: int) -> int:
    return min(len(rows), limit)
