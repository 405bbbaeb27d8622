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
    """Class of a chunk's last line: table | heading | list | sentence | mid | empty."""
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
                 "first_number", "last_number", "overlap", "split_table", "list_cut", "unpunct")


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
    c.unpunct = not any(ch in _FINAL for ch in s)
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
    if start == "list":
        m = _NUMBER_PREFIX.match(first)
        c.first_number = int(m.group(1)) if m else None
    if end == "list":
        m = _NUMBER_PREFIX.match(last)
        c.last_number = int(m.group(1)) if m else None
    c.head = s[:HEAD_CHARS].replace("\n", " ")
    c.tail = s[-HEAD_CHARS:].replace("\n", " ") if len(s) > HEAD_CHARS else c.head
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

