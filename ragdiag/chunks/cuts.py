"""Per-chunk cut flags: where one document's chunks were cut, judged against the source when it
is known and from the chunks' own text otherwise.

`judge_document(texts, lang=..., source=..., vocab=...)` returns one `CutFlags` per chunk (in the
given order, which must be the document order). With `source` each chunk is located in the
source text (`ragdiag.chunks.source.locate`) and its start and end are judged on the source
around the cut: a cut between two letters or digits is mid-word, a cut that is not a sentence
or structure boundary (`ragdiag.chunks.sentences.is_boundary`) is mid-sentence. A chunk that
cannot be located falls back to the text judgement below, and says so (`located=False`).

Without the source, neighbouring chunks are aligned: an overlap (the longest suffix of one
chunk that starts the next, compared without whitespace so ``"contract \\n includes"`` equals
``"contract includes"``, at any character offset, at least `MIN_OVERLAP_CHARS` non-space
characters) tells where each cut fell inside the other chunk, so both cuts are judged with
text on both sides. Without an overlap the two chunks meet at one cut: mid-word when both
sides are letters or digits and either the export keeps whitespace (then a missing space is
meaningful) or the corpus vocabulary (`Vocabulary`) knows the joined word but not both parts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from ragdiag.chunks.boundaries import _is_sep_line, _is_table_line, is_heading
from ragdiag.chunks.sentences import is_boundary, starts_sentence

MIN_OVERLAP_CHARS = 8
#: an export keeps the whitespace at its cuts when this share of chunks starts or ends with it
KEEPS_WHITESPACE_SHARE = 0.2
WINDOW = 800
CONTEXT = 300
_WORD = re.compile(r"\w+")
_LAST_WORD = re.compile(r"\w+$")
_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
_MD_HEADING = re.compile(r"#{1,6}\s+\S")


@dataclass
class CutFlags:
    """What is wrong at one chunk's edges (the per-chunk ``flags`` of ``ragdiag chunks --json``).

    A sentence flag is None when the text has no sentence punctuation to judge (normalised
    text); `located` says whether the source was used for this chunk."""

    key: str
    end_mid_sentence: bool | None = False
    start_mid_sentence: bool | None = False
    end_mid_word: bool = False
    start_mid_word: bool = False
    heading_only: bool = False
    split_table: bool = False
    tiny: bool = False
    oversized: bool = False
    overlap_words: int = 0
    located: bool = False

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("located")
        return d


class Vocabulary:
    """Word counts over the chunks' interior words (not a chunk's first or last word, which may
    be fragments): tells a split word ("under" | "standing") from two words."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.counts: Counter[str] = Counter()
        self._pending = texts  # counted on first use: most exports never need the vocabulary

    def add(self, texts: Iterable[str]) -> None:
        for t in texts:
            words = _WORD.findall(t.lower())
            if len(words) > 2:
                self.counts.update(words[1:-1])

    def split_word(self, a: str, b: str) -> bool:
        """Whether fragments `a` (end of one chunk) and `b` (start of the next) are one word."""
        if not a or not b:
            return False
        if self._pending:
            pending, self._pending = self._pending, ()
            self.add(pending)
        if b[0].isupper() and not a.isupper():
            return False  # "... Payment" | "Invoices ...": a new word starts
        c = self.counts
        la, lb = a.lower(), b.lower()
        joined = c.get(la + lb, 0)
        known_a, known_b = c.get(la, 0) > 0, c.get(lb, 0) > 0
        # a joined word the corpus uses, not both parts words of their own ("under" | "standing"
        # is one word only when "understanding" occurs); two unknown parts are not enough: names
        # and rare words meet at cuts too
        return joined > 0 and not (known_a and known_b)


def _squeeze(s: str) -> str:
    return "".join(s.split())


def _nth_nonspace_end(s: str, k: int) -> int:
    """Index in `s` just after its k-th non-space character."""
    m = re.match(rf"(?:\s*\S){{{k}}}", s)
    return m.end() if m else len(s)


def _nth_nonspace_from_end(s: str, k: int) -> int:
    """Index in `s` of the k-th non-space character counted from the end."""
    m = re.match(rf"(?:\s*\S){{{k}}}", s[::-1]) if k else None
    return len(s) - m.end() if m else 0


def overlap(prev: str, cur: str) -> tuple[int, int, int]:
    """(start of the overlap in `prev`, end of the overlap in `cur`, words in it); (len(prev), 0, 0)
    without an overlap. Whitespace-insensitive, any character offset, at least
    `MIN_OVERLAP_CHARS` non-space characters, within the last `WINDOW` characters of `prev`."""
    raw_tail = prev[-WINDOW:]
    # fast rejection: an overlap starts with `cur`'s first word (or a part of a word in `prev`)
    first = cur[:60].split(None, 1)
    if first and len(first[0]) >= 4 and first[0] not in raw_tail:
        return len(prev), 0, 0  # the first word of `cur` is nowhere in `prev`'s tail: no overlap
    tail = _squeeze(raw_tail)
    head = _squeeze(cur[:WINDOW])
    if len(head) < MIN_OVERLAP_CHARS or len(tail) < MIN_OVERLAP_CHARS:
        return len(prev), 0, 0
    probe = head[:MIN_OVERLAP_CHARS]
    pos = tail.find(probe)
    while pos >= 0:
        n = len(tail) - pos
        if head.startswith(tail[pos:]) if n <= len(head) else False:
            start = _nth_nonspace_from_end(prev, n)
            end = _nth_nonspace_end(cur, n)
            return start, end, len(cur[:end].split())
        pos = tail.find(probe, pos + 1)
    return len(prev), 0, 0


def _lines(s: str) -> list[str]:
    return [ln for ln in (x.strip() for x in s.split("\n")) if ln]


def _heading_only(s: str) -> bool:
    if len(s) > 400:
        return False
    lines = _lines(s)
    return bool(lines) and len(lines) <= 3 and all(
        is_heading(ln) or _MD_HEADING.match(ln) is not None for ln in lines)


def _table_state(s: str) -> tuple[bool, bool, bool, bool]:
    """(starts inside a table, ends inside a table, starts with a header row, has a table)."""
    opens = [m.start() for m in _TABLE_OPEN.finditer(s)]
    closes = [m.start() for m in _TABLE_CLOSE.finditer(s)]
    html_start = bool(closes) and (not opens or closes[0] < opens[0])
    html_end = bool(opens) and (not closes or opens[-1] > closes[-1])
    lines = _lines(s) if "|" in s else []
    md_start = bool(lines) and _is_table_line(lines[0])
    md_end = bool(lines) and _is_table_line(lines[-1])
    header = md_start and len(lines) > 1 and _is_sep_line(lines[1])
    return (html_start or (md_start and not header)), (html_end or md_end), header, bool(
        opens or closes or md_start or md_end)


def _last_frag(s: str) -> str:
    m = _LAST_WORD.search(s[-80:]) if s and s[-1].isalnum() else None
    return m.group(0) if m else ""


def _first_frag(s: str) -> str:
    m = _WORD.match(s) if s and s[0].isalnum() else None
    return m.group(0) if m else ""


def judge_document(texts: Sequence[str], keys: Sequence[str], *, lang: str = "en",
                   source: str | None = None, vocab: Vocabulary | None = None,
                   keeps_whitespace: bool = False, punctuated: bool = True) -> list[CutFlags]:
    """Cut flags of one document's chunks (in document order); see the module docstring."""
    from ragdiag.chunks.source import locate

    flags = [CutFlags(key=k) for k in keys]
    if not punctuated:  # no sentence punctuation: sentence cuts cannot be judged, say so
        for f in flags:
            f.end_mid_sentence = f.start_mid_sentence = None
    n = len(texts)
    spans = locate(source, texts) if source is not None else [None] * n
    for i, f in enumerate(flags):
        f.heading_only = _heading_only(texts[i]) and i + 1 < n
    states = [_table_state(t) for t in texts]
    for i in range(n):
        a_in, a_end, _, _ = states[i]
        if i + 1 < n:
            b_in = states[i + 1][0]
            if a_end and b_in:
                flags[i].split_table = flags[i + 1].split_table = True
        elif a_end and (texts[i].count("<table") > texts[i].count("</table")):
            flags[i].split_table = True
    # edges judged against the source
    for i, span in enumerate(spans):
        if span is None:
            continue
        s, e = span
        f = flags[i]
        f.located = True
        f.start_mid_word = 0 < s < len(source) and source[s - 1].isalnum() and source[s].isalnum()
        f.end_mid_word = 0 < e < len(source) and source[e - 1].isalnum() and source[e].isalnum()
        if punctuated:
            f.start_mid_sentence = s > 0 and not is_boundary(source[max(0, s - CONTEXT):s],
                                                             source[s:s + CONTEXT], lang)
            f.end_mid_sentence = e < len(source) and not is_boundary(source[max(0, e - CONTEXT):e],
                                                                     source[e:e + CONTEXT], lang)
        if i > 0 and spans[i - 1] is not None:
            ps, pe = spans[i - 1]
            if s < pe:
                f.overlap_words = len(source[s:pe].split())
    # edges judged from the chunks' text (the pairs the source did not settle)
    for i in range(n):
        f = flags[i]
        cur = texts[i]
        if len(cur) > 2 * CONTEXT + WINDOW:
            cur = cur[:CONTEXT] + "\n\n" + cur[-(CONTEXT + WINDOW):]  # what the judgement reads
        if i == 0:
            if not f.located:
                st = starts_sentence(cur, lang)
                f.start_mid_sentence = (st is False) if punctuated else None
        if i + 1 == n:
            if not f.located:
                f.end_mid_sentence = (not is_boundary(cur, None, lang)) if punctuated else None
            continue
        nxt = texts[i + 1][:WINDOW + CONTEXT]
        g = flags[i + 1]
        if f.located and g.located:
            continue
        a_start, b_end, words = overlap(cur, nxt)
        last_nl = cur.rfind("\n")
        if words and not keeps_whitespace and a_start > last_nl >= 0 and cur[a_start - 1].isspace() \
                and is_heading(cur[last_nl + 1:].strip().lstrip("#").strip()):
            # the tail of a heading line repeated as the next chunk's first words
            # ("## Access and Passwords" | "Passwords must ..."): a coincidence, not an overlap
            a_start, b_end, words = len(cur), 0, 0
        if not g.located:
            g.overlap_words = words
        if words:
            if not f.located:
                after = nxt[b_end:]
                f.end_mid_word = bool(cur.rstrip()) and cur.rstrip()[-1].isalnum() and after[:1].isalnum()
                if punctuated:
                    f.end_mid_sentence = not is_boundary(cur, after, lang) if after.strip() else \
                        not is_boundary(cur, None, lang)
            if not g.located:
                before = cur[:a_start]
                g.start_mid_word = bool(before) and before[-1].isalnum() and nxt.lstrip()[:1].isalnum()
                if punctuated:
                    g.start_mid_sentence = bool(before.strip()) and not is_boundary(before, nxt, lang)
            continue
        stripped = not keeps_whitespace or not (cur[-1:].isspace() or nxt[:1].isspace())
        gap_known = keeps_whitespace
        a, b = cur.rstrip(), nxt.lstrip()
        mid_word = False
        if a and b and a[-1].isalnum() and b[0].isalnum() and a == cur and b == nxt:
            if keeps_whitespace:
                mid_word = True
            elif vocab is not None:
                mid_word = vocab.split_word(_last_frag(a), _first_frag(b))
        if punctuated:
            cut = not mid_word and not is_boundary(cur, nxt, lang, gap_known=gap_known and not stripped)
            cut = cut or mid_word
            if not f.located:
                f.end_mid_sentence = cut
            if not g.located:
                g.start_mid_sentence = cut or starts_sentence(nxt, lang, connectives=False) is False
        if not f.located:
            f.end_mid_word = mid_word
        if not g.located:
            g.start_mid_word = mid_word
    return flags


def is_punctuated(texts: Iterable[str], sample: int = 2000) -> bool:
    """Whether the text has sentence punctuation at all (normalised IR text often has none: then
    no sentence boundary can be judged)."""
    n = hits = 0
    for t in texts:
        n += 1
        hits += any(ch in t for ch in ".!?")
        if n >= sample:
            break
    return n == 0 or hits / n >= 0.5


def keeps_whitespace(texts: Iterable[str], sample: int = 2000) -> bool:
    """Whether the export keeps the whitespace at its cuts (a fixed-size cutter does; most
    splitters strip it): then two letters meeting at a cut are a split word."""
    n = ws = 0
    for t in texts:
        if not t:
            continue
        n += 1
        ws += t[0].isspace() or t[-1].isspace()
        if n >= sample:
            break
    return n > 0 and ws / n >= KEEPS_WHITESPACE_SHARE
