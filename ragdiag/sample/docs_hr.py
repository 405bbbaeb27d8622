"""HR records: salary bands, the bonus plan and individual salary records (``hr_record``).

All HR documents are restricted to the ``hr`` group: a sales user asking about
salaries must get nothing. Older personnel files are scans.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from ragdiag.sample import DocBuilder, Fact, date_en, iso, money, money_de, table_row
from ragdiag.sample.vocab import FIRST_NAMES, LAST_NAMES, OFFICERS, SITES

SEED = 4404
GROUPS = ["hr"]
GRADES = ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9")
BASE_MID_2026 = (38_000, 44_500, 51_000, 58_500, 67_000, 77_500, 90_000, 106_000, 125_000)
BONUS = (0, 0, 3, 5, 8, 10, 12, 15, 20)
POSITIONS = (
    ("E2", "Assembly Technician", "Production"), ("E3", "Service Technician", "Customer Service"),
    ("E3", "Purchasing Assistant", "Procurement"), ("E4", "Sales Engineer", "Sales"),
    ("E4", "Accountant", "Finance"), ("E5", "Software Engineer", "Engineering"),
    ("E5", "Quality Engineer", "Quality"), ("E5", "Key Account Manager", "Sales"),
    ("E6", "Senior Hydraulics Engineer", "Engineering"), ("E6", "HR Business Partner", "HR"),
    ("E6", "Legal Counsel", "Legal"), ("E7", "Team Lead Field Service", "Customer Service"),
    ("E7", "Production Manager", "Production"), ("E7", "Head of Controlling", "Finance"),
    ("E8", "Head of Procurement", "Procurement"), ("E8", "Head of Engineering", "Engineering"),
    ("E4", "Logistics Coordinator", "Logistics"), ("E3", "Customer Service Agent",
                                                   "Customer Service"),
    ("E6", "Product Manager", "Product Management"), ("E5", "IT System Administrator", "IT"),
)


def _bands(year: int) -> list[tuple[str, int, int, int, int]]:
    f = {2024: 0.935, 2025: 0.965, 2026: 1.0}[year]
    out = []
    for g, mid, bonus in zip(GRADES, BASE_MID_2026, BONUS, strict=True):
        m = round(mid * f / 100) * 100
        out.append((g, round(m * 0.8 / 100) * 100, m, round(m * 1.2 / 100) * 100, bonus))
    return out


def _band_doc(n: int, year: int, rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    bands = _bands(year)
    current = year == 2026
    b = DocBuilder(f"HRR-{n:04d}", f"Salary Bands Germany {year}", "hr_record",
                   group_ids=list(GROUPS), valid_from=iso(date(year, 1, 1)),
                   valid_to=None if current else iso(date(year, 12, 31)),
                   last_updated=iso(date(year - 1, 12, rng.randint(1, 15))),
                   scan_quality=rng.uniform(0.91, 0.97),
                   summary=f"Salary bands for grades E1 to E9 at Muster's German sites for "
                           f"{year}, with minimum, midpoint and maximum annual base salary and "
                           f"bonus targets. Confidential: HR only.")
    b.section("Purpose and Scope", "What the salary bands are for and whom they cover.")
    b.para(f"This document sets the salary bands that apply from 1 January {year} to all "
           "employees of Muster AG in Germany who are not covered by a collective agreement.",
           "The bands are reviewed every year by the compensation committee on the basis of "
           "an external market benchmark.",
           "They are confidential and may only be shared with line managers in the context of "
           "an individual salary decision.")
    b.section(f"Salary Bands {year}", "Annual base salary ranges and bonus targets by grade.")
    rows = [[g, money(lo), money(mid), money(hi), f"{bo}%"] for g, lo, mid, hi, bo in bands]
    b.table(["Grade", "Minimum", "Midpoint", "Maximum", "Bonus target"], rows)
    b.section("Placement in the Band", "How a salary is positioned within its band.")
    b.para("New hires are normally placed between the minimum and the midpoint of their band.",
           "A position above the midpoint requires sustained performance above expectations "
           "and the approval of the HR business partner.",
           "Salaries above the maximum are frozen until the band catches up; the employee "
           "receives a one-off payment instead of a raise.")
    b.section("Annual Review", "Timeline and budget of the salary review.")
    budget = rng.choice(["3.0", "3.5", "4.0"])
    b.para(f"The merit budget for the {year} review is {budget}% of the base salary total.",
           "Managers submit their proposals by 15 February; increases take effect on 1 April.",
           "Promotions to a higher grade come with an increase of at least 5%.")
    mid_row = rng.choice(rows[3:8])
    b.fact("table", table_row(mid_row),
           rng.choice([f"What is the midpoint salary for grade {mid_row[0]} in the {year} "
                       f"salary bands?",
                       f"In {year}, what did the salary band for grade {mid_row[0]} look like?"]),
           mid_row[2])
    top = rows[-1]
    b.fact("table", table_row(top), f"What is the bonus target for grade E9 in {year}?", top[4])
    b.fact("fact", f"The merit budget for the {year} review is {budget}% of the base salary "
           "total.", f"How large was the merit increase budget in the {year} salary review?",
           f"{budget}%")
    return b.build(pages=3)


def _swiss_doc(n: int, rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    b = DocBuilder(f"HRR-{n:04d}", "Gehaltsbänder Muster Schweiz AG 2026", "hr_record",
                   language="de", group_ids=list(GROUPS), valid_from=iso(date(2026, 1, 1)),
                   last_updated=iso(date(2025, 12, 10)), scan_quality=0.94,
                   summary="Gehaltsbänder der Muster Schweiz AG in Basel für 2026 in CHF, "
                           "Stufen E1 bis E9. Vertraulich: nur HR.")
    b.section("Geltungsbereich", "Für wen die Gehaltsbänder gelten.")
    b.para("Diese Gehaltsbänder gelten ab dem 01.01.2026 für alle Mitarbeitenden der Muster "
           "Schweiz AG am Standort Basel.",
           "Die Werte werden jährlich anhand eines externen Lohnvergleichs überprüft.")
    b.section("Gehaltsbänder 2026", "Jahresgrundgehalt in CHF nach Stufe.")
    rows = [[g, money_de(round(mid * 1.32, -2) * 0.8, "CHF"), money_de(round(mid * 1.32, -2), "CHF"),
             money_de(round(mid * 1.32, -2) * 1.2, "CHF")]
            for g, mid in zip(GRADES, BASE_MID_2026, strict=True)]
    b.table(["Stufe", "Minimum", "Mittelwert", "Maximum"], rows)
    b.section("Zulagen", "Zulagen und 13. Monatslohn.")
    b.para("Das Jahresgehalt wird in 13 Monatslöhnen ausbezahlt.",
           "Mitarbeitende im Schichtbetrieb erhalten eine Schichtzulage von 12 Prozent.")
    row = rows[4]
    b.fact("table", table_row(row), "What is the midpoint salary for grade E5 at Muster "
           "Schweiz AG in Basel?", row[2])
    return b.build(pages=2)


def _bonus_doc(n: int) -> tuple[dict[str, Any], list[Fact]]:
    b = DocBuilder(f"HRR-{n:04d}", "Annual Bonus Plan 2026", "hr_record", group_ids=list(GROUPS),
                   valid_from=iso(date(2026, 1, 1)), last_updated=iso(date(2025, 11, 20)),
                   scan_quality=0.95,
                   summary="Rules of the 2026 bonus plan: company and individual targets, "
                           "payout range and timing. Confidential: HR only.")
    b.section("Bonus Formula", "How the bonus is calculated.")
    b.para("The bonus equals the bonus target of the grade multiplied by a company factor and "
           "an individual factor.",
           "The company factor depends on the EBIT margin of the Muster Group and ranges from "
           "0 to 1.5.",
           "The individual factor reflects the agreed objectives and ranges from 0.5 to 1.3.")
    b.section("Payout", "When and how the bonus is paid.")
    payout = "The bonus for 2026 is paid with the April 2027 salary."
    b.para(payout, "Employees who leave before 31 December receive a pro-rata bonus only if "
           "they retire or leave for operational reasons.")
    b.fact("fact", payout, "When will the 2026 bonus be paid out?", "April 2027")
    return b.build(pages=2)


def _record(n: int, emp: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    name, eid, (grade, pos, dept), site = emp["name"], emp["id"], emp["pos"], emp["site"]
    gi = GRADES.index(grade)
    bands = _bands(2026)
    lo, mid, hi = bands[gi][1], bands[gi][2], bands[gi][3]
    salary = round(rng.uniform(lo, hi * 0.98) / 100) * 100
    entry = emp["entry"]
    scanned = entry.year < 2014
    b = DocBuilder(f"HRR-{n:04d}", f"Salary Record {name} ({eid})", "hr_record",
                   group_ids=list(GROUPS), valid_from=iso(entry),
                   last_updated=iso(date(2026, 4, 1)),
                   scan_quality=rng.uniform(0.7, 0.8) if scanned else rng.uniform(0.9, 0.97),
                   summary=f"Confidential salary record of {name}, {pos} in {dept} at the "
                           f"{site} site, grade {grade}. Current base salary, bonus target and "
                           "salary history.")
    b.section("Employee Details and Compensation",
              "Position, grade, site, manager and the current base salary and bonus target.")
    b.bullets([f"Employee ID: {eid}", f"Name: {name}", f"Position: {pos}",
               f"Department: {dept}", f"Site: {site}", f"Grade: {grade}",
               f"Entry date: {date_en(entry)}", f"Manager: {emp['manager']}"])
    pay_sent = rng.choice([
        f"Since 1 April 2026 the annual base salary of {name} is {money(salary)}.",
        f"{name} earns an annual base salary of {money(salary)} effective 1 April 2026.",
    ])
    bonus = BONUS[gi]
    b.para(pay_sent, f"The bonus target is {bonus}% of the base salary." if bonus else
           "The position is not eligible for the annual bonus.",
           f"The salary sits at {round(100 * salary / mid)}% of the band midpoint.",
           rng.choice(["A company car of category B is provided.",
                       "The employee receives a monthly mobility allowance of EUR 80.",
                       "The employee participates in the company pension plan with a 4% "
                       "employer contribution."]))
    b.section("Salary History", "Base salary changes over the last years.")
    hist, s = [], salary
    for year in (2026, 2025, 2024, 2023):
        if year < entry.year:
            break
        pct = rng.choice([0.0, 2.5, 3.0, 3.5, 4.0, 6.0])
        reason = "promotion" if pct >= 6 else "merit increase" if pct else "no change"
        hist.append([str(year), money(s), f"{pct:g}%", reason])
        s = round(s / (1 + pct / 100) / 100) * 100
    b.table(["Year", "Base salary", "Change", "Reason"], hist)
    b.section("Review Notes", "Notes from the last performance and salary review.")
    note = rng.choice(["exceeded the agreed objectives", "met all agreed objectives",
                       "met most objectives, with room to grow in project planning"])
    b.para(f"In the 2025 review, {name.split()[0]} {note}.",
           rng.choice(["A development plan towards the next grade was agreed.",
                       "No change of grade is planned for the next twelve months.",
                       "The manager recommends a leadership training in 2026."]),
           f"The review was signed off by {OFFICERS['hr']} from HR.")
    b.fact("fact", pay_sent, rng.choice([f"What is {name}'s annual base salary?",
                                         f"How much does {name} earn per year?",
                                         f"What salary does {name} ({pos}) get?"]),
           money(salary), attr="salary", label=name)
    if len(hist) > 1:
        b.fact("table", table_row(hist[1]),
               f"What was {name}'s base salary in {hist[1][0]}?", hist[1][1])
    return b.build(pages=3)


def _employees(rng: random.Random) -> list[dict[str, Any]]:
    names: set[str] = set()
    out = []
    for i, pos in enumerate(POSITIONS):
        while True:
            name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            if name not in names:
                names.add(name)
                break
        out.append({"name": name, "id": f"EMP-{1000 + rng.randrange(9000)}", "pos": pos,
                    "site": rng.choice([s[0] for s in SITES[:2]]),
                    "entry": date(rng.randint(2006, 2024), rng.randint(1, 12), 1),
                    "manager": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
                    "i": i})
    return sorted(out, key=lambda e: e["name"])


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """HR documents (HRR-0001..) and their facts."""
    rng = random.Random(SEED)
    parts = [_band_doc(1, 2024, rng), _band_doc(2, 2025, rng), _band_doc(3, 2026, rng),
             _swiss_doc(4, rng), _bonus_doc(5)]
    for n, emp in enumerate(_employees(rng), 6):
        parts.append(_record(n, emp, rng))
    docs = [d for d, _ in parts]
    facts = [f for _, fs in parts for f in fs]
    return docs, facts


__all__ = ["SEED", "generate"]
