"""Document structure at a cut, before any sentence rule: which lines are markup units, where code
blocks open and close, and what a chunk's edge line is.

Documentation is written in Markdown (CommonMark, mkdocs/pymdownx, MyST, Docusaurus, Hugo),
reStructuredText or AsciiDoc. Their block syntaxes differ, but they fall into a few classes, and
the rules here are written per class, not per idiom:

- **fences**: a line that opens a block whose inside is not prose -- backtick or tilde code
  fences (``` ~~~). Inside one, a cut splits code (`split_code`), never a sentence. (AsciiDoc's
  ``----`` delimiters are markup lines only: the same run underlines setext and rST headings.)
- **markup lines**: a line that is a unit of its own and no sentence. Runs of one punctuation
  character (``///`` ``!!!`` ``???`` ``:::`` ``===`` ``***`` ``____`` ``|===``, setext and rST
  underlines), directive lines (``.. note::``, ``.. literalinclude:: x``, AsciiDoc
  ``include::x[]`` and ``[source,python]``), includes and template tags enclosed by a bracket pair
  (``{* ... *}``, ``{! ... !}``, ``{% ... %}``, ``{{< ... >}}``, ``<!-- ... -->``), snippet lines
  (``--8<-- "x"``), link reference and footnote definitions (``[x]: https://...``, ``[^1]:``),
  admonition openers with a title (``!!! note "Title"``, ``/// tip | Title``,
  ``:::note``, ``NOTE:`` in AsciiDoc), HTML tag lines and emoji or shortcode lines. A cut at the
  end of a markup line is a block boundary; a cut inside one (an opener without its closer) splits
  it.
- **openers**: the markup lines that introduce the block after them (an admonition title, a
  directive, a content tab): a chunk that ends on one has separated a title from its body.

`ends_with_closing` strips what may follow a sentence's end without ending the sentence later
(emoji, shortcodes ``:tada:``, closing emphasis, closing HTML tags, footnote references, attribute
lists), so ``"... fertig. 😎"`` and ``"**Done.**"`` end a sentence.
"""

from __future__ import annotations

import re
import unicodedata

#: a fence line: three or more backticks or tildes (indented up to three spaces, or any depth
#: inside a list item or an admonition body)
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([^`\s][^`]*)?$")
_FENCE_START = re.compile(r"^[ \t]*(?:```|~~~)", re.M)
#: a run of one punctuation character (at least three) opening the line
_RUN = re.compile(r"([/!?:=*_+#^~\-|<>])\1{2,}|\.{4,}$")
_ENCLOSED = (("{*", "*}"), ("{!", "!}"), ("{%", "%}"), ("{{", "}}"), ("<!--", "-->"), ("[[", "]]"),
             ("{#", "#}"))
_DIRECTIVE = re.compile(r"(?:\[[^\]\s][^\]]*\]:\s*\S+(?:\s+[\"'(].*)?$|\[[^\]\s][^\]]*\]:$|\[\^[^\]]+\]:|\.\.\s+[\w:-]+::|[a-z][\w-]*::\S*\[[^\]]*\]$|\[[\w ,.=\"'#%-]+\]$|"
                        r"(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s|:{3,}\s*\{?\w|--8<--)")
_ADMONITION_OPEN = re.compile(r"(?:!!!|\?\?\?\+?|///|:{3,}|===\+?)\s*\S")
_HTML_LINE = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>.*</?[A-Za-z]?[\w-]*\s*>?$|</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>$")
_SHORTCODE = re.compile(r":[a-z0-9_+-]+:")
_ALNUM = re.compile(r"[^\W_]")  # what str.isalnum() accepts
_RST_OPENER = re.compile(r"\.\.\s+[\w-]+::\s*$|\.\.\s+(?:note|tip|warning|important|caution|danger|admonition|"
                         r"seealso|attention|hint|error)::")
_ATTR_OPENER = re.compile(r"\[(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION|source[^\]]*)\]$")
_HUGO_OPENER = re.compile(r"\{\{[<%]\s*[a-z][\w-]*(?:\s[^/]*)?[%>]\}\}$")
_JINJA_OPENER = re.compile(r"\{%\s*(?:block|if|for|tab|note|warning|raw)\b")
_ENCLOSED_FIRST = frozenset(a[0] for a, _ in _ENCLOSED)
_TAG = re.compile(r"</?\w[^<>]{0,80}>")
_FOOTNOTE = re.compile(r"\[\^[^\]]{1,20}\]")
_ATTR_LIST = re.compile(r"\{:?\s*[#.][^{}]{0,60}\}")
_CLOSING_MARKS = "*_~`"
_ADMONITION_WORDS = ("NOTE: ", "TIP: ", "IMPORTANT: ", "WARNING: ", "CAUTION: ")


def is_fence(line: str) -> tuple[str, int, bool] | None:
    """(fence character, run length, has an info string) when `line` is a fence line, else None."""
    s = line.rstrip()
    if len(s) < 3 or s.lstrip()[:1] not in "`~":
        return None
    m = _FENCE.match(s)
    if m is None:
        return None
    run = m.group(1)
    return run[0], len(run), bool(m.group(2))


def fences(text: str) -> list[tuple[int, str, int, bool]]:
    """(offset of the line, character, run length, has info) of every fence line in `text`."""
    out: list[tuple[int, str, int, bool]] = []
    if "```" not in text and "~~~" not in text:
        return out
    # only a line whose run starts after spaces and tabs can be a fence (`_FENCE`)
    for m in _FENCE_START.finditer(text):
        pos = m.start()
        end = text.find("\n", pos)
        f = is_fence(text[pos:] if end < 0 else text[pos:end])
        if f is not None:
            out.append((pos, *f))
    return out


def fence_state(marks: list[tuple[int, str, int, bool]], state: tuple[str, int] | None,
                start: int = 0) -> tuple[str, int] | None:
    """The open fence after the fence lines `marks` at or after offset `start`, given the open
    fence before them (None: outside any fence). A fence closes on a line of the same character, at
    least as long, without an info string."""
    for off, ch, n, info in marks:
        if off < start:
            continue
        if state is None:
            state = (ch, n)
        elif ch == state[0] and n >= state[1] and not info:
            state = None
    return state


def is_markup_line(line: str) -> bool:
    """A unit of its own that is no sentence (see the module docstring): fences, markers,
    directives, includes, template tags, admonition openers, HTML tag lines, emoji lines."""
    s = line.strip()
    if not s:
        return False
    c = s[0]
    if c.isalnum():
        # prose, unless an AsciiDoc admonition paragraph or macro line ("NOTE: ...", "include::x[]")
        if c.isupper():
            return s.startswith(_ADMONITION_WORDS)
        return c.islower() and "::" in s and _DIRECTIVE.match(s) is not None
    if _RUN.match(s) or is_fence(s):
        return True
    for a, b in _ENCLOSED:
        if s.startswith(a) and s.endswith(b):
            return True
    if _DIRECTIVE.match(s) or (s.startswith("--8<--")):
        return True
    if c == "<" and _HTML_LINE.match(s):
        return True
    if _ALNUM.search(s) is not None and (":" not in s or _ALNUM.search(_SHORTCODE.sub("", s)) is not None):
        return False  # a letter or digit outside shortcodes: no decoration line
    return _symbols_only(s)


def _symbols_only(s: str) -> bool:
    """Emoji, symbols and shortcodes only (a decoration line)."""
    rest = _SHORTCODE.sub("", s).strip()
    return not rest or all(unicodedata.category(ch)[0] in "SZ" or ch in "\ufe0f\u200d" for ch in rest)


def opens_markup(line: str) -> bool:
    """An include or template tag begun on this line and not closed on it (a cut inside it)."""
    s = line.strip()
    if s[:1] not in _ENCLOSED_FIRST:
        return False
    for a, b in _ENCLOSED:
        if s.startswith(a) and not s.endswith(b):
            return True
    return False


def is_opener(line: str) -> bool:
    """A markup line that introduces the block after it: an admonition or tab title, a directive
    (``.. note::``), a block attribute line (``[source,python]``), a Hugo/Jinja opening tag."""
    s = line.strip()
    if not s:
        return False
    if _ADMONITION_OPEN.match(s):
        return True
    c = s[0]
    if c == "." and _RST_OPENER.match(s):
        return True
    if c == "[" and _ATTR_OPENER.match(s):
        return True
    if c == "{" and _HUGO_OPENER.match(s) and "{{< /" not in s and "{{% /" not in s:
        return True
    return c == "{" and _JINJA_OPENER.match(s) is not None


def strip_closing(s: str) -> str:
    """`s` (right-stripped) without what may follow a sentence's end: emoji and symbols, emoji
    shortcodes, closing emphasis and code marks, closing HTML tags, footnote references, attribute
    lists, a Markdown hard line break (trailing backslash)."""
    while s:
        t = s.rstrip()
        if not t:
            return t
        ch = t[-1]
        cat = unicodedata.category(ch)
        if cat[0] == "S" and ch not in "$%+<=>^|~" or ch in "\ufe0f\u200d\\" or cat == "Mn":
            s = t[:-1]
            continue
        if ch in _CLOSING_MARKS:
            s = t[:-1]
            continue
        if ch == ":":
            m = re.search(r":[a-z0-9_+-]+:$", t)
            if m and m.start() > 0:
                s = t[:m.start()]
                continue
            return t
        if ch == ">":
            m = re.search(r"</\w+\s*>$|<br\s*/?>$", t)
            if m:
                s = t[:m.start()]
                continue
            return t
        if ch == "]":
            m = _FOOTNOTE.search(t[-24:])
            if m and t.endswith(m.group(0)):
                s = t[: len(t) - len(m.group(0))]
                continue
            return t
        if ch == "}":
            m = re.search(r"\{:?\s*[#.][^{}]{0,60}\}$", t)
            if m:
                s = t[:m.start()]
                continue
            return t
        return t
    return s
