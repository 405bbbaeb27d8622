"""Check 5: did chunking destroy what retrieval needs?

Streams the index's records (`ragdiag.chunks.analyse_chunks`; only the fields it needs; whole
documents sampled above `MAX_CHUNKS` chunks) and measures size, boundaries, overlap, split
tables, separated headings, cut lists, citation metadata and duplicates; mid-word cuts are
judged by the analyser of `ragdiag chunks` (`ragdiag.chunks.cuts`) on each document's chunks. With a goldset it also
asks whether the expected answers lie inside one chunk or straddle a boundary.

Scope: the records the query profiles can retrieve -- each profile's filter (and vector
``filter_override``) without its security clauses, e.g. ``level eq 'evidence'``; a profile
without such a filter reaches every record. Without profiles every record is analysed. When the
index has a level field each level in scope (document, section, evidence, ...) is analysed as a
chunk population of its own, so sections are never mistaken for neighbours of their chunks.

Evidence a pass needs: chunks analysed, in the profiles' scope. Without profiles a clean result
is ``skipped`` (ragdiag cannot tell which records reach the model); faults still warn or fail.
A target that cannot stream its records (capability ``documents``) is skipped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ragdiag import odata
from ragdiag.checks import _chunk_evidence as evidence
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.registry import register
from ragdiag.chunks import (
    ChunkFields,
    analyse_chunks,
    doc_id_of_key,
    iter_with_copy,
    straddling_answers,
)
from ragdiag.engine.runner import Failure
from ragdiag.errors import RagdiagError
from ragdiag.model import SearchRequest

ID = "chunk_boundaries"
#: Above this many chunk records (per level) whole documents are sampled.
MAX_CHUNKS = 200_000
NO_LEVEL = "-"
_STREAMED = object()  # a successful record stream, for `Verdict.requests`


def profile_scope(policy: Any, schema: Any) -> tuple[str | None, list[tuple[str, str, str]]]:
    """The filter selecting what the profiles can retrieve (None: every record) and, per
    profile leg, (profile, its filter, the filter without security clauses)."""
    security = {f.name for f in schema.security_fields} | {policy.security_field.split("/")[0]}
    scopes: list[str | None] = []
    rows = []
    for p in policy.profiles.values():
        legs = [vq.filter_override for vq in p.vector_queries if vq.filter_override]
        if p.keyword_text != "none" or any(not vq.filter_override for vq in p.vector_queries):
            legs.insert(0, p.filter)
        for flt in legs:
            kept = None
            if flt:
                kept = odata.conjoin(c.expr for c in odata.clauses(odata.parse(flt)) if not c.fields & security)
            scope = odata.render(kept) if kept is not None else None
            scopes.append(scope)
            rows.append((p.name, flt or "", scope or ""))
    if not scopes or any(s is None for s in scopes):
        return None, rows
    distinct = list(dict.fromkeys(s for s in scopes if s))
    return (distinct[0] if len(distinct) == 1 else " or ".join(f"({s})" for s in distinct)), rows


def _gold_scope(goldset: Any) -> tuple[set[str], set[str]]:
    keys = {k for c in goldset if c.expect_sources and c.expect_answer_contains for k, _ in c.expect_sources}
    return keys, {doc_id_of_key(k) for k in keys}


@register
class ChunkBoundaries(Check):
    id = ID
    needs = ("target",)
    uses = ("profiles", "goldset")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        target = ctx.target
        if not ctx.supports("documents"):
            v.skip("no_documents", target=target.name)
        schema = target.schema()
        target_config = getattr(ctx.config, "target", None) if ctx.config is not None else None
        fields = ChunkFields.from_schema(schema, roles=getattr(target_config, "fields", None) or None)
        if not fields.content:
            v.skip("no_content", index=schema.name,
                   fields=tuple(f.name for f in schema.fields if f.searchable and not f.is_vector) or ("-",))
        scope = None
        if ctx.has("profiles"):
            scope, rows = profile_scope(ctx.policy, schema)
            v.table("scope", "t_scope", ("profile", "filter", "scope"), rows)
            v.nothing_observed("scope_empty", index=schema.name, scope=scope or "*")
        else:
            v.nothing_observed("index_empty", index=schema.name)
        levels = self._levels(target, fields, scope, v)
        if not levels:
            return
        # the primary level (the chunk level, else the largest) carries the goldset answers and metrics
        primary = next((lv for lv in fields.chunk_levels if lv in levels), max(levels, key=levels.__getitem__))
        gold_keys, gold_docs = _gold_scope(ctx.goldset) if ctx.goldset is not None else (set(), set())
        copies: list[Any] = []

        def keep(rec: Any) -> bool:
            d = rec.get(fields.doc_id) if fields.doc_id else None
            key = str(rec.get(fields.key))
            return key in gold_keys or (d is not None and str(d) in gold_docs) or doc_id_of_key(key) in gold_docs

        reports = {}
        for level, n in levels.items():
            lf = replace(fields, chunk_levels=() if level is None else (level,)) if fields.level else \
                replace(fields, level=None)
            flt = self._level_filter(schema, fields, scope, level)
            ctx.log(f"{ID}: streaming {n:,} records" + (f" of level {level}" if fields.level else ""))
            try:
                stream = target.iter_documents(select=list(fields.select()), filter=flt)
                if gold_keys and level == primary:
                    stream = iter_with_copy(stream, keep, copies)
                reports[level] = analyse_chunks(stream, fields=lf, max_chunks=MAX_CHUNKS, total_hint=n,
                                                min_tokens=int(spec.threshold("min_tokens")),
                                                max_tokens=int(spec.threshold("max_tokens")))
                v.requests([_STREAMED])
            except RagdiagError as exc:
                v.requests([Failure(SearchRequest(search="*", filter=flt), str(exc))])
        analysed = [lv for lv in reports if reports[lv].chunks]
        if not analysed:
            return
        if primary not in analysed:
            primary = max(analysed, key=lambda lv: reports[lv].chunks)
        straddle = []
        if ctx.goldset is not None:
            lf = replace(fields, chunk_levels=(primary,)) if fields.level and primary else replace(fields, level=None)
            straddle = straddling_answers(copies, ctx.goldset, fields=lf)

        def name(lv: str | None) -> str:
            return NO_LEVEL if lv is None else lv

        evidence.record(v, spec, {name(lv): reports[lv] for lv in analysed}, name(primary), fields, straddle,
                        ctx.goldset is not None, totals={name(lv): levels[lv] for lv in analysed})
        if not ctx.has("profiles") and not v.fails and not v.warns:
            v.skip("clean_without_profiles", records=sum(r.chunks for r in reports.values()))

    @staticmethod
    def _levels(target: Any, fields: ChunkFields, scope: str | None, v: Verdict) -> dict[str | None, int]:
        """Records in scope per level value, the chunk levels first (one key-only pass)."""
        try:
            if not fields.level:
                return {NO_LEVEL: int(target.count(scope) if scope else target.count())}
            counts: Counter[str | None] = Counter()
            for d in target.iter_documents(select=[fields.key, fields.level], filter=scope):
                lv = d.get(fields.level)
                counts[None if lv is None else str(lv)] += 1
            v.requests([_STREAMED])
        except RagdiagError as exc:
            v.requests([Failure(SearchRequest(search="*", filter=scope), str(exc))])
            return {}
        first = [lv for lv in fields.chunk_levels if lv in counts]
        return {lv: counts[lv] for lv in first + [lv for lv, _ in counts.most_common() if lv not in first]}

    @staticmethod
    def _level_filter(schema: Any, fields: ChunkFields, scope: str | None, level: str | None) -> str | None:
        """The scope, narrowed to one level when the level field is filterable (the analysis
        skips other levels itself otherwise)."""
        if not fields.level or level == NO_LEVEL or not schema.has_field(fields.level) \
                or not schema.field(fields.level).filterable:
            return scope
        clause = odata.parse(f"{fields.level} eq {'null' if level is None else odata.quote(level)}")
        return odata.render(odata.conjoin([odata.parse(scope) if scope else None, clause]))

    def draw(self, finding: Any, lang: str = "en") -> Any:
        return evidence.draw(finding, lang)
