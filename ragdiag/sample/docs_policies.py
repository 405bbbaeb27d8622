"""Company policies (doc_type ``policy``): travel, approvals, procurement, data protection...

Each policy has purpose, scope, its rules (with a table where it fits), a
definitions section (glossary entries "*term* means ..."), responsibilities and
document control. The travel policy exists in three versions (2019 scan, 2024
superseded, 2026 current) plus a German Swiss variant, so freshness matters.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from ragdiag.sample import DocBuilder, Fact, date_en, iso, table_row
from ragdiag.sample.policy_texts import POLICIES, Policy
from ragdiag.sample.vocab import OFFICERS

SEED = 5505
PURPOSE = (
    "This policy sets out the rules for {topic} at Muster AG and its subsidiaries.",
    "The purpose of this policy is to ensure that {goal}.",
    "Muster has adopted this policy on {topic} to make sure that {goal}.",
)
SCOPE = (
    "The policy applies to all employees, temporary staff and contractors of Muster AG, Muster "
    "Schweiz AG and Muster Inc.",
    "It covers all sites, including Stuttgart, Chemnitz, Basel, Brno, Leeds and Chicago.",
    "Local deviations require the written approval of the policy owner.",
    "Where local law is stricter than this policy, local law prevails.",
    "Members of the Executive Board are bound by the policy in the same way as all other "
    "employees.",
)
RESPONSIBLE = (
    "The policy owner is {owner}, who reviews it at least once a year.",
    "Line managers make sure that their teams know and follow the policy.",
    "Questions about the policy can be sent to the {dept} team.",
    "Internal Audit checks compliance with this policy as part of its annual audit plan.",
    "Employees confirm once a year in the learning platform that they have read the policy.",
)
BREACH = (
    "Breaches of this policy may lead to disciplinary measures up to and including dismissal.",
    "Costs or commitments incurred in breach of this policy may not be reimbursed.",
    "Suspected breaches can be reported to the line manager or through the whistleblowing "
    "channel.",
)
DEF_FORMS = ("*{Term}* means {d}.", "The term *{term}* refers to {d}.", "*{Term}*: {d}.")
DEF_FORMS_DE = ("*{Term}* bezeichnet {d}.", "Als *{term}* gilt {d}.")
DEF_QUESTIONS = ("What does {term} mean?", "How do we define {term}?",
                 "What is meant by {term} in our policies?", "Define {term}.",
                 "What exactly counts as {term}?", "What is our definition of {term}?")


def definition_sentence(term: str, d: str, form: int, language: str = "en") -> str:
    t = term[0].upper() + term[1:]
    forms = DEF_FORMS_DE if language == "de" else DEF_FORMS
    return forms[form % len(forms)].format(Term=t, term=term, d=d)


def _policy(n: int, p: Policy, rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    owner = OFFICERS[p.owner]
    b = DocBuilder(f"POL-{n:04d}", p.title, "policy", language=p.language,
                   entity_keys=["ENT-MUSTER", *p.entities], group_ids=list(p.groups),
                   valid_from=iso(p.valid_from), valid_to=iso(p.valid_to),
                   last_updated=iso(p.valid_from), scan_quality=p.quality or
                   rng.uniform(0.9, 0.98), summary=p.summary)
    de = p.language == "de"
    if de:
        b.section("Zweck und Geltungsbereich", "Wozu die Richtlinie dient und für wen sie gilt.")
        b.para(f"Diese Richtlinie regelt {p.topic} bei der Muster Schweiz AG.",
               "Sie gilt für alle Mitarbeitenden am Standort Basel sowie für Mitarbeitende "
               "anderer Gesellschaften, die im Auftrag der Muster Schweiz AG reisen.")
    else:
        b.section("Purpose and Scope", f"Why the {p.short} exists and whom it covers.")
        b.para(PURPOSE[rng.randrange(3)].format(topic=p.topic, goal=p.goal),
               *rng.sample(SCOPE, 3))
    for title, summary, blocks in p.body:
        b.section(title, summary)
        for kind, content in blocks:
            if kind == "p":
                b.para(content)
            elif kind == "l":
                b.bullets(list(content))
            else:
                b.table(list(content[0]), [list(r) for r in content[1]])
    if p.defs:
        b.section("Begriffe" if de else "Definitions",
                  "Begriffsbestimmungen." if de else f"Terms used in the {p.short}.")
        sentences = []
        for i, (term, d) in enumerate(p.defs):
            s = definition_sentence(term, d, n + i, p.language)
            sentences.append(s)
            b.fact("definition", s, DEF_QUESTIONS[(n + 2 * i) % len(DEF_QUESTIONS)].format(
                term=term), term)
        for i in range(0, len(sentences), 2):
            b.para(*sentences[i:i + 2])
    if de:
        b.section("Dokumentenlenkung", "Version und Freigabe.")
        b.para(f"Version {p.version}, freigegeben am {p.valid_from.strftime('%d.%m.%Y')} durch "
               f"die Geschäftsleitung der Muster Schweiz AG.")
    else:
        b.section("Responsibilities and Document Control", "Who owns the policy, what "
                  "happens in case of breaches, version and approval.")
        b.para(*(s.format(owner=owner, dept=p.dept) for s in
                 [RESPONSIBLE[0], *rng.sample(RESPONSIBLE[1:], 2)]), *rng.sample(BREACH, 2))
        state = (f"It was superseded on {date_en(p.valid_to)} and is kept for reference only."
                 if p.valid_to else "It replaces all earlier versions.")
        b.para(f"Version {p.version}, approved by the Executive Board with effect from "
               f"{date_en(p.valid_from)}.", state)
    for intent, needle, question, answer in p.facts:
        b.fact(intent, needle, question, answer)
    return b.build()


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All policies (POL-0001.. in spec order) and their facts."""
    rng = random.Random(SEED)
    docs, facts = [], []
    specs = [_travel(*v) for v in TRAVEL_VERSIONS] + list(POLICIES)
    for n, p in enumerate(specs, 1):
        doc, fs = _policy(n, p, rng)
        docs.append(doc)
        facts += fs
    return docs, facts


# ---- the travel policy (three versions with different numbers) -----------------------

PER_DIEM = (("Germany", "EUR", 28, 14), ("Austria", "EUR", 30, 15),
            ("Switzerland", "CHF", 75, 38), ("United Kingdom", "GBP", 52, 26),
            ("France", "EUR", 54, 27), ("Italy", "EUR", 48, 24),
            ("United States", "USD", 70, 35), ("Czech Republic", "EUR", 35, 18))
HOTEL = (("Munich", "EUR", 180), ("Hamburg", "EUR", 160), ("Berlin", "EUR", 150),
         ("Zurich", "CHF", 260), ("London", "GBP", 220), ("Paris", "EUR", 210),
         ("Milan", "EUR", 170), ("New York", "USD", 320), ("Brno", "EUR", 100))
TRAVEL_VERSIONS = (  # year, factor, long-haul hours, rail hours, km rate, report days, quality
    (2019, 0.85, "eight", "three", "0.25", 60, 0.74),
    (2024, 0.93, "eight", "three", "0.28", 45, None),
    (2026, 1.0, "six", "two", "0.30", 30, None),
)


def _travel(year: int, f: float, flight: str, rail: str, km: str, days: int,
            quality: float | None) -> Policy:
    current = year == 2026
    ref = "the current travel policy" if current else f"the {year} travel policy"
    diem = [[c, cur, f"{cur} {round(full * f)}", f"{cur} {round(part * f)}"]
            for c, cur, full, part in PER_DIEM]
    diem = [[r[0], r[2], r[3]] for r in diem]
    hotel = [[c, f"{cur} {round(cap * f / 5) * 5}"] for c, cur, cap in HOTEL]
    flight_s = (f"Economy class is mandatory for flights of up to {flight} hours; business "
                "class may be booked for longer flights.")
    rail_s = f"For rail journeys of more than {rail} hours, first class may be booked."
    km_s = f"Use of a private car is reimbursed at EUR {km} per kilometre."
    report_s = f"Expense reports must be submitted within {days} days after the end of the trip."
    h, d = hotel[(year // 3) % len(hotel)], diem[(year // 5) % len(diem)]
    h2 = hotel[(year // 3 + 4) % len(hotel)]
    facts = [
        ("table", table_row(h), f"What is the hotel cap for {h[0]} under {ref}?", h[1]),
        ("table", table_row(h2), f"How much may a hotel night in {h2[0]} cost according to "
         f"{ref}?", h2[1]),
        ("table", table_row(d), f"What per diem applies to a full day in "
         f"{'the ' if d[0].startswith('United') else ''}{d[0]} under {ref}?", d[1]),
        ("fact", km_s, f"What mileage rate does {ref} pay for private cars?", f"EUR {km}"),
        ("fact", report_s, f"By when must travel expenses be claimed under {ref}?",
         f"{days} days"),
        ("verification", flight_s, f"Is it true that {ref} allows business class on a "
         f"seven-hour flight?", f"{flight} hours"),
    ]
    return Policy(
        title=f"Travel Expense Policy {year}", short="travel policy",
        topic="business travel and travel expenses",
        goal="business travel is safe, economical and reimbursed consistently",
        owner="cfo", dept="Finance",
        summary=f"Version {year} of Muster's travel expense policy: approval and booking of "
                f"trips, travel classes, per-diem allowances by country and hotel caps by city."
                + ("" if current else " Superseded; kept for reference."),
        body=(
            ("Booking and Approval", "How trips are approved and booked.", (
                ("p", "All business trips must be approved in advance by the line manager. "
                      "Flights, rail tickets and hotels are booked through Reisewelt Travel "
                      "Management GmbH, either online or through its service desk."),
                ("p", "Bookings should be made at least 14 days before departure where "
                      "possible. Travellers choose the most economical option that meets the "
                      "purpose of the trip."),
            )),
            ("Means of Transport", "Travel classes for flights and rail, and private cars.", (
                ("p", f"{flight_s} {rail_s}"),
                ("p", f"{km_s} Taxis may be used when public transport is not reasonable, "
                      "for example late at night or with heavy luggage."),
            )),
            ("Per-Diem Allowances", "Daily allowances for meals by country.", (
                ("p", "Per-diem allowances cover meals and incidental costs. A partial day "
                      "applies to the day of arrival and departure and to trips of more than "
                      "eight hours without an overnight stay."),
                ("t", (("Country", "Full day", "Partial day"), diem)),
            )),
            ("Accommodation", "Maximum hotel rates per night by city.", (
                ("p", "Hotel costs are reimbursed up to the following caps per night, "
                      "including breakfast. Higher rates need the approval of the cost centre "
                      "manager before booking."),
                ("t", (("City", "Cap per night"), hotel)),
            )),
            ("Expense Reports", "How and when expenses are claimed.", (
                ("p", f"{report_s} Original receipts are scanned and attached in the "
                      "expense tool; the paper originals are kept for three months."),
            )),
        ),
        defs=(("per diem", "a flat daily allowance for meals and incidental costs on business "
                           "trips, paid instead of reimbursing individual receipts"),
              ("business trip", "any journey ordered by the company to a place other than "
                                "the employee's regular place of work")) if current else (),
        facts=tuple(facts), entities=("ENT-REISEWELT",), valid_from=date(year, 1, 1),
        valid_to=None if current else date(2023 if year == 2019 else 2025, 12, 31),
        version=f"{year - 2016}.0", quality=quality)


__all__ = ["DEF_QUESTIONS", "SEED", "definition_sentence", "generate"]
