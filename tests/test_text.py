"""ragdiag.policy.text: keyword queries for the BM25 leg and code detection."""

from __future__ import annotations

import pytest

from ragdiag.policy.text import detect_codes, keywords


@pytest.mark.parametrize(("question", "expected"), [
    ("What was the revenue of Nordlicht GmbH in 2023?", "revenue Nordlicht GmbH 2023"),
    ("What does E-4021 mean?", "E-4021"),
    ('What does "pump dry run" mean for E-4021?', '"pump dry run" E-4021'),
    ("How much does MX-2231 cost?", "MX-2231 cost"),
    ("Tell me about the IT department", "IT department"),
    ("What’s Nordlicht's headcount per year?", "Nordlicht headcount year"),
    ("Is the contract with Müller & Söhne still valid after 31.12.2024?",
     "contract Müller Söhne valid 31.12.2024"),
    ("How much did we spend on travel in 2023?", "spend travel 2023"),
    ("Wie hoch war der Umsatz 2024 im Segment „Industrie Nord“?", 'Umsatz 2024 Segment "Industrie Nord"'),
    ("Was versteht man unter Kulanz?", "versteht Kulanz"),
    ("Compare E-4021 vs. E-4022-B", "E-4021 E-4022-B"),
    ("Revenue 2023 and revenue 2024", "Revenue 2023 2024"),
    ("Is a 4.5% discount allowed for orders over €10,000?", "4.5% discount allowed orders 10,000"),
])
def test_keywords(question, expected):
    assert keywords(question) == expected


def test_keywords_keep_original_order_and_case():
    assert keywords("Does Südwind AG or Nordlicht GmbH run the Hamburg site?") == (
        "Südwind AG Nordlicht GmbH run Hamburg site")


def test_keywords_fall_back_to_the_question_when_nothing_is_left():
    assert keywords("What is it?") == "What is it?"
    assert keywords("  what   about   this?  ") == "what about this?"


def test_keywords_of_empty_or_punctuation_only_questions():
    assert keywords("") == ""
    assert keywords(" ?! ") == ""


def test_keywords_are_deterministic():
    q = "What do we know about the Nordlicht GmbH framework agreement from 2021?"
    assert keywords(q) == keywords(q) == "Nordlicht GmbH framework agreement 2021"


@pytest.mark.parametrize(("question", "codes"), [
    ("What does E-4021 mean?", ("E-4021",)),
    ("Compare MX-2231 with MX-2231 and ABCD-123456", ("MX-2231", "ABCD-123456")),
    ("Part MX-2231-B is out of stock", ("MX-2231-B",)),
    ("e-4021 in lower case is not a code", ()),
    ("ABCDE-1234 has too many letters, E-12 too few digits", ()),
    ("x-E-4021 and E-4021x are glued to other text", ()),
    ("revenue 2023", ()),
])
def test_detect_codes(question, codes):
    assert detect_codes(question) == codes
