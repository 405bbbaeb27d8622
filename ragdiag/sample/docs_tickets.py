"""Support tickets about Muster products (doc_type ``ticket``).

Three tickets per customer plus some internal field-service tickets. Each
ticket names the product SKU, an error code (``E-4021``...) with its meaning,
the root cause and the resolution steps. Every error code stands for one fault
scenario; a code that occurs in exactly one ticket yields an ``exact_id`` fact.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, timedelta
from typing import Any

from ragdiag.sample import REFERENCE_DATE, DocBuilder, Fact, date_de, date_en, iso
from ragdiag.sample.vocab import FIRST_NAMES, LAST_NAMES, PARTNERS, PRODUCTS, SITES

SEED = 3303
GROUPS = ["support", "all-staff"]

# family -> [(meaning, root cause, three resolution steps)]
SCENARIOS: dict[str, list[tuple[str, str, tuple[str, str, str]]]] = {
    "MX": [
        ("encoder signal lost on axis 2", "a damaged encoder cable in the drag chain",
         ("Replaced the encoder cable between drive and motor",
          "Re-routed the cable to respect the minimum bending radius",
          "Ran a reference run on all axes")),
        ("DC bus overvoltage during braking",
         "a braking resistor that was too small for the new cycle profile",
         ("Measured the DC bus voltage during an emergency stop",
          "Installed the larger 150 W braking resistor",
          "Lengthened the deceleration ramps to 0.4 s")),
        ("following error limit exceeded",
         "controller gains that were not retuned after a mechanical modification",
         ("Ran the auto-tuning function on the affected axis",
          "Raised the following error window from 2 mm to 3 mm",
          "Verified the positioning accuracy with a dial gauge")),
        ("fieldbus watchdog timeout", "an unmanaged network switch that dropped frames under load",
         ("Read out the fieldbus diagnostic counters",
          "Replaced the switch with a managed industrial switch",
          "Monitored the bus for 48 hours without errors")),
        ("firmware checksum mismatch", "a firmware update interrupted by a power failure",
         ("Started the controller in recovery mode",
          "Reinstalled firmware version 4.2.1 from a USB stick",
          "Restored the customer's parameter backup")),
        ("internal overtemperature of the controller", "blocked filter mats in the cabinet fan",
         ("Cleaned the filter mats of the control cabinet", "Replaced the defective cabinet fan",
          "Confirmed an internal temperature below 45 °C under full load")),
        ("safe torque off triggered without request", "a loose connector on the STO input",
         ("Checked the STO wiring with the safety checklist",
          "Replaced the STO connector and secured it with a locking clip",
          "Repeated the safety function test")),
        ("real-time clock battery low", "a backup battery at the end of its service life",
         ("Replaced the backup battery with AC-1188", "Set the system clock via NTP",
          "Checked that the event log keeps its time stamps")),
    ],
    "HX": [
        ("coil open circuit on solenoid A", "water ingress through a damaged connector seal",
         ("Replaced the coil of solenoid A", "Fitted a new connector with an intact seal",
          "Tested the valve over its full stroke")),
        ("spool position deviation", "contaminated hydraulic oil of cleanliness class 21/19/16",
         ("Flushed the valve and the supply lines", "Replaced the pressure filter element",
          "Sent an oil sample to the laboratory")),
        ("supply voltage below 19 V", "a voltage drop on an undersized supply cable",
         ("Measured the voltage at the valve connector under load",
          "Replaced the supply cable with a 1.5 mm² cable",
          "Confirmed 23.6 V at the valve during operation")),
        ("feedback cable break", "chafing of the cable against the machine frame",
         ("Replaced the feedback cable", "Added a protective sleeve at the frame edge",
          "Checked the spool feedback signal over the full range")),
        ("coil overtemperature", "permanent energisation beyond the permitted duty cycle",
         ("Reduced the holding current in the amplifier settings",
          "Installed a coil with a higher temperature class",
          "Measured the coil temperature after two hours of operation")),
        ("pressure oscillation detected", "air trapped in the hydraulic circuit after a pump change",
         ("Bled the hydraulic circuit at the highest point",
          "Checked the suction line for leaks", "Re-tuned the pressure controller")),
        ("valve stuck in centre position", "seals that swelled in an incompatible fluid",
         ("Replaced the NBR seals with the FKM seal kit AC-1060",
          "Flushed the system with the approved fluid",
          "Confirmed smooth spool movement")),
        ("leakage at the subplate", "an O-ring pinched during assembly",
         ("Dismounted the valve from the subplate", "Fitted new O-rings from the seal kit",
          "Tightened the mounting screws to 9 Nm in a cross pattern")),
    ],
    "SN": [
        ("signal above measuring range", "pressure peaks caused by a fast-closing valve",
         ("Recorded the pressure curve with a data logger", "Installed a pressure snubber",
          "Checked that peaks stay below 1.5 times the range")),
        ("zero-point drift beyond tolerance",
         "exposure to more than 125 °C during steam cleaning",
         ("Replaced the sensor", "Moved the sensor out of the direct steam jet",
          "Added a cooling element to the process connection")),
        ("IO-Link communication lost", "an outdated IODD file in the IO-Link master",
         ("Downloaded the current IODD from the Muster portal",
          "Updated the IO-Link master configuration", "Verified cyclic data exchange")),
        ("internal memory error", "a firmware defect affecting production batch 2309",
         ("Replaced the sensor under warranty",
          "Checked the batch numbers of all installed sensors",
          "Scheduled replacement of two further sensors from the same batch")),
        ("overpressure event recorded", "a water hammer in the supply line",
         ("Read out the event memory of the sensor",
          "Installed a slow-closing valve upstream",
          "Confirmed that the sensor still meets its accuracy")),
        ("output stuck at 3.6 mA", "a broken wire in the 4-20 mA loop",
         ("Measured the loop current at the terminal", "Replaced the damaged cable section",
          "Confirmed a plausible signal across the range")),
        ("wireless link quality low", "a metal enclosure shielding the radio signal",
         ("Measured the signal strength at the sensor",
          "Relocated the wireless gateway AC-1195 closer to the sensor",
          "Confirmed a link quality above 80 %")),
        ("condensation inside the housing", "a missing pressure compensation element",
         ("Dried the sensor housing", "Fitted a pressure compensation element",
          "Sealed the cable gland")),
    ],
    "PV": [
        ("coil short circuit", "voltage spikes because of a missing suppression diode",
         ("Replaced the coil", "Fitted a connector with an integrated suppression diode",
          "Checked the other stations of the terminal")),
        ("pilot pressure too low", "a supply pressure below 2.5 bar at peak demand",
         ("Measured the supply pressure during peak demand",
          "Increased the compressor set point", "Installed a separate pilot air supply")),
        ("valve terminal bus error", "a defective electronics module in station 5",
         ("Located the faulty station with the diagnostic LEDs",
          "Replaced the electronics module of station 5",
          "Reset the terminal and cleared the error memory")),
        ("valve did not switch", "a sticky spool caused by oil in the compressed air",
         ("Cleaned the valve spool", "Replaced the filter cartridge with AC-1118",
          "Checked the compressor's oil separator")),
        ("excessive air consumption", "a leaking push-in fitting",
         ("Located the leak with an ultrasonic detector",
          "Replaced the fitting with the set AC-1110", "Measured the air consumption again")),
        ("slow cylinder movement", "a clogged silencer on the exhaust port",
         ("Removed the clogged silencer", "Fitted a new silencer AC-1102",
          "Adjusted the flow control to the original setting")),
        ("terminal supply voltage missing", "a blown fuse in the control cabinet",
         ("Checked the supply voltage at the terminal", "Replaced the fuse",
          "Found and removed a short circuit in a sensor cable")),
        ("valve switches intermittently", "a loose M12 connector",
         ("Checked all connectors on the terminal", "Replaced the worn M12 connector",
          "Secured the cable with strain relief")),
    ],
    "DR": [
        ("motor overtemperature", "continuous operation at 130 % of the rated load",
         ("Measured the motor current over a full shift",
          "Replaced the drive with the next larger frame size",
          "Updated the motor protection settings")),
        ("brake release failure", "a worn brake rectifier",
         ("Measured the brake voltage", "Replaced the brake module AC-1140",
          "Checked the brake air gap")),
        ("overcurrent at start-up", "a mechanical blockage in the conveyor",
         ("Inspected the conveyor for blockages", "Removed a jammed pallet fragment",
          "Activated the soft-start function")),
        ("encoder fault", "interference from an unshielded motor cable",
         ("Replaced the motor cable with a shielded cable",
          "Connected the shield on both ends", "Checked the encoder signal with an oscilloscope")),
        ("gearbox oil temperature high", "the wrong oil grade filled at the last service",
         ("Drained the gearbox oil", "Refilled with CLP 220 synthetic oil AC-1160",
          "Checked the oil temperature after one day of operation")),
        ("abnormal noise from the gearbox", "a damaged output bearing",
         ("Dismounted the gearbox", "Replaced the output bearing",
          "Checked the alignment with the driven shaft")),
        ("oil leak at the output shaft", "a worn shaft seal",
         ("Replaced the shaft seal", "Checked the shaft surface for grooves",
          "Topped up the gearbox oil")),
        ("phase loss detected", "a loose terminal in the motor connection box",
         ("Checked the motor terminals", "Tightened the terminals to the specified torque",
          "Measured the insulation resistance")),
    ],
}
# German versions of some scenarios (family, index) for German tickets.
SCENARIOS_DE: dict[tuple[str, int], tuple[str, str, tuple[str, str, str]]] = {
    ("MX", 0): ("Encodersignal an Achse 2 verloren", "ein beschädigtes Encoderkabel in der "
                "Schleppkette", ("Encoderkabel zwischen Antrieb und Motor ersetzt",
                                 "Kabel mit Mindestbiegeradius neu verlegt",
                                 "Referenzfahrt auf allen Achsen durchgeführt")),
    ("HX", 1): ("Abweichung der Schieberposition", "verschmutztes Hydrauliköl der "
                "Reinheitsklasse 21/19/16", ("Ventil und Zuleitungen gespült",
                                             "Druckfilterelement ersetzt",
                                             "Ölprobe ans Labor geschickt")),
    ("SN", 1): ("Nullpunktdrift ausserhalb der Toleranz", "Temperaturen über 125 °C bei der "
                "Dampfreinigung", ("Sensor ersetzt", "Sensor aus dem direkten Dampfstrahl "
                                   "verlegt", "Kühlstrecke am Prozessanschluss ergänzt")),
    ("PV", 3): ("Ventil schaltet nicht", "ein klemmender Schieber durch Öl in der Druckluft",
                ("Ventilschieber gereinigt", "Filterpatrone durch AC-1118 ersetzt",
                 "Ölabscheider des Kompressors geprüft")),
    ("DR", 0): ("Übertemperatur des Motors", "Dauerbetrieb mit 130 % der Nennlast",
                ("Motorstrom über eine ganze Schicht gemessen",
                 "Antrieb durch die nächstgrössere Baugrösse ersetzt",
                 "Motorschutzeinstellungen angepasst")),
    ("DR", 1): ("Bremse löst nicht", "ein verschlissener Bremsgleichrichter",
                ("Bremsspannung gemessen", "Bremsmodul AC-1140 ersetzt",
                 "Luftspalt der Bremse geprüft")),
}
# Steps starting with these verbs diagnose; the first other step is the fix.
DIAGNOSTIC = frozenset({"Measured", "Checked", "Read", "Recorded", "Located", "Inspected", "Ran",
                        "Started", "Downloaded", "Dismounted", "Sent", "Confirmed", "Verified",
                        "Monitored", "Drained", "Dried"})
CODE_BASE = {"MX": 4000, "HX": 5000, "SN": 7000, "PV": 3000, "DR": 8000}
PRIORITIES = ("low", "medium", "high", "critical")
FOLLOW_UP = (
    "The fix was confirmed by the customer and the ticket was closed.",
    "A knowledge base article was created so that first-level support can handle similar "
    "cases.",
    "The customer was advised to add the check to their preventive maintenance plan.",
    "Engineering was informed so that the finding can flow into the next product revision.",
    "The customer rated the support experience as very good.",
    "No further occurrences were reported during a two-week observation period.",
)


def _codes(rng: random.Random) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for fam, scen in SCENARIOS.items():
        nums = rng.sample(range(10, 990), len(scen))
        for i, n in enumerate(nums):
            out[(fam, i)] = f"E-{CODE_BASE[fam] + n}"
    return out


def _plan(rng: random.Random) -> list[dict[str, Any]]:
    tickets: list[dict[str, Any]] = []
    customers = [p for p in PARTNERS if p.role == "customer"]
    for p in customers:
        for _ in range(3):
            fam = rng.choice(p.families)
            tickets.append({"partner": p, "fam": fam})
    for _ in range(10):
        tickets.append({"partner": None, "fam": rng.choice(list(SCENARIOS)),
                        "site": rng.choice(SITES[:4])[0]})
    german_left = 6
    for t in tickets:
        p = t["partner"]
        de_ok = p is not None and p.german and german_left > 0 and rng.random() < 0.5
        options = [i for i in range(8) if (t["fam"], i) in SCENARIOS_DE] if de_ok else []
        if options:
            t["scen"] = rng.choice(options)
            t["de"] = True
            german_left -= 1
        else:
            t["scen"] = rng.randrange(8)
            t["de"] = False
        t["sku"] = rng.choice([s for s, _ in PRODUCTS if s[:2] == t["fam"]])
        opened = date(2023, 1, 2) + timedelta(days=rng.randrange(1260))
        t["opened"] = min(opened, REFERENCE_DATE - timedelta(days=3))
        t["days"] = rng.choice([1, 2, 3, 5, 8, 13, 21])
        closed = t["opened"] + timedelta(days=t["days"])
        t["closed"] = closed if closed <= REFERENCE_DATE else None
        t["prio"] = rng.choice(PRIORITIES)
        t["engineer"] = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        t["serial"] = f"{t['sku'][:2]}{rng.randint(100000, 999999)}"
    tickets.sort(key=lambda t: (t["opened"], t["sku"], t["partner"].key if t["partner"] else ""))
    return tickets


def _log(t: dict[str, Any], who: str, de: bool) -> list[str]:
    fmt = date_de if de else date_en
    o, eng = t["opened"], t["engineer"]
    first = o + timedelta(days=1 if t["days"] > 1 else 0)
    if de:
        out = [f"{fmt(o)}: Ticket durch {who} eröffnet, Priorität {t['prio']}.",
               f"{fmt(first)}: Logdateien und Fotos vom Kunden erhalten.",
               f"{fmt(first)}: Fernwartung durch {eng}."]
        out.append(f"{fmt(t['closed'])}: Lösung bestätigt, Ticket geschlossen." if t["closed"]
                   else "Ticket offen, Ersatzteil bestellt.")
        return out
    channel = ("the service portal", "the hotline", "e-mail")[t["days"] % 3]
    visit = ("joined a remote session with the customer" if t["days"] < 5 else
             "visited the customer on site")
    out = [f"{fmt(o)}: ticket opened by {who} via {channel}, priority {t['prio']}.",
           f"{fmt(first)}: first-level support collected log files and photos.",
           f"{fmt(first + timedelta(days=t['days'] // 2))}: {eng} {visit}."]
    out.append(f"{fmt(t['closed'])}: solution confirmed by the customer, ticket closed."
               if t["closed"] else "Ticket still open: waiting for a spare part.")
    return out


def _ticket(n: int, t: dict[str, Any], code: str, unique: bool,
            rng: random.Random) -> tuple[dict[str, Any], list[Fact]]:
    fam, sku, p, de = t["fam"], t["sku"], t["partner"], t["de"]
    meaning, cause, steps = (SCENARIOS_DE[(fam, t["scen"])] if de else SCENARIOS[fam][t["scen"]])
    who = p.name if p else f"Muster field service {t['site']}"
    who_short = p.short if p else f"the {t['site']} plant"
    doc_id = f"TIC-{n:04d}"
    title = f"{doc_id}: {sku} {code} {meaning} ({who})"
    b = DocBuilder(doc_id, title, "ticket", language="de" if de else "en",
                   entity_keys=[p.key] if p else [], group_ids=list(GROUPS),
                   valid_from=iso(t["opened"]), last_updated=iso(t["closed"] or t["opened"]),
                   scan_quality=rng.uniform(0.9, 0.98))
    fmt = date_de if de else date_en
    if de:
        b.summary = (f"Störung {code} ({meaning}) am {sku} bei {who}. Ursache: {cause}. "
                     f"Status: {'geschlossen' if t['closed'] else 'offen'}.")
        b.section("Ticketdaten und Problembeschreibung", "Kunde, Produkt, Termine und Meldung.")
        b.bullets([f"Ticket: {doc_id}", f"Kunde: {who}", f"Produkt: {sku}",
                   f"Seriennummer: {t['serial']}", f"Priorität: {t['prio']}",
                   f"Eröffnet: {fmt(t['opened'])}",
                   f"Geschlossen: {fmt(t['closed']) if t['closed'] else 'offen'}",
                   f"Bearbeiter: {t['engineer']}"])
        report = f"Der {sku} meldet den Fehlercode {code} ({meaning})."
        b.para(f"{who_short} meldet eine wiederkehrende Störung.", report,
               "Die Anlage stand dadurch mehrfach still.")
        b.section("Verlauf", "Chronologie der Bearbeitung.")
        b.bullets(_log(t, who_short, de))
        b.section("Analyse und Lösung", "Ursache der Störung und durchgeführte Massnahmen.")
        cause_sent = f"Die Analyse ergab als Ursache {cause}."
        b.para("Der Servicetechniker hat die Fehlerhistorie ausgelesen und die Anlage vor Ort "
               "geprüft.", cause_sent)
        b.bullets(list(steps))
        b.para(f"Nach den Massnahmen trat der Fehler {code} nicht mehr auf.")
    else:
        b.summary = (f"{who} reported error {code} ({meaning}) on a {sku}. Root cause: {cause}. "
                     f"Status: {'closed' if t['closed'] else 'open'}.")
        b.section("Ticket Details and Problem Description",
                  "Customer, product, dates and what the customer reported.")
        b.bullets([f"Ticket: {doc_id}", f"Customer: {who}", f"Product: {sku}",
                   f"Serial number: {t['serial']}", f"Priority: {t['prio']}",
                   f"Opened: {fmt(t['opened'])}",
                   f"Closed: {fmt(t['closed']) if t['closed'] else 'still open'}",
                   f"Assigned engineer: {t['engineer']}"])
        report = rng.choice([
            f"The {sku} shows error code {code}, which indicates {meaning}.",
            f"Error {code} ({meaning}) is displayed on the {sku}.",
            f"According to the event log, the {sku} raised {code}: {meaning}.",
        ])
        b.para(rng.choice([f"{who_short} reported that a machine stopped several times during "
                           "the night shift.",
                           f"The maintenance team at {who_short} contacted the hotline about a "
                           "recurring fault.",
                           f"{who_short} opened the ticket through the service portal after a "
                           "line stoppage."]),
               report,
               rng.choice(["The fault occurs mainly under full load.",
                           "The fault appeared for the first time after a planned shutdown.",
                           "The fault occurs irregularly, roughly twice per shift.",
                           "Resetting the error allowed a restart, but it returned within hours."]),
               rng.choice(["Production losses were estimated at four hours per week.",
                           "A spare unit was not available on site.",
                           "The customer asked for an engineer visit within 48 hours."]))
        b.section("Interaction Log", "Chronology of the ticket.")
        b.bullets(_log(t, who_short, de))
        b.section("Analysis and Resolution", "Diagnosis, root cause and the steps that fixed it.")
        cause_sent = rng.choice([f"The root cause was {cause}.",
                                 f"The investigation traced the fault to {cause}.",
                                 f"Diagnosis showed that {cause} caused the error."])
        b.para(rng.choice(["Remote diagnostics were used to read the error history and the "
                           "parameter set.",
                           "A service engineer inspected the installation on site and "
                           "recorded the operating data.",
                           "The support team analysed the event log and a photo of the "
                           "installation provided by the customer."]),
               cause_sent,
               rng.choice(["Other units in the same machine were not affected.",
                           "The product itself met its specification.",
                           "Similar symptoms had been seen at another site last year."]))
        b.bullets(list(steps))
        key_step = next(st for st in steps if st.split()[0] not in DIAGNOSTIC)
        fix = f"{key_step}, after which {code} did not occur again."
        b.para(fix, rng.choice(["The machine was back in production the same day.",
                                "The customer confirmed stable operation after one week."]))
        b.section("Follow-up", "Closure and preventive actions.")
        b.para(*rng.sample(FOLLOW_UP, 4))
    # facts
    if unique:
        b.fact("exact_id", report, rng.choice([f"What does error code {code} mean?",
                                               f"{code} on {sku}: what is it?",
                                               f"Which fault is reported as {code}?"]),
               meaning.split()[0] if de else meaning, entity=p.key if p else None)
    subject = f"{p.short}'s {sku}" if p else f"the {sku} at the {t['site']} plant"
    b.fact("fact", cause_sent, rng.choice([f"What caused the {code} error on {subject}?",
                                           f"Why did {subject} fail with {code}?"]),
           cause.removeprefix("a ").removeprefix("an "), entity=p.key if p else None)
    if not de:
        b.fact("fact", fix, rng.choice([f"How was the {code} problem on {subject} fixed?",
                                        f"What resolved error {code} on {subject}?"]),
               key_step, entity=p.key if p else None)
    return b.build(pages=2)


def generate() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All tickets (TIC-0001.. by opening date) and their facts."""
    rng = random.Random(SEED)
    codes = _codes(rng)
    tickets = _plan(rng)
    counts = Counter((t["fam"], t["scen"]) for t in tickets)
    docs, facts = [], []
    for n, t in enumerate(tickets, 1):
        key = (t["fam"], t["scen"])
        doc, fs = _ticket(n, t, codes[key], counts[key] == 1, rng)
        docs.append(doc)
        facts += fs
    return docs, facts


__all__ = ["SCENARIOS", "SEED", "generate"]
