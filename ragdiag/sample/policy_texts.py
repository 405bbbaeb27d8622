"""The texts of Muster's policies: one `Policy` spec per document.

`docs_policies` wraps each spec in the common sections (purpose, scope,
definitions, responsibilities, document control) and plants its facts.
Facts are (intent, needle, question, answer); needles are verbatim sentences or
table rows of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ragdiag.sample import table_row


@dataclass(frozen=True)
class Policy:
    title: str
    short: str
    topic: str
    goal: str
    owner: str  # key of vocab.OFFICERS
    dept: str
    summary: str
    body: tuple  # ((section title, summary, ((kind "p"|"l"|"t", content), ...)), ...)
    defs: tuple = ()  # ((term, definition), ...)
    facts: tuple = ()  # ((intent, needle, question, answer), ...)
    entities: tuple = ()
    groups: tuple = ("all-staff",)
    language: str = "en"
    valid_from: date = date(2025, 1, 1)
    valid_to: date | None = None
    version: str = "1.0"
    quality: float | None = None


def table_block(header: tuple, rows: list) -> tuple:
    return ("t", (header, rows))



APPROVAL_ROWS = [["up to EUR 5,000", "Team lead"], ["up to EUR 25,000", "Department head"],
                 ["up to EUR 100,000", "Managing director of the subsidiary"],
                 ["up to EUR 250,000", "Chief Financial Officer"],
                 ["above EUR 250,000", "Executive Board"]]
RETENTION_ROWS = [["Invoices and accounting records", "10 years"],
                  ["Contracts", "10 years after the end of the contract"],
                  ["Personnel files", "5 years after the employee leaves"],
                  ["Job applications (rejected)", "6 months"],
                  ["Support tickets", "3 years after closure"],
                  ["Quality records and test reports", "15 years"]]
CAR_ROWS = [["E6", "Category B (compact)", "EUR 450"], ["E7", "Category C (mid-size)", "EUR 550"],
            ["E8", "Category D (upper mid-size)", "EUR 700"],
            ["E9 and Executive Board", "Category E (executive)", "EUR 950"]]

POLICIES: tuple[Policy, ...] = (  # after the three travel policy versions
    Policy(
        "Reisekostenrichtlinie Muster Schweiz AG 2026", "Reisekostenrichtlinie",
        "Geschäftsreisen und die Erstattung von Reisekosten", "", "cfo", "Finanzen",
        "Reisekostenrichtlinie der Muster Schweiz AG ab 2026: Bahn- und Flugreisen, "
        "Verpflegungspauschalen und Hotelobergrenzen in Schweizer Städten.",
        (("Reisemittel", "Bahn, Flug und Privatwagen.", (
            ("p", "Für Bahnreisen innerhalb der Schweiz wird das Halbtax-Abonnement vollständig "
                  "erstattet. Flüge innerhalb Europas sind in der Economy-Klasse zu buchen."),
            ("p", "Fahrten mit dem Privatwagen werden mit CHF 0.70 pro Kilometer vergütet."),
        )), ("Hotelobergrenzen", "Maximale Übernachtungskosten pro Nacht.", (
            ("p", "Übernachtungskosten werden bis zu den folgenden Beträgen pro Nacht inklusive "
                  "Frühstück erstattet."),
            table_block(("Stadt", "Obergrenze pro Nacht"), [["Basel", "CHF 190"], ["Zürich", "CHF 240"],
                                                   ["Bern", "CHF 200"], ["Genf", "CHF 260"],
                                                   ["Lugano", "CHF 180"]]),
        ))),
        defs=(("Halbtax", "das Halbtax-Abonnement der Schweizer Bahnen, mit dem Fahrkarten zum "
                          "halben Preis gekauft werden"),),
        facts=(("table", table_row(["Genf", "CHF 260"]), "What is the hotel limit in Geneva "
                "for Muster Schweiz employees?", "CHF 260"),
               ("fact", "Fahrten mit dem Privatwagen werden mit CHF 0.70 pro Kilometer vergütet.",
                "What mileage allowance does Muster Schweiz pay for private car trips?",
                "CHF 0.70")),
        entities=("ENT-REISEWELT",), language="de", valid_from=date(2026, 1, 1), version="2.0"),
    Policy(
        "Approval Authority Policy", "approval authority policy",
        "approval limits and signature authority",
        "financial commitments are approved at the right level and with four eyes",
        "cfo", "Finance",
        "Who may approve purchases, contracts and other financial commitments up to which "
        "amount, the four-eyes principle and rules for urgent cases.",
        (("Approval Limits", "Approval thresholds by amount.", (
            ("p", "Every commitment is approved according to its total value over the full "
                  "contract term, not per year or per invoice. Splitting an order to stay below "
                  "a threshold is prohibited."),
            table_block(("Commitment value", "Approver"), APPROVAL_ROWS),
        )), ("Four-Eyes Principle", "Second signature and urgent cases.", (
            ("p", "Every contract with a value above EUR 25,000 is signed by two authorised "
                  "persons, one of whom must be from Finance or Legal. In urgent cases the next "
                  "higher approver may decide alone and the second signature is added within "
                  "five working days."),
        ))),
        defs=(("commitment value", "the total amount payable under an order or contract over "
                                   "its full term, including options and extensions"),
              ("four-eyes principle", "the rule that a decision requires the approval of two "
                                      "authorised persons independent of each other")),
        facts=(("table", table_row(APPROVAL_ROWS[3]), "Who has to approve a purchase of EUR "
                "180,000?", "Chief Financial Officer"),
               ("table", table_row(APPROVAL_ROWS[1]), "Up to which amount can a department "
                "head sign off spending?", "EUR 25,000"),
               ("verification", "Every contract with a value above EUR 25,000 is signed by two "
                "authorised persons, one of whom must be from Finance or Legal.",
                "Is a single signature enough for a EUR 40,000 contract?", "two authorised")),
        valid_from=date(2025, 4, 1), version="3.1"),
    Policy(
        "Procurement Policy", "procurement policy", "the purchase of goods and services",
        "purchases are competitive, transparent and made from approved suppliers",
        "procurement", "Procurement",
        "Rules for purchasing: competitive quotes, approved suppliers, supplier onboarding and "
        "the preferred logistics provider.",
        (("Competitive Quotes", "When quotes must be obtained.", (
            ("p", "For purchases above EUR 10,000, at least three written quotes must be "
                  "obtained and documented in the purchasing system. Above EUR 100,000 a "
                  "formal tender led by Procurement is required."),
            ("p", "Framework suppliers with a valid framework purchase agreement may be used "
                  "without new quotes as long as the agreed prices apply."),
        )), ("Suppliers and Logistics", "Supplier onboarding and freight.", (
            ("p", "New suppliers are onboarded only after a credit check, a sanctions screening "
                  "and signature of the Muster Supplier Code of Conduct. Onboarding takes about "
                  "ten working days."),
            ("p", "Inbound and outbound freight in Europe is handled by Alpenblick Logistik AG "
                  "as the preferred logistics provider; other forwarders may only be used if "
                  "Alpenblick cannot meet the required date."),
        ))),
        defs=(("framework supplier", "a supplier with whom Muster has a valid framework "
                                     "purchase agreement covering prices and conditions"),
              ("maverick buying", "purchasing outside the agreed procurement process, for "
                                  "example without a purchase order or from non-approved "
                                  "suppliers")),
        facts=(("fact", "For purchases above EUR 10,000, at least three written quotes must be "
                "obtained and documented in the purchasing system.", "How many offers do I "
                "need before buying something for EUR 15,000?", "three"),
               ("fact", "Inbound and outbound freight in Europe is handled by Alpenblick "
                "Logistik AG as the preferred logistics provider; other forwarders may only be "
                "used if Alpenblick cannot meet the required date.",
                "Which freight forwarder should we use for shipments within Europe?",
                "Alpenblick Logistik AG")),
        entities=("ENT-ALPENBLICK",), valid_from=date(2024, 7, 1), version="2.2"),
    Policy(
        "Data Protection Policy", "data protection policy", "the protection of personal data",
        "personal data of employees, customers and suppliers is processed lawfully and "
        "securely", "dpo", "Data Protection",
        "How Muster processes personal data under the GDPR and the Swiss FADP: principles, "
        "processors, data breaches and the rights of data subjects.",
        (("Processors", "External service providers processing personal data.", (
            ("p", "Personal data may only be passed to processors with a signed data "
                  "processing agreement. Current processors include Lumen Cloud Hosting B.V. "
                  "for the ERP system, Quantum Payroll Solutions AG for payroll and Clearpath "
                  "IT Services GmbH for the service desk."),
        )), ("Data Breaches", "Reporting and handling of data breaches.", (
            ("p", "Any suspected data breach must be reported to the data protection officer "
                  "immediately, at the latest within 24 hours of discovery. Muster notifies "
                  "the supervisory authority within 72 hours where the breach is likely to "
                  "result in a risk to individuals."),
            ("p", "The data protection officer is Jakob Imhof, who can be reached through the "
                  "privacy mailbox and the intranet."),
        ))),
        defs=(("personal data", "any information relating to an identified or identifiable "
                                "natural person"),
              ("data breach", "a breach of security leading to the accidental or unlawful "
                              "destruction, loss, alteration or disclosure of personal data"),
              ("processor", "an external party that processes personal data on behalf of "
                            "Muster and only on its instructions")),
        facts=(("fact", "Muster notifies the supervisory authority within 72 hours where the "
                "breach is likely to result in a risk to individuals.", "How quickly do we "
                "have to inform the authority about a data leak?", "72 hours"),
               ("fact", "Any suspected data breach must be reported to the data protection "
                "officer immediately, at the latest within 24 hours of discovery.",
                "By when must an employee report a suspected data breach internally?",
                "24 hours"),
               ("verification", "Current processors include Lumen Cloud Hosting B.V. for the "
                "ERP system, Quantum Payroll Solutions AG for payroll and Clearpath IT Services "
                "GmbH for the service desk.", "Is it true that Lumen Cloud Hosting processes "
                "payroll data for us?", "Quantum Payroll")),
        entities=("ENT-LUMEN", "ENT-QUANTUM", "ENT-CLEARPATH"), valid_from=date(2025, 5, 25),
        version="4.0"),
    Policy(
        "Information Security Policy", "information security policy",
        "the use and protection of IT systems and information",
        "IT systems are used responsibly and information is protected against misuse",
        "cfo", "IT", "Passwords and multi-factor authentication, acceptable use of IT, "
        "security incidents, the service desk and annual penetration tests.",
        (("Access and Passwords", "Rules for accounts, passwords and MFA.", (
            ("p", "Passwords must have at least 14 characters and must not be reused for "
                  "other services. Multi-factor authentication is mandatory for remote access "
                  "and for all cloud applications."),
            ("p", "Accounts are locked after ten failed login attempts. The service desk "
                  "operated by Clearpath IT Services GmbH unlocks accounts after verifying "
                  "the caller's identity."),
        )), ("Security Testing and Incidents", "Penetration tests and incident reporting.", (
            ("p", "Blackthorn Security Ltd performs an external penetration test of all "
                  "internet-facing systems once a year. Critical findings must be fixed within "
                  "14 days, high findings within 30 days."),
            ("p", "Lost devices and suspicious e-mails are reported to the service desk "
                  "immediately. Employees must not try to investigate incidents themselves."),
        ))),
        defs=(("multi-factor authentication", "a login method that requires at least two "
               "independent factors, such as a password and a code from a mobile app"),
              ("security incident", "an event that threatens the confidentiality, integrity "
                                    "or availability of information or IT systems")),
        facts=(("fact", "Passwords must have at least 14 characters and must not be reused "
                "for other services.", "How long does a password have to be?",
                "14 characters"),
               ("fact", "Critical findings must be fixed within 14 days, high findings within "
                "30 days.", "How fast must critical pen test findings be remediated?",
                "14 days"),
               ("verification", "Accounts are locked after ten failed login attempts.",
                "Is it true that an account is locked after five wrong passwords?", "ten")),
        entities=("ENT-CLEARPATH", "ENT-BLACKTHORN"), valid_from=date(2025, 9, 1),
        version="5.1"),
    Policy(
        "Gifts and Hospitality Policy", "gifts policy", "gifts, invitations and hospitality",
        "business decisions are never influenced by gifts or invitations", "legal", "Legal",
        "Limits for accepting and giving gifts and hospitality, the gift register and "
        "rules for public officials.",
        (("Limits", "Value limits and the gift register.", (
            ("p", "Employees may accept or give gifts with a value of up to EUR 50 per person "
                  "and occasion. Business meals may not exceed EUR 150 per person."),
            ("p", "Gifts above these limits are declined politely or, where refusal would be "
                  "offensive, handed over to Legal and recorded in the gift register. Gifts to "
                  "public officials of any value require prior approval by Legal."),
        )),),
        defs=(("gift", "any benefit offered free of charge, including goods, vouchers, "
                       "tickets and discounts not available to the public"),
              ("public official", "a person who holds a position in a government body, "
                                  "authority or state-owned company")),
        facts=(("fact", "Employees may accept or give gifts with a value of up to EUR 50 per "
                "person and occasion.", "What is the maximum value of a present I may accept "
                "from a supplier?", "EUR 50"),
               ("verification", "Business meals may not exceed EUR 150 per person.",
                "Can I invite a customer to a dinner costing EUR 200 per head?", "EUR 150")),
        valid_from=date(2023, 3, 1), version="2.0"),
    Policy(
        "Remote Work Policy", "remote work policy", "working from home and mobile work",
        "remote work is organised fairly and safely", "hr", "HR",
        "How many days employees may work remotely, the equipment allowance, working time "
        "recording and data security at home.",
        (("Remote Days and Equipment", "Remote days per week and the allowance.", (
            ("p", "Employees whose role allows it may work remotely on up to three days per "
                  "week, subject to their team's core presence days. Working from abroad is "
                  "limited to 20 days per year and requires HR approval."),
            ("p", "A one-off equipment allowance of EUR 300 is paid for furniture and "
                  "accessories. Company laptops and monitors are provided by IT."),
        )),),
        defs=(("core presence day", "a day agreed within a team on which all members work at "
                                    "the office"),),
        facts=(("fact", "A one-off equipment allowance of EUR 300 is paid for furniture and "
                "accessories.", "How much money do I get to set up my home office?",
                "EUR 300"),
               ("fact", "Working from abroad is limited to 20 days per year and requires HR "
                "approval.", "How many days a year can I work remotely from another country?",
                "20 days"),
               ("verification", "Employees whose role allows it may work remotely on up to "
                "three days per week, subject to their team's core presence days.",
                "Am I allowed to work from home four days a week?", "three days")),
        valid_from=date(2024, 1, 1), version="2.1"),
    Policy(
        "Company Car Policy", "company car policy", "company cars",
        "company cars are assigned transparently and used economically", "hr", "HR",
        "Eligibility for company cars by grade, vehicle categories and monthly leasing "
        "limits, private use and the preference for electric vehicles.",
        (("Eligibility and Categories", "Car categories and leasing limits by grade.", (
            ("p", "Company cars are available from grade E6 and for field sales and service "
                  "roles. New cars ordered from 2025 onwards must be fully electric or plug-in "
                  "hybrids."),
            table_block(("Grade", "Vehicle category", "Monthly leasing limit"), CAR_ROWS),
        )),),
        defs=(("leasing limit", "the maximum monthly leasing rate, excluding fuel and "
                                "insurance, that Muster pays for a company car"),),
        facts=(("table", table_row(CAR_ROWS[2]), "What is the monthly leasing budget for a "
                "company car in grade E8?", "EUR 700"),
               ("table", table_row(CAR_ROWS[0]), "Which car category can an E6 employee "
                "choose?", "Category B")),
        valid_from=date(2025, 1, 1), version="3.0"),
    Policy(
        "Whistleblowing Policy", "whistleblowing policy", "reporting misconduct",
        "misconduct can be reported safely and reporters are protected", "legal", "Legal",
        "Channels for reporting misconduct, protection of whistleblowers and response times.",
        (("Reporting Channels and Deadlines", "How to report and how fast Muster responds.", (
            ("p", "Concerns can be reported to the line manager, to Legal or anonymously via "
                  "the whistleblowing platform, which is available in eight languages."),
            ("p", "The compliance office acknowledges each report within seven days and gives "
                  "feedback on the measures taken within three months. Retaliation against "
                  "anyone who reports in good faith is prohibited."),
        )),),
        defs=(("whistleblower", "a person who reports information about breaches of law or "
                                "policy obtained in a work-related context"),
              ("retaliation", "any direct or indirect disadvantage suffered by a person as a "
                              "result of a report made in good faith")),
        facts=(("fact", "The compliance office acknowledges each report within seven days and "
                "gives feedback on the measures taken within three months.",
                "How soon is a whistleblowing report acknowledged?", "seven days"),),
        valid_from=date(2023, 12, 17), version="1.2"),
    Policy(
        "Records Retention Policy", "records retention policy",
        "the retention and deletion of business records",
        "records are kept as long as the law requires and deleted afterwards",
        "legal", "Legal", "Minimum retention periods for business records and the rules for "
        "their secure deletion.",
        (("Retention Periods", "How long records are kept.", (
            ("p", "The following minimum retention periods apply to paper and electronic "
                  "records alike. Records subject to a legal hold may not be deleted."),
            table_block(("Record type", "Retention period"), RETENTION_ROWS),
        )),),
        defs=(("legal hold", "an instruction from Legal to preserve records relevant to a "
                             "dispute or investigation, overriding normal deletion"),),
        facts=(("table", table_row(RETENTION_ROWS[2]), "How long do we keep personnel files "
                "after someone leaves?", "5 years"),
               ("table", table_row(RETENTION_ROWS[5]), "What retention period applies to "
                "quality test reports?", "15 years"),
               ("table", table_row(RETENTION_ROWS[3]), "How long may we keep the documents of "
                "rejected applicants?", "6 months")),
        valid_from=date(2022, 10, 1), version="2.0", quality=0.78),
    Policy(
        "Information Classification Policy", "classification policy",
        "the classification and handling of information",
        "every document is handled according to its sensitivity", "dpo", "Information Security",
        "The four classification levels of Muster information and how documents of each "
        "level are labelled, stored and shared.",
        (("Handling Rules", "Labelling, storage and sharing by level.", (
            ("p", "Documents classified as confidential or higher must carry the "
                  "classification in the footer. Strictly confidential documents may only be "
                  "sent encrypted and must not be stored on personal devices."),
            ("p", "When in doubt, the author chooses the higher level. The owner of a document "
                  "reviews its classification when it is shared outside the original group."),
        )),),
        defs=(("public information", "information approved for publication, such as product "
               "data sheets and press releases"),
              ("internal information", "information meant for employees only whose "
               "disclosure would cause little harm, such as the intranet and policies"),
              ("confidential information", "information whose disclosure could harm Muster or "
               "its partners, such as contracts, prices and customer data"),
              ("strictly confidential information", "the most sensitive information, such as "
               "salary data, M&A plans and unpublished financial results")),
        facts=(("verification", "Strictly confidential documents may only be sent encrypted "
                "and must not be stored on personal devices.", "Can I keep a strictly "
                "confidential file on my private laptop?", "must not"),),
        valid_from=date(2024, 2, 1), version="1.3"),
    Policy(
        "Training and Development Policy", "training policy", "training and development",
        "every employee can keep their skills up to date", "hr", "HR",
        "The annual training budget per employee, the approval of courses and the repayment "
        "rule for expensive programmes.",
        (("Budget and Approval", "Training budget, approval and repayment.", (
            ("p", "Each employee has a personal training budget of EUR 1,200 per calendar "
                  "year. Courses within the budget are approved by the line manager; unused "
                  "budget does not carry over."),
            ("p", "For programmes costing more than EUR 5,000, the employee repays the costs "
                  "pro rata if they leave within 24 months after completion."),
        )),),
        defs=(("training budget", "the amount available to an employee each calendar year "
                                  "for external courses, certifications and conferences"),),
        facts=(("fact", "Each employee has a personal training budget of EUR 1,200 per calendar "
                "year.", "How much can I spend on courses each year?", "EUR 1,200"),
               ("verification", "Courses within the budget are approved by the line manager; "
                "unused budget does not carry over.", "Does unused training budget roll over "
                "into the next year?", "does not carry over")),
        valid_from=date(2025, 1, 1), version="2.0"),
    Policy(
        "Health and Safety Policy", "health and safety policy", "occupational health and safety",
        "nobody is harmed at work", "quality", "Health and Safety",
        "Personal protective equipment, accident reporting, safety officers and first aid at "
        "Muster's sites.",
        (("Protective Equipment and Accidents", "PPE and how accidents are reported.", (
            ("p", "Safety shoes and safety glasses are mandatory in all production and "
                  "warehouse areas; hearing protection is required where noise exceeds 85 dB."),
            ("p", "Every accident and near miss must be reported to the site safety officer "
                  "within 24 hours. Each site has at least one trained first aider per 20 "
                  "employees on every shift."),
        )),),
        defs=(("near miss", "an unplanned event that did not cause injury or damage but could "
                            "have done so"),),
        facts=(("fact", "Every accident and near miss must be reported to the site safety "
                "officer within 24 hours.", "Within what time must a workplace accident be "
                "reported?", "24 hours"),
               ("fact", "Safety shoes and safety glasses are mandatory in all production and "
                "warehouse areas; hearing protection is required where noise exceeds 85 dB.",
                "Above which noise level is ear protection required in the plant?", "85 dB")),
        valid_from=date(2021, 6, 1), version="3.0", quality=0.76),
    Policy(
        "Environmental Policy", "environmental policy", "environmental protection",
        "Muster reduces its environmental footprint", "quality", "Sustainability",
        "Muster's climate targets, energy and waste rules and the ISO 14001 management system.",
        (("Targets", "Climate and waste targets.", (
            ("p", "Muster will reduce its scope 1 and 2 emissions by 40% by 2030 compared with "
                  "2021 and will reach net zero by 2040. All sites have used certified green "
                  "electricity since 2024."),
            ("p", "Production waste is separated at source; the recycling rate target is 85%. "
                  "The environmental management system is certified to ISO 14001."),
        )),),
        defs=(("scope 1 emissions", "direct greenhouse gas emissions from sources Muster owns "
                                    "or controls, such as boilers and company cars"),
              ("scope 2 emissions", "indirect emissions from purchased electricity, heat and "
                                    "steam")),
        facts=(("fact", "Muster will reduce its scope 1 and 2 emissions by 40% by 2030 compared "
                "with 2021 and will reach net zero by 2040.", "What is our CO2 reduction "
                "target for 2030?", "40%"),
               ("verification", "Muster will reduce its scope 1 and 2 emissions by 40% by 2030 "
                "compared with 2021 and will reach net zero by 2040.", "Is it true that Muster "
                "wants to be net zero by 2035?", "2040")),
        valid_from=date(2024, 4, 22), version="2.0"),
    Policy(
        "Anti-Bribery and Corruption Policy", "anti-bribery policy", "bribery and corruption",
        "Muster never offers, pays or accepts bribes", "legal", "Legal",
        "The ban on bribery and facilitation payments and the due diligence of sales agents "
        "and intermediaries.",
        (("Prohibited Conduct and Due Diligence", "What is banned and how agents are checked.", (
            ("p", "Facilitation payments are prohibited, even where they are customary. "
                  "Payments under duress to protect someone's safety must be reported to Legal "
                  "within 48 hours."),
            ("p", "Sales agents and distributors undergo a due diligence check before "
                  "appointment, renewed every three years; commissions above 10% need the "
                  "approval of the Chief Financial Officer."),
        )),),
        defs=(("facilitation payment", "a small unofficial payment to a public official to "
               "speed up a routine action, such as customs clearance"),
              ("intermediary", "a third party, such as an agent or distributor, that acts on "
                               "behalf of Muster towards customers or authorities")),
        facts=(("fact", "Sales agents and distributors undergo a due diligence check before "
                "appointment, renewed every three years; commissions above 10% need the "
                "approval of the Chief Financial Officer.", "Who must approve a sales agent "
                "commission of 12%?", "Chief Financial Officer"),),
        valid_from=date(2022, 1, 1), version="2.0", quality=0.8),
    Policy(
        "Corporate Card Policy", "corporate card policy", "corporate credit cards",
        "corporate cards are used only for business expenses and settled on time", "cfo",
        "Finance", "Who gets a corporate card, card limits, permitted use and the monthly "
        "settlement of card statements.",
        (("Limits and Settlement", "Card limits and monthly settlement.", (
            ("p", "Corporate cards are issued to employees who travel at least four times a "
                  "year. The standard monthly limit is EUR 5,000; higher limits require the "
                  "approval of the Chief Financial Officer."),
            ("p", "Card transactions are settled in the expense tool by the 10th of the "
                  "following month. Private use of the card is not permitted, and cash "
                  "withdrawals are limited to EUR 300 per trip."),
        )),),
        defs=(("card statement", "the monthly list of all transactions made with a corporate "
                                 "card"),),
        facts=(("fact", "The standard monthly limit is EUR 5,000; higher limits require the "
                "approval of the Chief Financial Officer.", "What's the monthly spending "
                "limit on a company credit card?", "EUR 5,000"),
               ("verification", "Private use of the card is not permitted, and cash "
                "withdrawals are limited to EUR 300 per trip.", "May I use my corporate card "
                "for private purchases if I pay them back?", "not permitted")),
        valid_from=date(2025, 3, 1), version="1.4"),
    Policy(
        "Site Access and Visitor Policy", "visitor policy", "site access and visitors",
        "only authorised persons enter Muster's sites", "procurement", "Facility Management",
        "Badges, visitor registration and escort rules at Muster sites, and the facility "
        "management contractor.",
        (("Visitors", "Registration, badges and escorts.", (
            ("p", "Visitors are registered by their host at least one working day in advance "
                  "and receive a day badge at reception. They must be escorted at all times in "
                  "production areas."),
            ("p", "Reception, cleaning and building maintenance at the Leeds office are "
                  "provided by Harbourside Facilities Ltd, which also issues visitor badges "
                  "there."),
        )),),
        defs=(("host", "the employee who invites a visitor and is responsible for them during "
                       "the visit"),),
        facts=(("fact", "Reception, cleaning and building maintenance at the Leeds office are "
                "provided by Harbourside Facilities Ltd, which also issues visitor badges "
                "there.", "Which company runs reception and cleaning at our Leeds office?",
                "Harbourside Facilities Ltd"),),
        entities=("ENT-HARBOURSIDE",), valid_from=date(2023, 9, 1), version="1.1"),
    Policy(
        "Use of External Consultants Policy", "consulting policy", "engaging external "
        "consultants", "external consultants are used only where they add value and at fair "
        "rates", "procurement", "Procurement",
        "When external consultants may be engaged, daily rate limits and the framework "
        "agreement with Sternwarte Consulting.",
        (("Engagement Rules", "Approval, rates and the framework consultant.", (
            ("p", "Consulting engagements require a written statement of work and the approval "
                  "of a department head. Daily rates above EUR 1,400 need the approval of the "
                  "Chief Financial Officer."),
            ("p", "For lean manufacturing and shop-floor projects, Sternwarte Consulting GmbH "
                  "is the framework consultant and must be asked first."),
        )),),
        defs=(("statement of work", "a document describing the scope, deliverables, timeline "
                                    "and fees of a specific engagement"),),
        facts=(("fact", "Daily rates above EUR 1,400 need the approval of the Chief Financial "
                "Officer.", "Above which daily rate does a consultant need CFO sign-off?",
                "EUR 1,400"),),
        entities=("ENT-STERNWARTE",), valid_from=date(2024, 10, 1), version="1.0"),
    Policy(
        "Richtlinie Arbeitszeit und Überstunden", "Arbeitszeitrichtlinie",
        "die Arbeitszeit und den Ausgleich von Überstunden", "", "hr", "HR",
        "Regelarbeitszeit, Gleitzeit und Ausgleich von Überstunden bei der Muster Schweiz AG.",
        (("Arbeitszeit", "Regelarbeitszeit und Gleitzeit.", (
            ("p", "Die wöchentliche Regelarbeitszeit beträgt 41 Stunden. Innerhalb der "
                  "Rahmenzeit von 06:00 bis 20:00 Uhr gilt Gleitzeit."),
            ("p", "Überstunden werden in erster Linie durch Freizeit ausgeglichen. Ein "
                  "Zeitguthaben von mehr als 50 Stunden muss mit der vorgesetzten Person "
                  "abgebaut werden."),
        )),),
        facts=(("fact", "Die wöchentliche Regelarbeitszeit beträgt 41 Stunden.",
                "What are the regular weekly working hours at Muster Schweiz AG?",
                "41 Stunden"),),
        language="de", valid_from=date(2024, 1, 1), version="1.0"),
)
