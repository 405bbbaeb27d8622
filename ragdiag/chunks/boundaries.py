"""Chunk boundary classification: what one chunk's first and last line are, and what a chunk's
edges look like.

A fast line/regex classifier (no sentence splitter runs per chunk):
`classify_start` / `classify_end` put a line into table | heading | list |
sentence | mid | empty, `is_heading` tells headings from prose. `_summarise`
reduces one chunk to the compact summary the analyser buffers per open
document; `_overlap_words` measures the overlap of two neighbouring chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MIN_OVERLAP_WORDS = 3
HEAD_CHARS = 800

_FINAL = frozenset(".!?:;\"')”’»«…]")
_FINAL_CHAR = re.compile("[" + re.escape("".join(sorted(_FINAL))) + "]")
#: a chunk this long without any sentence punctuation is normalised text, not a cut sentence
UNPUNCTUATED_MIN_CHARS = 80
_MID_START_PUNCT = frozenset(",;:.)]}»”’-–—…/&%")
_CONNECTIVES_CAP = frozenset({"And", "Or", "Nor", "Und", "Oder", "Sowie", "Bzw.", "Whereby",
                              "Thereby", "Wobei", "Sodass"})
_TITLE_STOP = frozenset({"and", "or", "of", "the", "for", "to", "in", "on", "with", "a", "an",
                         "at", "by", "und", "oder", "der", "die", "das", "des", "den", "dem",
                         "von", "vom", "für", "zur", "zum", "mit", "im", "am", "bei",
                         "&", "-", "–", "vs.", "per"})
_MD_HEADING = re.compile(r"#{1,6}\s+\S")
_BOLD_LINE = re.compile(r"\*\*[^*]{2,}\*\*:?$")
_NUM_PREFIX = re.compile(r"(?:\d{1,3}(?:\.\d{1,3})*\.?|§\s*\d+[a-z]?|[IVXL]{1,5}\.|[A-Z]\.)\s+(?=\S)")
_LIST_ITEM = re.compile(r"(?:[-*•·–+]|\d{1,3}[.)]|[a-z][.)]|\([a-z0-9]{1,3}\))\s+\S")
_LIST_START = frozenset("-*•·–+(")
_NUMBER_PREFIX = re.compile(r"(\d{1,3})[.)]\s")
_TABLE_SEP = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")


def _is_table_line(s: str) -> bool:
    return s.count("|") >= 2 and (s[:1] == "|" or s[-1:] == "|")


def _is_sep_line(s: str) -> bool:
    return "---" in s and _TABLE_SEP.fullmatch(s) is not None


def _title_case(words: Sequence[str]) -> bool:
    seen = 0
    for w in words:
        c = w.lstrip("(\"'„“")[:1]
        if not c:
            continue
        if c.isalpha():
            if c.isupper():
                seen += 1
            elif w.lower() not in _TITLE_STOP:
                return False
    return seen > 0


def is_heading(line: str) -> bool:
    """Whether one line looks like a heading rather than prose.

    Markdown ``#`` headings and ``**bold**`` lines; numbered (``4.``, ``2.1``,
    ``§ 5``, ``IV.``) title-case lines of up to 10 words; ALL-CAPS lines; title-case
    lines of 2 to 8 words. Never a line ending with ``. ! ? ; ,``.
    """
    s = line.strip()
    if not s or len(s) > 100 or "|" in s:
        return False
    c = s[0]
    if c == "#" and _MD_HEADING.match(s):
        return True
    if s[-1] in ".!?;,":
        return False
    if c == "*" and _BOLD_LINE.fullmatch(s):
        return True
    if c.islower():
        return False
    m = _NUM_PREFIX.match(s) if (c.isdigit() or c in "§IVXLABCDEFGH") else None
    rest = s[m.end():] if m else s
    words = rest.split()
    if words and len(words) <= 16 and rest.isupper() and sum(ch.isalpha() for ch in rest) >= 3:
        return True  # an all-caps title line ("CHAPTER XV: ON THE LACK OF INCENTIVE TO LABOUR")
    if not words or len(words) > (10 if m else 8):
        return False
    if m:
        return rest[0].isupper() and _title_case(words)
    if rest.isupper() and sum(ch.isalpha() for ch in rest) >= 3:
        return True
    return len(words) >= 2 and rest[0].isupper() and _title_case(words)


def classify_start(first_line: str) -> str:
    """Class of a chunk's first line: table | heading | list | sentence | mid | empty (and, for a
    whole chunk without sentence punctuation, `_summarise` says unpunctuated)."""
    f = first_line.strip()
    if not f:
        return "empty"
    if f[0] == "|" or ("|" in f and _is_table_line(f)):
        return "table"
    c = f[0]
    if c.islower():
        return "list" if len(f) > 2 and f[1] in ".)" and _LIST_ITEM.match(f) else "mid"
    if is_heading(f):
        return "heading"
    if (c in _LIST_START or c.isdigit()) and _LIST_ITEM.match(f):
        return "list"
    if c in _MID_START_PUNCT:
        return "mid"
    sp = f.find(" ")
    if (f[:sp] if sp > 0 else f) in _CONNECTIVES_CAP:
        return "mid"
    return "sentence"


def classify_end(last_line: str) -> str:
    """Class of a chunk's last line: table | heading | list | sentence | mid | empty (`_summarise`
    adds code, and unpunctuated for normalised text)."""
    s = last_line.strip()
    if not s:
        return "empty"
    if _is_table_line(s):
        return "table"
    c = s[0]
    listish = (c in _LIST_START or c.isdigit()) and _LIST_ITEM.match(s) is not None
    if listish and c.isdigit() and is_heading(s):
        return "heading"
    if listish:
        return "list"
    if s[-1] in _FINAL:
        return "sentence"
    if is_heading(s):
        return "heading"
    return "mid"


class _Chunk:
    __slots__ = ("seq", "order", "key", "start", "end", "head", "tail", "first_line", "last_line",
                 "starts_table", "table_header", "ends_table", "header_no_body", "heading_only",
                 "first_number", "last_number", "overlap", "split_table", "list_cut", "unpunct",
                 "next_first", "prev_last", "raw", "marks", "cite")


#: words a title does not end on but a cut line does (English and German function words)
_CUT_WORDS = _TITLE_STOP | frozenset({
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would", "can", "may",
    "must", "shall", "should", "this", "that", "these", "those", "it", "its", "their", "our", "your",
    "as", "than", "not", "no", "from", "into", "over", "under", "after", "before", "which", "who",
    "ist", "sind", "war", "waren", "wird", "werden", "wurde", "hat", "haben", "kann", "muss", "soll",
    "ein", "eine", "einer", "eines", "einem", "einen", "es", "sie", "er", "wir", "ihr", "als", "wie",
    "dass", "nicht", "auch", "nach", "aus", "über", "unter", "durch", "dieser", "diese", "dieses",
    "sich", "auf", "an", "zu", "um", "so", "noch", "nur", "bis", "ob", "wenn", "weil"})
_CODE_END = frozenset("{}([=")
_BOX = re.compile("[\u2500-\u257f►◄▲▼]")


def _standalone_heading(s: str, nl: int, last: str) -> bool:
    """The last line stands alone (the whole chunk, or after a blank line or a line that ends a
    sentence) and reads as a title: short, capitalised or numbered, no final punctuation."""
    if nl > 0:
        before = s[:nl].rstrip(" \t")
        if not (before.endswith("\n") or (before and before[-1] in _FINAL)):
            return False
    words = last.split()
    if not (0 < len(words) <= 12 and len(last) <= 100 and (last[0].isupper() or last[0].isdigit())):
        return False
    # a line that stops on a function word or a number was cut: "For Muster this is", "with
    # effect from 1", "Rechnungen müssen die" (a false heading would hide a cut: the worse error)
    tail = words[-1].lower()
    return tail not in _CUT_WORDS and not tail.replace(".", "").replace(",", "").isdigit() and len(tail) > 2


def _looks_like_code(s: str, last: str) -> bool:
    """The chunk ends inside code or a diagram: its last line is code and so is another of the
    last six, or three of the last six are."""
    tail = [x for x in s.split("\n")[-6:] if x.strip()]
    n = sum(_code_line(x) for x in tail)
    return (_code_line(last) and n >= 2) or n >= 3


def _code_line(line: str) -> bool:
    """A line of code or of a box diagram (what no sentence classifier should judge)."""
    s = line.rstrip()
    if not s:
        return False
    if _BOX.search(s) is not None:
        return True
    return s[-1] in _CODE_END or (s[-1] in ");," and ("(" in s or "=" in s or line.startswith("    "))) \
        or s.lstrip().startswith(
        ("return ", "def ", "const ", "import ", "from ", "//", "#", "}", "for ", "if "))


def _summarise(seq: int, order: Any, key: str, s: str) -> _Chunk:
    """Classify one chunk's (stripped, non-empty) content into a compact summary."""
    c = _Chunk()
    c.seq, c.order, c.key = seq, order, key
    c.overlap = 0
    c.split_table = c.list_cut = ""  # excerpts of the cut, "" when not cut
    nl = s.find("\n")
    first = s if nl < 0 else s[:nl].strip()
    nl = s.rfind("\n")
    last = s if nl < 0 else s[nl + 1:].strip()
    c.first_line, c.last_line = first, last
    c.start = start = classify_start(first)
    c.end = end = classify_end(last)
    if end == "mid":
        if _standalone_heading(s, nl, last):
            # a short line of its own paragraph: a sentence-case heading (German, modern English);
            # `_finish` turns it back into "mid" when the next chunk continues it
            c.end = end = "heading"
        elif nl > 0 and _looks_like_code(s, last):
            c.end = end = "code"  # a cut inside code or a diagram: no sentence to cut
    c.unpunct = _FINAL_CHAR.search(s) is None
    if end == "mid" and c.unpunct and len(s) >= UNPUNCTUATED_MIN_CHARS:
        # normalised text (punctuation stripped, often lower-cased, as in many IR collections)
        # has no sentence boundaries to cut: neither end can be judged
        c.end = end = "unpunctuated"
        if start == "mid":
            c.start = start = "unpunctuated"
    c.starts_table = c.table_header = c.ends_table = c.header_no_body = False
    if "|" in s:
        lines = [ln for ln in (x.strip() for x in s.split("\n")) if ln]
        flags = [_is_table_line(ln) for ln in lines]
        # a row cut mid-way: the chunk starts with text that ends with "|"
        partial = not flags[0] and lines[0].endswith("|") and (len(lines) == 1 or flags[1])
        first_tbl = 0 if partial else next((i for i, f in enumerate(flags) if f), None)
        if first_tbl is not None:
            c.starts_table = first_tbl == 0
            c.table_header = (not partial and not _is_sep_line(lines[first_tbl])
                              and first_tbl + 1 < len(lines) and _is_sep_line(lines[first_tbl + 1]))
        if flags[-1]:
            c.ends_table = True
            j = len(lines) - 1
            while j > 0 and flags[j - 1]:
                j -= 1
            c.header_no_body = len(lines) - j <= 2 and _is_sep_line(lines[-1])
    c.heading_only = start == "heading" and end == "heading" and (
        first == last or all(is_heading(ln) for ln in s.split("\n") if ln.strip()))
    c.first_number = c.last_number = None
    c.next_first = c.prev_last = ""  # the neighbours' edge lines, for examples in context
    if start == "list":
        m = _NUMBER_PREFIX.match(first)
        c.first_number = int(m.group(1)) if m else None
    if end == "list":
        m = _NUMBER_PREFIX.match(last)
        c.last_number = int(m.group(1)) if m else None
    # whitespace runs collapsed: "contract \n includes" is two words in either chunk
    c.head = " ".join(s[:HEAD_CHARS].split())
    c.tail = " ".join(s[-HEAD_CHARS:].split()) if len(s) > HEAD_CHARS else c.head
    return c


def _overlap_words(tail: str, head: str) -> int:
    """Words in the longest suffix of `tail` that is a prefix of `head` (>= MIN_OVERLAP_WORDS).

    Both are whitespace-translated slices (newlines as spaces) of neighbouring chunks.
    """
    i = -1
    for _ in range(MIN_OVERLAP_WORDS):
        i = head.find(" ", i + 1)
        if i < 0:
            break
    probe = head if i < 0 else head[:i]
    if len(probe.split()) < MIN_OVERLAP_WORDS:
        return 0
    pos = tail.find(probe)
    while pos >= 0:
        if pos == 0 or tail[pos - 1] == " ":
            suffix = tail[pos:]
            if head.startswith(suffix) and (len(head) == len(suffix) or head[len(suffix)] == " "):
                return len(suffix.split())
        pos = tail.find(probe, pos + 1)
    return 0

