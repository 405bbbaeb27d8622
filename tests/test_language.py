"""Language detection from function words: English, German, too little, mixed, unknown."""

from __future__ import annotations

from ragdiag.language import FUNCTION_WORDS, MIN_WORDS, detect_language

EN = ("The contract is valid for two years and it can be extended by the customer. "
      "Notice of termination must be given in writing at least three months before the end "
      "of the term. This applies to all orders that were placed with the sales team. ") * 2
DE = ("Der Vertrag ist für zwei Jahre gültig und kann vom Kunden verlängert werden. "
      "Die Kündigung muss mindestens drei Monate vor dem Ende der Laufzeit schriftlich "
      "erfolgen. Das gilt für alle Bestellungen, die bei der Vertriebsabteilung eingehen. ") * 2


def test_english_and_german_are_told_apart():
    assert detect_language([EN]).code == "en"
    assert detect_language([DE]).code == "de"


def test_too_few_words_is_no_guess():
    guess = detect_language(["Der Vertrag ist gültig."])
    assert guess.code is None and guess.words == 4 and str(MIN_WORDS) in guess.reason


def test_mixed_corpus_is_no_guess():
    guess = detect_language([EN, DE])
    assert guess.code is None and guess.reason.startswith("mixed")


def test_unknown_language_is_no_guess():
    fr = ("Le contrat est valable deux ans et peut être prolongé par le client. La résiliation "
          "doit être notifiée par écrit au moins trois mois avant la fin du terme. ") * 3
    guess = detect_language([fr])
    assert guess.code is None and "no known language" in guess.reason


def test_no_word_counts_for_both_languages():
    assert not FUNCTION_WORDS["en"] & FUNCTION_WORDS["de"]
