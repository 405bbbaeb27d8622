"""A deterministic intent classifier: ordered, named regex rules (English and German cues).

    >>> classify("What does E-4021 mean?")
    'exact_id'
    >>> explain("Compare the SLA of Nordlicht GmbH and Südwind AG")
    ('comparison', 'comparison.cue')

The first rule that matches decides; `RULES` lists them in order, so an audit
can show which rule routed a question and a reader can predict the result.
The order resolves overlaps on purpose:

1. `verification.opener`: "is it true ...", "stimmt es ...": the question
   asks to confirm a claim, whatever the claim is about;
2. `comparison.cue`: "compare", "difference", "versus", "both ... and",
   "which of", "Unterschied", "im Vergleich";
3. `exact_id.code`: a code (`E-4021`, `MX-2231`) that the question asks
   about directly ("what is / means / costs", "was bedeutet / kostet"), or
   a question that is little more than the code;
4. `verification.cue`: yes/no questions about a state: "did ... expire",
   "has ... been", "does ... still", "ist ... noch", "wurde ... gekündigt";
5. `definition.*`: "what does ... mean", "define", "what is meant by",
   "what is a/an <term>" without a named entity, "was versteht man unter";
6. `overview.cue`: "what do we know about", "overview", "summarize",
   "tell me about", "Überblick", "was wissen wir über";
7. `table.cue` / `table.year_amount`: revenue, headcount, price lists,
   "per year", "by segment", "how much ... in 2023", "Umsatz", "Tabelle";
8. `fact.default`: everything else.

No randomness and no model: the same question always gets the same intent,
independent of what was classified before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ragdiag.policy.text import CODE_PATTERN, STOPWORDS, detect_codes

INTENTS = ("fact", "definition", "verification", "comparison", "overview", "table", "exact_id")

_I = re.IGNORECASE
_CODE = f"(?-i:{CODE_PATTERN})"
_ID_FILLER = (r"(?:(?:the|an?|this|error|code|fault|status|message|part|article|item|product|sku|"
              r"number|id|der|die|das|ein|eine|fehler|fehlercode|fehlermeldung|artikel|teil|"
              r"produkt|nummer|artikelnummer)\s+){0,3}")


@dataclass(frozen=True)
class Rule:
    """One named rule: the intent it assigns and the test that fires it."""

    name: str
    intent: str
    test: Callable[[str], bool]
    description: str


def _rx(*patterns: str) -> Callable[[str], bool]:
    compiled = [re.compile(p, _I) for p in patterns]
    return lambda q: any(c.search(q) for c in compiled)


_verification_opener = _rx(
    r"^\W*(?:is\s+it|is\s+that|isn'?t\s+it)\s+(?:really\s+)?(?:true|correct|right|the\s+case)\b",
    r"^\W*(?:can|could)\s+you\s+(?:please\s+)?(?:confirm|verify|check)\b",
    r"^\W*(?:please\s+)?(?:confirm|verify)\s+(?:that|whether|if)\b",
    r"^\W*(?:stimmt\s+es|stimmt\s+das|ist\s+es\s+(?:wahr|richtig|korrekt)|trifft\s+es\s+zu)\b",
    r"^\W*(?:kannst\s+du|können\s+sie|koennen\s+sie)\s+(?:bitte\s+)?bestätigen\b",
)

_comparison = _rx(
    r"\bcompar(?:e|ed|es|ing|ison|isons)\b",
    r"\bdiffer(?:s|ed|ence|ences|ent\s+from)?\b",
    r"\bversus\b",
    r"\bvs\b\.?",
    r"\bboth\b.+\band\b",
    r"\bwhich\s+of\b",
    r"\b(?:better|worse|cheaper|faster|larger|smaller|higher|lower)\s+than\b",
    r"\bvergleich",
    r"\bunterschied",
    r"\bunterscheide[nt]?\b",
    r"\bim\s+gegensatz\s+zu\b",
    r"\bbeide[n]?\b",
    r"\bwelche[rs]?\s+(?:der|von\s+den)\b",
    r"\b(?:besser|schlechter|günstiger|guenstiger|teurer|höher|hoeher|niedriger)\s+als\b",
)

_exact_id_asks = _rx(
    rf"\bwhat(?:'s|’s|\s+is|\s+are|\s+does|\s+do|\s+was)\s+{_ID_FILLER}{_CODE}",
    rf"{_CODE}\s+(?:mean|means|meant|stand\s+for|stands\s+for|refer\s+to|refers\s+to|"
    r"cost|costs|bedeuten|bedeutet|kostet|kosten)\b",
    rf"\b(?:meaning|price|cost|costs|definition|bedeutung|preis|kosten)\s+"
    rf"(?:of|for|von|für|fuer|des|der)\s+{_ID_FILLER}{_CODE}",
    rf"\bhow\s+much\s+(?:is|are|does|do)\s+{_ID_FILLER}{_CODE}",
    rf"\b(?:was\s+(?:ist|sind|bedeutet|bedeuten|kostet|kosten|heißt|heisst)|"
    rf"wof(?:ü|ue)r\s+steht|wie\s*viel\s+kostet)\s+{_ID_FILLER}{_CODE}",
)

_ID_ONLY_WORDS = frozenset(
    "error code fault sku id part article item number meaning price cost fehler fehlercode "
    "artikel bedeutung preis".split())


def _exact_id(q: str) -> bool:
    codes = detect_codes(q)
    if not codes:
        return False
    if _exact_id_asks(q):
        return True
    rest = q
    for c in codes:
        rest = rest.replace(c, " ")
    words = [w.lower() for w in re.findall(r"[^\W\d_][\w'’-]*", rest)]
    return all(w in STOPWORDS or w in _ID_ONLY_WORDS for w in words)


_verification = _rx(
    r"^\W*(?:did|has|have|had)\b.*\b(?:expire[ds]?|lapse[ds]?|end(?:ed)?|run\s+out|"
    r"terminated?|cancell?ed|renewed|extended|signed|approved|changed|been)\b",
    r"^\W*(?:does|do|is|are|was|were|can|may|will)\b.*\bstill\b",
    r"^\W*(?:ist|sind|gilt|gelten|läuft|laeuft|besteht|bestehen|hat|haben|wurde|wurden|war|"
    r"darf|dürfen|kann)\b.*\b(?:noch|abgelaufen|ausgelaufen|gekündigt|gekuendigt|verlängert|"
    r"verlaengert|beendet|genehmigt|unterschrieben|unterzeichnet|geändert|geaendert)\b",
)

_definition_cue = _rx(
    r"^\W*what\s+(?:does|do)\b.+\bmean\b",
    r"\bdefine\b",
    r"\bdefinition\s+(?:of|von|des|der)\b",
    r"\bwhat(?:'s|’s|\s+is)\s+meant\s+by\b",
    r"\bwas\s+(?:bedeutet|bedeuten|heißt|heisst)\b",
    r"\bwas\s+versteht\s+man\s+unter\b",
    r"\bdefinier",
)

_WHAT_IS_TERM = re.compile(
    r"^\W*what(?:'s|’s|\s+is|\s+are)\s+(?:(?:an?)\s+)?(?P<term>[^?]+?)\s*\??\s*$", _I)
_WAS_IST_TERM = re.compile(
    r"^\W*was\s+(?:ist|sind)\s+(?:ein|eine|einen)\s+(?P<term>[^\s?]+)\s*\??\s*$", _I)
_DETERMINERS = frozenset(
    "the this that these those our your my their its his her which whose who".split())
_NAME = re.compile(r"^[A-ZÄÖÜ][a-zäöüß]")


def _what_is_term(q: str) -> bool:
    """'What is a retention bonus?': a short term, no named entity, no code, no number."""
    if _WAS_IST_TERM.match(q):
        return True
    m = _WHAT_IS_TERM.match(q)
    if not m:
        return False
    words = m.group("term").split()
    if not 1 <= len(words) <= 4 or words[0].lower() in _DETERMINERS:
        return False
    return not any(_NAME.match(w) or any(ch.isdigit() for ch in w) for w in words)


_overview = _rx(
    r"\bwhat\s+do\s+(?:we|you|i|they)\s+know\s+about\b",
    r"\bwhat\s+is\s+known\s+about\b",
    r"\boverview\b",
    r"\bsummar(?:y|ies|ize|ise|ized|ised)\b",
    r"\btell\s+me\s+(?:about|everything)\b",
    r"\beverything\s+about\b",
    r"\bbackground\s+(?:on|of)\b",
    r"\brundown\b",
    r"\b(?:ü|ue)berblick\b",
    r"\bzusammenfass",
    r"\bwas\s+wissen\s+wir\s+(?:ü|ue)ber\b",
    r"\balles\s+(?:ü|ue)ber\b",
    r"\berz(?:ä|ae)hl(?:e|en\s+sie)?\s+mir\b",
)

_table_cue = _rx(
    r"\brevenues?\b",
    r"\bturnover\b",
    r"\bsales\s+figures\b",
    r"\bhead\s*count\b",
    r"\bprice\s+lists?\b",
    r"\bpricing\s+table\b",
    r"\bper\s+(?:year|quarter|month|segment|region)\b",
    r"\bby\s+(?:segment|region|year|quarter|month|country)\b",
    r"\btables?\b",
    r"\bkey\s+figures\b",
    r"\bkpis?\b",
    r"\bebitda?\b",
    r"\bums(?:atz|ätze|aetze)\b",
    r"\bmitarbeiter(?:zahl|anzahl)\b",
    r"\banzahl\s+(?:der\s+)?mitarbeit",
    r"\bpreisliste\b",
    r"\bpro\s+(?:jahr|quartal|monat|segment)\b",
    r"\bnach\s+(?:segment|region|jahr|quartal)\b",
    r"\btabelle\b",
    r"\bkennzahl",
)

_table_year_amount = _rx(
    r"\bhow\s+(?:much|many)\b.*\b(?:in|for|during)\s+(?:fy\s*)?(?:19|20)\d\d\b",
    r"\bwie\s*(?:viel|viele|hoch)\b.*\b(?:19|20)\d\d\b",
)


RULES: tuple[Rule, ...] = (
    Rule("verification.opener", "verification", _verification_opener,
         'asks to confirm a claim: "is it true", "can you confirm", "stimmt es"'),
    Rule("comparison.cue", "comparison", _comparison,
         'compares: "compare", "difference", "versus", "both ... and", "which of", "Unterschied"'),
    Rule("exact_id.code", "exact_id", _exact_id,
         "asks what a code (E-4021, MX-2231) is, means or costs, or is little more than the code"),
    Rule("verification.cue", "verification", _verification,
         'yes/no question about a state: "did ... expire", "has ... been", "does ... still", '
         '"ist ... noch"'),
    Rule("definition.cue", "definition", _definition_cue,
         '"what does ... mean", "define", "what is meant by", "was versteht man unter"'),
    Rule("definition.what_is_term", "definition", _what_is_term,
         '"what is a/an <term>" with no named entity, code or number'),
    Rule("overview.cue", "overview", _overview,
         '"what do we know about", "overview", "summarize", "tell me about", "Überblick"'),
    Rule("table.cue", "table", _table_cue,
         'tabular quantities: revenue, headcount, price list, "per year", "by segment", "Umsatz"'),
    Rule("table.year_amount", "table", _table_year_amount,
         '"how much/many ... in <year>", "wie viel ... <year>"'),
)
FALLBACK_RULE = "fact.default"


def explain(question: str) -> tuple[str, str]:
    """(intent, name of the rule that fired); `fact.default` when none did."""
    q = " ".join(question.split())
    for rule in RULES:
        if rule.test(q):
            return rule.intent, rule.name
    return "fact", FALLBACK_RULE


def classify(question: str) -> str:
    """The intent of `question`, one of `INTENTS`."""
    return explain(question)[0]


__all__ = ["FALLBACK_RULE", "INTENTS", "RULES", "Rule", "classify", "explain"]
