"""Sentence and word boundaries at a cut point, for English and German text.

`is_boundary(before, after, lang)` decides whether a cut between the text
`before` and the text `after` falls between two sentences (or structural units:
headings, list items, table rows, paragraphs). `after` may be None when only one
side is known (a chunk's end without its neighbour): the decision then rests on
`before` alone. The rules are written for what chunk boundaries meet and are
tested on hand-made cases (tests/test_chunk_cuts.py):

- a sentence ends with ``. ! ? …`` (optionally followed by closing quotes or
  brackets: ``.”`` ``.“`` ``."`` ``.)``), not with ``;`` ``,`` or a bare ``:``;
- abbreviations do not end a sentence: English (Mr., Dr., St., e.g., i.e., No.,
  Fig., ...) and German (z. B., d. h., Nr., Abs., ca., bzw., vgl., ...), spaced
  or not, and single capital initials (``J.``);
- German ordinals (``am 1.`` | ``Januar``, ``bis zum 15.``) do not end a sentence
  when a date or cue word surrounds them;
- a lower-case continuation after a full stop means the stop was no sentence end;
- a line of its own that is a heading, list item or table row, and a blank line,
  are boundaries; a single line break inside wrapped prose is not.

Measured against pysbd on cut points labelled from the source in
benchmarks/chunks.md; pysbd itself is far too slow to run per chunk (see there).
"""

from __future__ import annotations

import re

from ragdiag.chunks.boundaries import _is_table_line, _standalone_heading, is_heading
from ragdiag.chunks.structure import is_markup_line, strip_closing

_EN_ABBREV = frozenset("""
mr mrs ms dr prof st jr sr mt ave inc ltd co corp dept est fig figs no nos vol vols pp approx
e.g i.e cf al ch sec art vs jan feb mar apr jun jul aug sep sept oct nov dec gen col lt sgt capt
rev hon messrs mme mlle u.s u.k a.m p.m ph.d b.a m.a op viz ca
""".split())
_DE_ABBREV = frozenset("""
z.b d.h u.a u.ä o.ä usw. bzw ca nr abs art vgl ggf evtl inkl ggü dr prof str hr fr bspw zzgl
z.t i.d.r sog jh mio mrd tel abb kap bd hrsg v.chr n.chr s.o s.u u.u i.a a.a.o lt gem ff
dipl ing st bzgl insb max min mind ziff lit anh
""".replace("usw.", "").split())
#: abbreviations that often end a sentence too: a boundary when a capital follows (or nothing is known)
_FINAL_ABBREV = frozenset({"etc", "usw", "ff", "inc", "ltd", "co", "corp"})
_DE_ORDINAL_CUE = frozenset("""
am zum vom bis ab seit den dem der des im zur vor nach per jeweils spätestens frühestens
""".split())
_MONTHS = frozenset("""
januar jänner februar märz april mai juni juli august september oktober november dezember
jan feb mär apr jun jul aug sep sept okt nov dez
""".split())
_CLOSERS = "\"'”’»«“)]"
_ENDERS = ".!?…"
_MD_HEADING = re.compile(r"#{1,6}\s+\S")
_WORD_END = re.compile(r"(\S+)\s*$")
_TWO_LAST = re.compile(r"(\S+)\s+(\S+)\s*$")
_INITIAL = re.compile(r"[A-ZÄÖÜ]\.")
_ORDINAL = re.compile(r"\d{1,3}\.")
_OPENERS = "\"'„“‘«»(["
#: list items: bullets, "1." "2a." "(3)" "a)" "iv." (German law text numbers items "2a.")
_LIST_ITEM = re.compile(r"(?:[-*•·–+]|\d{1,3}[a-z]?[.)]|[a-z][.)]|\([a-z0-9]{1,3}\)|[ivx]{1,4}\.)\s+\S|:[ \t]{2,}\S")
#: a list marker alone on its line (the item's text follows after the cut)
_BARE_MARKER = re.compile(r"[-*+•]|\d{1,3}[.)]")
#: a paragraph that opens with emphasis or inline code and ends on its closing mark: a field or label
#: line ("**Default**: `false`", "*Introduced in 2.0.0*"), a unit like a heading
_FIELD_LINE = re.compile(r"(?:\*\*?|__?|`)\S.{0,118}[*_`]")


def _last_line(text: str) -> tuple[str, bool]:
    """The last non-empty line of `text` and whether a line break follows it."""
    s = text.rstrip()
    broken = "\n" in text[len(s):]
    nl = s.rfind("\n")
    return (s[nl + 1:].strip() if nl >= 0 else s.strip()), broken


def _first_line(text: str) -> tuple[str, bool]:
    """The first non-empty line of `text` and whether a line break precedes it."""
    s = text.lstrip()
    broken = "\n" in text[: len(text) - len(s)]
    nl = s.find("\n")
    return (s[:nl].strip() if nl >= 0 else s.strip()), broken


def is_unit_line(line: str) -> bool:
    """A heading, list item or table row: a unit of its own, not a sentence to cut."""
    line = line.strip()
    return _marked(line) or is_heading(line)


_structural = is_unit_line


def _marked(line: str) -> bool:
    """A unit marked as such: a Markdown heading, a list item, a table row, an HTML tag line."""
    if not line:
        return True
    c = line[0]
    if c == "|" or _is_table_line(line):
        return True
    if c == "<" and line.endswith(">"):
        return True  # an HTML tag line (<table>, </tr>, ...)
    if c == "#" and _MD_HEADING.match(line):
        return True
    if (c in "-*•·–+(:" or c.isdigit() or c.islower()) and _LIST_ITEM.match(line) is not None:
        return True
    # a markup line of Markdown, mkdocs, MyST, Hugo, reStructuredText or AsciiDoc (structure.py)
    return is_markup_line(line)


def _abbreviation(before: str, lang: str) -> str:
    """'' when `before` (stripped, ending with '.') ends with no abbreviation; 'final' for an
    abbreviation that may end a sentence (etc.); 'abbr' otherwise."""
    before = before[-60:]
    m = _TWO_LAST.search(before)
    last = (m.group(2) if m else before.split()[-1] if before.split() else "").lstrip(_OPENERS)
    prev = m.group(1) if m else ""
    low = last.lower()
    core = low[:-1]
    if _INITIAL.fullmatch(last) and not (last == "I." and lang == "en"):
        # "z. B." "d. h." "u. a." read as two tokens; a lone capital initial ("J.") too
        return "abbr"
    if prev and len(prev) == 2 and prev[1] == "." and prev[0].isalpha() and len(last) == 2:
        joined = (prev + last).lower()[:-1]
        if joined in _DE_ABBREV or joined in _EN_ABBREV:
            return "abbr"
    if core in _FINAL_ABBREV:
        return "final"
    if core in _EN_ABBREV or core in _DE_ABBREV:
        return "abbr"
    if "." in core and core.replace(".", "").isalpha() and len(core) <= 6:
        return "abbr"  # z.B. d.h. u.s. e.g.
    if lang != "en" and _ORDINAL.fullmatch(last) and prev.lower() in _DE_ORDINAL_CUE:
        return "ordinal"
    return ""


def ends_sentence(before: str, lang: str = "en", after: str | None = None) -> bool:
    """Whether text that ends with `before` ends at a sentence end by its last characters alone
    (no structure): terminal punctuation, not an abbreviation or an ordinal, and (when `after`
    is known) not continued in lower case."""
    s = before.rstrip()
    if not s:
        return True
    if not s[-1].isalnum() and s[-1] not in _ENDERS:
        # emoji, shortcodes and closing markup after the end ("fertig. 😎", "**Done.**")
        s = strip_closing(s) or s
    t = s.rstrip(_CLOSERS)
    if not t:
        return True
    ch = t[-1]
    if ch not in _ENDERS:
        # an utterance broken off inside quotes ('you see--"') ends there
        return t != s and t.endswith(("--", "—", "–"))
    nxt = _first_char(after)
    if ch == ".":
        kind = _abbreviation(t, lang)
        if kind == "abbr":
            return False
        if kind == "ordinal":
            return False
        if kind == "final":
            return nxt is None or not (nxt.islower() or nxt.isdigit())
        if lang != "en" and _ORDINAL.fullmatch(_last_word(t)) and after is not None:
            word = _WORD_FIRST.match(after.lstrip())
            if word and word.group(0).lower() in _MONTHS:
                return False  # "am 1. Januar"
    if nxt is not None and nxt.islower():
        return False  # "Mr. Smith ... me,” he said" / "z. B. die": the stop ended nothing
    return True


_WORD_FIRST = re.compile(r"\w+")
#: an emoji shortcode opening a line (":material-incognito: Incognito ..."): decoration, not punctuation
_SHORTCODE_START = re.compile(r":[a-z0-9_+-]+:\s*(?=\S)")


def _first_char(after: str | None) -> str | None:
    if after is None:
        return None
    s = after.lstrip()
    if s[:1] == "[":
        return "["  # a link or a reference definition: its text's case says nothing about a sentence
    s = s.lstrip(_OPENERS)
    return s[:1] or None


def _last_word(s: str) -> str:
    m = _WORD_END.search(s[-60:])
    return m.group(1) if m else ""


def is_boundary(before: str, after: str | None, lang: str = "en", *, gap_known: bool = True,
                wrapped: bool = True) -> bool:
    """Whether a cut between `before` and `after` (None: unknown) falls between sentences or
    structural units. See the module docstring for the rules. `gap_known=False`: the
    whitespace at the cut was stripped (by the chunker), so a line break may have been there.
    `wrapped=False`: the corpus never hard-wraps its prose (`cuts.wraps_lines`), so a list item
    ended by a line break is not continued by a lower-case line after it."""
    before = before[-400:]
    if after is not None:
        after = after[:400]
    if not before.strip():
        return True
    if after is not None and not after.strip():
        return True
    last, broken_after = _last_line(before)
    gap = before[len(before.rstrip()):] + ("" if after is None else after[: len(after) - len(after.lstrip())])
    if "\n\n" in gap.replace("\r", "").replace(" ", "").replace("\t", ""):
        return True  # a paragraph break
    line_break = "\n" in gap or not gap_known
    if after is not None and gap_known and not gap and before[-1] in _ENDERS and after[0].isalnum():
        return False  # "7.2." | "2", "example." | "com": a stop inside a token ends no sentence
    if _BARE_MARKER.fullmatch(last) and before.rstrip()[: -len(last)].rstrip(" \t").endswith("\n"):
        return True  # a list marker alone on its line: the item after it starts a unit
    if line_break or after is None:
        if _marked(last) and not (wrapped and after is not None and _continued_item(last, after)):
            return True
        if _FIELD_LINE.fullmatch(last) and _own_paragraph(before, last) and not (
                after is not None and _continues_lower(after)):
            return True
        # a title-case "heading" the next chunk continues in lower case was a cut line
        if is_heading(last) and not (after is not None and _continues_lower(after)):
            return True
        # a short capitalised line of its own paragraph (a sentence-case heading), unless it stops
        # on a function word or a number, or the next chunk continues it
        s = before.strip()
        nl = s.rfind("\n")
        if nl > 0 and s[:nl].rstrip(" \t").endswith("\n") and (
                _standalone_heading(s, nl, last) or (last[-1:] in ")`*_]" and _standalone_heading(
                    s, nl, _inline_text(last)))) and not (after is not None and _continues_lower(after)):
            # the line read as text, its inline markup reduced: "[GitHub](https://...) -
            # [Documentation](https://...)" is the title-like line "GitHub - Documentation"
            return True
    if after is not None:
        first, _ = _first_line(after)
        if line_break and first and (_marked(first) or (is_heading(first) and not first[0].islower())):
            return True
        if line_break and last.endswith(":"):
            return True  # "... the following:" then a list or table
        if line_break and last.endswith(("--", "—", ":")) and first[:1] in "\"„“«»":
            return True  # 'I said--' then a new paragraph of dialogue
    return ends_sentence(before, lang, after)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*(?:\s[^)]*)?\)")


def _inline_text(line: str) -> str:
    """`line` with its inline Markdown reduced to text: links to their text, code spans and
    emphasis to their content."""
    t = _LINK.sub(lambda m: m.group(1), line)
    return t.replace("`", "").replace("**", "").replace("__", "").strip("*_ ") or line


def _continued_item(last: str, after: str) -> bool:
    """A list item whose text the next line continues in lower case (a hard-wrapped item, its
    continuation indented or not): the line break inside it is no unit boundary."""
    if not _LIST_ITEM.match(last):
        return False
    first, _ = _first_line(after)
    return _continues_lower(after) and not _marked(first)


def _own_paragraph(before: str, last: str) -> bool:
    """The last line of `before` is the text's first line or follows a blank line."""
    s = before.rstrip()
    head = s[: len(s) - len(last)].rstrip(" \t")
    return not head.strip() or head.endswith("\n\n") or head.replace(" ", "").replace("\t", "").endswith("\n\n")


def _continues_lower(after: str) -> bool:
    c = _first_char(after)
    return c is not None and c.islower()


def starts_sentence(head: str, lang: str = "en", *, connectives: bool = True) -> bool | None:
    """Whether a chunk that starts with `head` starts a sentence, by its first characters alone:
    False for a lower-case start (not a list item) or a start with punctuation, True for a
    structural first line, None when the first word cannot tell (a capitalised word: a German
    noun or a name may continue a sentence). `connectives=False`: a capitalised "And", "Und" ...
    may start a sentence (after a chunk that ended one: literature does)."""
    first, _ = _first_line(head)
    if not first:
        return True
    c = first[0]
    if c.islower():
        return bool(len(first) > 2 and first[1] in ".)" and _LIST_ITEM.match(first))
    if c == ":" and _SHORTCODE_START.match(first):
        return starts_sentence(first[_SHORTCODE_START.match(first).end():], lang, connectives=connectives)
    if c in ",;:.)]}»”’-–—…/&%" and not (c in "-–:" and _LIST_ITEM.match(first)):
        return False
    if _structural(first):
        return True
    if connectives and first.split(" ", 1)[0] in ("And", "Or", "Nor", "Und", "Oder", "Sowie", "Bzw.", "Whereby",
                                  "Wobei", "Sodass"):
        return False
    return None
