"""`ragdiag chunks FILE`: the re-chunk verdict on a chunk export, with examples in context.

`analyse_export(records, roles, ...)` groups the records into documents (the ``document``
role; file order, or the ``position`` role when present), judges every cut
(`ragdiag.chunks.cuts.judge_document`, against the source where `sources` has the document),
counts tokens, and returns an `ExportVerdict`: status and headline from the thresholds and
texts of the ``chunk_boundaries`` spec (English and German), counts, the per-chunk flags,
examples in context (the end of one chunk next to the start of the next) and per-document
figures. The ``chunk_boundaries`` check judges cuts with the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.chunks.cuts import CutFlags, Decisions, judge_document
from ragdiag.chunks.fields import _order_key
from ragdiag.chunks.files import ChunkRoles
from ragdiag.chunks.histogram import uniform_histogram

SPEC_PATH = Path(__file__).resolve().parent.parent / "checks" / "specs" / "chunk_boundaries.toml"
MEASURES = ("end_mid_sentence", "start_mid_sentence", "end_mid_word", "start_mid_word",
            "heading_only", "split_table", "split_code", "tiny", "oversized")
#: measures judged per edge: their shares are over the edges judged (None: not judged)
SENTENCE_MEASURES = ("end_mid_sentence", "start_mid_sentence")
EXAMPLES_PER_MEASURE = 3
CONTEXT_CHARS = 90


def _spec() -> Any:
    from ragdiag.inputs.checklist import load_spec

    return load_spec(SPEC_PATH)


def msg(spec: Any, name: str, lang: str, **values: Any) -> str:
    """A computed text of the spec (``[messages.<name>]``) in `lang`, formatted."""
    texts = spec.messages[name]
    return texts.get(lang, texts["en"]).format(**values)


@dataclass
class ExportVerdict:
    status: str
    headline: str
    counts: dict[str, Any]
    flags: list[CutFlags]
    examples: list[dict[str, Any]]
    by_document: list[dict[str, Any]]
    roles: dict[str, str | None] = field(default_factory=dict)
    lang: str = "en"
    notes: list[str] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document: exactly the interface keys."""
        return {"status": self.status, "headline": self.headline, "counts": self.counts,
                "flags": [f.to_dict() for f in self.flags], "examples": self.examples,
                "by_document": self.by_document}


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list | tuple):
        return " ".join(map(str, v))
    return str(v)


def _clip_end(s: str, n: int = CONTEXT_CHARS) -> str:
    t = " ".join(s.split())
    return t if len(t) <= n else "…" + t[-n:]


def _clip_start(s: str, n: int = CONTEXT_CHARS) -> str:
    t = " ".join(s.split())
    return t if len(t) <= n else t[:n] + "…"


def _token_counts(texts: Sequence[str], lo: int, hi: int) -> tuple[list[int], str]:
    """Token counts: tiktoken cl100k for chunks near a threshold (estimate within 0.5-2x of it),
    4 characters per token elsewhere (only the histogram uses those)."""
    from ragdiag.chunks.tokens import token_counter

    counter, label, exact = token_counter(None)
    est = [len(t) // 4 for t in texts]
    if not exact:
        return est, label
    near = [i for i, e in enumerate(est) if lo * 0.5 <= e <= lo * 2 or hi * 0.5 <= e <= hi * 2]
    for i, n in zip(near, counter([texts[i] for i in near]), strict=True):
        est[i] = n
    return est, label


def analyse_export(records: Sequence[Mapping[str, Any]], roles: ChunkRoles, *, lang: str = "en",
                   sources: Mapping[str, str] | None = None, spec: Any = None) -> ExportVerdict:
    """The verdict on one chunk export (see the module docstring). `lang`: en, de or auto."""
    from ragdiag.chunks.source import find_source
    from ragdiag.errors import ConfigError

    spec = spec or _spec()
    if not roles.content:
        raise ConfigError("the chunk file has no content field; name it with --map content=FIELD")
    texts = [_text(r.get(roles.content)) for r in records]
    keys = [str(r.get(roles.key)) if roles.key and r.get(roles.key) is not None else str(i)
            for i, r in enumerate(records)]
    decided = Decisions.of(texts, lang)  # the same decisions as the audit's on the same records
    language = decided.lang
    ui = language if language in ("en", "de") else "en"
    docs: dict[Any, list[int]] = {}
    levels: dict[str, int] = {}
    for i, r in enumerate(records):
        d = r.get(roles.document) if roles.document else None
        d = None if d is None else str(d)
        if roles.level:  # documents, sections and chunks side by side: neighbours within a level
            lv = r.get(roles.level)
            lv = "" if lv is None else str(lv)
            levels[lv] = levels.get(lv, 0) + 1
            d = (d, lv)
        docs.setdefault(d, []).append(i)
    if roles.position:
        for idx in docs.values():
            idx.sort(key=lambda i: (_order_key(records[i].get(roles.position)), i))
    punct = decided.punctuated
    flags: list[CutFlags | None] = [None] * len(texts)
    with_source = 0
    for d, idx in docs.items():
        src = find_source(sources, _doc(d)) if sources else None
        if src is not None:
            with_source += 1
        # empty chunks hold no cut: neighbours pair across them (as in the audit)
        full = [i for i in idx if texts[i].strip()]
        got = judge_document([texts[i] for i in full], [keys[i] for i in full], lang=language,
                             source=src, vocab=decided.vocab, keeps_whitespace=decided.keeps_whitespace,
                             punctuated=punct, wrapped=decided.wrapped)
        for i, f in zip(full, got, strict=True):
            flags[i] = f
        for i in idx:
            if flags[i] is None:
                flags[i] = CutFlags(key=keys[i], end_mid_sentence=None, start_mid_sentence=None)
    lo, hi = int(spec.threshold("min_tokens")), int(spec.threshold("max_tokens"))
    tokens, tok_label = _token_counts(texts, lo, hi)
    for f, t, text in zip(flags, tokens, texts, strict=True):
        f.tiny = t < lo or not text.strip()
        f.oversized = t > hi
    ordered = [flags[i] for idx in docs.values() for i in idx]
    n = len(ordered)
    counts: dict[str, Any] = {"chunks": n, "documents": len({_doc(d) for d in docs}),
                              "documents_with_source": with_source,
                              "chunks_located_in_source": sum(f.located for f in ordered),
                              "pairs": sum(max(0, len(ix) - 1) for ix in docs.values())}
    for m in MEASURES:
        counts[m] = sum(bool(getattr(f, m)) for f in ordered)
    ow = [f.overlap_words for f in ordered if f.overlap_words]
    counts["pairs_with_overlap"] = len(ow)
    counts["overlap_words_median"] = sorted(ow)[len(ow) // 2] if ow else 0
    counts["sentences_judged"] = punct
    counts["language"] = language
    counts["tokenizer"] = tok_label
    counts["tokens_exact_near"] = [lo, hi]
    counts["token_histogram"] = uniform_histogram(tokens, hi)
    _shares(counts, ordered)
    status, reasons = _status(spec, counts, punct)
    headline_counts, prefix = counts, ""
    if len(levels) > 1:
        # each level is a chunk population of its own (whole documents dilute the chunks' cuts):
        # judged one by one, the worst level heads the verdict
        by_level: dict[str, Any] = {}
        worst = None
        for lv in sorted(levels):
            fl = [flags[i] for d, idx in docs.items() if d[1] == lv for i in idx]
            c: dict[str, Any] = {"chunks": len(fl), "documents": len({d[0] for d in docs if d[1] == lv}),
                                 "chunks_located_in_source": sum(f.located for f in fl),
                                 "sentences_judged": punct}
            for m in MEASURES:
                c[m] = sum(bool(getattr(f, m)) for f in fl)
            _shares(c, fl)
            st, why = _status(spec, c, punct)
            by_level[lv] = {**c, "status": st}
            rank = _RANK.get(st, 0)
            if worst is None or rank > worst[0]:
                worst = (rank, lv, st, why, c)
        counts["by_level"] = by_level
        if worst is not None and _RANK.get(worst[2], 0) > _RANK.get(status, 0):
            _, lv, status, reasons, headline_counts = worst
            prefix = msg(spec, "x_level", ui, field=roles.level, level=lv or "-") + " "
    texts_by_key = {id(f): i for i, f in enumerate(flags)}
    examples = _examples(docs, flags, texts, keys, ui, spec)
    by_document = []
    for d, idx in docs.items():
        row: dict[str, Any] = {"document": _doc(d), "chunks": len(idx),
                               "source": bool(sources) and find_source(sources, _doc(d)) is not None}
        if roles.level:
            row["level"] = d[1]
        for m in ("end_mid_sentence", "start_mid_sentence", "end_mid_word", "heading_only", "split_table"):
            row[m] = sum(bool(getattr(flags[i], m)) for i in idx)
        by_document.append(row)
    by_document.sort(key=lambda r: -(r["end_mid_sentence"] + r["end_mid_word"]))
    del texts_by_key
    headline = prefix + _headline(spec, ui, status, headline_counts, reasons)
    notes = []
    if not punct:
        notes.append(msg(spec, "x_note_unpunctuated", ui))
    if len(levels) > 1:
        notes.append(msg(spec, "x_note_levels", ui, n=len(levels), field=roles.level,
                         levels=", ".join(f"{k or '-'} {v:,}" for k, v in sorted(levels.items()))))
    if sources and counts["chunks_located_in_source"]:
        notes.append(msg(spec, "x_note_source", ui, located=counts["chunks_located_in_source"]))
    if sources and with_source < len(docs):
        notes.append(msg(spec, "x_note_partial_source", ui, n=len(docs) - with_source, total=len(docs)))
    recs = [msg(spec, f"x_rec_{r}", ui) for r in reasons]
    return ExportVerdict(status=status, headline=headline, counts=counts, flags=ordered,
                         examples=examples, by_document=by_document, roles=roles.describe(),
                         lang=ui, notes=notes, recommendations=list(dict.fromkeys(recs)))


_RANK = {"skipped": 0, "pass": 1, "warn": 2, "fail": 3}


def _shares(counts: dict[str, Any], flags: Sequence[CutFlags]) -> None:
    """Each measure's share: over the chunks, the sentence measures over the edges judged (a
    document's own start and end count as whole; none is judged in unpunctuated text)."""
    n = len(flags)
    for m in MEASURES:
        if m in SENTENCE_MEASURES:
            judged = sum(getattr(f, m) is not None for f in flags)
            counts[m + "_judged"] = judged
            counts[m + "_share"] = counts[m] / judged if judged else None
        else:
            counts[m + "_share"] = counts[m] / n if n else None


def _doc(group: Any) -> Any:
    """The document of a pairing group (a document, or (document, level) with a level role)."""
    return group[0] if isinstance(group, tuple) else group


def _status(spec: Any, counts: Mapping[str, Any], punct: bool) -> tuple[str, list[str]]:
    """(status, the measures that crossed a threshold), from the spec's thresholds."""
    if not counts["chunks"]:
        return "skipped", []
    t = spec.threshold
    share = {m: counts[m + "_share"] or 0.0 for m in MEASURES}
    mid_word = max(share["end_mid_word"], share["start_mid_word"])
    reasons = []
    fail = (punct and share["end_mid_sentence"] > t("fail_mid_sentence_end_share")) or \
        mid_word > t("fail_mid_word_share") or share["tiny"] > t("fail_tiny_share")
    if punct and share["end_mid_sentence"] > t("warn_mid_sentence_end_share"):
        reasons.append("mid_sentence")
    if mid_word > t("warn_mid_word_share"):
        reasons.append("mid_word")
    if share["split_table"] > t("warn_split_table_share"):
        reasons.append("split_table")
    if share["split_code"] > t("warn_split_code_share"):
        reasons.append("split_code")
    if share["heading_only"] > t("warn_heading_only_share"):
        reasons.append("heading_only")
    if share["tiny"] > t("warn_tiny_share"):
        reasons.append("tiny")
    if fail:
        return "fail", reasons
    if reasons:
        return "warn", reasons
    # not judged is not a pass: without sentence punctuation nothing says the cuts are sound
    return ("pass" if punct else "skipped"), reasons


def _headline(spec: Any, lang: str, status: str, counts: Mapping[str, Any], reasons: Sequence[str]) -> str:
    n = counts["chunks"]
    if not n:
        return msg(spec, "x_headline_empty", lang)
    how = msg(spec, "x_against_source" if counts["chunks_located_in_source"] else "x_from_text", lang,
              located=counts["chunks_located_in_source"], chunks=n)
    # punctuated text whose chunks are all empty has no edge judged: no sentence share to state
    if counts["sentences_judged"] and counts.get("end_mid_sentence_share") is not None:
        base = msg(spec, "x_headline", lang, chunks=n, documents=counts["documents"],
                   mid_sentence=counts["end_mid_sentence_share"], mid_word=counts["end_mid_word_share"],
                   how=how)
    else:
        base = msg(spec, "x_headline_unpunctuated", lang, chunks=n, documents=counts["documents"],
                   mid_word=counts["end_mid_word_share"], how=how)
    unjudged = status == "skipped" and not counts["sentences_judged"]
    verdict = msg(spec, "x_verdict_unjudged" if unjudged else "x_verdict_" + status, lang)
    return f"{base}: {verdict}"


def _examples(docs: Mapping[Any, list[int]], flags: Sequence[CutFlags], texts: Sequence[str],
              keys: Sequence[str], lang: str, spec: Any) -> list[dict[str, Any]]:
    """Up to `EXAMPLES_PER_MEASURE` examples per measure, each the cut in context: the end of
    one chunk next to the start of the next chunk of its document."""
    out: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for d, idx in docs.items():
        for j, i in enumerate(idx):
            f = flags[i]
            for m in MEASURES:
                if not getattr(f, m) or taken.get(m, 0) >= EXAMPLES_PER_MEASURE:
                    continue
                if m in ("tiny", "oversized"):
                    prev_i, next_i = i, None
                elif m.startswith("start_") and j > 0:
                    prev_i, next_i = idx[j - 1], i
                elif m.startswith("end_") and j + 1 < len(idx):
                    prev_i, next_i = i, idx[j + 1]
                elif m in ("heading_only", "split_table") and j + 1 < len(idx):
                    prev_i, next_i = i, idx[j + 1]
                else:
                    prev_i, next_i = (idx[j - 1], i) if j > 0 else (i, None)
                taken[m] = taken.get(m, 0) + 1
                out.append({"measure": m, "what": msg(spec, "x_m_" + m, lang), "document": _doc(d),
                            "key": keys[i], "previous_key": keys[prev_i] if next_i is not None else None,
                            "end_of_previous": _clip_end(texts[prev_i]) if next_i is not None else None,
                            "start_of_next": _clip_start(texts[next_i]) if next_i is not None else
                            _clip_start(texts[i]),
                            "next_key": keys[next_i] if next_i is not None else None})
        if len(taken) == len(MEASURES) and all(v >= EXAMPLES_PER_MEASURE for v in taken.values()):
            break
    return out


def check_chunk_file(path: str | Path, *, maps: Sequence[str] | Mapping[str, str] = (),
                     lang: str = "auto", source: str | Path | None = None) -> ExportVerdict:
    """Read a chunk export, infer (or take) its field roles, load the sources and judge it."""
    from ragdiag.chunks.files import infer_roles, parse_maps, read_chunk_file
    from ragdiag.chunks.source import load_sources
    from ragdiag.errors import ConfigError

    records = read_chunk_file(path)
    mapped = dict(maps) if isinstance(maps, Mapping) else parse_maps(maps)
    names: dict[str, None] = {}
    for r in records[:1000]:
        names.update(dict.fromkeys(r))
    try:
        roles = infer_roles(names, mapped)
        sources = load_sources(source) if source else None
        return analyse_export(records, roles, lang=lang, sources=sources)
    except ConfigError as exc:  # an error about the export names the file
        if exc.path is None and str(path) not in str(exc) and (source is None or str(source) not in str(exc)):
            raise ConfigError(str(exc), path=str(path)) from None
        raise


def render_text(v: ExportVerdict) -> str:
    """The console text: status, figures, examples in context, notes and recommendations."""
    spec = _spec()
    lang = v.lang
    c = v.counts
    lines = [f"{v.status.upper()}  {v.headline}", ""]
    roles = ", ".join(f"{r}={f}" for r, f in v.roles.items() if f)
    lines.append(msg(spec, "x_roles", lang, roles=roles or "-"))
    lines.append(msg(spec, "x_figures", lang, chunks=c["chunks"], documents=c["documents"],
                     located=c["chunks_located_in_source"], pairs=c["pairs"],
                     overlap=c["pairs_with_overlap"], overlap_words=c["overlap_words_median"]))
    by_level = c.get("by_level") or {}
    levels = list(by_level)
    if levels:  # one column per level after the total
        lines.append(f"  {'':<40} {'all':>7}  {'':>6}" + "".join(f"  {lv or '-':>16}" for lv in levels))
    for m in MEASURES:
        share = c[m + "_share"]
        row = f"  {msg(spec, 'x_m_' + m, lang):<40} {c[m]:>7,}  {0 if share is None else share:6.1%}"
        for lv in levels:
            x = by_level[lv]
            row += f"  {x[m]:>9,} {0 if x[m + '_share'] is None else x[m + '_share']:6.1%}"
        lines.append(row)
    if levels:
        lines.append(f"  {'':<40} {'':>7}  {'':>6}" + "".join(f"  {by_level[lv]['status'].upper():>16}"
                                                             for lv in levels))
    hist = c["token_histogram"]
    if hist:
        lines.append(msg(spec, "x_histogram", lang, tokenizer=c["tokenizer"],
                         lo=c["tokens_exact_near"][0], hi=c["tokens_exact_near"][1]))
        width = max(h["chunks"] for h in hist) or 1
        for h in hist:
            label = f"{h['from']}-{h['to']}" if h["to"] is not None else f"{h['from']}+"
            lines.append(f"  {label:>11} {h['chunks']:>7,} {'#' * round(30 * h['chunks'] / width)}")
    if v.examples:
        lines += ["", msg(spec, "x_examples", lang)]
        for e in v.examples:
            lines.append(f"- {e['what']} [{e['document']}] {e['previous_key'] or ''} | {e['next_key'] or e['key']}")
            if e["end_of_previous"] is not None:
                lines.append(f"    {e['end_of_previous']}")
                lines.append(f"    ⟂ {e['start_of_next']}")
            else:
                lines.append(f"    {e['start_of_next']}")
    for n in v.notes:
        lines += ["", n]
    if v.recommendations:
        lines += ["", msg(spec, "x_recommend", lang)] + [f"- {r}" for r in v.recommendations]
    return "\n".join(lines)
