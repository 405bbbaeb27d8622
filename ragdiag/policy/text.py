"""Channel texts derived from a question: the keyword query for BM25, codes for exact matching.

A hybrid request has up to three channels (keyword leg, vector legs, semantic
reranker) and each may want a different text. `keywords()` derives the
keyword channel deterministically, so a profile can say `keyword_text =
"keywords"` and an audit can show exactly what BM25 was given:

    >>> keywords("What was the revenue of Nordlicht GmbH in 2023?")
    'revenue Nordlicht GmbH 2023'
    >>> keywords('What does "pump dry run" mean for E-4021?')
    '"pump dry run" E-4021'

Rules: quoted phrases stay phrases (in double quotes, which Azure's simple
and full syntax read as a phrase); codes such as `E-4021` or `MX-2231` and
numbers are kept as written; question words, English and common German
stopwords, "how much"-style question phrases and filler words ("tell",
"explain", "bitte", "vs") are dropped; all other words keep their original
case and order, each kept once (case-insensitively). When nothing is left
but the question had content, the stripped question itself is returned: a
keyword leg must never go silently empty.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

CODE_PATTERN = r"[A-Z]{1,4}-\d{3,6}(?:-[A-Z0-9]{1,6})*"
"""An error code, SKU or id: 1-4 capital letters, a hyphen, 3-6 digits, optional suffixes."""

_CODE = re.compile(rf"(?<![\w-]){CODE_PATTERN}(?![\w-])")

_ENGLISH = """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each either else ever few for from further had hadn't has hasn't have haven't
having he her here hers herself him himself his how i if in into is isn't it it's its itself just
let's may me might more most must my myself neither no nor not now of off on once only or other
ought our ours ourselves out over own per same shall she should shouldn't so some such than that
that's the their theirs them themselves then there there's these they this those through to too
under until up upon us very was wasn't we were weren't what what's when where where's whether which
while who who's whom whose why will with within without won't would wouldn't yet you your yours
yourself yourselves whats whose anything something everything thing things currently still
"""

_GERMAN = """
aber alle allem allen aller alles als also am an ander andere anderen auch auf aus bei beim bin bis
bist bitte da damit dann das dass dem den denn der des dessen dich die dies diese diesem diesen dieser
dieses dir doch dort du durch ein eine einem einen einer eines er es etwa euch euer für fuer gegen
gewesen hab habe haben hat hatte hätte ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im in ins ist
ja jede jedem jeden jeder jedes jetzt kann kein keine können koennen man manche mein meine mich mir
mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine sich sie sind so soll
sollte sondern über ueber um und uns unser unsere unter vom von vor war waren warum was weil welche
welchem welchen welcher welches wenn wer werden wie wieso wieviel wir wird wo woher wohin wurde
wurden zu zum zur zwischen weshalb wann wofür wofuer worum
"""

_FILLER = """
please tell show give find list explain describe know known mean means meant define definition
kindly summarize summarise overview everything compare versus vs
zeig zeige gib nenne erkläre erklär erklaere sag sage sagen wissen bedeutet bedeuten bedeutung
"""

STOPWORDS: frozenset[str] = frozenset((_ENGLISH + _GERMAN).split())
"""Question words and stopwords (English and common German), lower case."""

FILLER: frozenset[str] = frozenset(_FILLER.split())
"""Request verbs that carry no search content ("tell me", "explain", "bitte")."""

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|„([^“”"]+)[“”"]|«([^»]+)»|»([^«]+)«')
_TOKEN = re.compile(
    rf"(?P<code>(?<![\w-]){CODE_PATTERN}(?![\w-]))"
    r"|(?P<num>[$€£]?\d[\d.,:/]*%?)"
    r"|(?P<word>[^\W\d_][\w'’\-.&]*)"
)
_TRAILING = ".,-'’&"
_QUESTION_PHRASES = re.compile(
    r"\b(?:how\s+(?:much|many|long|often|far)|wie\s+(?:viel|viele|hoch|lange|oft|weit))\b",
    re.IGNORECASE)


def detect_codes(question: str) -> tuple[str, ...]:
    """Error codes, SKUs and ids in `question` (`E-4021`, `MX-2231`), in order, each once."""
    return tuple(dict.fromkeys(m.group(0) for m in _CODE.finditer(question)))


@functools.lru_cache(maxsize=8192)  # profiles rebuild the same questions on every what-if
def keywords(question: str) -> str:
    """A deterministic keyword query for the BM25 leg (see the module docstring for the rules)."""
    out: list[str] = []
    seen: set[str] = set()

    def keep(token: str) -> None:
        low = token.lower()
        if token and low not in seen:
            seen.add(low)
            out.append(token)

    pos = 0
    for m in _QUOTED.finditer(question):
        _words(question[pos:m.start()], keep, first=not out)
        phrase = " ".join(next(g for g in m.groups() if g is not None).split())
        if phrase:
            keep(f'"{phrase}"')
        pos = m.end()
    _words(question[pos:], keep, first=not out)
    if out:
        return " ".join(out)
    stripped = " ".join(question.split())
    return stripped if re.search(r"\w", stripped) else ""


def _words(text: str, keep: Callable[[str], None], *, first: bool) -> None:
    for m in _TOKEN.finditer(_QUESTION_PHRASES.sub(" ", text)):
        if m.group("code"):
            keep(m.group("code"))
        elif m.group("num"):
            num = m.group("num").rstrip(".,:/").lstrip("$€£")
            if num:
                keep(num)
        else:
            word = m.group("word").rstrip(_TRAILING)
            for suffix in ("'s", "’s"):
                if word.endswith(suffix):
                    word = word[: -len(suffix)]
            low = word.lower()
            acronym = len(word) >= 2 and word.isupper() and not first
            if word and (acronym or (low not in STOPWORDS and low not in FILLER)):
                keep(word)
        first = False


__all__ = ["CODE_PATTERN", "FILLER", "STOPWORDS", "detect_codes", "keywords"]
