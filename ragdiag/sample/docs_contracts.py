"""Framework contracts between Muster AG and its partners (doc_type ``contract``).

One current contract per partner; some partners also have an older, scanned
contract that was terminated and replaced, and a few relationships ended when a
fixed term ran out. The contracts share their boilerplate and differ in partner,
numbers and dates, so the entity name decides which one answers a question.
German partners sometimes have German contracts (``contract_de`` helpers).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ragdiag.sample import (
    REFERENCE_DATE,
    DocBuilder,
    Fact,
    add_months,
    date_de,
    date_en,
    iso,
    money,
    money_de,
    table_row,
)
from ragdiag.sample.contract_phrases import (
    CONTRACT_DE,
    CONTRACT_EN,
    CONTRACT_SECTIONS,
    NOTICE_ANCHORS,
    NOTICE_ANCHORS_DE,
    NUMBER_WORDS,
    SECTION_SUMMARIES_DE,
    SECTION_SUMMARIES_EN,
)
from ragdiag.sample.vocab import (
    FAMILIES,
    FAMILIES_DE,
    MUSTER_ADDRESS,
    OFFICERS,
    PARTNER_CONTACTS,
    PARTNERS,
    Partner,
)

SEED = 1101
GROUPS = ["legal", "sales", "finance"]
KINDS = {
    "customer": "Framework Supply Agreement",
    "supplier": "Framework Purchase Agreement",
    "service": "Master Services Agreement",
}
KINDS_DE = {
    "customer": "Rahmenliefervertrag",
    "supplier": "Rahmeneinkaufsvertrag",
    "service": "Rahmendienstleistungsvertrag",
}


@dataclass
class Terms:
    """Everything that varies between two contracts."""

    partner: Partner
    start: date
    years: int
    renewal: bool
    end: date | None = None  # valid_to: fixed end or termination date
    terminated: date | None = None
    successor: Terms | None = None
    current: bool = True
    german: bool = False
    scanned: bool = False
    quality: float = 0.95
    notice_days: int = 90
    anchor: int = 0
    cap: int = 1_000_000
    currency: str = "EUR"
    pay_days: int = 30
    discount: bool = False
    warranty: int = 24
    law: tuple[str, str, str] = ("German law", "Stuttgart", "deutschem Recht")
    incoterm: str = "FCA"
    lead_weeks: int = 6
    target: float = 97.0
    response_h: int = 8
    credit_pct: int = 2
    credit_cap: int = 10
    index_cap: float = 3.0
    doc_id: str = ""
    number: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return (KINDS_DE if self.german else KINDS)[self.partner.role]

    @property
    def active(self) -> bool:
        return self.current and (self.end is None or self.end >= REFERENCE_DATE)

    @property
    def cap_label(self) -> str:
        return money_de(self.cap, self.currency) if self.german else money(self.cap, self.currency)


def _law(p: Partner) -> tuple[str, str, str]:
    if p.country == "Switzerland":
        return ("Swiss law", "Zurich", "schweizerischem Recht")
    if p.country in ("United Kingdom", "Ireland"):
        return ("the laws of England and Wales", "London", "englischem Recht")
    if p.country == "United States":
        return ("the laws of the State of New York", "New York", "dem Recht des Staates New York")
    return ("German law", "Stuttgart", "deutschem Recht")


def _currency(p: Partner) -> str:
    return {"Switzerland": "CHF", "United Kingdom": "GBP", "United States": "USD"}.get(
        p.country, "EUR")


def _numbers(t: Terms, rng: random.Random) -> None:
    t.notice_days = rng.choice([30, 60, 90, 90, 120, 180])
    t.anchor = rng.randrange(4)
    t.cap = rng.choice([250_000, 500_000, 750_000, 1_000_000, 1_500_000, 2_000_000,
                        2_500_000, 5_000_000])
    t.currency = _currency(t.partner)
    t.pay_days = rng.choice([30, 30, 45, 60, 60, 90])
    t.discount = rng.random() < 0.4
    t.warranty = rng.choice([12, 18, 24, 24, 36])
    t.law = _law(t.partner)
    t.incoterm = rng.choice(["FCA", "DAP", "DDP", "CPT"])
    t.lead_weeks = rng.choice([4, 6, 8, 10, 12])
    if t.partner.role == "service":
        t.target = rng.choice([99.0, 99.5, 99.5, 99.8, 99.9])
    else:
        t.target = rng.choice([95.0, 96.0, 97.0, 97.5, 98.0, 98.5])
    t.response_h = rng.choice([2, 4, 8, 24])
    t.credit_pct = rng.choice([1, 2, 3, 5])
    t.credit_cap = rng.choice([10, 15, 20])
    t.index_cap = rng.choice([2.0, 2.5, 3.0, 4.0])


def _month_end(y: int, m: int) -> date:
    return add_months(date(y, m, 1), 1) - timedelta(days=1)


def plan(rng: random.Random) -> list[Terms]:
    """All contracts, numbered CON-0001... in order of their start date."""
    order = list(PARTNERS)
    rng.shuffle(order)
    twice = {p.key for p in order[:24]}
    ended = {p.key for p in order[24:30]}
    out: list[Terms] = []
    for p in PARTNERS:
        if p.key in twice:
            old = Terms(p, date(rng.randint(2012, 2017), rng.choice([1, 4, 7, 10]), 1),
                        rng.choice([3, 4, 5]), True, current=False)
            stop = _month_end(rng.randint(max(old.start.year + 3, 2018), 2022),
                              rng.choice([3, 6, 9, 12]))
            old.terminated = old.end = stop
            new = Terms(p, stop + timedelta(days=1), rng.choice([2, 3, 4, 5]),
                        rng.random() < 0.6)
            old.successor = new
            out += [old, new]
        elif p.key in ended:
            t = Terms(p, date(rng.randint(2016, 2021), rng.choice([1, 4, 7, 10]), 1),
                      rng.choice([3, 4]), False)
            t.end = add_months(t.start, 12 * t.years) - timedelta(days=1)
            if t.end >= REFERENCE_DATE:
                t.start = date(t.start.year - 2, t.start.month, 1)
                t.end = add_months(t.start, 12 * t.years) - timedelta(days=1)
            out.append(t)
        else:
            out.append(Terms(p, date(rng.randint(2019, 2025), rng.choice([1, 4, 7, 10]), 1),
                             rng.choice([2, 3, 4, 5]), rng.random() < 0.6))
    for t in out:
        if not t.renewal and t.end is None and t.terminated is None:
            t.end = add_months(t.start, 12 * t.years) - timedelta(days=1)
            if t.end < REFERENCE_DATE:  # a current fixed-term contract must still run
                t.years += REFERENCE_DATE.year - t.end.year + 1
                t.end = add_months(t.start, 12 * t.years) - timedelta(days=1)
        _numbers(t, rng)
        t.scanned = t.start.year < 2019
        t.quality = rng.uniform(0.68, 0.8) if t.scanned else rng.uniform(0.9, 0.98)
    german = [t for t in out if t.partner.german]
    german.sort(key=lambda t: (t.current, t.partner.key))
    for t in german[:8]:
        t.german = True
    out.sort(key=lambda t: (t.start, t.partner.key))
    for i, t in enumerate(out, 1):
        t.doc_id = f"CON-{i:04d}"
        t.number = f"MA-{t.partner.role[:3].upper()}-{t.start.year}-{i:03d}"
    return out


def _families(t: Terms) -> str:
    if t.german:
        return " und ".join(FAMILIES_DE[f] for f in t.partner.families) or "Dienstleistungen"
    return " and ".join(FAMILIES[f][0] + "s" for f in t.partner.families) or "services"


def _ref(t: Terms, style: int, has_old: bool) -> str:
    """How a question names this contract."""
    p = t.partner
    name = p.name if style % 3 else p.short
    kind = KINDS[p.role].lower()
    if not t.current:
        return f"the {t.start.year} {kind} with {name}"
    if has_old:
        return f"the current agreement with {name}"
    words = ("our framework agreement with", "the contract with", f"our {kind} with",
             "the agreement we have with")
    return f"{words[style % len(words)]} {name}"


def _fields(t: Terms, rng: random.Random) -> dict[str, str]:
    p, de = t.partner, t.german
    fmt = date_de if de else date_en
    payer = "Muster" if p.role != "customer" else p.short
    perf = "Muster" if p.role == "customer" else p.short
    ins = t.cap * 2 if t.cap < 2_000_000 else t.cap
    return {
        "kind": t.kind, "name": p.name, "short": p.short, "muster_addr": MUSTER_ADDRESS,
        "street": p.street, "city": p.city, "country": p.country, "what": p.what,
        "does": {"customer": p.what, "supplier": f"manufactures {p.what}",
                 "service": f"specialises in {p.what}"}[p.role],
        "fam": _families(t), "number": t.number, "start": fmt(t.start),
        "years": str(t.years) if de else NUMBER_WORDS.get(t.years, str(t.years)),
        "end": fmt(t.end) if t.end else "", "notice": str(t.notice_days),
        "anchor": (NOTICE_ANCHORS_DE if de else NOTICE_ANCHORS)[t.anchor], "cap": t.cap_label,
        "cur": t.currency, "pay": str(t.pay_days), "payer": payer, "perf": perf,
        "site": rng.choice(["Stuttgart", "Chemnitz", "Brno", "Basel"]), "incoterm": t.incoterm,
        "lead": str(t.lead_weeks), "target": f"{t.target:g}", "credit": str(t.credit_pct),
        "credit_cap": str(t.credit_cap), "index": f"{t.index_cap:g}", "warranty": str(t.warranty),
        "law": t.law[2] if de else t.law[0], "court": {"Zurich": "Zürich"}.get(t.law[1], t.law[1]) if de else t.law[1],
        "contact": PARTNER_CONTACTS[PARTNERS.index(p) % len(PARTNER_CONTACTS)],
        "muster_sig": OFFICERS[{"customer": "sales", "supplier": "procurement",
                                "service": "cfo"}[p.role]],
        "sign_date": fmt(t.start - timedelta(days=rng.randint(5, 40))),
        "rel": {"customer": "customer", "supplier": "supplier",
                "service": "service provider"}[p.role],
        "since": str(t.start.year - rng.randint(0, 6)),
        "ins": money_de(ins, t.currency) if de else money(ins, t.currency),
        "term_end": fmt(t.terminated) if t.terminated else "",
        "successor": t.successor.number if t.successor else "",
        "succ_start": fmt(t.successor.start) if t.successor else "",
    }


def contract_text(t: Terms, b: DocBuilder, rng: random.Random) -> dict[str, str]:
    """Write the contract's sections into `b`; return the sentences facts point at."""
    de = t.german
    bank = CONTRACT_DE if de else CONTRACT_EN
    f = _fields(t, rng)
    role = t.partner.role

    def say(key: str) -> str:
        return rng.choice(bank[key]).format(**f)

    heads = CONTRACT_SECTIONS["de" if de else "en"]
    sums = SECTION_SUMMARIES_DE if de else SECTION_SUMMARIES_EN
    c: dict[str, str] = {}
    b.section(heads[0], sums[0].format(**f)).para(say("parties"), say("background"))
    b.para(say("recitals"))
    b.para(say("contacts"))
    b.section(heads[1], sums[1].format(**f)).para(say(f"scope_{role}"))
    b.para(say("coverage") if role == "service" else say("delivery"),
           "" if role == "service" else say("forecast"))
    b.para(say("changes"))
    b.section(heads[2], sums[2].format(**f))
    c["notice"] = say("notice")
    if t.renewal or t.terminated:
        c["renewal"] = say("renewal")
        b.para(say("term"), c["renewal"], c["notice"])
    else:
        c["end"] = say("end")
        b.para(say("term"), c["end"], c["notice"])
    b.para(say("cause"), say("aftermath"))
    b.section(heads[3], sums[3].format(**f))
    c["pay"] = say("pay")
    b.para(say("prices"), c["pay"], say("discount") if t.discount else "", say("late"))
    b.para(say("invoicing"))
    b.section(heads[4], sums[4].format(**f))
    c["sla"] = say("sla_service" if role == "service" else "sla_goods")
    b.para(c["sla"], say("credit"), say("report"))
    if de:
        metric = "Verfügbarkeit" if role == "service" else "Liefertreue"
        resp = (["Reaktionszeit bei kritischen Störungen", f"{t.response_h} Stunden", "keine"]
                if role == "service" else
                ["Reaktion auf Reklamationen", f"{t.response_h} Stunden", "keine"])
        rows = [[metric, f"{t.target:g} %", f"{t.credit_pct} % je Punkt, max. {t.credit_cap} %"],
                resp, ["Monatsbericht", "bis zum 10. Arbeitstag", "keine"]]
        b.table(["Kennzahl", "Zielwert", "Gutschrift"], rows)
        c["sla_row_answer"] = f"{t.response_h} Stunden"
    else:
        metric = "Availability" if role == "service" else "On-time delivery"
        resp = (["Response to critical incidents", f"{t.response_h} hours", "none"]
                if role == "service" else
                ["Response to quality complaints", f"{t.response_h} hours", "none"])
        rows = [[metric, f"{t.target:g}%", f"{t.credit_pct}% per point, max {t.credit_cap}%"],
                resp, ["Monthly report", "10th working day", "none"]]
        b.table(["Metric", "Target", "Service credit"], rows)
        c["sla_row_answer"] = f"{t.response_h} hours"
    c["sla_row"] = table_row(resp)
    b.section(heads[5], sums[5].format(**f))
    c["warranty"], c["cap"] = say("warranty"), say("cap")
    b.para(c["warranty"], say("insurance"))
    b.para(c["cap"], say("exclusions"))
    b.section(heads[6], sums[6].format(**f)).para(say("quality"), say("audit"))
    b.para(say("subcontract"))
    b.section(heads[7], sums[7].format(**f)).para(say("confidentiality"), say("privacy"))
    c["law"] = say("law")
    b.section(heads[8], sums[8].format(**f)).para(c["law"], say("court"), say("written"))
    b.para(say("boilerplate"), say("signed"))
    if t.terminated:
        c["termination"] = say("terminated")
        b.section(heads[9], sums[9].format(**f)).para(c["termination"])
    return c


def build_contract(t: Terms, rng: random.Random, has_old: bool) -> tuple[dict, list[Fact]]:
    p = t.partner
    title = (f"{t.kind} mit {p.name} ({t.start.year})" if t.german
             else f"{t.kind} {p.name} ({t.start.year})")
    b = DocBuilder(t.doc_id, title, "contract", language="de" if t.german else "en",
                   entity_keys=[p.key, "ENT-MUSTER"], group_ids=list(GROUPS),
                   valid_from=iso(t.start), valid_to=iso(t.end),
                   last_updated=iso(t.terminated or t.start + timedelta(days=rng.randint(0, 40))),
                   scan_quality=t.quality)
    c = contract_text(t, b, rng)
    b.summary = _summary(t)
    _facts(t, b, c, rng, has_old)
    return b.build()


def _summary(t: Terms) -> str:
    p = t.partner
    if t.german:
        fmt = date_de
        state = (f"Der Vertrag wurde zum {fmt(t.terminated)} aufgehoben." if t.terminated else
                 f"Er endet am {fmt(t.end)}." if t.end else
                 "Er verlängert sich automatisch um jeweils zwölf Monate.")
        return (f"{t.kind} zwischen der Muster AG und der {p.name} ({_families(t)}), gültig ab "
                f"{fmt(t.start)}. {state} Kündigungsfrist {t.notice_days} Tage, Haftung "
                f"begrenzt auf {t.cap_label}.")
    state = (f"It was terminated with effect from {date_en(t.terminated)} and replaced."
             if t.terminated else f"It ends on {date_en(t.end)}." if t.end else
             "It renews automatically for twelve-month periods.")
    return (f"{t.kind} between Muster AG and {p.name} covering {_families(t)}, effective "
            f"{date_en(t.start)}. {state} Notice period {t.notice_days} days; liability "
            f"capped at {t.cap_label}.")


def _facts(t: Terms, b: DocBuilder, c: dict[str, str], rng: random.Random,
           has_old: bool) -> None:
    p, de = t.partner, t.german
    s = rng.randrange(12)
    ref = _ref(t, s, has_old)
    cmp = {"entity": p.key}
    days = f"{t.notice_days} Tagen" if de else f"{t.notice_days} days"
    qs = [f"What notice period applies to {ref}?",
          f"How much notice do we need to give to terminate {ref}?",
          f"If we wanted to end {ref}, how far in advance would we have to tell them?",
          f"What is the termination notice in {ref}?"]
    b.fact("fact", c["notice"], qs[s % 4], days, attr="notice_days" if t.active else None,
           value=t.notice_days, label=days, **cmp)
    qs = [f"What is the liability cap in {ref}?",
          f"Up to what amount is liability limited under {ref}?",
          f"What is the maximum aggregate liability agreed in {ref}?"]
    b.fact("fact", c["cap"], qs[s % 3], t.cap_label, attr="liability_cap" if t.active else None,
           value=t.cap, label=t.cap_label, **cmp)
    pay = f"{t.pay_days} Tagen" if de else f"{t.pay_days} days"
    qs = [f"What are the payment terms in {ref}?",
          f"Within how many days do invoices under {ref} have to be paid?",
          f"How long is the payment period agreed in {ref}?"]
    b.fact("fact", c["pay"], qs[s % 3], pay, attr="payment_days" if t.active else None,
           value=t.pay_days, label=pay, **cmp)
    war = f"{t.warranty} Monate" if de else f"{t.warranty} months"
    qs = [f"How long is the warranty period under {ref}?",
          f"For how many months are defects covered by {ref}?"]
    b.fact("fact", c["warranty"], qs[s % 2], war, attr="warranty_months" if t.active else None,
           value=t.warranty, label=war, **cmp)
    law = t.law[2] if de else t.law[0]
    qs = [f"Which law governs {ref}?", f"Under which jurisdiction's law was {ref} concluded?"]
    b.fact("fact", c["law"], qs[s % 2], law, **cmp)
    sla = f"{t.target:g} %" if de else f"{t.target:g}%"
    metric = "availability" if p.role == "service" else "on-time delivery rate"
    b.fact("fact", c["sla"], f"What {metric} target is agreed in {ref}?", sla, **cmp)
    # table: the response-time row of the service level table
    b.fact("table", c["sla_row"],
           f"According to the service level table in {ref}, what response time applies?",
           c["sla_row_answer"], **cmp)
    # verification: validity
    if t.terminated is not None:
        d = date_de(t.terminated) if de else date_en(t.terminated)
        b.fact("verification", c["termination"],
               f"Is {ref} still in force?", d, **cmp)
    elif t.end is not None:
        d = date_de(t.end) if de else date_en(t.end)
        year = t.end.year + (1 if s % 2 else 0)
        expired = t.end < REFERENCE_DATE
        q = (f"Is it true that {ref} expired before {year}?" if expired and s % 3 else
             f"Has {ref} already expired?" if expired else
             f"Is it true that {ref} has already run out?" if s % 2 else
             f"Is {ref} still valid, or has it expired?")
        b.fact("verification", c["end"], q, d, **cmp)
    else:
        b.fact("verification", c["renewal"],
               f"Does {ref} end automatically after its initial term?" if s % 2 else
               f"Is it true that {ref} renews automatically?",
               "zwölf Monate" if de else "twelve months", **cmp)
    wrong = t.cap * 2 if s % 2 else t.cap // 2
    claim = money_de(wrong, t.currency) if de else money(wrong, t.currency)
    if s % 3 == 0:
        claim = t.cap_label
    b.fact("verification", c["cap"],
           f"Is it correct that liability under {ref} is capped at {claim}?", t.cap_label, **cmp)


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All contracts (sorted by doc_id) and the facts planted in them."""
    rng = random.Random(SEED)
    terms = plan(rng)
    has_old = {t.partner.key for t in terms if not t.current}
    docs, facts = [], []
    for t in terms:
        doc, fs = build_contract(t, rng, t.partner.key in has_old)
        docs.append(doc)
        facts += fs
    return docs, facts


__all__ = ["SEED", "Terms", "generate", "plan"]
