"""Azure analyzer names mapped onto the local keyword leg's tokenising, stop words and stemming.

Azure analyses each searchable field with the analyzer the index definition names
(``"analyzer": "de.lucene"``), the same analyzer for documents and query terms, and
Standard Lucene when the field names none (learn.microsoft.com/azure/search/search-analyzers,
"Default analyzer"; index-add-language-analyzers: the Lucene and Microsoft language
analyzers; index-add-custom-analyzers: the predefined ``keyword``, ``simple``, ``stop``,
``whitespace``, ``standard``/``standard.lucene``, ``standardasciifolding.lucene``). The
local target imitates each with PyStemmer (Snowball) and bm25s's stop-word lists, per
field, and says what it used (`Analysis.describe`). Where the imitation differs from the
real analyzer the difference is written out in ``approximation``; an analyzer this module
does not know is analysed like Standard Lucene and named as an approximation, never
silently.

Facts the mapping rests on (same pages):

- ``standard.lucene``: standard tokenizer, lowercase filter, stop filter whose list is
  empty by default: no stop words, no stemming.
- ``en.lucene``: Lucene's EnglishAnalyzer, possessive removal, Porter stemming, English
  stop words (the 33 words of Lucene's set, which is bm25s's ``STOPWORDS_EN``).
- ``de.lucene``: Lucene's GermanAnalyzer: German stop words, umlaut normalisation and a
  light stemmer. Lucene analysis does NOT split compounds ("Kündigungsfrist" stays one
  term); the Microsoft analyzers (``de.microsoft``) lemmatise and decompound, which this
  module cannot imitate (named in ``approximation``).
- The tokenizer everywhere is bm25s's word pattern (two or more word characters), which,
  unlike Lucene's standard tokenizer, drops one-character tokens.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

__all__ = ["Analysis", "Analyzer", "DEFAULT_ANALYZER", "analysis_for", "analysis_of_schema"]

DEFAULT_ANALYZER = "standard.lucene"  # what Azure uses for a field that names none

_WORDS = re.compile(r"(?u)\b\w\w+\b")  # bm25s's default splitter
_LETTERS = re.compile(r"[^\W\d_]+")

# language code -> (PyStemmer algorithm, bm25s stop-word list name or None)
_LANGUAGES: dict[str, tuple[str, str | None]] = {
    "en": ("english", "STOPWORDS_EN"), "de": ("german", "STOPWORDS_GERMAN"),
    "fr": ("french", "STOPWORDS_FRENCH"), "es": ("spanish", "STOPWORDS_SPANISH"),
    "it": ("italian", "STOPWORDS_ITALIAN"), "nl": ("dutch", "STOPWORDS_DUTCH"),
    "pt-br": ("portuguese", "STOPWORDS_PORTUGUESE"), "pt-pt": ("portuguese", "STOPWORDS_PORTUGUESE"),
    "sv": ("swedish", "STOPWORDS_SWEDISH"), "da": ("danish", "STOPWORDS_DANISH"),
    "no": ("norwegian", "STOPWORDS_NORWEGIAN"), "nb": ("norwegian", "STOPWORDS_NORWEGIAN"),
    "ru": ("russian", "STOPWORDS_RUSSIAN"), "tr": ("turkish", "STOPWORDS_TURKISH"),
    "fi": ("finnish", None), "hu": ("hungarian", None), "ro": ("romanian", None),
    "cs": ("czech", None), "el": ("greek", None), "ca": ("catalan", None), "eu": ("basque", None),
    "ga": ("irish", None), "hy": ("armenian", None), "lt": ("lithuanian", None),
    "id": ("indonesian", None), "ar": ("arabic", None), "fa": ("persian", None), "hi": ("hindi", None),
}

_TOKENIZER_NOTE = "one-character tokens are dropped (Lucene's standard tokenizer keeps them)"
_NOTES = {
    "en.lucene": "Snowball English (Porter2) stemming for Lucene's Porter stemmer; possessive 's is "
                 "not stripped first",
    "en.microsoft": "Microsoft's English analyzer lemmatises; approximated by Snowball English stemming",
    "de.lucene": "Snowball German stemming for Lucene's German light stemmer; like Lucene, compounds "
                 "are not split",
    "de.microsoft": "Microsoft's German analyzer lemmatises and splits compounds "
                    "(Kündigungsfrist -> Kündigung + Frist); approximated by Snowball German stemming, "
                    "no decompounding",
}


@dataclass(frozen=True)
class Analysis:
    """How one field's text becomes terms, named after the Azure analyzer it imitates."""

    analyzer: str  # the Azure name (DEFAULT_ANALYZER when the field names none)
    language: str | None = None  # the language analysed, None for language-neutral analyzers
    tokenizer: str = "words"  # words | letters | whitespace | keyword
    lowercase: bool = True
    stopwords: str | None = None  # language code of the stop-word list
    stemmer: str | None = None  # PyStemmer algorithm
    ascii_folding: bool = False
    configured: bool = True  # False: the field names no analyzer (Azure's default applies)
    known: bool = True  # False: an analyzer this module does not know (standard analysis used)
    approximation: str = ""  # how the local analysis differs from Azure's

    def describe(self) -> dict[str, Any]:
        """What was used, for the findings meta and the target description."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Analysis:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    @property
    def label(self) -> str:
        """One line: ``de.lucene (German stemming, German stop words)``."""
        parts = [f"{self.stemmer} stemming" if self.stemmer else "no stemming",
                 f"{self.stopwords} stop words" if self.stopwords else "no stop words"]
        if not self.known:
            parts.append("unknown analyzer, analysed as standard.lucene")
        return f"{self.analyzer} ({', '.join(parts)})"


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def analysis_for(analyzer: str | None) -> Analysis:
    """The local analysis imitating Azure analyzer `analyzer` (None: the field names none)."""
    if analyzer is None or analyzer == "":
        return Analysis(DEFAULT_ANALYZER, configured=False, approximation=_TOKENIZER_NOTE)
    name = analyzer.strip()
    low = name.lower()
    if low in ("standard", "standard.lucene"):
        return Analysis(name, approximation=_TOKENIZER_NOTE)
    if low == "standardasciifolding.lucene":
        return Analysis(name, ascii_folding=True, approximation=_TOKENIZER_NOTE)
    if low == "keyword":
        return Analysis(name, tokenizer="keyword", lowercase=False,
                        approximation="the whole value is one term; query terms are split on spaces "
                                      "and matched exactly")
    if low == "whitespace":
        return Analysis(name, tokenizer="whitespace", lowercase=False)
    if low == "simple":
        return Analysis(name, tokenizer="letters")
    if low == "stop":
        return Analysis(name, tokenizer="letters", stopwords="en")
    lang, _, family = low.rpartition(".")
    if family in ("lucene", "microsoft") and lang in _LANGUAGES:
        stemmer, stops = _LANGUAGES[lang]
        note = _NOTES.get(low) or (
            f"Snowball {stemmer} stemming for the {family} {lang} analyzer"
            + ("" if stops else "; no stop-word list for this language here")
            + ("; Microsoft analyzers lemmatise, which is not imitated" if family == "microsoft" else ""))
        code = lang.split("-")[0]
        return Analysis(name, language=code, stopwords=code if stops else None, stemmer=stemmer,
                        approximation=f"{note}; {_TOKENIZER_NOTE}")
    return Analysis(name, known=False,
                    approximation=f"unknown analyzer '{name}' (a custom analyzer or a language "
                                  "without a local stemmer): analysed as standard.lucene "
                                  "(lowercase words, no stemming, no stop words)")


def analysis_of_schema(schema: Any) -> dict[str, Analysis]:
    """Each searchable text field's analysis, from the analyzers the index definition names."""
    return {f.name: analysis_for(f.analyzer) for f in schema.fields
            if f.searchable and not f.is_vector}


@cache
def _stopword_set(code: str) -> frozenset[str]:
    import bm25s.stopwords as lists

    name = _LANGUAGES[code][1]
    return frozenset(getattr(lists, name)) if name else frozenset()


class Analyzer:
    """Runs an `Analysis`: text -> terms (stop words removed, stems), for documents and queries."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.stopwords = _stopword_set(analysis.stopwords) if analysis.stopwords else frozenset()
        self._stem_word = None
        if analysis.stemmer:
            import Stemmer

            self._stem_word = Stemmer.Stemmer(analysis.stemmer).stemWord
        self._stems: dict[str, str] = {}

    def words(self, text: str) -> list[str]:
        """The tokens before stop words and stemming."""
        a = self.analysis
        if a.lowercase:
            text = text.lower()
        if a.ascii_folding:
            text = _fold(text)
        if a.tokenizer == "keyword":
            return [text] if text else []
        if a.tokenizer == "whitespace":
            return text.split()
        if a.tokenizer == "letters":
            return _LETTERS.findall(text)
        return _WORDS.findall(text)

    def query_words(self, text: str) -> list[str]:
        """Query tokens: like `words`, except that a keyword field's query is split on spaces."""
        if self.analysis.tokenizer == "keyword":
            return text.split()
        return self.words(text)

    def term(self, word: str) -> str | None:
        """The indexed term of one token (None for a stop word)."""
        if word in self.stopwords:
            return None
        if self._stem_word is None:
            return word
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stem_word(word)
        return stem

    def terms(self, text: str, *, query: bool = False) -> list[str]:
        words = self.query_words(text) if query else self.words(text)
        return [t for t in map(self.term, words) if t]
