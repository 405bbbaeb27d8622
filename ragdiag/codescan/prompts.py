"""Rules in prompts: word-count ranges for a query, and "this one query feeds every stage".

    rules = prompt_rules("Write 5 to 12 words.", file="prompts/query_writer.txt")
    contradictions(rules_a + rules_b)   # pairs of length rules whose ranges differ

Recognised length rules: "2 to 7 words", "between 5 and 12 words", "5-12 words",
"five to twelve keywords", "at most 8 words", "no more than 8 terms", "at least
3 words". Sole-input statements: "sole input", "only input", "all three
stages", "keyword, vector and semantic", "same query for all/every stage".
"""

from __future__ import annotations

import re
from itertools import combinations

from ragdiag.codescan.model import PromptRule

#: Suffixes of files read as prompts.
PROMPT_SUFFIXES = (".txt", ".md", ".prompt", ".jinja", ".j2", ".jinja2", ".tmpl", ".mustache")
#: Documentation files that are not prompts (they describe rules rather than state them).
NOT_PROMPT_NAMES = re.compile(r"^(readme|changelog|changes|license|licence|contributing|authors|"
                              r"notice|history|security|code_of_conduct|requirements)", re.I)

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
                 "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
                 "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_NUM = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?:key)?(?:words?|terms?|tokens?)\b"
_RANGE = re.compile(rf"(?:between\s+)?\b{_NUM}\s*(?:to|-|–|—|and)\s*{_NUM}\s+{_UNIT}", re.I)
_MAX = re.compile(rf"(?:at\s+most|no\s+more\s+than|not\s+more\s+than|up\s+to|maximum\s+of|max(?:imum)?\.?|"
                  rf"under|fewer\s+than|less\s+than|at\s+max)\s+{_NUM}\s+{_UNIT}"
                  rf"|\b{_NUM}\s+{_UNIT}\s+or\s+(?:fewer|less)", re.I)
_MIN = re.compile(rf"(?:at\s+least|no\s+fewer\s+than|minimum\s+of|min(?:imum)?\.?|more\s+than)\s+{_NUM}\s+{_UNIT}"
                  rf"|\b{_NUM}\s+{_UNIT}\s+or\s+more", re.I)
_SOLE = re.compile(r"\bsole\s+input\b|\bonly\s+input\b|\ball\s+(?:three|3)\s+(?:stages|channels|legs|steps)\b"
                   r"|\bkeyword\s*(?:search)?\s*,\s*vector\s*(?:search)?\s*,?\s*and\s+(?:the\s+)?semantic\b"
                   r"|\bsame\s+(?:query|text|string)\b[^.\n]{0,40}\b(?:all|every|each)\s+(?:stage|channel|leg)s?\b"
                   r"|\bone\s+query\b[^.\n]{0,30}\b(?:all|every)\s+(?:stage|channel|leg)s?\b", re.I)


_UNIT_RE = re.compile(_UNIT, re.I)
_ANY_NUM = re.compile(r"\d|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.I)


def _in_windows(rx: re.Pattern[str], text: str, windows: list[tuple[int, int]]):
    """`rx.finditer(text)` limited to `windows` (matches keep their positions in `text`, each once)."""
    seen: set[tuple[int, int]] = set()
    for start, end in windows:
        for m in rx.finditer(text, start, end):
            if m.span() not in seen:
                seen.add(m.span())
                yield m


def _num(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence (or line) around a match, trimmed."""
    nl = text.rfind("\n", 0, start)
    dot = text.rfind(". ", 0, start)
    left = max(nl + 1, dot + 2 if dot != -1 else 0)
    ends = [i for i in (text.find("\n", end), text.find(". ", end) + 1 if text.find(". ", end) != -1 else -1)
            if i != -1]
    right = min(ends) if ends else len(text)
    return " ".join(text[left:right].split())


def prompt_rules(text: str, *, file: str, first_line: int = 1) -> list[PromptRule]:
    """Length and sole-input rules in prompt `text` (line numbers start at `first_line`)."""
    out: list[PromptRule] = []

    def line_of(pos: int) -> int:
        return first_line + text.count("\n", 0, pos)

    taken: list[tuple[int, int]] = []
    # the length rules all end in a unit word: search only the windows before those words
    windows: list[tuple[int, int]] = []
    for u in _UNIT_RE.finditer(text):
        start, end = max(0, u.start() - 90), u.end()
        if not _ANY_NUM.search(text, start, u.start()):
            continue
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    for m in _in_windows(_RANGE, text, windows):
        lo, hi = _num(m.group(1)), _num(m.group(2))
        if lo > hi:
            continue
        taken.append(m.span())
        out.append(PromptRule(file, line_of(m.start()), _sentence(text, *m.span()), "length", lo, hi))
    for rx, is_max in ((_MAX, True), (_MIN, False)):
        for m in _in_windows(rx, text, windows):
            if any(a <= m.start() < b for a, b in taken):
                continue
            n = _num(next(g for g in m.groups() if g))
            out.append(PromptRule(file, line_of(m.start()), _sentence(text, *m.span()), "length",
                                  None if is_max else n, n if is_max else None))
    seen_lines: set[int] = set()
    low = text.lower()
    sole = any(w in low for w in ("sole", "only input", "stage", "channel", "leg", "semantic", "same", "one query"))
    for m in (_SOLE.finditer(text) if sole else ()):
        line = line_of(m.start())
        if line in seen_lines:
            continue
        seen_lines.add(line)
        out.append(PromptRule(file, line, _sentence(text, *m.span()), "sole_input"))
    out.sort(key=lambda r: (r.line, r.kind))
    return out


def contradictions(rules: list[PromptRule] | tuple[PromptRule, ...]) -> list[tuple[PromptRule, PromptRule]]:
    """Pairs of length rules whose word ranges differ (each unordered pair once, in rule order)."""
    lengths = [r for r in rules if r.kind == "length"]
    return [(a, b) for a, b in combinations(lengths, 2) if a.word_range != b.word_range]


def is_prompt_file(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(PROMPT_SUFFIXES) and not NOT_PROMPT_NAMES.match(lower)
