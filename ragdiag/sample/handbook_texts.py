"""Texts of the handbooks: glossary entries and prose sections.

Every glossary term appears in exactly one glossary of the corpus (policies
have their own terms), so a definition question has one right chunk.
"""

from __future__ import annotations

GLOSSARIES: dict[str, tuple[tuple[str, str], ...]] = {
    "commercial": (
        ("service credit", "a reduction of the fees a customer receives when an agreed "
                           "service level is missed"),
        ("framework agreement", "a contract that sets the terms for future individual orders "
                                "without itself obliging either party to order specific "
                                "quantities"),
        ("call-off order", "an individual order placed under a framework agreement that "
                           "specifies quantity and delivery date"),
        ("lead time", "the time between the confirmation of an order and the delivery of the "
                      "goods"),
        ("list price", "the standard price of a product before any discount, as shown in the "
                       "current price list"),
        ("liability cap", "the maximum amount a party has to pay for damages under a "
                          "contract"),
        ("notice period", "the time that must pass between giving notice of termination and "
                          "the end of a contract"),
        ("evergreen contract", "a contract that renews automatically for further periods until "
                               "one party terminates it"),
    ),
    "general": (
        ("key account", "a customer with annual revenue above EUR 2 million that is looked "
                        "after by a dedicated key account manager"),
        ("end of life", "the date after which a product is no longer manufactured, although "
                        "spare parts may still be available"),
        ("minimum order quantity", "the smallest number of units that can be ordered in one "
                                   "order line"),
        ("return merchandise authorisation", "the approval number a customer needs before "
                                             "sending a product back to Muster"),
        ("Incoterms", "the standard trade terms of the International Chamber of Commerce that "
                      "define who pays for transport, insurance and customs"),
    ),
    "finance": (
        ("EBIT", "earnings before interest and taxes, the operating result used to steer the "
                 "segments"),
        ("days sales outstanding", "the average number of days it takes to collect payment "
                                   "after a sale"),
        ("accrual", "an expense or revenue booked in the period it relates to, before the "
                    "invoice is issued or paid"),
        ("landed cost", "the total cost of a purchased part once it arrives at the plant, "
                        "including price, freight, duties and insurance"),
    ),
    "controlling": (
        ("cost centre", "an organisational unit to which costs are assigned for planning and "
                        "control"),
        ("contribution margin", "revenue minus variable costs, showing what a product "
                                "contributes to covering fixed costs"),
        ("capex", "capital expenditure, meaning spending on assets such as machines and "
                  "buildings that are used for more than one year"),
    ),
    "quality": (
        ("8D report", "a structured problem-solving report in eight disciplines that documents "
                      "the root cause and corrective actions of a complaint"),
        ("PPM", "parts per million, the number of defective parts per one million parts "
                "delivered"),
        ("first article inspection", "the complete inspection of the first parts from a new "
                                     "or changed production process"),
        ("CAPA", "corrective and preventive action, the measures that remove the cause of a "
                 "defect and prevent it from recurring"),
        ("containment action", "an immediate measure that protects the customer from "
                               "defective parts while the root cause is investigated"),
    ),
    "quality_de": (
        ("Erstmusterprüfbericht", "der Bericht über die vollständige Prüfung der ersten Teile "
                                  "aus einem neuen Werkzeug"),
        ("Wareneingangsprüfung", "die Prüfung angelieferter Teile auf Menge, Identität und "
                                 "sichtbare Schäden"),
        ("Sperrlager", "der abgegrenzte Lagerbereich für gesperrte, fehlerverdächtige Ware"),
    ),
    "service": (
        ("first-level support", "the first point of contact for customers, which records "
                                "tickets and solves standard issues"),
        ("mean time to repair", "the average time from the start of a failure until the "
                                "equipment runs again"),
        ("field service", "service work carried out by Muster engineers at the customer's "
                          "site"),
        ("escalation", "the transfer of a ticket to a higher support level or to management "
                       "when it cannot be solved in time"),
        ("swap unit", "a replacement device sent to the customer in advance so that the "
                      "defective unit can be repaired afterwards"),
    ),
    "logistics": (
        ("cross-docking", "moving incoming goods directly to outgoing shipments without "
                          "putting them into storage"),
        ("safety stock", "extra inventory held to cover unexpected demand or delays in "
                         "supply"),
        ("consignment stock", "stock held at the customer's site that remains Muster's "
                              "property until the customer withdraws it"),
        ("dangerous goods", "items such as batteries and oils that need special packaging "
                            "and labelling for transport"),
    ),
    "engineering": (
        ("tolerance class", "the permitted deviation from a nominal dimension as defined in "
                            "ISO 2768"),
        ("engineering change notice", "the document that describes and approves a change to "
                                      "a released drawing or specification"),
        ("bill of materials", "the structured list of all components and quantities needed "
                              "to build a product"),
        ("design freeze", "the point in a development project after which the design may "
                          "only be changed through formal change control"),
    ),
    "employee": (
        ("probation period", "the first six months of employment, during which either side "
                             "may terminate with two weeks' notice"),
        ("flexitime", "the working time model in which employees choose their start and end "
                      "times around a core time"),
        ("core time", "the hours from 10:00 to 15:00 during which employees on flexitime must "
                      "be available"),
        ("sabbatical", "an unpaid leave of up to three months that employees may take after "
                       "five years of service"),
    ),
    "it": (
        ("service desk", "the single point of contact for IT requests and incidents"),
        ("shadow IT", "software or cloud services used for work without approval by the IT "
                      "department"),
    ),
    "projects": (
        ("phase gate", "a formal review at the end of a project phase where management "
                       "decides whether the project continues"),
        ("lessons learned", "the documented experience of a finished project that is shared "
                            "so that later projects can benefit"),
    ),
}

# key -> (section title, section summary, paragraphs)
HANDBOOK_SECTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "annual_2019": ("Comments on the Year", "Management comments on 2019.", (
        "Revenue grew in all regions except Germany, where the automotive slowdown hit "
        "demand for motion controllers in the second half of the year.",
        "The new plant in Brno started series production of pneumatic valves in September "
        "2019, ahead of plan.",)),
    "annual_2022": ("Comments on the Year", "Management comments on 2022.", (
        "Supply shortages of semiconductors limited deliveries of motion controllers during "
        "the first half of 2022. Price increases of 6% on average compensated most of the "
        "higher material costs.",
        "Order intake reached a record level, and the order backlog at year end covered more "
        "than five months of production.",)),
    "annual_2025": ("Comments on the Year", "Management comments on 2025.", (
        "Service and spare parts grew faster than the product business, supported by the new "
        "remote diagnostics offering. North America remained the fastest growing region.",
        "The Executive Board proposes a dividend of EUR 2.40 per share for the financial "
        "year 2025.",)),
    "glossary_use": ("Using the Glossary", "How terms are used in Muster documents.", (
        "Terms defined in this glossary are written in italics in contracts, policies and "
        "handbooks. If a contract defines a term differently, the contract definition "
        "applies to that contract.",
        "New terms can be proposed to the Legal team, which reviews the glossary twice a "
        "year.",)),
    "fin_close": ("Month-End Closing", "How the monthly closing works.", (
        "The monthly closing is completed on the fifth working day of the following month. "
        "All subsidiaries report their figures in the group reporting tool by the third "
        "working day.",
        "Accruals above EUR 10,000 must be documented with a calculation and approved by "
        "the head of controlling.",)),
    "fin_payments": ("Payment Runs", "When and how supplier invoices are paid.", (
        "Supplier invoices are paid in two payment runs per week, on Tuesday and Friday. "
        "Urgent payments outside the payment runs need the approval of the treasurer.",
        "Early-payment discounts are always taken when the discount exceeds 1.5%, provided "
        "the invoice has been approved in time.",)),
    "ctrl_planning": ("Planning Cycle", "The annual budget process.", (
        "The budget for the following year is prepared between September and November and "
        "approved by the Supervisory Board in December. A forecast is updated every quarter.",
        "Cost centre managers are responsible for their budgets and explain deviations of "
        "more than 10% in the monthly review.",)),
    "sales_discounts": ("Discounts and Quotations", "Discount authority and quotations.", (
        "Sales engineers may grant discounts of up to 10% on list prices. Discounts of up to "
        "20% need the approval of the sales director; higher discounts require the approval "
        "of the Chief Financial Officer.",
        "Quotations are valid for 60 days and must reference the current price list. Prices "
        "for framework customers follow their framework agreement.",)),
    "svc_levels": ("Support Levels", "How support is organised.", (
        "Customer support is organised in three levels. First-level support at the hotline "
        "answers calls from 07:00 to 19:00 CET, second-level support consists of product "
        "specialists, and third-level support is provided by engineering.",
        "Critical tickets are escalated automatically if no engineer has been assigned "
        "within one hour.",)),
    "qm_system": ("Quality Management System", "Certification and responsibilities.", (
        "Muster's quality management system is certified to ISO 9001 at all production "
        "sites; the Chemnitz plant is also certified to IATF 16949 for automotive customers.",
        "Every plant has a quality manager who reports to the head of quality, Petra Kuhn.",)),
    "qm_complaints": ("Customer Complaints", "Handling of complaints.", (
        "Every customer complaint receives an initial answer within 24 hours and a "
        "containment action within 48 hours. The full 8D report is due within 20 working "
        "days.",)),
    "qm_de": ("Qualitätssicherung am Standort Basel", "Prüfungen und Zuständigkeiten.", (
        "Am Standort Basel werden alle Drucksensoren vor der Auslieferung einzeln kalibriert "
        "und geprüft. Die Prüfprotokolle werden 15 Jahre aufbewahrt.",
        "Fehlerverdächtige Ware wird sofort gekennzeichnet und im Sperrlager abgelegt.",)),
    "emp_time": ("Working Time and Leave", "Working hours and holidays.", (
        "The regular working time in Germany is 38 hours per week. Employees are entitled "
        "to 30 days of paid holiday per calendar year, plus public holidays.",
        "Holiday requests are submitted in the HR portal at least two weeks in advance; "
        "up to five days may be carried over to the end of March of the following year.",)),
    "emp_benefits": ("Benefits", "Benefits for employees in Germany.", (
        "Muster offers a subsidised job ticket for public transport, a company pension plan "
        "with a 4% employer contribution and a bike leasing programme.",
        "Employees receive a bonus of EUR 500 for a successful referral of a new colleague "
        "after the end of the probation period.",)),
    "emp_de": ("Arbeitszeit und Ferien", "Ferienanspruch und Feiertage.", (
        "Mitarbeitende der Muster Schweiz AG haben Anspruch auf 25 Ferientage pro "
        "Kalenderjahr, ab dem 50. Altersjahr auf 30 Ferientage.",
        "Zusätzlich gelten die Feiertage des Kantons Basel-Stadt sowie der 1. Mai.",)),
    "site_security": ("Site Security", "Access and emergency rules at all sites.", (
        "All sites use badge access. Emergency assembly points are marked in green on the "
        "site plans, and evacuation drills take place twice a year.",)),
    "log_flow": ("Material Flow", "Inbound and outbound logistics.", (
        "Finished goods from all European plants are shipped through the central warehouse "
        "operated by Alpenblick Logistik AG in Chur. Orders received by 14:00 are shipped on "
        "the same working day.",
        "Incoming goods are checked and booked within one working day. Dangerous goods are "
        "only shipped by trained staff.",)),
    "eng_drawings": ("Drawings and Releases", "How drawings are released.", (
        "All drawings are created in the CAD system and released through the product data "
        "management system. Unless a drawing states otherwise, general tolerances follow ISO "
        "2768-m.",
        "Screws are tightened to the torques in the table below unless the drawing specifies "
        "a different value.",)),
    "it_systems": ("IT Operations", "Who runs Muster's IT.", (
        "The ERP system is hosted by Lumen Cloud Hosting B.V. in Amsterdam with a backup "
        "data centre in Frankfurt. The service desk is operated by Clearpath IT Services GmbH "
        "and can be reached from 06:00 to 22:00 CET on working days.",
        "New laptops are delivered within five working days of the request.",)),
    "onb_accounts": ("Accounts and Equipment", "What new employees receive.", (
        "New employees receive their laptop, badge and user account on the first day. "
        "Mandatory e-learnings on information security and the code of conduct must be "
        "completed within the first four weeks.",)),
    "portfolio_strategy": ("Portfolio Strategy", "Where the portfolio is heading.", (
        "Muster focuses on connected products: from 2026 all new sensors offer IO-Link and "
        "all new motion controllers support remote diagnostics.",
        "Older product lines are moved to end of life with at least 12 months' notice to "
        "customers.",)),
    "sust": ("Energy and Emissions", "Emissions and energy use in 2025.", (
        "In 2025, Muster's scope 1 and 2 emissions fell by 18% compared with 2021. The "
        "largest reduction came from the switch to green electricity at the Chemnitz plant.",
        "Solar panels on the roof of the Brno plant produced 1.2 GWh of electricity in 2025.",)),
    "projects": ("Project Management", "How projects are run.", (
        "Development projects follow five phases from idea to series launch, each closed by "
        "a phase gate. Projects with a budget above EUR 500,000 are steered by the Executive "
        "Board.",)),
}
