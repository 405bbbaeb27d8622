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
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from ragdiag.chunks.boundaries import _code_line, _is_sep_line, _is_table_line, is_heading
from ragdiag.chunks.sentences import is_boundary, starts_sentence
from ragdiag.chunks.structure import (
    fence_state,
    fences,
    is_fence,
    is_markup_line,
    is_opener,
    opens_markup,
)

MIN_OVERLAP_CHARS = 8
#: the first chunks of a stream that decide its language, punctuation, whitespace and vocabulary
#: (the same for the audit and `ragdiag chunks`: the same records give the same decisions)
DECISION_CHUNKS = 5000
#: text with fewer sentence ends per word than this has no punctuation to judge sentences by
MIN_ENDS_PER_WORD = 0.01
#: an export keeps the whitespace at its cuts when this share of chunks starts or ends with it
KEEPS_WHITESPACE_SHARE = 0.2
WINDOW = 800
CONTEXT = 300
_WORD = re.compile(r"\w+")
_LAST_WORD = re.compile(r"\w+$")
_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
_MD_HEADING = re.compile(r"#{1,6}\s+\S")
_ENDS = re.compile(r"[.!?…](?=[\s\"'”’»)\]]|$)")


@dataclass
class CutFlags:
    """What is wrong at one chunk's edges (the per-chunk ``flags`` of ``ragdiag chunks --json``).

    A sentence flag is None when the text has no sentence punctuation to judge (normalised
    text); a document's own start and end are no cuts (False). A cut inside a code block or an
    include line is `end_split_code` / `start_split_code`, not a cut sentence. `located` says
    whether the source was used for this chunk."""

    key: str
    end_mid_sentence: bool | None = False
    start_mid_sentence: bool | None = False
    end_mid_word: bool = False
    start_mid_word: bool = False
    heading_only: bool = False
    split_table: bool = False
    #: the end (start) falls inside a code block or an include/markup line
    end_split_code: bool = False
    start_split_code: bool = False
    tiny: bool = False
    oversized: bool = False
    overlap_words: int = 0
    located: bool = False

    @property
    def split_code(self) -> bool:
        """Either edge falls inside a code block or an include/markup line."""
        return self.end_split_code or self.start_split_code

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


_LAST_HEAD: tuple[str | None, str] = (None, "")  # (the last head window, its squeezed text)


def overlap(prev: str, cur: str) -> tuple[int, int, int]:
    """(start of the overlap in `prev`, end of the overlap in `cur`, words in it); (len(prev), 0, 0)
    without an overlap. Whitespace-insensitive, any character offset, at least
    `MIN_OVERLAP_CHARS` non-space characters, within the last `WINDOW` characters of `prev`."""
    raw_tail = prev[-WINDOW:]
    # fast rejection: an overlap starts with `cur`'s first word, or with its first
    # `MIN_OVERLAP_CHARS` characters when the overlap ends inside that word ("...#search-boos" |
    # "...#search-boosting")
    first = cur[:60].split(None, 1)
    if first and len(first[0]) >= 4 and first[0][:MIN_OVERLAP_CHARS] not in raw_tail:
        return len(prev), 0, 0  # the first word of `cur` is nowhere in `prev`'s tail: no overlap
    global _LAST_HEAD
    memo = _LAST_HEAD
    # a chunk no longer than the window is the head of one pair and the tail of the next: the same
    # string object, squeezed once
    tail = memo[1] if memo[0] is raw_tail else _squeeze(raw_tail)
    raw_head = cur[:WINDOW]
    head = _squeeze(raw_head)
    _LAST_HEAD = (raw_head, head)
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


def _table_state(s: str) -> tuple[bool, bool, bool, bool]:
    """(starts inside a table, ends inside a table, starts with a header row, has a table)."""
    if "<" in s:
        opens = [m.start() for m in _TABLE_OPEN.finditer(s)]
        closes = [m.start() for m in _TABLE_CLOSE.finditer(s)]
    else:
        opens = closes = []
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


def _heading_only(s: str) -> bool:
    if len(s) > 400:
        return False
    first = s.lstrip().split("\n", 1)[0].strip()
    if not first or not (is_heading(first) or _MD_HEADING.match(first) is not None or is_opener(first)):
        return False  # the first line is no heading: the common case, decided on one line
    lines = _lines(s)
    return bool(lines) and len(lines) <= 3 and all(
        is_heading(ln) or _MD_HEADING.match(ln) is not None or is_opener(ln) for ln in lines)


class SourceStructure:
    """The code blocks of one source text (fenced, from the opening fence line to the closing
    one): a cut strictly inside one splits code."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blocks: list[tuple[int, int]] = []
        state, start = None, 0
        for off, ch, n, info in fences(text):
            before = state
            state = fence_state([(off, ch, n, info)], state)
            if before is None and state is not None:
                start = off
            elif before is not None and state is None:
                end = text.find("\n", off)
                self.blocks.append((start, len(text) if end < 0 else end))
        if state is not None:
            self.blocks.append((start, len(text)))
        self.starts = [b[0] for b in self.blocks]

    def splits_code(self, p: int) -> bool:
        """Whether a cut at offset `p` (its whitespace ignored) falls inside a code block or inside
        an include/markup line."""
        t = self.text
        w = t[max(0, p - 200):p]
        a = p - (len(w) - len(w.rstrip()))
        w = t[p:p + 200]
        b = p + (len(w) - len(w.lstrip()))

        i = bisect_right(self.starts, a) - 1
        if i >= 0 and self.blocks[i][0] < a and b < self.blocks[i][1]:
            return True
        if "\n" in t[a:b]:
            return False
        ls = t.rfind("\n", 0, a) + 1
        le = t.find("\n", b)
        line = t[ls:len(t) if le < 0 else le]
        return is_markup_line(line) and not line.strip().startswith("#") or opens_markup(line)

    def splits_table_row(self, p: int) -> bool:
        """Whether a cut at offset `p` falls strictly inside a table row (between its first and
        last character)."""
        t = self.text
        if p <= 0 or p >= len(t) or t[p - 1] == "\n" or t[p] == "\n":
            return False
        ls = t.rfind("\n", 0, p) + 1
        le = t.find("\n", p)
        line = t[ls:len(t) if le < 0 else le].strip()
        return line[:1] == "|" and _is_table_line(line) and bool(t[ls:p].strip()) and bool(t[p:le if le >= 0 else len(t)].strip())


def _splits_code_text(before: str, state: tuple[str, int] | None) -> bool:
    """Without the source: the cut after `before` falls inside a code block (a fence open at the
    end of `before`, `state`, or unfenced code: `in_code`) or inside an include/template line
    begun on its last line."""
    if state is not None:
        return True
    s = before.rstrip()
    nl = s.rfind("\n")
    return opens_markup(s[nl + 1:]) or in_code(s)


def in_code(s: str) -> bool:
    """Unfenced code or a diagram at the end of `s`: its last line is code and so is another of the
    last six, or three of the last six are (a Markdown heading is no comment line)."""
    last = s[s.rfind("\n") + 1:].rstrip()
    if not last or (last[-1] in ".!?" and not _code_line(last)):
        return False  # prose ends the text (the common case): no code is cut here
    tail = [x for x in s[-600:].split("\n")[-6:] if x.strip()]
    n = 0
    for x in tail:
        if _code_line(x):
            n += 1
            if n == 2:
                break
    if n < 2:
        return False  # the common case, decided without the markup tests
    tail = [x for x in tail if not _MD_HEADING.match(x.lstrip())]
    if not tail or is_markup_line(tail[-1]):
        return False  # a markup line (a closing shortcode, a fence) ends a block: no code is cut
    # a markup line (a closing fence, a shortcode) ends the block before it: only the lines after
    # the last one can be unfenced code still open at the cut
    marked = [j for j, x in enumerate(tail) if is_markup_line(x)]
    if marked:
        tail = tail[marked[-1] + 1:]
    n = sum(_code_line(x) for x in tail)
    return bool(tail) and ((_code_line(tail[-1]) and n >= 2) or n >= 3)


def _inside_line(before: str, after: str, sep: str) -> str | None:
    """What the line a cut falls in is, when the cut falls inside a line: "code" for a markup or
    include line (a link definition, an HTML line, a tab title, ``{* ... *}``), "table" for a table
    row (a split table; its cut cell text is judged like a cut sentence), else None. The line is rebuilt from both sides (`sep`: what the cut removed, " " when the
    export stripped it); a cut at a line break, or after a line that is a unit of its own, falls
    inside no line."""
    if not before or not after:
        return None
    a = before[before.rfind("\n") + 1:]
    nl = after.find("\n")
    b = after if nl < 0 else after[:nl]
    if not a.strip() or not b.strip():
        return None  # the cut is at a line break (only blanks between it and the break)
    s = a.strip()
    if s[:1] == "|" and not s.endswith("|") and _is_table_line(s + sep + b.strip()):
        return "table"  # the cut falls inside a cell of a table row
    if s.startswith("#") or (sep and (is_markup_line(a) or _is_table_line(s))):
        # a heading is judged as a unit; where the export stripped the cut's whitespace, a line that
        # is a unit of its own may have ended there (a known gap without a line break: inside it)
        return None
    line = a + sep + b
    return "code" if is_markup_line(line) or opens_markup(line) else None


def _moved_stop(head: str) -> bool:
    """The next chunk starts with the full stop of this one's last sentence (LangChain's
    keep_separator="start" with ". " among the separators): the sentence ended there."""
    h = head.lstrip()
    return bool(h) and h[0] in ".!?" and (len(h) == 1 or h[1] in " \t\n")


def judge_document(texts: Sequence[str], keys: Sequence[str], *, lang: str = "en",
                   source: str | None = None, vocab: Vocabulary | None = None,
                   keeps_whitespace: bool = False, punctuated: bool = True,
                   marks: Sequence[list[tuple[int, str, int, bool]]] | None = None,
                   structure: SourceStructure | None = None, wrapped: bool = True) -> list[CutFlags]:
    """Cut flags of one document's chunks (in document order); see the module docstring.

    Structure comes before sentences: a cut inside a code block or an include line splits code,
    a cut at a block boundary (a markup line, a fence, a heading, a list item, a paragraph break) is
    clean, and only the rest is judged by the sentence rules. `marks`: the fence lines of each
    chunk (`structure.fences`), when the texts given are shortened."""
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
    if source is not None and any(sp is not None for sp in spans):
        structure = structure or SourceStructure(source)
    for i, span in enumerate(spans):
        if span is None:
            continue
        s, e = span
        f = flags[i]
        f.located = True
        f.start_mid_word = 0 < s < len(source) and source[s - 1].isalnum() and source[s].isalnum()
        f.end_mid_word = 0 < e < len(source) and source[e - 1].isalnum() and source[e].isalnum()
        f.start_split_code = 0 < s < len(source) and structure.splits_code(s)
        f.end_split_code = 0 < e < len(source) and structure.splits_code(e)
        # a cut inside a table row splits the table (and the row's text: judged as a unit below)
        if structure.splits_table_row(s) or structure.splits_table_row(e):
            f.split_table = True
        if punctuated:
            f.start_mid_sentence = s > 0 and not f.start_split_code and \
                not _moved_stop(source[s:s + 2]) and \
                not is_boundary(source[max(0, s - CONTEXT):s], source[s:s + CONTEXT], lang)
            f.end_mid_sentence = e < len(source) and not f.end_split_code and \
                not _moved_stop(source[e:e + 2]) and \
                not is_boundary(source[max(0, e - CONTEXT):e], source[e:e + CONTEXT], lang)
        if i > 0 and spans[i - 1] is not None:
            ps, pe = spans[i - 1]
            if s < pe:
                f.overlap_words = len(source[s:pe].split())
    # edges judged from the chunks' text (the pairs the source did not settle); a document's own
    # start and end are no cuts
    fence = None       # the code fence open at the end of the previous chunk
    skip = 0           # where the previous chunk's overlap ends in this chunk (its fences counted)
    if all(sp is not None for sp in spans):
        return flags   # every edge was judged on the source
    for i in range(n):
        f = flags[i]
        cur = texts[i]
        mk = marks[i] if marks is not None else fences(cur)
        before_fence = fence
        fence = fence_state(mk, fence, skip)
        skip = 0
        if len(cur) > 2 * CONTEXT + WINDOW:
            cur = cur[:CONTEXT] + "\n\n" + cur[-(CONTEXT + WINDOW):]  # what the judgement reads
        if i + 1 == n:
            continue
        nxt = texts[i + 1][:WINDOW + CONTEXT]
        g = flags[i + 1]
        if f.located and g.located:
            continue
        a_start, b_end, words = overlap(cur, nxt)
        last_nl = cur.rfind("\n")
        if words and not keeps_whitespace and a_start > last_nl >= 0 and cur[a_start - 1].isspace() \
                and (_MD_HEADING.match(cur[last_nl + 1:].strip()) or
                     is_heading(cur[last_nl + 1:].strip().lstrip("#").strip())):
            # the tail of a heading line repeated as the next chunk's first words
            # ("## Access and Passwords" | "Passwords must ..."): a coincidence, not an overlap
            a_start, b_end, words = len(cur), 0, 0
        if not g.located:
            g.overlap_words = words
        if words:
            skip = b_end
            if not f.located:
                after = nxt[b_end:]
                f.end_mid_word = bool(cur.rstrip()) and cur.rstrip()[-1].isalnum() and after[:1].isalnum()
                inside = _inside_line(cur, after, "")
                f.end_split_code = inside == "code" or _splits_code_text(cur, fence)
                if inside == "table":
                    f.split_table = g.split_table = True
                if punctuated:
                    f.end_mid_sentence = not f.end_split_code and (inside == "table" or
                        not is_boundary(cur, after, lang, wrapped=wrapped) if after.strip() else
                        not is_boundary(cur, None, lang, wrapped=wrapped))
            if not g.located:
                before = cur[:a_start]
                g.start_mid_word = bool(before) and before[-1].isalnum() and nxt.lstrip()[:1].isalnum()
                # the next chunk's start lies inside this chunk (at a_start): the fence open there
                inside = _inside_line(before, cur[a_start:], "")
                g.start_split_code = inside == "code" or _splits_code_text(
                    before, _fence_at(mk, before_fence, a_start, texts[i], cur))
                if inside == "table":
                    g.split_table = True
                if punctuated:
                    g.start_mid_sentence = not g.start_split_code and bool(before.strip()) and (
                        inside == "table" or not is_boundary(before, nxt, lang, wrapped=wrapped))
            continue
        stripped = not keeps_whitespace or not (cur[-1:].isspace() or nxt[:1].isspace())
        gap_known = keeps_whitespace
        a, b = cur.rstrip(), nxt.lstrip()
        mid_word = False
        if a and b and a[-1].isalnum() and b[0].isalnum() and a == cur and b == nxt:
            last = a[a.rfind("\n") + 1:]
            if keeps_whitespace and (is_markup_line(last) or (is_heading(last) and b[0].isupper())):
                pass  # a heading or markup line ends there: a unit, not half a word
            elif keeps_whitespace:
                mid_word = True
            elif vocab is not None:
                mid_word = vocab.split_word(_last_frag(a), _first_frag(b))
        inside = _inside_line(cur, nxt, "" if keeps_whitespace else " ")
        code = inside == "code" or _splits_code_text(cur, fence)
        if inside == "table":
            f.split_table = g.split_table = True
        if _repeated_fence(a, b):
            # a fence line ending one chunk and starting the next: a splitter's overlap too short to
            # align; the next chunk's copy must not open (or close) the block again
            skip = len(nxt) - len(b) + len(b.split("\n", 1)[0])
        # a stop inside a token ("7.2." | "2", "example." | "com") where the export keeps its
        # whitespace: no whitespace at the cut means none was there
        token = keeps_whitespace and a == cur and b == nxt and a[-1:] in ".!?" and b[:1].isalnum()
        if punctuated:
            cut = not code and (mid_word or token or inside == "table" or (not _moved_stop(nxt) and not is_boundary(
                cur, nxt, lang, gap_known=gap_known and not stripped, wrapped=wrapped)))
            if not f.located:
                f.end_mid_sentence = cut
            if not g.located:
                g.start_mid_sentence = cut or (not code and starts_sentence(nxt, lang, connectives=False) is False
                                               and not _opens_block(nxt) and not _moved_stop(nxt))
        if not f.located:
            f.end_mid_word = mid_word
            f.end_split_code = code
        if not g.located:
            g.start_mid_word = mid_word
            g.start_split_code = code
    return flags


def _repeated_fence(a: str, b: str) -> bool:
    """`a` (a chunk, right-stripped) ends on the fence line `b` (the next, left-stripped) starts with."""
    last = a[a.rfind("\n") + 1:].strip()
    return bool(last) and last[0] in "`~" and is_fence(last) is not None and b.split("\n", 1)[0].strip() == last


def _opens_block(head: str) -> bool:
    """The chunk starts with a markup line (a fence, a marker, an include): a block starts there."""
    first = head.lstrip().split("\n", 1)[0]
    return is_markup_line(first)


def _fence_at(mk: list[tuple[int, str, int, bool]], before: tuple[str, int] | None, offset: int,
              full: str, shown: str) -> tuple[str, int] | None:
    """The fence open at `offset` of a chunk (offsets of `mk` are into the full text; `shown` may be
    the shortened text, whose head is the full text's head)."""
    if len(full) != len(shown) and offset > CONTEXT:
        offset += len(full) - len(shown)  # an offset in the shortened tail
    return fence_state([m for m in mk if m[0] < offset], before, 0)


def is_punctuated(texts: Iterable[str], sample: int = DECISION_CHUNKS) -> bool:
    """Whether the text has sentence punctuation to judge sentences by: at least
    `MIN_ENDS_PER_WORD` sentence ends (``. ! ?`` before whitespace or the end) per word over the
    first `sample` chunks taken together. Normalised IR text has none; short chunks of punctuated
    prose have some (judged per chunk, 32-character chunks of a novel would look unpunctuated)."""
    words = ends = n = 0
    for t in texts:
        n += 1
        words += len(t.split())
        ends += len(_ENDS.findall(t))
        if n >= sample:
            break
    return words == 0 or ends / words >= MIN_ENDS_PER_WORD


def keeps_whitespace(texts: Iterable[str], sample: int = DECISION_CHUNKS) -> bool:
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


#: a line break inside a chunk that continues prose: a line ending in a letter, digit or comma, then
#: a line starting in lower case (not a blank line, not a list item or marker)
_WRAPPED = re.compile(r"[^\W_,][,]?[ \t]*\n[ \t]*[^\W\d_A-Z\u00c0-\u00de]")
#: line breaks inside prose seen in the decision window before a corpus counts as hard-wrapped
MIN_WRAPPED_LINES = 20


def wraps_lines(texts: Iterable[str], sample: int = DECISION_CHUNKS) -> bool:
    """Whether the corpus hard-wraps its prose (a paragraph or list item continued on the next line
    in lower case, as many Markdown sources are written), by the line breaks the chunks show. Only
    then is a chunk that starts in lower case after a list item a continued item: in a corpus that
    never wraps, a line ends a unit and a lower-case start is a paragraph of its own."""
    n = 0
    for i, t in enumerate(texts):
        if i >= sample or n >= MIN_WRAPPED_LINES:
            break
        if "\n" in t:
            n += sum(1 for m in _WRAPPED.finditer(t) if m.group(0)[-1].islower())
    return n >= MIN_WRAPPED_LINES


@dataclass
class Decisions:
    """What the first `DECISION_CHUNKS` chunks of a stream decide for all its cuts: the language of
    the sentence rules, whether the text has sentence punctuation, whether the export keeps the
    whitespace at its cuts, whether the corpus hard-wraps its prose, and the vocabulary that tells a
    split word. The audit and `ragdiag
    chunks` decide on the same window, so the same records are judged the same way."""

    lang: str
    punctuated: bool
    keeps_whitespace: bool
    vocab: Vocabulary
    #: the corpus hard-wraps its prose (`wraps_lines`)
    wrapped: bool = True

    @classmethod
    def of(cls, texts: Sequence[str], lang: str = "auto") -> Decisions:
        window = list(texts[:DECISION_CHUNKS])
        language = lang
        if lang == "auto":
            from ragdiag.language import detect_language

            language = detect_language(window).code or "en"
        return cls(lang=language, punctuated=is_punctuated(window), keeps_whitespace=keeps_whitespace(window),
                   vocab=Vocabulary(window), wrapped=wraps_lines(window))
