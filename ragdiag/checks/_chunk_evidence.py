"""The chunk_boundaries check's verdict, evidence tables and figure (one level per row group).

`record` judges each analysed level's `ChunkReport` against the spec's thresholds and writes
metrics (those of the primary level under the historical names), evidence tables keyed for the
figure, and recommendations into the `Verdict`. `draw` rebuilds the figure from those tables.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragdiag.checks.figures import column_values, plt, text

ID = "chunk_boundaries"
#: (measure id, threshold name, verdict when above) in table order; None: information only
MEASURES = (("mid_sentence_end", "warn_mid_sentence_end_share", "warn"),
            ("mid_word", "warn_mid_word_share", "warn"),
            ("split_table", "warn_split_table_share", "warn"),
            ("split_code", "warn_split_code_share", "warn"),
            ("tiny", "warn_tiny_share", "warn"),
            ("missing_citation", "fail_missing_citation_share", "fail"),
            ("mid_sentence_start", None, "info"), ("heading_separated", None, "info"),
            ("list_cut", None, "info"), ("overlap", None, "info"),
            ("oversized", None, "info"), ("exact_duplicate", None, "info"), ("near_duplicate", None, "info"),
            ("unpunctuated", None, "info"), ("punctuation_moved", None, "info"))
#: measures whose warning turns into a failure above a second threshold of the spec
FAIL_ABOVE = {"mid_sentence_end": "fail_mid_sentence_end_share", "mid_word": "fail_mid_word_share",
              "tiny": "fail_tiny_share"}
#: what a citation needs (the position orders chunks but cites nothing): the document, and the
#: page where the documents have pages, else the section or a URL anchor
CITATION_ROLES = ("document id", "page")
ROLES = (*CITATION_ROLES, "position", "parent id", "section title")
HATCHES = ("", "///", "...", "xx")
RESULTS = {"in one chunk": "in_one_chunk", "straddles a boundary": "straddles",
           "not found": "not_found", "document not in index": "document_not_in_index"}


def _count(r: Any, m: str) -> int:
    return r.pairs_with_overlap if m == "overlap" else getattr(r, f"{m}s" if m.endswith("duplicate") else m)


def _lacking(v: Any, fields: Any, role: str, share: float) -> Any:
    """One lacking citation role of the missing_citation message."""
    if role == "section or anchor":
        return v.msg("lacking_section", share=share)
    return v.msg("lacking_role" if _role_field(fields, role) else "lacking_role_no_field", role=_role(v, role),
                 share=share)


def _role(v: Any, role: str) -> Any:
    return v.msg(f"role_{role.replace(' ', '_')}")


def _role_field(fields: Any, role: str) -> str | None:
    return {"document id": fields.doc_id or fields.parent_id, "page": fields.page, "position": fields.position,
            "parent id": fields.parent_id, "section title": fields.section_title}[role]


def record(v: Any, spec: Any, reports: dict[str, Any], primary: str, fields: Any, straddle: list[Any],
           has_goldset: bool, totals: dict[str, int]) -> None:
    limits = {name: float(spec.threshold(name)) for _, name, _ in MEASURES if name}
    limits.update({name: float(spec.threshold(name)) for name in FAIL_ABOVE.values()})
    single = list(reports) == ["-"]
    size, hist, shares, meta, examples = [], [], [], [], []
    rechunk_why: list[Any] = []
    lacking_roles: list[str] = []
    for level, r in reports.items():
        v.observed("chunks_analysed", r.chunks)
        what = v.msg("what_chunks") if single else v.msg("what_level", level=level)
        for m, name, bad in MEASURES:
            share = getattr(r, f"{m}_share")
            above = name is not None and (share or 0.0) > limits[name]
            fail_name = FAIL_ABOVE.get(m)
            failing = above and fail_name is not None and (share or 0.0) > limits[fail_name]
            shares.append((level, m, v.msg(f"m_{m}"), _count(r, m), None if share is None else round(share, 4),
                           limits.get(name) if name else None,
                           "fail" if failing else bad if above else "ok" if name else "info"))
            if not above:
                continue
            if m == "missing_citation":
                lacking = [role for role in ("document id", "page", "section or anchor")
                           if r.citation_lacking.get(role)]
                lacking_roles += [x for x in lacking if x not in lacking_roles]
                if not any(_role_field(fields, role) for role in (*CITATION_ROLES, "section title")):
                    # no citation field at all: whole documents (cited by their key, as in an IR
                    # collection of abstracts) and chunks that lost their source look the same
                    # here, so this is a question to the owner, not a measured fault
                    v.warn("no_citation_fields", chunks=r.chunks, what=what, key=fields.key)
                    continue
                v.fail("missing_citation", share=share, chunks=r.chunks, what=what, max=limits[name],
                       lacking=tuple(_lacking(v, fields, x, r.citation_lacking[x] / r.chunks) for x in lacking))
            else:
                if failing:
                    v.fail(f"{m}_fail", share=share, chunks=r.chunks, what=what, max=limits[fail_name])
                else:
                    v.warn(m, share=share, chunks=r.chunks, what=what, max=limits[name])
                if m != "tiny":
                    rechunk_why.append(v.msg(f"why_{m}", share=share, n=r.split_table, what=what))
        if not r.sentences_judged:
            v.note("unpunctuated", share=r.unpunctuated_share or 0.0, chunks=r.chunks, what=what)
        if r.sampled:
            v.note("sampled", chunks=r.chunks, total=max(r.chunk_records_seen, totals[level]), what=what)
        t = r.tokens
        size += [(level, s, t.get(k)) for s, k in (("min", "min"), ("p5", "p5"), ("p25", "p25"), ("median", "p50"),
                                                     ("p75", "p75"), ("p95", "p95"), ("max", "max"))]
        size += [(level, "mean", None if t.get("mean") is None else round(t["mean"], 1)), (level, "chunks", r.chunks),
                 (level, "tokens_exact", r.tokens_exact), (level, "tiny", r.tiny), (level, "oversized", r.oversized)]
        hist += [(level, lo, hi, c) for lo, hi, c in r.token_histogram]
        for role in ROLES:
            share, fname = r.metadata_present.get(role), _role_field(fields, role)
            note = "note_no_field" if not fname else "note_info" if role in ("parent id", "section title") \
                else "note_parent_for_doc" if role == "document id" and not fields.doc_id else "note_needed"
            meta.append((level, _role(v, role), fname or "-", None if share is None else round(share, 4),
                         0 if share is None else round(r.chunks * (1 - share)), v.msg(note)))
        examples += [(level, m, key, excerpt) for m, _, _ in MEASURES for key, excerpt in r.examples.get(m, ())]

    p = reports[primary]
    _metrics(v, p, primary, reports, spec)
    v.metric("chunk_records", max(p.chunk_records_seen, totals[primary]))
    v.table("chunk_size", "t_size", ("level", "statistic", "value"), size, note="n_size",
            min=p.min_tokens, max=p.max_tokens)
    v.table("token_histogram", "t_histogram", ("level", "from", "to", "chunks"), hist, note="n_histogram")
    v.table("boundary_shares", "t_shares", ("level", "measure", "what", "chunks", "share", "threshold", "verdict"),
            shares, note="n_shares")
    v.table("citation_metadata", "t_metadata", ("level", "role", "index_field", "present_share", "missing_chunks",
                                                "note"), meta)
    if examples:
        v.table("examples", "t_examples", ("level", "measure", "key", "excerpt"), examples, note="n_examples")
    straddling = [s for s in straddle if s.result == "straddles a boundary"]
    if has_goldset:
        _answers(v, straddle, straddling)
    if straddling:
        rechunk_why.append(v.msg("why_straddles", n=len(straddling), case=straddling[0].case_id,
                                 keys=tuple(straddling[0].keys)))
    if rechunk_why:
        if not any((r.overlap_share or 0) > 0 for r in reports.values()):
            rechunk_why.append(v.msg("why_no_overlap"))
        v.recommend("rec_rechunk", why=tuple(rechunk_why))
    if lacking_roles:
        v.recommend("rec_keep_metadata", roles=tuple(_role(v, "section title" if x == "section or anchor" else x)
                                                     for x in lacking_roles))
    if fields.parent_id is None or (p.metadata_present.get("parent id") or 0.0) < 1.0:
        v.recommend("rec_parent_id")
    if p.heading_separated and rechunk_why:
        v.recommend("rec_headings", n=p.heading_separated)
    for m, n, lim in (("tiny", p.tiny, p.min_tokens), ("oversized", p.oversized, p.max_tokens)):
        if n:
            v.recommend(f"rec_{m}", n=n, limit=lim)
    if p.exact_duplicates:
        v.recommend("rec_duplicates", n=p.exact_duplicates, groups=p.duplicate_groups)
    if p.punctuation_moved:
        v.recommend("rec_punctuation_moved", n=p.punctuation_moved)
    judged = [r.mid_sentence_end_share for r in reports.values() if r.sentences_judged
              and r.mid_sentence_end_share is not None]
    records = sum(r.chunks for r in reports.values())
    split = max(r.split_table_share or 0.0 for r in reports.values())
    if not judged and not v.fails and not v.warns:
        # not judged is not a pass: nothing says these cuts are sound
        v.skip("sentences_unjudged", records=records, split=split,
               mid_word=max(r.mid_word_share or 0.0 for r in reports.values()))
    v.passed("pass", records=records, levels=tuple(reports), mid=max(judged, default=0.0), split=split,
             cite=min(1 - (r.missing_citation_share or 0.0) for r in reports.values()))


def _metrics(v: Any, r: Any, primary: str, reports: dict[str, Any], spec: Any) -> None:
    v.metric("primary_level", primary)
    v.metric("levels_analysed", len(reports))
    v.metric("records_analysed", sum(x.chunks for x in reports.values()))
    for name in ("min_tokens", "max_tokens"):
        v.metric(name, int(spec.threshold(name)))
    for name, value in (("chunks", r.chunks), ("documents", r.documents), ("sampled", r.sampled),
                        ("tokens_p5", r.tokens.get("p5")),
                        ("tokens_p50", r.tokens.get("p50")), ("tokens_p95", r.tokens.get("p95")),
                        ("overlap_words_median", r.overlap_words_median)):
        v.metric(name, value)
    for m, _, _ in MEASURES:
        v.metric(f"{m}_share", getattr(r, f"{m}_share"))
    for role, share in r.metadata_present.items():
        v.metric(f"{role.replace(' ', '_')}_present_share", share)


def _answers(v: Any, straddle: list[Any], straddling: list[Any]) -> None:
    counts = Counter(RESULTS.get(s.result, s.result) for s in straddle)
    v.metric("answers_checked", len(straddle))
    v.metric("answers_straddling", len(straddling))
    v.metric("answers_not_found", counts["not_found"] + counts["document_not_in_index"])
    v.table("answers", "t_answers", ("result", "answers"), [(k, counts.get(k, 0)) for k in RESULTS.values()],
            note="n_answers")
    detail = [(s.case_id, s.answer, RESULTS.get(s.result, s.result), tuple(s.documents), tuple(s.keys))
              for s in straddle if s.result != "in one chunk"]
    if detail:
        v.table("answers_detail", "t_answers_detail", ("case", "answer", "result", "documents", "chunks"), detail)


def draw(finding: Any, lang: str = "en") -> Any:
    hist = column_values(finding, "token_histogram", "level", "from", "to", "chunks")
    shares = column_values(finding, "boundary_shares", "level", "measure", "share", "threshold", "verdict")
    if not hist and not shares:
        return None
    pyplot = plt()
    fig, axes = pyplot.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1, 1.25]})
    lo_lim, hi_lim = finding.metrics.get("min_tokens"), finding.metrics.get("max_tokens")
    if hist:
        levels = list(dict.fromkeys(r[0] for r in hist))
        bins = list(dict.fromkeys((lo, hi) for _, lo, hi, _ in hist))
        width = 0.8 / len(levels)
        for j, level in enumerate(levels):
            counts = {(lo, hi): c for lv, lo, hi, c in hist if lv == level}
            axes[0].bar([i + j * width for i in range(len(bins))], [int(counts.get(b, 0)) for b in bins], width=width,
                        label=str(level),
                        hatch=["//" if (lo_lim is not None and hi is not None and hi <= lo_lim)
                               or (hi_lim is not None and lo >= hi_lim) else "" for lo, hi in bins])
        axes[0].set_xticks([i + 0.4 - width / 2 for i in range(len(bins))],
                           [f"{lo}-{hi}" if hi is not None else f"{lo}+" for lo, hi in bins], rotation=45, fontsize=7)
        axes[0].set_xlabel(text(ID, "fig_size_xlabel", lang))
        axes[0].set_ylabel(text(ID, "fig_ylabel", lang))
        axes[0].set_title(text(ID, "fig_size_title", lang))
        if len(levels) > 1:
            axes[0].legend(fontsize=7)
    if shares:
        colors = {"fail": "tab:red", "warn": "tab:orange", "ok": "tab:green"}
        measures = list(dict.fromkeys(r[1] for r in shares))
        levels = list(dict.fromkeys(r[0] for r in shares))
        h = 0.8 / len(levels)
        for j, level in enumerate(levels):
            for m, share, limit, verdict in [(r[1], r[2], r[3], r[4]) for r in shares if r[0] == level]:
                if share is None:
                    continue
                y = measures.index(m) - 0.4 + (j + 0.5) * h
                axes[1].barh(y, float(share), height=h, color=colors.get(str(verdict), "tab:gray"),
                             hatch=HATCHES[j % len(HATCHES)], edgecolor="white", linewidth=0)
                if limit is not None:
                    axes[1].plot([limit, limit], [y - h / 2, y + h / 2], color="black", linewidth=1.5)
                if share:
                    axes[1].text(min(float(share), 0.88) + 0.01, y, f"{float(share):.0%}", va="center", fontsize=6)
        axes[1].set_yticks(range(len(measures)), [text(ID, f"m_{m}", lang) for m in measures], fontsize=7)
        axes[1].invert_yaxis()
        axes[1].set_xlim(0, 1)
        axes[1].set_xlabel(text(ID, "fig_shares_xlabel", lang))
        axes[1].set_title(text(ID, "fig_shares_title", lang))
        if len(levels) > 1:
            from matplotlib.patches import Patch

            axes[1].legend(handles=[Patch(facecolor="white", edgecolor="gray", hatch=HATCHES[j % len(HATCHES)],
                                          label=str(lv)) for j, lv in enumerate(levels)], fontsize=7)
    fig.tight_layout()
    return fig
