"""Check 5: did chunking destroy what retrieval needs?

Streams the index's chunk records once (`ragdiag.chunks.analyse_chunks`; only
the fields it needs, only chunk-level records when the index has a level
field; whole documents sampled above `MAX_CHUNKS` chunks) and measures size,
boundaries, overlap, split tables, separated headings, cut lists, citation
metadata and duplicates. With a goldset it also asks whether the expected
answers lie inside one chunk or straddle a boundary. Status from the spec:
fail when too many chunks lack citation metadata, warn when too many end
mid-sentence or split a table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ragdiag.checks._common import evidence, num, pct
from ragdiag.checks.registry import register
from ragdiag.chunks import (
    ChunkFields,
    ChunkReport,
    analyse_chunks,
    doc_id_of_key,
    iter_with_copy,
    straddling_answers,
)
from ragdiag.model.findings import Finding

ID = "chunk_boundaries"
#: Above this many chunk records whole documents are sampled.
MAX_CHUNKS = 200_000

RECHUNK = ("re-chunk structure-aware: whole sentences (split at sentence and paragraph "
           "boundaries), tables kept whole in one chunk together with their heading (or one chunk "
           "per table that repeats its header row), headings kept with their body, and 1-2 "
           "sentences of overlap between consecutive chunks")


def _open_stream(target: Any, fields: ChunkFields) -> tuple[str | None, int | None]:
    """(filter to use, chunk count) -- the level filter when the target accepts it."""
    flt = fields.level_filter()
    if flt is not None:
        try:
            next(iter(target.iter_documents(select=list(fields.select()), filter=flt)), None)
        except Exception:
            flt = None
    try:
        total = int(target.count(flt) if flt else target.count())
    except Exception:
        total = None
    return flt, total


def _gold_scope(goldset: Any) -> tuple[set[str], set[str]]:
    keys = {k for c in goldset if c.expect_sources and c.expect_answer_contains
            for k, _ in c.expect_sources}
    return keys, {doc_id_of_key(k) for k in keys}


@register
class ChunkBoundaries:
    id = ID
    needs = ("target",)

    def run(self, ctx: Any, spec: Any) -> Finding:
        warn_mid = float(spec.threshold("warn_mid_sentence_end_share"))
        warn_table = float(spec.threshold("warn_split_table_share"))
        fail_cite = float(spec.threshold("fail_missing_citation_share"))
        min_tokens = int(spec.threshold("min_tokens"))
        max_tokens = int(spec.threshold("max_tokens"))

        target = ctx.target
        schema = target.schema()
        fields = ChunkFields.from_schema(schema)
        if not fields.content:
            texts = ", ".join(f.name for f in schema.fields if f.searchable and not f.is_vector) or "none"
            return Finding.skipped(
                ID, f"index '{schema.name}' has no searchable text field named content, text or "
                    f"chunk (searchable fields: {texts})",
                what_to_supply="an index whose chunk text lives in a searchable string field named "
                               "content, text or chunk")

        flt, total = _open_stream(target, fields)
        copies: list[dict[str, Any]] = []
        gold_keys: set[str] = set()
        gold_docs: set[str] = set()
        if ctx.goldset is not None:
            gold_keys, gold_docs = _gold_scope(ctx.goldset)

        def keep(rec: Any) -> bool:
            if not gold_keys:
                return False
            d = rec.get(fields.doc_id) if fields.doc_id else None
            key = rec.get(fields.key)
            return key in gold_keys or (d is not None and str(d) in gold_docs) or \
                doc_id_of_key(str(key)) in gold_docs

        def stream(filter_: str | None) -> Any:
            return iter_with_copy(target.iter_documents(select=list(fields.select()), filter=filter_),
                                  keep, copies)

        ctx.log(f"{ID}: streaming chunk records" + (f" ({total:,})" if total else ""))
        report = analyse_chunks(stream(flt), fields=fields, max_chunks=MAX_CHUNKS, total_hint=total,
                                min_tokens=min_tokens, max_tokens=max_tokens)
        level_note = ""
        if report.chunks == 0 and fields.level:
            # the level field does not mark chunks as assumed: analyse every record
            seen = ", ".join(f"{k} ({v})" for k, v in report.levels_seen.items()) or "none"
            level_note = (f"no record has {fields.level} = '{' or '.join(fields.chunk_levels)}' "
                          f"(values seen: {seen}); every record was analysed as a chunk")
            fields = replace(fields, level=None)
            copies.clear()
            try:
                total = int(target.count())
            except Exception:
                total = None
            report = analyse_chunks(stream(None), fields=fields, max_chunks=MAX_CHUNKS,
                                    total_hint=total, min_tokens=min_tokens, max_tokens=max_tokens)
        if report.chunks == 0:
            return Finding.skipped(ID, f"index '{schema.name}' returned no chunk records",
                                   what_to_supply="an index with chunk records")

        straddle = []
        if ctx.goldset is not None and copies:
            straddle = straddling_answers(copies, ctx.goldset, fields=fields)
        return self._finding(report, straddle, fields, total, level_note, ctx.goldset is not None,
                             warn_mid=warn_mid, warn_table=warn_table, fail_cite=fail_cite)

    # ------------------------------------------------------------------------------------------
    def _finding(self, r: ChunkReport, straddle: list[Any], fields: ChunkFields, total: int | None,
                 level_note: str, has_goldset: bool, *, warn_mid: float, warn_table: float,
                 fail_cite: float) -> Finding:
        n = r.chunks
        mid_end = r.mid_sentence_end_share or 0.0
        split = r.split_table_share or 0.0
        missing = r.missing_citation_share or 0.0
        fails, warns = [], []
        role_field = {"document id": fields.doc_id or fields.parent_id, "page": fields.page,
                      "position": fields.position, "parent id": fields.parent_id,
                      "section title": fields.section_title}
        if missing > fail_cite:
            lacking = [f"{role} on {pct(1 - (r.metadata_present.get(role) or 0.0))}"
                       + ("" if role_field[role] else " (no such field)")
                       for role in ("document id", "page", "position")
                       if (r.metadata_present.get(role) or 0.0) < 1.0]
            fails.append(f"{pct(missing)} of {n:,} chunks lack citation metadata "
                         f"(threshold {pct(fail_cite)}): missing {'; '.join(lacking)}")
        if mid_end > warn_mid:
            warns.append(f"{pct(mid_end)} of {n:,} chunks end mid-sentence (threshold {pct(warn_mid)})")
        if split > warn_table:
            warns.append(f"{pct(split)} split a table (threshold {pct(warn_table)})")
        status = "fail" if fails else "warn" if warns else "pass"
        if fails:
            headline = "; ".join(fails) + (". Also: " + "; ".join(warns) if warns else "")
        elif warns:
            headline = "; ".join(warns)
        else:
            headline = (f"chunks respect structure: {pct(mid_end)} of {n:,} end mid-sentence, "
                        f"{pct(split)} split a table, citation metadata on "
                        f"{pct(1 - missing)}; median {num(r.tokens.get('p50'), 0)} tokens")
        if r.sampled:
            headline += f" (sample: {r.sample_note})"

        straddling = [s for s in straddle if s.result == "straddles a boundary"]
        not_found = [s for s in straddle if s.result in ("not found", "document not in index")]
        metrics: dict[str, Any] = {
            "chunks": n, "documents": r.documents, "sampled": r.sampled,
            "chunk_records": max(r.chunk_records_seen, total or 0),
            "tokens_p5": r.tokens.get("p5"), "tokens_p50": r.tokens.get("p50"),
            "tokens_p95": r.tokens.get("p95"), "tiny_share": r.tiny_share,
            "oversized_share": r.oversized_share,
            "mid_sentence_end_share": r.mid_sentence_end_share,
            "mid_sentence_start_share": r.mid_sentence_start_share,
            "split_table_share": r.split_table_share,
            "heading_separated_share": r.heading_separated_share,
            "list_cut_share": r.list_cut_share, "overlap_share": r.overlap_share,
            "overlap_words_median": r.overlap_words_median,
            "missing_citation_share": r.missing_citation_share,
            "exact_duplicate_share": r.exact_duplicate_share,
            "near_duplicate_share": r.near_duplicate_share,
        }
        for role, share in r.metadata_present.items():
            metrics[f"{role.replace(' ', '_')}_present_share"] = share
        if has_goldset:
            metrics.update({"answers_checked": len(straddle), "answers_straddling": len(straddling),
                            "answers_not_found": len(not_found)})

        # -- evidence ---------------------------------------------------------------------
        t = r.tokens
        token_note = f"tokenizer: {r.tokenizer}"
        if r.tokens_exact < n:
            token_note += (f"; {r.tokens_exact:,} of {n:,} chunks counted exactly, the rest estimated "
                           f"(median error {pct(r.token_estimate_error)})")
        if r.sampled:
            token_note += f"; {r.sample_note}"
        size_rows = [("chunks", n), ("min", t.get("min")), ("p5", t.get("p5")), ("p25", t.get("p25")),
                     ("median", t.get("p50")), ("p75", t.get("p75")), ("p95", t.get("p95")),
                     ("max", t.get("max")), ("mean", None if t.get("mean") is None else round(t["mean"], 1)),
                     (f"tiny (< {r.min_tokens} tokens)", f"{r.tiny:,} ({pct(r.tiny_share)})"),
                     (f"oversized (> {r.max_tokens} tokens)", f"{r.oversized:,} ({pct(r.oversized_share)})")]
        ev = [evidence("Chunk size in tokens", ("statistic", "value"),
                       [(a, b) for a, b in size_rows], note=token_note),
              evidence("Token size histogram", ("from", "to", "chunks"),
                       [(lo, hi, c) for lo, hi, c in r.token_histogram],
                       note=f"input of the chunk-boundaries figure; tiny < {r.min_tokens}, "
                            f"oversized > {r.max_tokens}")]

        def verdict(share: float, limit: float, bad: str) -> str:
            return bad if share > limit else "ok"

        shares = [
            ("ends mid-sentence", r.mid_sentence_end, r.mid_sentence_end_share,
             f"warn > {pct(warn_mid)}", verdict(mid_end, warn_mid, "warn")),
            ("splits a table", r.split_table, r.split_table_share, f"warn > {pct(warn_table)}",
             verdict(split, warn_table, "warn")),
            ("lacks citation metadata", r.missing_citation, r.missing_citation_share,
             f"fail > {pct(fail_cite)}", verdict(missing, fail_cite, "fail")),
            ("starts mid-sentence", r.mid_sentence_start, r.mid_sentence_start_share, "", "info"),
            ("heading separated from its body", r.heading_separated, r.heading_separated_share, "", "info"),
            ("list cut", r.list_cut, r.list_cut_share, "", "info"),
            ("overlaps the previous chunk (of consecutive pairs)", r.pairs_with_overlap,
             r.overlap_share, "", "info"),
            (f"tiny (< {r.min_tokens} tokens)", r.tiny, r.tiny_share, "", "info"),
            (f"oversized (> {r.max_tokens} tokens)", r.oversized, r.oversized_share, "", "info"),
            ("exact duplicate of an earlier chunk", r.exact_duplicates, r.exact_duplicate_share, "", "info"),
            ("near duplicate (Jaccard >= 0.8)", r.near_duplicates, r.near_duplicate_share, "", "info"),
        ]
        ev.append(evidence("Boundary and structure shares", ("measure", "chunks", "share", "threshold", "verdict"),
                           [(m, c, None if s is None else round(s, 4), th, v) for m, c, s, th, v in shares],
                           note=f"over {n:,} chunks of {r.documents:,} documents; overlap over "
                                f"{r.pairs:,} consecutive pairs (median "
                                f"{num(r.overlap_words_median, 0)} words when present)"))
        meta_rows = []
        for role in ("document id", "page", "position", "parent id", "section title"):
            share = r.metadata_present.get(role)
            fname = role_field[role]
            note = "no such field in the index" if not fname else (
                "information only" if role in ("parent id", "section title") else "needed to cite")
            if role == "document id" and not fields.doc_id and fields.parent_id:
                note += " (parent id stands in for the document id)"
            meta_rows.append((role, fname or "-", None if share is None else round(share, 4),
                              0 if share is None else round(n * (1 - share)), note))
        ev.append(evidence("Citation metadata per chunk", ("role", "index field", "present share",
                                                           "missing chunks", "note"), meta_rows))
        labels = {"mid_sentence_end": "ends mid-sentence", "split_table": "splits a table",
                  "missing_citation": "lacks citation metadata",
                  "mid_sentence_start": "starts mid-sentence",
                  "heading_separated": "heading separated", "list_cut": "list cut",
                  "tiny": "tiny", "oversized": "oversized", "exact_duplicate": "exact duplicate",
                  "near_duplicate": "near duplicate", "overlap": "overlap"}
        ex_rows = [(labels[m], key, text) for m in labels for key, text in r.examples.get(m, ())]
        if ex_rows:
            ev.append(evidence("Examples", ("measure", "key", "excerpt"), ex_rows,
                               note="random examples per measure (smallest and largest for size)"))
        if has_goldset:
            counts = Counter(s.result for s in straddle)
            ev.append(evidence("Expected answers and chunk boundaries", ("result", "answers"),
                               [(k, counts.get(k, 0)) for k in ("in one chunk", "straddles a boundary",
                                                                 "not found", "document not in index")],
                               note="expect_answer_contains strings of answerable goldset cases, "
                                    "searched in the chunks of the expected documents"))
            detail = [(s.case_id, s.answer, s.result, list(s.documents), list(s.keys))
                      for s in [*straddling, *not_found]]
            if detail:
                ev.append(evidence("Answers not inside one chunk", ("case", "answer", "result",
                                                                   "documents", "chunks"), detail))
        if level_note:
            ev.append(evidence("Chunk records", ("note",), [(level_note,)]))

        # -- recommendations ------------------------------------------------------------------
        recs = []
        if mid_end > warn_mid or split > warn_table or straddling:
            why = []
            if mid_end > warn_mid:
                why.append(f"{pct(mid_end)} end mid-sentence")
            if split > warn_table:
                why.append(f"{r.split_table:,} chunks hold part of a cut table")
            if straddling:
                why.append(f"{len(straddling)} expected answer(s) straddle a boundary, e.g. case "
                           f"'{straddling[0].case_id}' ({', '.join(straddling[0].keys)})")
            overlap = "" if (r.overlap_share or 0) > 0 else "; today consecutive chunks share no text"
            recs.append(f"{RECHUNK[0].upper()}{RECHUNK[1:]} ({'; '.join(why)}{overlap}).")
        if missing > fail_cite:
            lacking = [role for role in ("document id", "page", "position")
                       if (r.metadata_present.get(role) or 0.0) < 1.0]
            recs.append(f"Keep {', '.join(lacking)} on every chunk (copy them from the source document "
                        "when indexing, e.g. the page number from the layout/OCR step and the chunk's "
                        "ordinal as position) so every answer can be cited.")
        if fields.parent_id is None or (r.metadata_present.get("parent id") or 0.0) < 1.0:
            recs.append("Store a parent id (the section or document) on every chunk so the system can "
                        "search small chunks and return their parent (small-to-big).")
        if r.heading_separated and (mid_end > warn_mid or split > warn_table):
            recs.append(f"Keep headings with their body: {r.heading_separated:,} chunks end with a "
                        "heading or hold nothing else.")
        if r.tiny:
            recs.append(f"Merge the {r.tiny:,} chunks under {r.min_tokens} tokens into their "
                        "neighbours; they carry too little meaning to embed.")
        if r.oversized:
            recs.append(f"Split the {r.oversized:,} chunks over {r.max_tokens} tokens at sentence or "
                        "paragraph boundaries; they dilute the embedding and eat the context budget.")
        if r.exact_duplicates:
            recs.append(f"Review the {r.exact_duplicates:,} exact duplicate chunks ({r.duplicate_groups:,} "
                        "texts stored more than once): drop copies inside one document and boilerplate "
                        "that answers nothing; identical chunks crowd distinct evidence out of the top k.")
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics,
                       evidence=tuple(ev), recommendations=tuple(dict.fromkeys(recs)),
                       figures=(ID,))
