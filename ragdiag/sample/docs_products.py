"""Product data sheets for Muster's catalogue (doc_type ``product_sheet``).

One sheet per SKU in `vocab.PRODUCTS`: overview, a technical data table,
dimensions, ordering information (list price, lead time), compatible parts,
maintenance, compliance and the supplier of the key component (an entity).
Four sheets are German; sheets last revised before 2017 are scans.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from ragdiag.sample import DocBuilder, Fact, date_en, iso, money, money_de, table_row
from ragdiag.sample.vocab import (
    ACCESSORIES,
    FAMILIES,
    FAMILIES_DE,
    FAMILY_ACCESSORIES,
    PARTNERS,
    PRODUCTS,
)

SEED = 2202
GERMAN = ("SN-7115", "HX-5611", "DR-8110", "PV-3318")
ACC_NAME = dict(ACCESSORIES)
APPLICATIONS = {
    "MX": ("packaging machines", "robotic handling cells", "CNC machining centres",
           "warehouse shuttles", "textile machinery"),
    "HX": ("forming presses", "wind turbine pitch systems", "mobile cranes",
           "agricultural implements", "mining equipment"),
    "SN": ("water treatment plants", "hydraulic power units", "filling lines",
           "pump stations", "test rigs"),
    "PV": ("bottling lines", "packaging machines", "food processing", "pharmaceutical filling",
           "weaving looms"),
    "DR": ("conveyors", "solar trackers", "patient lifts", "sawmill feeds", "palletisers"),
}


HIGHLIGHTS = {
    "MX": ("Runs motion programs written in IEC 61131-3 languages",
           "Integrated safe torque off on every axis",
           "Web-based diagnostics without additional software",
           "Firmware updates over the fieldbus", "Electronic cam and gearing functions",
           "Data logging of up to 64 channels"),
    "HX": ("Hard-chromed spool for low wear", "Integrated position feedback of the spool",
           "Manual override for commissioning", "Low hysteresis below 0.3 %",
           "Interchangeable coil without opening the hydraulic circuit",
           "Corrosion-protected zinc-nickel surface"),
    "SN": ("Ceramic measuring cell resistant to pressure peaks",
           "Laser-welded stainless steel housing", "Factory calibration with certificate",
           "Diagnostic data via IO-Link", "Long-term drift below 0.1 % per year",
           "Cleanable in place for hygienic applications"),
    "PV": ("Low power coil with 1.0 W holding power", "Manual override on every pilot valve",
           "LED status indicator", "Push-in connectors for fast tubing",
           "Suitable for vacuum operation", "Modular design for later extension"),
    "DR": ("Energy efficiency class IE3 motor", "Lubricated for life", "Quiet helical gearing",
           "Optional integrated brake", "Corrosion protection class C3",
           "Hollow shaft or solid shaft versions"),
}
SPEC_QUESTIONS = {
    "Digital inputs/outputs": "How many digital inputs and outputs does the {sku} have?",
    "Valve function": "Is the {sku} {name} a 3/2, 5/2 or 5/3 valve?",
    "Number of axes": "How many axes can the {sku} control?",
    "Fieldbus": "Which fieldbus does the {sku} {name} use?",
    "Accuracy": "How accurate is the {sku}?",
    "Output signal": "What output signal does the {sku} {name} provide?",
    "Gear ratio": "What gear ratio does the {sku} have?",
    "Lubrication": "How is the {sku} {name} lubricated?",
    "Port size": "Which port size does the {sku} have?",
}
VARIANTS = (("-E", "extended temperature range"), ("-C", "conformal-coated electronics"),
            ("-S", "stainless steel version"), ("-X", "ATEX version for zone 2"),
            ("-L", "long-life version with reinforced wear parts"))


def _specs(fam: str, sku: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """(label en, label de, value) rows of the technical data table."""
    n = int(sku.split("-")[1])
    if fam == "MX":
        axes = {2231: 1, 2240: 2, 2305: 4, 2410: 8}.get(n, rng.choice([2, 4, 6]))
        bus = "EtherCAT" if n in (2620, 2410) else rng.choice(["PROFINET", "EtherCAT", "CANopen"])
        return [("Number of axes", "Anzahl Achsen", str(axes)),
                ("Supply voltage", "Versorgungsspannung", "24 V DC"),
                ("Cycle time", "Zykluszeit", f"{rng.choice([125, 250, 500, 1000])} µs"),
                ("Fieldbus", "Feldbus", bus),
                ("Operating temperature", "Betriebstemperatur",
                 "-20 to 60 °C" if n == 2733 else "0 to 55 °C"),
                ("Protection class", "Schutzart", "IP65" if n in (2733, 2850) else "IP20"),
                ("Digital inputs/outputs", "Digitale Ein-/Ausgänge",
                 f"{rng.choice([8, 16, 24])}/{rng.choice([8, 16])}")]
    if fam == "HX":
        return [("Nominal size", "Nenngrösse", "NG10" if n == 5520 else rng.choice(["NG6", "NG10"])),
                ("Maximum operating pressure", "Maximaler Betriebsdruck",
                 f"{rng.choice([250, 315, 350, 420])} bar"),
                ("Maximum flow", "Maximaler Volumenstrom", f"{rng.choice([40, 60, 80, 120])} l/min"),
                ("Step response time", "Sprungantwortzeit", f"{rng.choice([12, 18, 25, 35])} ms"),
                ("Coil voltage", "Spulenspannung", "24 V DC"),
                ("Seal material", "Dichtungswerkstoff", rng.choice(["FKM", "NBR"])),
                ("Protection class", "Schutzart", rng.choice(["IP65", "IP67"]))]
    if fam == "SN":
        return [("Measuring range", "Messbereich", f"0 to {rng.choice([10, 40, 250, 400, 600])} bar"),
                ("Accuracy", "Genauigkeit", f"±{rng.choice(['0.1', '0.25', '0.5'])} % FS"),
                ("Output signal", "Ausgangssignal", rng.choice(["4-20 mA", "0-10 V", "IO-Link"])),
                ("Process connection", "Prozessanschluss", rng.choice(["G1/4", "G1/2", "M12x1.5"])),
                ("Media temperature", "Medientemperatur", f"-25 to {rng.choice([85, 100, 125])} °C"),
                ("Protection class", "Schutzart",
                 "IP69K" if n in (7115, 7402) else rng.choice(["IP65", "IP67"])),
                ("Response time", "Ansprechzeit", f"{rng.choice([1, 2, 5])} ms")]
    if fam == "PV":
        return [("Valve function", "Ventilfunktion", rng.choice(["3/2-way", "5/2-way", "5/3-way"])),
                ("Standard nominal flow", "Normalnenndurchfluss",
                 f"{rng.choice([350, 600, 900, 1400])} l/min"),
                ("Operating pressure", "Betriebsdruck", f"{rng.choice([2, 3])} to 10 bar"),
                ("Coil voltage", "Spulenspannung", "24 V DC"),
                ("Switching time", "Schaltzeit", f"{rng.choice([8, 12, 15, 20])} ms"),
                ("Protection class", "Schutzart", "IP65"),
                ("Port size", "Anschlussgrösse", rng.choice(["G1/8", "G1/4", "G3/8"]))]
    power = {8010: "0.37", 8025: "0.75"}.get(n, rng.choice(["0.55", "1.1", "1.5", "2.2"]))
    return [("Rated power", "Nennleistung", f"{power} kW"),
            ("Output speed", "Abtriebsdrehzahl", f"{rng.choice([28, 45, 70, 110, 160])} rpm"),
            ("Output torque", "Abtriebsdrehmoment", f"{rng.choice([60, 120, 180, 250, 400])} Nm"),
            ("Gear ratio", "Übersetzung", f"i = {rng.choice([9, 12, 20, 31, 50])}"),
            ("Efficiency class", "Effizienzklasse", "IE3"),
            ("Protection class", "Schutzart", rng.choice(["IP55", "IP65"])),
            ("Lubrication", "Schmierung", "CLP 220 synthetic, filled for life")]


def _suppliers() -> dict[str, str]:
    """SKU -> entity key of the supplier of its key component (each supplier gets >= 2)."""
    out: dict[str, str] = {}
    sups = sorted((p for p in PARTNERS if p.role == "supplier"),
                  key=lambda p: (len(p.families), p.key))
    for _ in range(2):
        for p in sups:
            free = [s for s, _ in PRODUCTS if s not in out and s[:2] in p.families]
            if free:
                out[free[0]] = p.key
    for sku, _ in PRODUCTS:
        if sku not in out:
            cands = [p for p in sups if sku[:2] in p.families]
            load = {p.key: sum(1 for v in out.values() if v == p.key) for p in cands}
            out[sku] = min(cands, key=lambda p: (load[p.key], p.key)).key
    return out


def _sheet(i: int, sku: str, name: str, supplier_key: str,
           rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    fam = sku[:2]
    fam_name, fam_what = FAMILIES[fam]
    sup = next(p for p in PARTNERS if p.key == supplier_key)
    de = sku in GERMAN
    revised = date(rng.randint(2014, 2026), rng.randint(1, 12), 1)
    if revised.year == 2026 and revised.month > 6:
        revised = date(2026, rng.randint(1, 6), 1)
    scanned = revised.year < 2017
    price = rng.choice({"MX": range(890, 4800, 10), "HX": range(420, 2900, 10),
                        "SN": range(180, 1100, 5), "PV": range(95, 1600, 5),
                        "DR": range(380, 3900, 10)}[fam])
    lead = rng.choice([2, 3, 4, 6, 8])
    moq = rng.choice([1, 1, 5, 10])
    w, h, d = rng.randint(40, 260), rng.randint(60, 300), rng.randint(40, 220)
    kg = round(rng.uniform(0.2, 18.0), 1)
    specs = _specs(fam, sku, rng)
    accs = rng.sample(FAMILY_ACCESSORIES[fam], 3)
    peers = [p for p, _ in PRODUCTS if p[:2] == fam and p != sku]
    peer = rng.choice(peers)
    interval = rng.choice([6, 12, 18, 24])
    apps = rng.sample(APPLICATIONS[fam], 2)
    title = (f"Produktdatenblatt {sku} {name}" if de else f"{sku} {name}: Product Data Sheet")
    b = DocBuilder(f"PRD-{i:04d}", title, "product_sheet", language="de" if de else "en",
                   entity_keys=[supplier_key], valid_from=iso(revised), last_updated=iso(revised),
                   scan_quality=rng.uniform(0.7, 0.8) if scanned else rng.uniform(0.92, 0.98))
    price_s = money_de(price, "EUR") if de else money(price, "EUR")
    if de:
        b.summary = (f"Datenblatt des {sku} {name} ({FAMILIES_DE[fam]}). Enthält technische "
                     f"Daten, Abmessungen, Bestellinformationen und kompatibles Zubehör.")
        b.section("Überblick", f"Was der {sku} ist und wofür er eingesetzt wird.")
        b.para(f"Der {sku} {name} gehört zur Produktfamilie der {FAMILIES_DE[fam]} von Muster. "
               f"Typische Einsatzgebiete sind {apps[0]} und {apps[1]}.",
               "Das Gerät ist für den Dauerbetrieb im industriellen Umfeld ausgelegt.")
        b.section("Technische Daten", f"Technische Kennwerte des {sku}.")
        rows = [[lde, v] for _, lde, v in specs]
        b.table(["Merkmal", "Wert"], rows)
        b.section("Abmessungen und Bestellung", "Masse, Gewicht, Preis und Lieferzeit.")
        price_sent = (f"Der Listenpreis des {sku} beträgt {price_s} pro Stück; die "
                      f"Lieferzeit beträgt {lead} Wochen.")
        kg_de = f"{kg:g}".replace(".", ",")
        b.para(f"Abmessungen (B x H x T): {w} x {h} x {d} mm; Gewicht {kg_de} kg.",
               price_sent, f"Mindestbestellmenge: {moq} Stück.")
        b.section("Zubehör und Wartung", "Kompatibles Zubehör und Wartungsintervall.")
        b.bullets([f"{a} {ACC_NAME[a]}" for a in accs])
        maint = f"Die Dichtungen und Verschleissteile sind alle {interval} Monate zu prüfen."
        b.para(maint, f"Der {sku} ist mit dem {peer} mechanisch austauschbar.")
        b.section("Konformität und Lieferkette", "Normen und Herkunft der Schlüsselkomponente.")
        src = f"Die zugekauften Komponenten ({sup.what}) werden von {sup.name} bezogen."
        b.para("Das Produkt trägt das CE-Zeichen und erfüllt die RoHS-Richtlinie.", src)
    else:
        b.summary = (f"Data sheet of the {sku} {name}, a {fam_name} for {fam_what}. Covers "
                     f"technical data, dimensions, ordering information and compatible parts.")
        b.section("Overview", f"What the {sku} is and where it is used.")
        opener = rng.choice([
            f"The {sku} {name} is a {fam_name} for {fam_what}.",
            f"Muster's {sku} is a {fam_name} designed for {fam_what}.",
            f"With the {sku} {name}, Muster offers a {fam_name} for {fam_what}.",
        ])
        b.para(opener, f"Typical applications include {apps[0]} and {apps[1]}.",
               rng.choice(["It is built for continuous duty in harsh industrial environments.",
                           "The design focuses on long service life and simple commissioning.",
                           "Compared with the previous generation it needs less energy and "
                           "fewer spare parts."]),
               rng.choice(["Configuration is done with the free Muster Studio software.",
                           "All connections are accessible from the front for easy wiring.",
                           "The unit is delivered pre-tested with a calibration certificate."]))
        b.bullets(rng.sample(HIGHLIGHTS[fam], 3))
        b.section("Technical Data", f"Key technical parameters of the {sku}.")
        rows = [[len_, v] for len_, _, v in specs]
        b.table(["Parameter", "Value"], rows)
        b.para(rng.choice(["All values apply at an ambient temperature of 20 °C unless stated "
                           "otherwise.",
                           "Values are typical values measured under reference conditions."]))
        b.section("Dimensions and Ordering", "Size, weight, list price, lead time and minimum "
                  "order quantity.")
        price_sent = rng.choice([
            f"The list price of the {sku} is {price_s} per unit, and the standard lead time "
            f"is {lead} weeks.",
            f"The {sku} is listed at {price_s} per unit with a lead time of {lead} weeks.",
        ])
        b.para(f"The housing measures {w} x {h} x {d} mm (width x height x depth) and the "
               f"unit weighs {kg:g} kg.", price_sent,
               f"The minimum order quantity is {moq} {'unit' if moq == 1 else 'units'}.",
               "Volume discounts are available on request from the Muster sales team.")
        b.bullets([f"{sku}{suf}: {what}" for suf, what in rng.sample(VARIANTS, 2)])
        b.para(rng.choice(["Orders are placed through the Muster web shop or the responsible "
                           "sales office.", "Framework customers order against their call-off "
                           "agreement at the contract price."]))
        b.section("Compatible Parts and Accessories", "Accessories and interchangeable "
                  "products.")
        b.bullets([f"{a} {ACC_NAME[a]}" for a in accs])
        b.para(f"The {sku} is mechanically interchangeable with the {peer}, so existing "
               "mounting positions can be reused.",
               "Spare parts remain available for at least ten years after the end of production.",
               rng.choice(["Third-party accessories may void the warranty.",
                           "Cables and fittings from the list above are tested with the unit."]))
        b.section("Installation and Maintenance", "Mounting, commissioning and service "
                  "intervals.")
        maint = rng.choice([
            f"Seals and wear parts should be inspected every {interval} months.",
            f"Muster recommends a maintenance check of the {sku} every {interval} months.",
        ])
        b.para("Install the unit only when the system is depressurised and de-energised.",
               maint, rng.choice(["Use only original Muster spare parts.",
                                  "Document every maintenance step in the machine log."]))
        b.para(rng.choice([
            "Commissioning takes about thirty minutes with the quick-start guide. Check all "
            "connections for tightness before the first start and record the initial values.",
            "Before commissioning, compare the type plate with the order. Tighten all screws to "
            "the torques given in the installation manual and run a test cycle at low load.",
            "During the first weeks of operation, check the unit weekly for leaks, unusual noise "
            "or temperature. Replace damaged cables immediately.",
        ]))
        b.section("Compliance and Sourcing", "Certifications and origin of the key component.")
        src = rng.choice([
            f"The {sup.what} in this product are sourced from {sup.name}.",
            f"{sup.name} supplies the {sup.what} used in this product.",
        ])
        b.para("The product carries the CE mark and complies with the RoHS directive.", src,
               rng.choice(["Final assembly and testing take place at Muster's plant in "
                           f"{ {'MX': 'Stuttgart', 'HX': 'Chemnitz', 'SN': 'Basel'}.get(fam, 'Brno')}"
                           ".", "Every unit passes an end-of-line test before shipment."]),
               f"The warranty is {rng.choice([12, 24, 36])} months from delivery.",
               f"This data sheet was last revised on {date_en(revised)}.")
    # facts
    prot = next(v for label, _, v in specs if label == "Protection class")
    spec = rng.choice([s for s in specs if s[0] != "Protection class"])
    b.fact("exact_id", price_sent, rng.choice([f"What is the list price of {sku}?",
                                               f"How much does one {sku} cost?",
                                               f"{sku} price per unit?"]), price_s)
    ask = SPEC_QUESTIONS.get(spec[0], "What is the {label} of the {sku} {name}?")
    b.fact("table", table_row([spec[1] if de else spec[0], spec[2]]),
           ask.format(label=spec[0].lower(), sku=sku, name=name), spec[2])
    claim = prot if rng.random() < 0.5 else {"IP65": "IP67", "IP67": "IP69K", "IP20": "IP65",
                                            "IP55": "IP65", "IP69K": "IP67"}[prot]
    b.fact("verification", table_row(["Schutzart" if de else "Protection class", prot]),
           f"Is the {sku} rated {claim}?", prot)
    b.fact("fact", maint, f"How often does the {sku} need maintenance?",
           f"{interval} Monate" if de else f"{interval} months")
    b.fact("fact", src, f"Who supplies the {sup.what} for the {sku}?", sup.name,
           entity=supplier_key)
    b.fact("exact_id", f"{accs[0]} {ACC_NAME[accs[0]]}",
           f"Is {accs[0]} compatible with the {sku}?", accs[0])
    return b.build()


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All product sheets (PRD-0001.. in catalogue order) and their facts."""
    rng = random.Random(SEED)
    sups = _suppliers()
    docs, facts = [], []
    for i, (sku, name) in enumerate(PRODUCTS, 1):
        doc, fs = _sheet(i, sku, name, sups[sku], rng)
        docs.append(doc)
        facts += fs
    return docs, facts


__all__ = ["SEED", "generate"]
