"""Phrasing banks of the framework contracts (English and German).

Each clause has several variants; `docs_contracts` picks one per contract with
its seeded generator and fills the fields (see the comment below).
"""

from __future__ import annotations

# ---- phrasing banks: contracts -------------------------------------------------------
# Format fields: name short muster_addr street city country what fam number start years
# end notice anchor cap cur pay payer perf site incoterm lead target resp credit credit_cap
# index law court contact muster_sig sign_date rel since ins.
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
                8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
NOTICE_ANCHORS = (" to the end of a calendar quarter", " to the end of a calendar month",
                  " to the end of a contract year", "")
NOTICE_ANCHORS_DE = (" zum Ende eines Kalenderquartals", " zum Monatsende",
                     " zum Ende eines Vertragsjahres", "")

CONTRACT_EN: dict[str, tuple[str, ...]] = {
    "parties": (
        "This {kind} (the Agreement) is entered into between Muster AG, {muster_addr} "
        "(Muster), and {name}, {street} {city}, {country} ({short}).",
        "The Agreement is made by and between Muster AG, having its registered office at "
        "{muster_addr}, and {name}, with its principal place of business at {street} {city}.",
        "Muster AG (hereinafter Muster) and {name} of {street} {city}, {country} "
        "(hereinafter {short}) conclude the following {kind}.",
    ),
    "background": (
        "{short} {does} and has been a {rel} of Muster since {since}.",
        "{short} {does}; this Agreement consolidates the commercial and legal terms under which "
        "the parties have worked together since {since}.",
        "The parties have cooperated since {since}. They now wish to set out the terms of their "
        "long-term relationship in one framework document, as {short} {does}.",
    ),
    "contacts": (
        "The contract owner at Muster is {muster_sig}; {short} has named {contact} as its "
        "single point of contact for all matters arising under this Agreement.",
        "Each party appoints a relationship manager. For Muster this is {muster_sig}, for "
        "{short} it is {contact}. Changes of the relationship manager are notified in writing.",
    ),
    "scope_customer": (
        "Muster supplies {fam} and related spare parts to {short}. Individual purchase orders "
        "placed by {short} are governed exclusively by this Agreement.",
        "The subject of this Agreement is the delivery of {fam} by Muster for use in the "
        "equipment {short} builds. {short} places individual call-off orders under it.",
        "Under this Agreement {short} purchases {fam} from Muster. Each purchase order refers "
        "to contract number {number} and becomes binding upon Muster's order confirmation.",
    ),
    "scope_supplier": (
        "{short} supplies {what} for Muster's {fam}. Deliveries go to Muster's plant in {site} "
        "against purchase orders issued by Muster's procurement department.",
        "The subject of this Agreement is the supply of {what} by {short} to Muster. The parts "
        "are built into Muster's {fam} and must conform to the released drawings.",
        "Under this Agreement Muster purchases {what} from {short}. Each purchase order refers "
        "to contract number {number}; quantities are called off against Muster's demand plan.",
    ),
    "scope_service": (
        "{short} provides {what} for Muster and its affiliated companies. The detailed scope of "
        "each service is set out in written service descriptions that form part of this "
        "Agreement.",
        "The subject of this Agreement is the provision of {what} by {short}. Statements of "
        "work under contract number {number} specify the individual services.",
        "Under this Agreement Muster engages {short} for {what}. The services are provided at "
        "Muster's sites in Stuttgart, Chemnitz and Basel unless a statement of work says "
        "otherwise.",
    ),
    "forecast": (
        "The buyer shares a rolling twelve-month demand forecast every quarter; only the first "
        "three months of each forecast are binding.",
        "Every month the buyer sends a non-binding six-month forecast so that production "
        "capacity can be planned in good time.",
        "Forecasts are exchanged quarterly and are for planning purposes only; firm orders "
        "alone create an obligation to deliver.",
    ),
    "delivery": (
        "Deliveries are made {incoterm} (Incoterms 2020). The standard lead time is {lead} "
        "weeks from order confirmation.",
        "Unless agreed otherwise, goods are delivered {incoterm} Incoterms 2020 with a lead "
        "time of {lead} weeks after the purchase order has been confirmed.",
        "The agreed delivery term is {incoterm} (Incoterms 2020), and the lead time must not "
        "exceed {lead} weeks.",
    ),
    "coverage": (
        "Services are delivered Monday to Friday from 07:00 to 18:00 CET, unless a service "
        "description provides for extended coverage.",
        "Standard service hours are 06:00 to 20:00 on working days; critical incidents are "
        "handled around the clock.",
    ),
    "recitals": (
        "The parties intend to simplify ordering, agree consistent quality standards and "
        "secure supply over several years. Affiliates of Muster may place orders under this "
        "Agreement on the same terms.",
        "With this Agreement the parties replace individual order terms by one set of "
        "conditions. Muster Schweiz AG and Muster Inc. may use the Agreement as if they were "
        "parties to it.",
        "The Agreement sets the frame for all individual orders; in case of conflict, this "
        "Agreement prevails over the terms printed on order forms or confirmations.",
    ),
    "changes": (
        "Changes to specifications require a written engineering change notice. The "
        "performing party assesses the impact on price and lead time within ten working days.",
        "Neither party may change materials, production processes or the place of manufacture "
        "without prior written consent. Requests for change are answered within two weeks.",
        "Change requests are handled through the change control procedure. A change becomes "
        "binding only once both contract owners have signed the change note.",
    ),
    "aftermath": (
        "On termination, orders already confirmed are completed under the terms of this "
        "Agreement. Each party returns or destroys the confidential information of the other.",
        "The end of the Agreement does not affect orders confirmed before that date. Stocks "
        "held specifically for the other party are bought back at cost.",
    ),
    "invoicing": (
        "Invoices must quote the contract number and the purchase order number and are sent "
        "electronically in PDF or XRechnung format.",
        "Each invoice must state the contract number, the order reference and the delivery "
        "note number; incomplete invoices are returned and do not start the payment period.",
    ),
    "audit": (
        "Muster may audit the relevant processes once per year with two weeks' notice. "
        "Findings are addressed in a corrective action plan within 30 days.",
        "Quality issues are handled in an 8D process. A first containment action must be "
        "reported within 48 hours of the complaint.",
    ),
    "subcontract": (
        "Subcontractors may only be used with Muster's prior written consent; the performing "
        "party remains fully responsible for their work.",
        "The use of subcontractors requires prior written approval, which may not be withheld "
        "without good reason.",
    ),
    "boilerplate": (
        "Neither party is liable for delays caused by force majeure, provided it informs the "
        "other party without delay. Rights under this Agreement may only be assigned with the "
        "other party's consent.",
        "Events of force majeure suspend the affected obligations for their duration. This "
        "Agreement constitutes the entire agreement between the parties on its subject matter.",
    ),
    "term": (
        "This Agreement enters into force on {start} and runs for an initial term of {years} "
        "years.",
        "The Agreement takes effect on {start} (the Effective Date) and is concluded for an "
        "initial period of {years} years.",
        "The term of this Agreement begins on {start}; the initial term is {years} years.",
    ),
    "renewal": (
        "After the initial term, the Agreement renews automatically for successive periods of "
        "twelve months unless it is terminated in accordance with this clause.",
        "Unless terminated, the Agreement is extended automatically by twelve months at the "
        "end of the initial term and of every renewal period.",
        "Following the initial term the Agreement continues for further terms of twelve months "
        "each, unless either party gives notice.",
    ),
    "end": (
        "The Agreement ends on {end} without any automatic renewal.",
        "This Agreement expires on {end}; any extension requires a written amendment signed "
        "by both parties.",
        "The Agreement terminates automatically on {end} unless the parties agree in writing "
        "to extend it.",
    ),
    "notice": (
        "Either party may terminate this Agreement with {notice} days' written notice{anchor}.",
        "This Agreement may be terminated by either party by giving {notice} days' notice in "
        "writing{anchor}.",
        "Each party has the right to terminate the Agreement on {notice} days' prior written "
        "notice{anchor}.",
        "Ordinary termination requires a notice period of {notice} days{anchor}, and notice "
        "must be given in writing.",
    ),
    "cause": (
        "The right of either party to terminate for good cause without notice remains "
        "unaffected, in particular if the other party becomes insolvent or fails to remedy a "
        "material breach within 30 days.",
        "Either party may terminate immediately for cause, for example where the other party "
        "commits a material breach that is not cured within thirty days of a written warning.",
    ),
    "prices": (
        "Prices are stated in {cur} and are fixed for each calendar year. Price adjustments for "
        "the following year are limited to {index}% and must be announced by 30 September.",
        "All prices are net prices in {cur}. They may be adjusted once a year in line with the "
        "producer price index, by no more than {index}%.",
        "The price schedule in {cur} attached to this Agreement applies. Increases are limited "
        "to {index}% per year and require three months' notice.",
    ),
    "pay": (
        "Invoices are payable within {pay} days of the invoice date without deduction.",
        "Payment is due {pay} days net after receipt of a correct invoice.",
        "{payer} shall settle each invoice within {pay} days of receipt.",
        "The payment term is {pay} days from the date of invoice.",
    ),
    "discount": (
        "If payment is made within ten days, {payer} may deduct an early-payment discount "
        "of 2%.",
        "A cash discount of 2% applies to payments received within ten days.",
    ),
    "late": (
        "Late payments bear interest at nine percentage points above the base rate.",
        "Overdue amounts accrue default interest at the statutory rate, and reminders are "
        "charged at cost.",
    ),
    "sla_goods": (
        "{perf} commits to an on-time delivery rate of at least {target}% measured per "
        "calendar month.",
        "The agreed target for on-time delivery is {target}%, measured monthly against the "
        "confirmed delivery dates.",
    ),
    "sla_service": (
        "{perf} guarantees an availability of {target}% for the managed services, measured per "
        "calendar month.",
        "The services shall be available at least {target}% of the time in each calendar "
        "month.",
    ),
    "credit": (
        "If the target is missed, the receiving party gets a service credit of {credit}% of "
        "the monthly invoice value for each full percentage point of shortfall, up to a "
        "maximum of {credit_cap}%.",
        "Each full percentage point below the target entitles the receiving party to a "
        "service credit of {credit}% of the monthly fees, capped at {credit_cap}% per month.",
    ),
    "report": (
        "{perf} reports the service level figures for each month by the tenth working day of "
        "the following month. The parties review them in a quarterly business review.",
        "Performance against the service levels is discussed in quarterly review meetings, "
        "based on a monthly report prepared by {perf}.",
    ),
    "warranty": (
        "{perf} warrants that all deliveries are free from defects in material and "
        "workmanship for {warranty} months from delivery.",
        "The warranty period is {warranty} months from the date of delivery or acceptance.",
        "Claims for defects become time-barred {warranty} months after delivery or acceptance.",
    ),
    "cap": (
        "The total liability of each party under this Agreement is limited to {cap} per "
        "contract year.",
        "Except in cases of intent or gross negligence, the aggregate liability of either party "
        "shall not exceed {cap}.",
        "Neither party's aggregate liability arising out of or in connection with this "
        "Agreement shall exceed {cap}.",
        "Liability for damages is capped at {cap} per calendar year.",
    ),
    "exclusions": (
        "The limitation does not apply to injury to life, body or health, to claims under "
        "product liability law, or to breaches of confidentiality.",
        "Neither party is liable for indirect or consequential loss, including lost profit, "
        "except in cases of wilful misconduct.",
    ),
    "insurance": (
        "{perf} maintains product and public liability insurance with coverage of at least "
        "{ins} per claim and provides a certificate on request.",
        "{perf} shall keep adequate liability insurance in force for the term of this "
        "Agreement, with a minimum cover of {ins} per event.",
    ),
    "quality": (
        "{perf} maintains a quality management system certified to ISO 9001 and notifies the "
        "other party of any change to processes, materials or production sites at least three "
        "months in advance.",
        "Both parties comply with export control regulations and with the Muster Supplier Code "
        "of Conduct, which covers labour standards, environmental protection and anti-bribery.",
    ),
    "confidentiality": (
        "Each party keeps confidential all information received from the other party in "
        "connection with this Agreement and uses it only for the purposes of this Agreement. "
        "This obligation survives the end of the Agreement by five years.",
        "Confidential information may only be disclosed to employees and advisers who need it "
        "for the performance of this Agreement and who are bound by equivalent obligations.",
    ),
    "privacy": (
        "Where personal data is processed on behalf of Muster, the parties conclude a separate "
        "data processing agreement in line with Article 28 GDPR.",
        "Both parties comply with the applicable data protection laws, in particular the GDPR "
        "and the Swiss Federal Act on Data Protection.",
    ),
    "law": (
        "This Agreement is governed by {law}, excluding the UN Convention on Contracts for the "
        "International Sale of Goods.",
        "The Agreement is subject to {law}; the CISG does not apply.",
    ),
    "court": ("The exclusive place of jurisdiction is {court}.",
              "The courts of {court} have exclusive jurisdiction."),
    "written": (
        "Amendments to this Agreement must be made in writing; this also applies to any waiver "
        "of the written form requirement.",
        "Should any provision of this Agreement be invalid, the validity of the remaining "
        "provisions is not affected.",
    ),
    "signed": ("Signed in Stuttgart on {sign_date} for Muster AG by {muster_sig} and for "
               "{name} by {contact}.",),
    "terminated": (
        "By mutual agreement the parties terminated this Agreement with effect from {term_end}. "
        "It is replaced by agreement {successor}, which took effect on {succ_start}.",
        "This Agreement was terminated by notice and ceased to have effect on {term_end}; the "
        "relationship continues under agreement {successor} from {succ_start}.",
    ),
}

CONTRACT_DE: dict[str, tuple[str, ...]] = {
    "parties": ("Dieser {kind} wird geschlossen zwischen der Muster AG, {muster_addr} (Muster), "
                "und der {name}, {street} {city} ({short}).",),
    "background": ("{short} arbeitet seit {since} mit Muster zusammen. Die Parteien regeln mit "
                   "diesem Vertrag die Bedingungen ihrer langfristigen Zusammenarbeit.",),
    "contacts": ("Vertragsverantwortlich bei Muster ist {muster_sig}; Ansprechpartner bei "
                 "{short} ist {contact}.",),
    "scope_customer": ("Muster liefert {fam} und zugehörige Ersatzteile an {short}. Jede "
                       "Einzelbestellung bezieht sich auf die Vertragsnummer {number}.",),
    "scope_supplier": ("{short} liefert Komponenten für die {fam} von Muster an das Werk "
                       "{site}. Jede Bestellung bezieht sich auf die Vertragsnummer {number}.",),
    "scope_service": ("{short} erbringt für Muster Dienstleistungen gemäss den schriftlich "
                      "vereinbarten Leistungsbeschreibungen zur Vertragsnummer {number}.",),
    "forecast": ("Der Besteller übermittelt quartalsweise eine rollierende Bedarfsvorschau "
                 "über zwölf Monate; verbindlich sind nur die ersten drei Monate.",),
    "delivery": ("Die Lieferung erfolgt {incoterm} (Incoterms 2020); die Standardlieferzeit "
                 "beträgt {lead} Wochen ab Auftragsbestätigung.",),
    "recitals": ("Die Parteien wollen Bestellungen vereinfachen, einheitliche "
                 "Qualitätsstandards vereinbaren und die Versorgung über mehrere Jahre sichern. "
                 "Verbundene Unternehmen von Muster können zu denselben Bedingungen bestellen.",),
    "changes": ("Änderungen an Spezifikationen bedürfen einer schriftlichen Änderungsmitteilung. "
                "Die Auswirkungen auf Preis und Lieferzeit werden innerhalb von zehn "
                "Arbeitstagen bewertet.",),
    "aftermath": ("Bei Vertragsende werden bereits bestätigte Bestellungen zu den Bedingungen "
                  "dieses Vertrags abgewickelt. Vertrauliche Unterlagen werden zurückgegeben "
                  "oder vernichtet.",),
    "invoicing": ("Rechnungen müssen die Vertragsnummer und die Bestellnummer enthalten und "
                  "werden elektronisch übermittelt.",),
    "audit": ("Muster darf die relevanten Prozesse einmal jährlich nach zweiwöchiger Ankündigung "
              "auditieren. Feststellungen werden innerhalb von 30 Tagen in einem "
              "Massnahmenplan behandelt.",),
    "subcontract": ("Unterauftragnehmer dürfen nur mit vorheriger schriftlicher Zustimmung von "
                    "Muster eingesetzt werden.",),
    "boilerplate": ("Keine Partei haftet für Verzögerungen aufgrund höherer Gewalt, sofern sie "
                    "die andere Partei unverzüglich informiert. Rechte aus diesem Vertrag dürfen "
                    "nur mit Zustimmung der anderen Partei abgetreten werden.",),
    "coverage": ("Die Leistungen werden montags bis freitags von 07:00 bis 18:00 Uhr erbracht.",),
    "term": ("Dieser Vertrag tritt am {start} in Kraft und hat eine Grundlaufzeit von {years} "
             "Jahren.",),
    "renewal": ("Nach Ablauf der Grundlaufzeit verlängert sich der Vertrag automatisch um "
                "jeweils zwölf Monate, sofern er nicht gekündigt wird.",),
    "end": ("Der Vertrag endet am {end}, ohne dass es einer Kündigung bedarf.",),
    "notice": ("Jede Partei kann diesen Vertrag mit einer Frist von {notice} Tagen{anchor} "
               "schriftlich kündigen.",),
    "cause": ("Das Recht zur fristlosen Kündigung aus wichtigem Grund bleibt unberührt, "
              "insbesondere bei Insolvenz oder einer wesentlichen Vertragsverletzung.",),
    "prices": ("Alle Preise verstehen sich netto in {cur}. Preisanpassungen sind einmal "
               "jährlich um höchstens {index} Prozent zulässig.",),
    "pay": ("Rechnungen sind innerhalb von {pay} Tagen nach Rechnungsdatum ohne Abzug "
            "zahlbar.",),
    "discount": ("Bei Zahlung innerhalb von zehn Tagen dürfen 2 Prozent Skonto abgezogen "
                 "werden.",),
    "late": ("Bei Zahlungsverzug werden Verzugszinsen in gesetzlicher Höhe berechnet.",),
    "sla_goods": ("Die vereinbarte Liefertreue beträgt mindestens {target} % pro "
                  "Kalendermonat.",),
    "sla_service": ("Die vereinbarte Verfügbarkeit der Dienstleistungen beträgt mindestens "
                    "{target} % pro Kalendermonat.",),
    "credit": ("Wird der Zielwert verfehlt, erhält die empfangende Partei eine Gutschrift von "
               "{credit} Prozent des Monatsumsatzes je vollem Prozentpunkt Unterschreitung, "
               "höchstens jedoch {credit_cap} Prozent.",),
    "report": ("Die Kennzahlen werden monatlich berichtet und vierteljährlich gemeinsam "
               "besprochen.",),
    "warranty": ("Die Gewährleistungsfrist beträgt {warranty} Monate ab Lieferung.",),
    "cap": ("Die Gesamthaftung jeder Partei aus diesem Vertrag ist auf {cap} pro Vertragsjahr "
            "begrenzt.",),
    "exclusions": ("Die Haftungsbegrenzung gilt nicht bei Vorsatz, grober Fahrlässigkeit sowie "
                   "bei Verletzung von Leben, Körper oder Gesundheit.",),
    "insurance": ("Der Leistungserbringer unterhält eine Haftpflichtversicherung mit einer "
                  "Deckung von mindestens {ins} je Schadensfall.",),
    "quality": ("Der Leistungserbringer unterhält ein nach ISO 9001 zertifiziertes "
                "Qualitätsmanagementsystem und meldet Prozessänderungen drei Monate im "
                "Voraus.",),
    "confidentiality": ("Die Parteien behandeln alle im Rahmen dieses Vertrags erhaltenen "
                        "Informationen vertraulich. Diese Pflicht gilt fünf Jahre über das "
                        "Vertragsende hinaus.",),
    "privacy": ("Soweit personenbezogene Daten im Auftrag verarbeitet werden, schliessen die "
                "Parteien eine gesonderte Vereinbarung zur Auftragsverarbeitung ab.",),
    "law": ("Dieser Vertrag unterliegt {law} unter Ausschluss des UN-Kaufrechts.",),
    "court": ("Ausschliesslicher Gerichtsstand ist {court}.",),
    "written": ("Änderungen und Ergänzungen dieses Vertrags bedürfen der Schriftform.",),
    "signed": ("Unterzeichnet in Stuttgart am {sign_date} für die Muster AG von {muster_sig} "
               "und für die {name} von {contact}.",),
    "terminated": ("Die Parteien haben diesen Vertrag einvernehmlich zum {term_end} "
                   "aufgehoben. Er wird durch den Vertrag {successor} ersetzt, der am "
                   "{succ_start} in Kraft getreten ist.",),
}
CONTRACT_SECTIONS = {
    "en": ("1. Parties and Background", "2. Subject Matter and Scope",
           "3. Term, Renewal and Termination", "4. Prices and Payment Terms",
           "5. Service Levels", "6. Warranty and Liability", "7. Quality and Compliance",
           "8. Confidentiality and Data Protection", "9. Final Provisions",
           "Annex: Termination Record"),
    "de": ("§ 1 Vertragsparteien", "§ 2 Vertragsgegenstand", "§ 3 Laufzeit und Kündigung",
           "§ 4 Preise und Zahlungsbedingungen", "§ 5 Servicelevel",
           "§ 6 Gewährleistung und Haftung", "§ 7 Qualität",
           "§ 8 Vertraulichkeit und Datenschutz", "§ 9 Schlussbestimmungen",
           "Anlage: Aufhebungsvermerk"),
}
SECTION_SUMMARIES_EN = (
    "Names Muster AG and {name} as the parties and describes the background of the "
    "relationship.",
    "What is supplied or provided under contract {number}, and how orders and deliveries work.",
    "When the agreement starts, how long it runs, whether it renews and how it can be "
    "terminated.",
    "Prices in {cur}, payment terms, discounts and interest on late payments.",
    "Service level targets, service credits and monthly reporting.",
    "Warranty period, limitation of liability, exclusions and insurance cover.",
    "Quality management, audits and compliance obligations.",
    "Confidentiality and data protection obligations of both parties.",
    "Governing law, place of jurisdiction, written form and signatures.",
    "Record of the termination of this agreement and its replacement.",
)
SECTION_SUMMARIES_DE = (
    "Nennt die Muster AG und die {name} als Vertragsparteien.",
    "Gegenstand des Vertrags {number}, Bestellungen und Lieferungen.",
    "Beginn, Laufzeit, Verlängerung und Kündigung des Vertrags.",
    "Preise in {cur}, Zahlungsziel, Skonto und Verzugszinsen.",
    "Servicelevel, Gutschriften und Berichtswesen.",
    "Gewährleistungsfrist, Haftungsbegrenzung und Versicherung.",
    "Qualitätsmanagement und Audits.",
    "Vertraulichkeit und Datenschutz.",
    "Anwendbares Recht, Gerichtsstand, Schriftform und Unterschriften.",
    "Vermerk über die Aufhebung des Vertrags und seine Ablösung.",
)
