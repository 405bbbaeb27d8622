"""Answer spans in a sentence: amounts, durations, shares, dates, times, measures, people.

Shared by the fact, verification, comparison and restricted-document rules: a value, its
kind (which decides the question word) and where it sits (the topic words are taken around
it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NOT_NAMES", "Value", "find_values", "QUESTION_WORDS"]

_MONTHS_EN = "January|February|March|April|May|June|July|August|September|October|November|December"
_MONTHS_DE = "Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember"
_NUMWORD = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
            "ein|eine|einen|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("date", re.compile(rf"\b\d{{1,2}}\.?\s+(?:{_MONTHS_EN}|{_MONTHS_DE})\s+\d{{4}}\b|\b\d{{1,2}}\.\d{{1,2}}\.\d{{4}}\b")),
    ("money", re.compile(r"(?:\b(?:EUR|USD|GBP|CHF)|[€$£])\s?\d[\d.,]*(?:\s?(?:million|Mio\.?|k)\b)?"
                         r"|\b\d[\d.,]*\s?(?:EUR|CHF|euros?)\b")),
    ("percent", re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:%|percent\b|Prozent\b)")),
    ("duration", re.compile(rf"\b(?:\d+|{_NUMWORD})\s+(?:working\s+|business\s+|calendar\s+)?"
                            r"(?:days?|weeks?|months?|years?|hours?|minutes?|Arbeitstage[n]?|Kalendertage[n]?|"
                            r"Tage[n]?|Wochen|Monate[n]?|Jahre[n]?|Stunden|Minuten)\b", re.I)),
    # a time of day: HH:MM with a valid hour and minute, not part of a code reference
    # (file.py:12:30, lines 10:20, L10:20, 1:2:3) -- `_valid` checks the context
    ("time", re.compile(r"(?<![\w:./#-])(?:[01]?\d|2[0-3]):[0-5]\d(?![\w:]|\.\d|\s*[-–]\s*\d+(?![\d:]))")),
    ("measure", re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:V(?:\s?DC|\s?AC)?|mA|kW|W|bar|°C|mm|kg|Nm|µs|ms|rpm|l/min)(?!\w)"
                           r"|\bIP\d{2}\b")),
    ("person", re.compile(r"\b(?:is|by|named|ist|von|an)\s(?P<v>[A-Z][a-zäöüé]+\s(?:(?:de|van|von)\s)?[A-Z][a-zäöüé]+)"
                          r"\b(?!\s[A-Z])")),
    ("year", re.compile(r"\b(?:in|since|seit|im|until|bis)\s(?P<v>(?:19|20)\d{2})\b")),
]

QUESTION_WORDS = {
    "en": {"date": "when", "money": "how much", "percent": "what percentage", "duration": "how long",
           "time": "at what time", "measure": "what value", "person": "who", "year": "in which year"},
    "de": {"date": "wann", "money": "wie hoch", "percent": "wie viel Prozent", "duration": "wie lange",
           "time": "um wie viel Uhr", "measure": "welcher Wert", "person": "wer", "year": "in welchem Jahr"},
}


#: words that head a rank, office or honorific ("Major General", "Präsident Lincoln"), or a
#: calendar word: never a person's first or last name
NOT_NAMES = frozenset("""
major general colonel captain lieutenant sergeant admiral commander marshal brigadier corporal private
president vice chancellor minister secretary senator governor mayor king queen prince princess duke
duchess earl count emperor empress pope bishop archbishop cardinal saint sir lord lady dame doctor
professor judge justice chief director chairman rabbi reverend father sister brother
herr frau könig königin kaiser kaiserin präsident präsidentin kanzler kanzlerin bischof graf gräfin
fürst herzog papst general oberst hauptmann leutnant professor doktor minister ministerin
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
januar februar märz mai juni juli oktober dezember montag dienstag mittwoch donnerstag freitag samstag sonntag
""".split())
_CLOCK_AFTER = re.compile(r"\s*(?:min\b|minutes?\b|minuten\b|sek\b|sekunden\b|seconds?\b|sec\b|h\b(?!\s*uhr))",
                          re.I)
_CODE_CONTEXT = re.compile(r"(?:\blines?|\bzeilen?|\bL|\bline\s+no\.?)\s*$", re.I)


def _valid(kind: str, sentence: str, start: int, text: str) -> bool:
    """Rules validated on the corpora they run on: a person is two name words (no rank, office
    or month), a time is not a line range of code."""
    if kind == "person":
        return not any(w.lower() in NOT_NAMES for w in text.split())
    if kind == "time":  # nor a clock or a duration ("4:51 minutes left", "3:20 min")
        return not _CODE_CONTEXT.search(sentence[:start]) and not _CLOCK_AFTER.match(sentence[start + len(text):])
    return True


@dataclass(frozen=True)
class Value:
    text: str
    kind: str
    start: int
    end: int


def find_values(sentence: str) -> list[Value]:
    """Values in `sentence`, earliest first, overlapping matches dropped (dates beat years)."""
    found: list[Value] = []
    for kind, pattern in _PATTERNS:
        group = "v" if "v" in pattern.groupindex else 0
        for m in pattern.finditer(sentence):
            start, end = m.start(group), m.end(group)
            if any(start < v.end and v.start < end for v in found):
                continue
            if not _valid(kind, sentence, start, m.group(group)):
                continue
            found.append(Value(m.group(group).strip(), kind, start, end))
    return sorted(found, key=lambda v: v.start)
