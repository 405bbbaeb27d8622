"""Paraphrasing without a model: templates, synonyms and word-order variation.

A drafted question must not copy its source, or keyword search wins by construction. Three
moves, all seeded: a template per question type with several word orders (the asked-for
attribute before or after the context), synonyms for the generic words of the domain
(agreement -> contract, fault -> error, Vertrag -> Vereinbarung; names, codes and numbers
are never touched), and the topic words of a sentence picked by rarity, not copied as a
phrase. What remains of the source's wording is measured (`text.lexical_overlap`).
"""

from __future__ import annotations

import random
import re

__all__ = ["SYNONYMS", "Paraphraser"]

_EN = """
agreement: contract
contract: agreement
agreed: set | fixed
period: time | term
notice: advance notice
payment: settlement
terms: conditions
maintenance: servicing | upkeep
interval: cycle
price: cost
cost: price
costs: expenses
employee: staff member
employees: staff
customer: client
customers: clients
supplier: vendor
delivery: shipment
deliveries: shipments
liability: responsibility
limited: capped
approval: sign-off
approved: signed off
manager: supervisor
travel: business trips
trip: journey
booking: reservation
booked: reserved
hotel: accommodation
error: fault
fault: error
fixed: resolved
resolved: fixed
replaced: swapped
problem: issue
issue: problem
warranty: guarantee
revenue: turnover
salary: pay
annual: yearly
monthly: per month
begins: starts
start: beginning
ends: expires
expires: runs out
termination: cancellation
terminated: cancelled
reported: notified
accident: incident
requirement: rule
requirements: rules
policy: guideline
handbook: manual
manual: handbook
allowed: permitted
permitted: allowed
required: mandatory
amount: sum
limit: cap
cap: limit
target: goal
availability: uptime
response: reaction
device: unit
order: purchase order
orders: purchase orders
purchase: procurement
purchases: buys
signed: executed
renewal: extension
extended: prolonged
confidential: restricted
lead: delivery
temperature: temperature range
weight: mass
visitor: guest
visitors: guests
training: course
deadline: due date
documents: records
document: record
cause: reason
root: underlying
solution: fix
meeting: session
office: site
site: location
"""

_DE = """
vertrag: Vereinbarung
vereinbarung: Vertrag
frist: Zeitraum
zahlung: Bezahlung
zahlungsziel: Zahlungsfrist
lieferung: Auslieferung
lieferzeit: Lieferdauer
kunde: Auftraggeber
lieferant: Zulieferer
mitarbeiter: Beschäftigte
mitarbeitende: Beschäftigte
fehler: Störung
störung: Fehler
preis: Kosten
wartung: Instandhaltung
gewährleistung: Garantie
bestellung: Auftrag
auftrag: Bestellung
genehmigung: Freigabe
richtlinie: Regelung
handbuch: Leitfaden
kündigung: Vertragsbeendigung
laufzeit: Dauer
ursache: Grund
lösung: Behebung
haftung: Verantwortung
vertraulich: geheim
informationen: Angaben
daten: Angaben
reise: Dienstreise
kosten: Ausgaben
beginn: Start
ende: Schluss
"""


def _table(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.strip().splitlines():
        word, _, alts = line.partition(":")
        out[word.strip()] = [a.strip() for a in alts.split("|") if a.strip()]
    return out


SYNONYMS: dict[str, dict[str, list[str]]] = {"en": _table(_EN), "de": _table(_DE)}
"""Per language: lower-case word -> replacements (generic domain words only)."""

_TOKEN = re.compile(r"\w[\w\-]*|\W+", re.UNICODE)


class Paraphraser:
    """Seeded choices for one draft: template, synonyms, order."""

    def __init__(self, rng: random.Random, *, synonym_rate: float = 0.8) -> None:
        self.rng = rng
        self.synonym_rate = synonym_rate

    def choose(self, options: list[str] | tuple[str, ...]) -> str:
        return options[self.rng.randrange(len(options))]

    def synonyms(self, text: str, language: str = "en") -> str:
        """Replace generic words by a synonym (case kept for the first letter); names,
        codes and numbers are not in the table, so they stay."""
        table = SYNONYMS.get(language, {})
        out = []
        for tok in _TOKEN.findall(text):
            alts = table.get(tok.lower())
            if alts and self.rng.random() < self.synonym_rate:
                alt = self.choose(alts)
                if language == "en" and tok[:1].isupper() and not tok.isupper():
                    alt = alt[:1].upper() + alt[1:]
                elif language == "en" and tok.islower():
                    alt = alt.lower() if not alt.isupper() else alt
                tok = alt
            out.append(tok)
        return "".join(out)

    def fill(self, templates: list[str] | tuple[str, ...], language: str = "en", **slots: str) -> str:
        """One template (the word order varies between them), slots paraphrased by synonyms
        except those ending in `_as_is` (names, codes, values)."""
        template = self.choose(templates)
        filled = {}
        for name, value in slots.items():
            filled[name] = value if name.endswith("_as_is") else self.synonyms(value, language)
        text = template.format(**filled)
        text = " ".join(text.split()).replace(" ?", "?").replace(" ,", ",").replace("( ", "(")
        return text[:1].upper() + text[1:]
