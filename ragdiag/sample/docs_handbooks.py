"""Handbooks (doc_type ``handbook``): glossaries and tables.

Glossary sections define each term exactly once in the corpus ("*term* means
..."); tables carry figures: revenue and EBIT by segment and region (annual
figures, finance only), headcount by site, accessory price lists, error codes,
quality KPIs, shipping rates, response times and more.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from ragdiag.sample import DocBuilder, Fact, iso, table_row
from ragdiag.sample.docs_policies import DEF_QUESTIONS, definition_sentence
from ragdiag.sample.handbook_texts import GLOSSARIES, HANDBOOK_SECTIONS
from ragdiag.sample.vocab import ACCESSORIES, OFFICERS, SITES

SEED = 6606
SEGMENTS = ("Motion Control", "Hydraulics", "Sensors", "Pneumatics", "Drives",
            "Service and Spare Parts")
REGIONS = ("Germany", "Switzerland and Austria", "Rest of Europe", "North America",
           "Asia-Pacific")


class _Hb:
    """One handbook under construction, with its counter for question variety."""

    def __init__(self, n: int, title: str, summary: str, rng: random.Random, *,
                 groups: tuple[str, ...] = ("all-staff",), quality: float | None = None,
                 updated: date = date(2025, 6, 1), language: str = "en",
                 entities: tuple[str, ...] = ()) -> None:
        self.rng = rng
        self.b = DocBuilder(f"HBK-{n:04d}", title, "handbook", summary=summary,
                            language=language, entity_keys=["ENT-MUSTER", *entities],
                            group_ids=list(groups), valid_from=iso(updated),
                            last_updated=iso(updated),
                            scan_quality=quality or rng.uniform(0.9, 0.98))
        self.n = n

    def intro(self, owner: str, audience: str, purpose: str) -> _Hb:
        de = self.b.language == "de"
        self.b.section("Über dieses Handbuch" if de else "About this Handbook",
                       "Zweck, Zielgruppe und Verantwortliche." if de else
                       "Purpose, audience and owner of the handbook.")
        if de:
            self.b.para(purpose, f"Es richtet sich an {audience}.",
                        f"Verantwortlich für den Inhalt ist {OFFICERS[owner]}.")
        else:
            self.b.para(purpose, f"It is written for {audience}.",
                        self.rng.choice([f"The handbook is maintained by {OFFICERS[owner]}.",
                                         f"{OFFICERS[owner]} owns this handbook and updates it "
                                         "at least once a year."]),
                        self.rng.choice(["Suggestions for improvement are welcome at any time.",
                                         "Where this handbook and a policy differ, the policy "
                                         "prevails.",
                                         "The latest version is always available on the "
                                         "intranet."]))
        return self

    def prose(self, key: str) -> _Hb:
        title, summary, paras = HANDBOOK_SECTIONS[key]
        self.b.section(title, summary)
        for p in paras:
            self.b.para(p)
        return self

    def glossary(self, key: str, title: str = "Glossary") -> _Hb:
        terms = GLOSSARIES[key]
        de = self.b.language == "de"
        self.b.section(title, "Begriffe und ihre Bedeutung." if de else
                       "Definitions of terms used in this handbook.")
        sents = []
        for i, (term, d) in enumerate(terms):
            s = definition_sentence(term, d, self.n + i, self.b.language)
            sents.append(s)
            q = DEF_QUESTIONS[(self.n * 3 + i) % len(DEF_QUESTIONS)].format(term=term)
            self.b.fact("definition", s, q, term)
        for i in range(0, len(sents), 2):
            self.b.para(*sents[i:i + 2])
        return self

    def table(self, title: str, summary: str, intro: str, header: list[str],
              rows: list[list[str]], asks: list[tuple[int, int, str]]) -> _Hb:
        """A section with a lead sentence and a table; `asks`: (row, column, question)."""
        self.b.section(title, summary).para(intro).table(header, rows)
        for r, c, q in asks:
            self.b.fact("table", table_row(rows[r]), q, rows[r][c])
        return self

    def build(self) -> tuple[dict[str, Any], list[Fact]]:
        return self.b.build()


def _series(rng: random.Random, start: float, years: int, growth: tuple[float, float]) -> list[float]:
    out = [start]
    for _ in range(years - 1):
        out.append(out[-1] * (1 + rng.uniform(*growth)))
    return out


def _annual(n: int, year: int, rng: random.Random, quality: float | None) -> tuple[dict, list]:
    years = [year - 2, year - 1, year]
    scale = {2019: 0.78, 2022: 0.88, 2025: 1.0}[year]
    h = _Hb(n, f"Annual Figures {year}", f"Key figures of the Muster Group for the financial "
            f"years {years[0]} to {year}: revenue by segment and region, EBIT by segment. "
            "Confidential: Finance only.", rng, groups=("finance",), quality=quality,
            updated=date(year + 1, 3, 15))
    h.intro("cfo", "the finance team and the Executive Board",
            f"This handbook collects the audited key figures of the Muster Group for {year} "
            "and the two previous years.")
    bases = (142, 118, 74, 61, 88, 45)
    seg = []
    for name, base in zip(SEGMENTS, bases, strict=True):
        vals = _series(rng, base * scale * rng.uniform(0.93, 1.07), 3, (-0.04, 0.09))
        seg.append([name, *(f"{v:.1f}" for v in vals)])
    hdr = ["Segment", *(f"FY{y} (EUR m)" for y in years)]
    r1, r2 = rng.sample(range(6), 2)
    h.table("Revenue by Segment", "Revenue of the six segments in EUR million.",
            "Revenue by segment in EUR million; service revenue includes spare parts and "
            "repairs.", hdr, seg,
            [(r1, 3, f"What revenue did the {seg[r1][0]} segment generate in {year}?"),
             (r2, 1, f"How much revenue did {seg[r2][0]} make in fiscal {years[0]}?")])
    reg = []
    for name, base in zip(REGIONS, (190, 64, 158, 74, 42), strict=True):
        vals = _series(rng, base * scale * rng.uniform(0.93, 1.07), 3, (-0.03, 0.1))
        reg.append([name, *(f"{v:.1f}" for v in vals)])
    r3 = rng.randrange(5)
    h.table("Revenue by Region", "Revenue by customer region in EUR million.",
            "Revenue by region of the customer's delivery address, in EUR million.",
            ["Region", *(f"FY{y} (EUR m)" for y in years)], reg,
            [(r3, 2, f"What were our sales in {reg[r3][0]} in {years[1]}?")])
    ebit = []
    for name in SEGMENTS:
        m = _series(rng, rng.uniform(5, 13), 3, (-0.15, 0.15))
        ebit.append([name, *(f"{x:.1f}%" for x in m)])
    r4 = rng.randrange(6)
    h.table("EBIT Margin by Segment", "Operating margin of each segment.",
            "EBIT margin by segment as a percentage of segment revenue.",
            ["Segment", *(f"FY{y}" for y in years)], ebit,
            [(r4, 3, f"What EBIT margin did {ebit[r4][0]} reach in {year}?")])
    h.prose(f"annual_{year}")
    return h.build()


def _glossary_book(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Muster Company Glossary", "Definitions of commercial and general terms used "
            "in Muster contracts, policies and handbooks.", rng, updated=date(2025, 11, 3))
    h.intro("legal", "all employees", "This glossary explains the terms that appear in Muster's "
            "contracts, price lists and internal documents.")
    return h.glossary("commercial", "Commercial Terms").glossary("general", "General Terms") \
        .prose("glossary_use").build()


def _finance(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Finance Handbook", "Month-end closing, payment runs, closing calendar and "
            "finance terms. Confidential: Finance only.", rng, groups=("finance",),
            updated=date(2025, 2, 1))
    h.intro("cfo", "the finance and accounting teams", "This handbook describes the "
            "routines of Muster's finance function.")
    h.prose("fin_close").prose("fin_payments")
    rows = [["Subsidiaries report figures", "WD 3", "Local finance"],
            ["Intercompany reconciliation", "WD 3", "Group accounting"],
            ["Accruals and provisions booked", "WD 4", "Group accounting"],
            ["Management report issued", "WD 5", "Controlling"],
            ["Executive Board review", "WD 8", "CFO"]]
    h.table("Closing Calendar", "Steps of the monthly closing by working day.",
            "The closing calendar lists each step by working day (WD) of the following month.",
            ["Step", "Deadline", "Responsible"], rows,
            [(3, 1, "By which working day is the monthly management report issued?"),
             (1, 2, "Who is responsible for the intercompany reconciliation at month end?")])
    return h.glossary("finance").build()


def _controlling(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Controlling Handbook", "Budget process, cost centre structure and controlling "
            "terms. Confidential: Finance only.", rng, groups=("finance",),
            updated=date(2025, 9, 1))
    h.intro("cfo", "controllers and cost centre managers", "This handbook explains planning "
            "and cost control at Muster.")
    h.prose("ctrl_planning")
    rows = [[f"CC-{c}", name, f"EUR {rng.randrange(400, 9000, 50):,}k"] for c, name in (
        (1100, "Executive Board office"), (2100, "Sales Germany"), (2200, "Sales International"),
        (3100, "Production Stuttgart"), (3200, "Production Chemnitz"), (4100, "Engineering"),
        (5100, "Customer Service"), (6100, "IT"))]
    h.table("Cost Centre Structure", "Main cost centres and their 2026 budgets.",
            "The main cost centres and their approved cost budgets for 2026.",
            ["Cost centre", "Name", "Budget 2026"], rows,
            [(6, 2, "What is the 2026 budget of the Customer Service cost centre?"),
             (5, 0, "Which cost centre number belongs to Engineering?")])
    return h.glossary("controlling").build()


def _sales(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Sales Handbook and Accessory Price List 2026", "Discount rules, quotations and "
            "the 2026 list prices of accessories (AC part numbers).", rng,
            updated=date(2026, 1, 5))
    h.intro("sales", "sales engineers and key account managers", "This handbook contains the "
            "rules for quotations and the accessory price list valid from 1 January 2026.")
    h.prose("sales_discounts")
    acc = [[sku, name, f"EUR {rng.randrange(12, 480):,}", str(rng.choice([1, 1, 5, 10]))]
           for sku, name in ACCESSORIES]
    hdr = ["Part number", "Description", "List price", "Pack size"]
    for i, (title, part) in enumerate((("Accessories: Controllers and Cabling", acc[:8]),
                                       ("Accessories: Valves and Fluid Power", acc[8:17]),
                                       ("Accessories: Drives and Options", acc[17:]))):
        r = rng.randrange(len(part))
        q = rng.choice([f"What does accessory {part[r][0]} cost?",
                        f"List price of the {part[r][1].lower()} ({part[r][0]})?",
                        f"How much is the {part[r][1].lower()}?"])
        h.table(title, f"List prices 2026, part {i + 1} of 3.",
                "Prices are net list prices per pack in EUR, excluding VAT and freight.",
                hdr, part, [(r, 2, q)])
    return h.build()


def _service(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Service Handbook", "Support levels, response times by priority, the general "
            "system error codes and service terms.", rng, updated=date(2025, 4, 14))
    h.intro("support", "support agents and field service engineers", "This handbook describes "
            "how Muster supports its customers after the sale.")
    h.prose("svc_levels")
    rows = [["Critical", "1 hour", "8 hours", "2 hours"], ["High", "4 hours", "2 working days",
                                                          "1 working day"],
            ["Medium", "1 working day", "5 working days", "3 working days"],
            ["Low", "2 working days", "20 working days", "none"]]
    h.table("Response Times", "Response and resolution targets by priority.",
            "Targets apply from the time the ticket is created.",
            ["Priority", "First response", "Target resolution", "Escalation after"], rows,
            [(1, 2, "What is the resolution target for a high-priority support ticket?"),
             (0, 1, "How quickly must we respond to a critical ticket?")])
    codes = [("E-1001", "Power supply out of range", "Check the 24 V supply"),
             ("E-1002", "Internal temperature high", "Check cabinet ventilation"),
             ("E-1005", "Configuration memory corrupt", "Restore the parameter backup"),
             ("E-1010", "Fieldbus not configured", "Load the fieldbus configuration"),
             ("E-1013", "Licence missing", "Install the licence key"),
             ("E-1017", "Clock not set", "Synchronise the clock via NTP"),
             ("E-1020", "Self-test failed", "Replace the unit and send it in for repair"),
             ("E-1024", "Watchdog reset", "Read the crash log and contact second level")]
    rows = [list(c) for c in codes]
    h.table("General System Error Codes", "Error codes shared by all Muster electronics.",
            "These codes can appear on any Muster product with electronics.",
            ["Code", "Meaning", "First action"], rows,
            [(2, 1, "What does the general system code E-1005 stand for?"),
             (6, 2, "What should a technician do when E-1020 appears?")])
    return h.glossary("service").build()


def _quality(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Quality Manual", "Muster's quality management system, quality KPIs by plant, "
            "complaint handling and quality terms.", rng, updated=date(2025, 8, 20))
    h.intro("quality", "all employees in production, engineering and purchasing", "The "
            "quality manual describes how Muster ensures the quality of its products.")
    h.prose("qm_system")
    rows = [[site, str(rng.randrange(40, 400)), str(rng.randrange(30, 300)),
             f"{rng.uniform(93, 99.5):.1f}%"] for site in ("Stuttgart", "Chemnitz", "Basel",
                                                           "Brno")]
    h.table("Quality KPIs by Plant", "Customer PPM and delivery performance per plant.",
            "Customer complaints in PPM and on-time delivery per plant.",
            ["Plant", "PPM 2024", "PPM 2025", "On-time delivery 2025"], rows,
            [(1, 2, "What was the customer PPM rate of the Chemnitz plant in 2025?"),
             (3, 3, "How good was Brno's on-time delivery in 2025?")])
    return h.prose("qm_complaints").glossary("quality").build()


def _quality_de(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Qualitätshandbuch Muster Schweiz AG", "Qualitätssicherung am Standort Basel "
            "und Begriffe der Qualitätssicherung.", rng, language="de",
            updated=date(2024, 11, 1))
    h.intro("quality", "alle Mitarbeitenden der Produktion in Basel", "Dieses Handbuch "
            "beschreibt die Qualitätssicherung der Muster Schweiz AG.")
    h.prose("qm_de")
    h.b.fact("fact", "Die Prüfprotokolle werden 15 Jahre aufbewahrt.", "How long are the test "
             "records of the Basel sensor production kept?", "15 Jahre")
    return h.glossary("quality_de", "Begriffe").build()


def _employee(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Employee Handbook Germany", "Working time, holidays, leave types, benefits and "
            "HR terms for employees in Germany.", rng, updated=date(2025, 1, 10))
    h.intro("hr", "all employees of Muster AG in Germany", "This handbook answers the most "
            "common questions about working at Muster.")
    h.prose("emp_time")
    h.b.fact("fact", "Employees are entitled to 30 days of paid holiday per calendar year, plus "
             "public holidays.", "How many vacation days do employees in Germany get?",
             "30 days")
    rows = [["Marriage", "2 days", "paid"], ["Birth of a child (partner)", "2 days", "paid"],
            ["Moving house", "1 day", "paid, once per year"],
            ["Death of a close relative", "3 days", "paid"],
            ["Caring for a sick child", "up to 10 days", "per child and year"]]
    h.table("Special Leave", "Paid special leave for personal events.",
            "In addition to holidays, employees receive special leave for the following "
            "events.", ["Occasion", "Leave", "Notes"], rows,
            [(2, 1, "How much time off do I get when I move flat?"),
             (3, 1, "How many days of special leave are granted after the death of a close "
              "relative?")])
    return h.prose("emp_benefits").glossary("employee").build()


def _employee_de(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Mitarbeiterhandbuch Muster Schweiz AG", "Ferien, Feiertage und Arbeitszeit "
            "für Mitarbeitende der Muster Schweiz AG in Basel.", rng, language="de",
            updated=date(2025, 3, 1))
    h.intro("hr", "alle Mitarbeitenden in Basel", "Dieses Handbuch fasst die wichtigsten "
            "Regeln für die Arbeit bei der Muster Schweiz AG zusammen.")
    h.prose("emp_de")
    h.b.fact("fact", "Mitarbeitende der Muster Schweiz AG haben Anspruch auf 25 Ferientage pro "
             "Kalenderjahr, ab dem 50. Altersjahr auf 30 Ferientage.", "How much annual leave "
             "do employees in Basel get?", "25 Ferientage")
    return h.build()


def _sites(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Site Handbook", "Muster's sites, what they do, headcount by site 2023 to 2025 "
            "and site security rules.", rng, updated=date(2026, 2, 1))
    h.intro("ceo", "all employees and new managers", "This handbook introduces Muster's "
            "locations.")
    h.b.section("Our Sites", "What each site does.")
    for city, country, what in SITES:
        h.b.para(f"{city} ({country}): {what}.")
    rows = []
    for (city, _, _), base in zip(SITES, (1450, 820, 310, 540, 45, 60), strict=True):
        a = round(base * rng.uniform(0.93, 1.0))
        b2 = round(a * rng.uniform(0.97, 1.06))
        c = round(b2 * rng.uniform(0.97, 1.06))
        rows.append([city, f"{a:,}", f"{b2:,}", f"{c:,}"])
    h.table("Headcount by Site", "Employees (headcount) at year end.",
            "Headcount at 31 December, including apprentices and excluding temporary staff.",
            ["Site", "2023", "2024", "2025"], rows,
            [(1, 3, "How many people worked at the Chemnitz plant at the end of 2025?"),
             (3, 2, "What was the headcount in Brno in 2024?"),
             (2, 1, "How many employees did the Basel site have at year end 2023?")])
    return h.prose("site_security").build()


def _logistics(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Logistics Handbook", "Material flow through the central warehouse run by "
            "Alpenblick Logistik, shipping rates and transit times by zone, logistics terms.",
            rng, updated=date(2025, 10, 1), entities=("ENT-ALPENBLICK",))
    h.intro("procurement", "logistics, sales and customer service", "This handbook explains "
            "how goods move from Muster's plants to customers.")
    h.prose("log_flow")
    zones = [("Zone 1: Germany", 1), ("Zone 2: Switzerland and Austria", 2),
             ("Zone 3: Benelux and France", 2), ("Zone 4: Rest of EU", 3),
             ("Zone 5: United Kingdom", 3), ("Zone 6: Overseas (air)", 5)]
    rows = [[z, f"EUR {rng.randrange(60, 140) * m}", f"EUR {rng.randrange(9, 20) * m}",
             f"{m}-{m + 2} days"] for z, m in zones]
    h.table("Shipping Rates", "Freight rates and transit times by zone.",
            "Rates charged by Alpenblick Logistik AG per pallet and per parcel, valid for 2026.",
            ["Zone", "Pallet", "Parcel", "Transit time"], rows,
            [(4, 1, "What does a pallet shipment to the UK cost with Alpenblick?"),
             (1, 3, "How long does a shipment to Switzerland take?")])
    return h.glossary("logistics").build()


def _engineering(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Engineering Standards Handbook", "Drawing release, general tolerances, "
            "tightening torques and engineering terms.", rng, quality=0.74,
            updated=date(2017, 5, 1))
    h.intro("quality", "design and manufacturing engineers", "This handbook sets the "
            "engineering standards that apply to all Muster drawings.")
    h.prose("eng_drawings")
    rows = [["M4", "2.9 Nm", "4.1 Nm"], ["M5", "5.7 Nm", "8.1 Nm"], ["M6", "9.9 Nm", "14 Nm"],
            ["M8", "24 Nm", "34 Nm"], ["M10", "48 Nm", "68 Nm"], ["M12", "84 Nm", "117 Nm"]]
    h.table("Tightening Torques", "Standard torques for metric screws.",
            "Tightening torques for metric screws with a friction coefficient of 0.12.",
            ["Thread", "Strength class 8.8", "Strength class 10.9"], rows,
            [(3, 1, "What torque should an M8 screw of class 8.8 be tightened to?"),
             (5, 2, "Tightening torque for an M12 bolt, grade 10.9?")])
    return h.glossary("engineering").build()


def _it(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "IT Handbook", "Muster's business applications, who hosts and supports them, "
            "service desk hours and IT terms.", rng, updated=date(2025, 12, 1),
            entities=("ENT-CLEARPATH", "ENT-LUMEN"))
    h.intro("cfo", "all employees", "This handbook explains which IT systems Muster uses and "
            "how to get help.")
    h.prose("it_systems")
    rows = [["ERP", "Orders, purchasing, finance", "Lumen Cloud Hosting", "24/7"],
            ["PLM", "Drawings and product data", "Muster data centre", "working days"],
            ["CRM", "Customers and opportunities", "Vendor cloud", "24/7"],
            ["HR portal", "Leave, payslips, reviews", "Quantum Payroll", "working days"],
            ["Ticket system", "Customer support tickets", "Muster data centre", "24/7"]]
    h.table("Business Applications", "Main systems and their hosting.",
            "The main business applications, where they run and when they are supported.",
            ["System", "Used for", "Hosted by", "Support"], rows,
            [(3, 2, "Who hosts the HR portal?"), (1, 3, "When is the PLM system supported?")])
    return h.glossary("it").build()


def _onboarding(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Onboarding Handbook", "The first week at Muster: schedule, accounts, "
            "equipment and mandatory training.", rng, updated=date(2025, 7, 1))
    h.intro("hr", "new employees and their managers", "Welcome to Muster! This handbook "
            "guides you through your first days.")
    rows = [["Monday", "Welcome, badge, laptop and accounts", "HR and IT"],
            ["Tuesday", "Plant tour and safety briefing", "Site safety officer"],
            ["Wednesday", "Product training", "Product management"],
            ["Thursday", "Meetings with key colleagues", "Manager"],
            ["Friday", "Feedback talk", "Manager and HR"]]
    h.table("Your First Week", "Schedule of the first week.",
            "A typical first week for new employees at the Stuttgart headquarters.",
            ["Day", "Programme", "With"], rows,
            [(1, 0, "On which day of the first week is the safety briefing?")])
    return h.prose("onb_accounts").build()


def _portfolio(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Product Portfolio Overview 2026", "Muster's five product families, their "
            "number of SKUs, revenue share and typical applications.", rng,
            updated=date(2026, 3, 1))
    h.intro("sales", "sales, service and new employees", "This overview summarises Muster's "
            "product families.")
    fams = (("MX", "Motion controllers", "packaging, robotics, machine tools"),
            ("HX", "Hydraulic valves", "presses, cranes, mobile machinery"),
            ("SN", "Pressure sensors", "water, food, process industry"),
            ("PV", "Pneumatic valves", "packaging, food and beverage"),
            ("DR", "Gear motor drives", "conveyors, solar trackers, lifts"))
    rows = [[code, name, "8", f"{share}%", apps] for (code, name, apps), share in
            zip(fams, (27, 22, 15, 12, 16), strict=True)]
    h.table("Product Families", "Families, SKUs and revenue share.",
            "Revenue share refers to product revenue in 2025 without service.",
            ["Prefix", "Family", "SKUs", "Revenue share", "Typical applications"], rows,
            [(1, 3, "What share of product revenue comes from hydraulic valves?")])
    return h.prose("portfolio_strategy").build()


def _sustainability(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Sustainability Report 2025", "Emissions by site, energy use and progress "
            "towards Muster's climate targets.", rng, updated=date(2026, 4, 15))
    h.intro("quality", "employees, customers and investors", "This report describes Muster's "
            "environmental performance in 2025.")
    h.prose("sust")
    rows = [[city, f"{rng.randrange(300, 9000):,} t", f"{rng.uniform(2, 45):.1f} GWh"]
            for city, _, _ in SITES[:4]]
    h.table("Emissions by Site", "Scope 1 and 2 emissions and electricity use in 2025.",
            "Scope 1 and 2 emissions in tonnes of CO2 equivalent and electricity consumption.",
            ["Site", "CO2e 2025", "Electricity 2025"], rows,
            [(0, 1, "How many tonnes of CO2 did the Stuttgart site emit in 2025?")])
    return h.build()


def _projects(n: int, rng: random.Random) -> tuple[dict, list]:
    h = _Hb(n, "Project Management Handbook", "Project phases, phase gates and project "
            "terms for development projects.", rng, updated=date(2024, 9, 1))
    h.intro("ceo", "project managers and steering committees", "This handbook sets out how "
            "Muster runs development projects.")
    h.prose("projects")
    rows = [["Gate 1", "Idea approved", "Business case"],
            ["Gate 2", "Concept approved", "Specification"],
            ["Gate 3", "Design freeze", "Validated prototype"],
            ["Gate 4", "Release for production", "First article inspection"],
            ["Gate 5", "Project closed", "Lessons learned report"]]
    h.table("Phase Gates", "The five gates and their key deliverables.",
            "Each gate has one key deliverable that must be available before the review.",
            ["Gate", "Decision", "Key deliverable"], rows,
            [(2, 2, "What must be available at gate 3 of a development project?")])
    return h.glossary("projects").build()


BOOKS = (_glossary_book, _finance, _controlling, _sales, _service, _quality, _quality_de,
         _employee, _employee_de, _sites, _logistics, _engineering, _it, _onboarding,
         _portfolio, _sustainability, _projects)


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All handbooks (HBK-0001..) and their facts."""
    rng = random.Random(SEED)
    parts = [_annual(1, 2019, rng, 0.73), _annual(2, 2022, rng, None),
             _annual(3, 2025, rng, None)]
    for n, book in enumerate(BOOKS, 4):
        parts.append(book(n, rng))
    docs = [d for d, _ in parts]
    facts = [f for _, fs in parts for f in fs]
    return docs, facts


__all__ = ["BOOKS", "SEED", "generate"]
