"""Names of the fictional world: Muster AG, its partners, people, sites and products.

Everything here is fixed data (no randomness), so every generator sees the same
world. Entity keys (``ENT-...``) are what the documents' ``entity_keys`` carry and
what ``sample_data/entities.json`` maps to names and aliases.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Partner:
    key: str
    name: str
    aliases: tuple[str, ...]
    role: str  # customer | supplier | service
    street: str
    city: str
    country: str
    what: str  # what they do / supply (English, lower-case start)
    families: tuple[str, ...] = ()  # product families they buy (customers) or feed (suppliers)
    german: bool = False  # contracts with them may be written in German

    @property
    def short(self) -> str:
        return self.aliases[0] if self.aliases else self.name


MUSTER_KEY = "ENT-MUSTER"
MUSTER_NAME = "Muster AG"
MUSTER_ALIASES = ("Muster", "Muster Group", "Muster Schweiz AG")
MUSTER_ADDRESS = "Industriestrasse 12, 70565 Stuttgart, Germany"

P = Partner
PARTNERS: tuple[Partner, ...] = (
    # ---- customers ----
    P("ENT-NORDLICHT", "Nordlicht GmbH", ("Nordlicht", "Nordlicht Windkraft"), "customer",
      "Hafenstraße 8, 20457", "Hamburg", "Germany", "builds onshore wind turbines",
      ("MX", "HX"), True),
    P("ENT-BRIGHTWATER", "Brightwater Ltd", ("Brightwater",), "customer",
      "14 Canal Street, M1 3HE", "Manchester", "United Kingdom",
      "designs and operates municipal water treatment plants", ("SN", "PV")),
    P("ENT-RHEINWERK", "Rheinwerk Maschinenbau GmbH", ("Rheinwerk",), "customer",
      "Am Rheinhafen 31, 47119", "Duisburg", "Germany", "builds heavy forming presses",
      ("HX", "DR"), True),
    P("ENT-KESTREL", "Kestrel Automation Inc.", ("Kestrel", "Kestrel Automation"), "customer",
      "2200 Polaris Parkway, OH 43240", "Columbus", "United States",
      "integrates robotic assembly cells for the automotive industry", ("MX", "DR")),
    P("ENT-FJORDLINE", "Fjordline Marine AS", ("Fjordline",), "customer",
      "Strandkaien 4, 5013", "Bergen", "Norway", "builds deck cranes and winches for ships",
      ("HX", "SN")),
    P("ENT-SONNENHOF", "Sonnenhof Agrartechnik GmbH", ("Sonnenhof",), "customer",
      "Donaustraße 55, 89073", "Ulm", "Germany", "manufactures agricultural machinery",
      ("HX", "PV"), True),
    P("ENT-BELLAMY", "Bellamy & Roe Packaging Ltd", ("Bellamy & Roe", "Bellamy"), "customer",
      "Aire Valley Works, LS10 1AB", "Leeds", "United Kingdom",
      "builds packaging and labelling lines", ("PV", "MX")),
    P("ENT-TESSARO", "Tessaro Meccanica S.p.A.", ("Tessaro",), "customer",
      "Via Milano 120, 25126", "Brescia", "Italy", "makes CNC machining centres", ("MX", "DR")),
    P("ENT-VANDERMEER", "Vandermeer Food Systems B.V.", ("Vandermeer",), "customer",
      "Kanaaldijk 17, 5611", "Eindhoven", "Netherlands",
      "supplies food processing and bottling equipment", ("PV", "SN")),
    P("ENT-GRANITZ", "Granitz Bergbau GmbH", ("Granitz",), "customer",
      "Erzbergstraße 3, 8700", "Leoben", "Austria", "operates underground mining equipment",
      ("HX", "DR"), True),
    P("ENT-POLARIS", "Polaris Robotics Oy", ("Polaris Robotics", "Polaris"), "customer",
      "Hermiankatu 6, 33720", "Tampere", "Finland", "builds autonomous warehouse robots",
      ("MX", "SN")),
    P("ENT-LINDQVIST", "Lindqvist Pharma AB", ("Lindqvist",), "customer",
      "Dag Hammarskjölds väg 30, 752 37", "Uppsala", "Sweden",
      "runs sterile pharmaceutical filling lines", ("SN", "PV")),
    P("ENT-HELIOTROPE", "Heliotrope Energy SAS", ("Heliotrope",), "customer",
      "12 Quai Perrache, 69002", "Lyon", "France", "builds solar tracker systems", ("DR", "MX")),
    P("ENT-EICHENWALD", "Eichenwald Holzwerke GmbH", ("Eichenwald",), "customer",
      "Sägewerkweg 9, 34117", "Kassel", "Germany", "operates sawmills and timber processing",
      ("HX", "DR"), True),
    P("ENT-CASTELLAN", "Castellan Rail Ltd", ("Castellan Rail", "Castellan"), "customer",
      "Litchurch Lane, DE24 8AD", "Derby", "United Kingdom",
      "refurbishes rolling stock and builds bogie test rigs", ("HX", "SN")),
    P("ENT-ZIMMERMANN", "Zimmermann Pumpen AG", ("Zimmermann Pumpen", "Zimmermann"), "customer",
      "Tössfeldstrasse 21, 8406", "Winterthur", "Switzerland", "builds industrial pump systems",
      ("SN", "DR"), True),
    P("ENT-OAKRIDGE", "Oakridge Beverage Co.", ("Oakridge Beverage", "Oakridge"), "customer",
      "800 W Canal St, WI 53233", "Milwaukee", "United States", "runs high-speed canning lines",
      ("PV", "SN")),
    P("ENT-MARISOL", "Marisol Textiles S.L.", ("Marisol",), "customer",
      "Avenida del Puerto 44, 46023", "Valencia", "Spain", "operates technical weaving mills",
      ("MX", "PV")),
    P("ENT-WENDELSTEIN", "Wendelstein Medizintechnik GmbH", ("Wendelstein",), "customer",
      "Kufsteiner Straße 70, 83022", "Rosenheim", "Germany",
      "manufactures hospital beds and patient lifts", ("DR", "MX"), True),
    P("ENT-ARGONAUT", "Argonaut Offshore Pty Ltd", ("Argonaut Offshore", "Argonaut"), "customer",
      "101 St Georges Terrace, WA 6000", "Perth", "Australia",
      "services offshore drilling platforms", ("HX", "SN")),
    # ---- suppliers ----
    P("ENT-BRANDT", "Brandt Elektronik GmbH", ("Brandt Elektronik", "Brandt"), "supplier",
      "Schoppershofstraße 40, 90489", "Nuremberg", "Germany",
      "printed circuit board assemblies", ("MX", "SN"), True),
    P("ENT-KOVAC", "Kovac Metalworks d.o.o.", ("Kovac Metalworks", "Kovac"), "supplier",
      "Tržaška cesta 85, 2000", "Maribor", "Slovenia", "aluminium die-cast housings",
      ("HX", "PV")),
    P("ENT-SILVERLINE", "Silverline Semiconductors Ltd", ("Silverline",), "supplier",
      "Cowley Road 310, CB4 0WS", "Cambridge", "United Kingdom",
      "power semiconductors and motor driver chips", ("MX", "DR")),
    P("ENT-HOSHINO", "Hoshino Precision K.K.", ("Hoshino Precision", "Hoshino"), "supplier",
      "3-15 Meieki, 450-0002", "Nagoya", "Japan", "precision ball bearings", ("DR", "MX")),
    P("ENT-FERRUM", "Ferrum Stahlhandel GmbH", ("Ferrum",), "supplier",
      "Westfalendamm 87, 44141", "Dortmund", "Germany", "steel bar stock and valve blanks",
      ("HX", "DR"), True),
    P("ENT-AQUILA", "Aquila Polymers S.r.l.", ("Aquila Polymers", "Aquila"), "supplier",
      "Corso Orbassano 336, 10137", "Turin", "Italy", "elastomer seals and O-rings",
      ("HX", "PV")),
    P("ENT-WESTBROOK", "Westbrook Cables Ltd", ("Westbrook Cables", "Westbrook"), "supplier",
      "Fabian Way 12, SA1 8EN", "Swansea", "United Kingdom", "cable harnesses and connectors",
      ("SN", "MX")),
    P("ENT-TAURUS", "Taurus Hydraulik GmbH", ("Taurus Hydraulik", "Taurus"), "supplier",
      "Friedrichsfelder Straße 51, 68199", "Mannheim", "Germany",
      "hydraulic pump units and cylinders", ("HX",), True),
    P("ENT-MERIDIAN", "Meridian Sensors Inc.", ("Meridian Sensors", "Meridian"), "supplier",
      "9500 Research Blvd, TX 78759", "Austin", "United States",
      "MEMS pressure sensing elements", ("SN",)),
    P("ENT-SEELAND", "Seeland Verpackung AG", ("Seeland Verpackung", "Seeland"), "supplier",
      "Bözingenstrasse 100, 2502", "Biel", "Switzerland", "protective packaging and pallets",
      ("PV", "SN"), True),
    P("ENT-NOVAK", "Novak Plastics s.r.o.", ("Novak Plastics", "Novak"), "supplier",
      "Vídeňská 120, 619 00", "Brno", "Czech Republic", "injection-moulded housings and covers",
      ("PV", "SN")),
    P("ENT-GREYWOLF", "Greywolf Fasteners Ltd", ("Greywolf Fasteners", "Greywolf"), "supplier",
      "Attercliffe Road 210, S4 7WZ", "Sheffield", "United Kingdom",
      "stainless fasteners and fixings", ("DR", "HX")),
    # ---- service providers ----
    P("ENT-ALPENBLICK", "Alpenblick Logistik AG", ("Alpenblick Logistik", "Alpenblick"),
      "service", "Rossbodenstrasse 14, 7000", "Chur", "Switzerland",
      "warehousing and freight forwarding", (), True),
    P("ENT-CLEARPATH", "Clearpath IT Services GmbH", ("Clearpath IT", "Clearpath"), "service",
      "Leopoldstraße 180, 80804", "Munich", "Germany", "managed IT and service desk operations"),
    P("ENT-HARBOURSIDE", "Harbourside Facilities Ltd", ("Harbourside Facilities", "Harbourside"),
      "service", "Sir John Rogerson's Quay 22, D02", "Dublin", "Ireland",
      "facility management and cleaning"),
    P("ENT-REISEWELT", "Reisewelt Travel Management GmbH", ("Reisewelt",), "service",
      "Mainzer Landstraße 46, 60325", "Frankfurt am Main", "Germany",
      "business travel booking", (), True),
    P("ENT-QUANTUM", "Quantum Payroll Solutions AG", ("Quantum Payroll",), "service",
      "Hardturmstrasse 161, 8005", "Zurich", "Switzerland", "payroll processing"),
    P("ENT-BLACKTHORN", "Blackthorn Security Ltd", ("Blackthorn Security", "Blackthorn"),
      "service", "Bishopsgate 99, EC2M 3XD", "London", "United Kingdom",
      "penetration testing and security audits"),
    P("ENT-STERNWARTE", "Sternwarte Consulting GmbH", ("Sternwarte Consulting", "Sternwarte"),
      "service", "Königstraße 28, 70173", "Stuttgart", "Germany",
      "lean manufacturing consulting", (), True),
    P("ENT-LUMEN", "Lumen Cloud Hosting B.V.", ("Lumen Cloud",), "service",
      "Science Park 400, 1098 XH", "Amsterdam", "Netherlands", "cloud hosting of ERP systems"),
)

PARTNER_BY_KEY: dict[str, Partner] = {p.key: p for p in PARTNERS}


def entity_table() -> dict[str, list[str]]:
    """entity key -> [canonical name, aliases...], sorted by key."""
    table = {MUSTER_KEY: [MUSTER_NAME, *MUSTER_ALIASES]}
    table.update({p.key: [p.name, *p.aliases] for p in PARTNERS})
    return dict(sorted(table.items()))


# Names that exist nowhere in the corpus (refusal questions use them).
UNKNOWN_PARTNERS = ("Silbermond Textil GmbH", "Crestfield Aerospace Ltd", "Valmonte Ceramica S.p.A.",
                    "Brookhaven Dairy Inc.", "Osterholz Glaswerke AG", "Tidewater Mining plc")

# ---- people ----------------------------------------------------------------------------
FIRST_NAMES = ("Anna", "Lukas", "Sophie", "Jonas", "Marie", "Felix", "Laura", "Tobias", "Julia",
               "David", "Katharina", "Simon", "Lea", "Matthias", "Sarah", "Daniel", "Nina",
               "Florian", "Emma", "Stefan", "Clara", "Jan", "Hannah", "Markus", "Theresa",
               "Oliver", "Miriam", "Patrick", "Ines", "Benedikt", "Carla", "Elias")
LAST_NAMES = ("Weber", "Becker", "Hoffmann", "Schäfer", "Koch", "Richter", "Klein", "Wolf",
              "Neumann", "Schwarz", "Zimmer", "Krüger", "Hartmann", "Lange", "Brunner", "Vogel",
              "Keller", "Frei", "Baumann", "Graf", "Huber", "Lehmann", "Roth", "Seidel",
              "Berger", "Fuchs", "Kaiser", "Sommer", "Ziegler", "Haas")
PARTNER_CONTACTS = ("James Holloway", "Claire Whitfield", "Henrik Aalto", "Marco Bellini",
                    "Ingrid Solberg", "Pieter de Vries", "Élodie Marchand", "Erik Lindgren",
                    "Rachel Okafor", "Thomas Brenner", "Lucía Ferrer", "Kenji Watanabe",
                    "Sven Albrecht", "Niamh Gallagher", "Robert Kowalski", "Ulrike Brandl")

# Muster's own people with a role (used in contracts, policies, handbooks).
OFFICERS = {
    "ceo": "Dr. Katrin Albers",
    "cfo": "Martin Roos",
    "legal": "Lena Vogt",
    "procurement": "Andreas Pfister",
    "hr": "Hanna Seidel",
    "support": "Samuel Brenner",
    "sales": "Anna Lorenz",
    "dpo": "Jakob Imhof",
    "quality": "Petra Kuhn",
}

# ---- Muster sites --------------------------------------------------------------------
SITES = (
    ("Stuttgart", "Germany", "headquarters, engineering and motion controller assembly"),
    ("Chemnitz", "Germany", "hydraulic valve machining and assembly"),
    ("Basel", "Switzerland", "Muster Schweiz AG: sensor production and sales for Switzerland"),
    ("Brno", "Czech Republic", "pneumatics and drive assembly"),
    ("Leeds", "United Kingdom", "sales and service office for the UK and Ireland"),
    ("Chicago", "United States", "Muster Inc.: sales and service for North America"),
)

# ---- products -----------------------------------------------------------------------
FAMILIES: dict[str, tuple[str, str]] = {
    # code: (family name, what it does)
    "MX": ("motion controller", "multi-axis servo motion control"),
    "HX": ("hydraulic valve", "proportional control of hydraulic flow"),
    "SN": ("pressure sensor", "pressure and temperature measurement"),
    "PV": ("pneumatic valve", "switching of compressed-air circuits"),
    "DR": ("gear motor drive", "compact geared drive for conveyors and positioning"),
}

PRODUCTS: tuple[tuple[str, str], ...] = (
    ("MX-2231", "Compact Motion Controller"), ("MX-2240", "Compact Motion Controller Plus"),
    ("MX-2305", "Four-Axis Motion Controller"), ("MX-2410", "Eight-Axis Motion Controller"),
    ("MX-2515", "Safety Motion Controller"), ("MX-2620", "Motion Controller with EtherCAT"),
    ("MX-2733", "Rugged Motion Controller"), ("MX-2850", "Motion Controller Edge"),
    ("HX-5510", "Proportional Directional Valve NG6"), ("HX-5520", "Proportional Directional "
                                                      "Valve NG10"),
    ("HX-5604", "Pressure Relief Valve"), ("HX-5611", "Pressure Reducing Valve"),
    ("HX-5702", "Servo Valve"), ("HX-5815", "Flow Control Valve"),
    ("HX-5830", "Cartridge Valve Block"), ("HX-5901", "Load-Holding Valve"),
    ("SN-7102", "Pressure Transmitter"), ("SN-7115", "Pressure Transmitter Hygienic"),
    ("SN-7208", "Differential Pressure Sensor"), ("SN-7230", "Pressure Switch"),
    ("SN-7314", "Temperature and Pressure Probe"), ("SN-7402", "Submersible Level Sensor"),
    ("SN-7450", "High-Pressure Transmitter"), ("SN-7521", "Wireless Pressure Sensor"),
    ("PV-3120", "Solenoid Valve 3/2"), ("PV-3145", "Solenoid Valve 5/2"),
    ("PV-3210", "Valve Terminal 8-Station"), ("PV-3260", "Valve Terminal 16-Station"),
    ("PV-3318", "Pressure Regulator"), ("PV-3404", "Soft-Start Valve"),
    ("PV-3433", "Proportional Pressure Valve"), ("PV-3590", "Air Preparation Unit"),
    ("DR-8010", "Helical Gear Motor 0.37 kW"), ("DR-8025", "Helical Gear Motor 0.75 kW"),
    ("DR-8110", "Worm Gear Motor"), ("DR-8140", "Bevel Gear Motor"),
    ("DR-8205", "Servo Gear Motor"), ("DR-8260", "Planetary Gear Motor"),
    ("DR-8315", "Drum Motor"), ("DR-8400", "Decentralised Drive Unit"),
)


FAMILIES_DE = {"MX": "Bewegungssteuerungen", "HX": "Hydraulikventile", "SN": "Drucksensoren",
               "PV": "Pneumatikventile", "DR": "Getriebemotoren"}


def products_of(family: str) -> list[tuple[str, str]]:
    return [p for p in PRODUCTS if p[0].startswith(family + "-")]


__all__ = ["ACCESSORIES", "FAMILIES", "FAMILIES_DE", "FAMILY_ACCESSORIES", "FIRST_NAMES", "LAST_NAMES", "MUSTER_ADDRESS", "MUSTER_ALIASES",
           "MUSTER_KEY", "MUSTER_NAME", "OFFICERS", "PARTNERS", "PARTNER_BY_KEY",
           "PARTNER_CONTACTS", "PRODUCTS", "SITES", "UNKNOWN_PARTNERS", "Partner",
           "entity_table", "products_of"]


# Accessories (price list in the sales handbook; referenced by product sheets).
ACCESSORIES: tuple[tuple[str, str], ...] = (
    ("AC-1001", "DIN rail mounting kit"), ("AC-1012", "EtherCAT patch cable 2 m"),
    ("AC-1015", "PROFINET patch cable 5 m"), ("AC-1020", "24 V DC power supply 5 A"),
    ("AC-1043", "Valve mounting bracket"), ("AC-1047", "Subplate NG6"),
    ("AC-1049", "Subplate NG10"), ("AC-1060", "Seal kit FKM"), ("AC-1061", "Seal kit NBR"),
    ("AC-1075", "M12 sensor cable 5 m"), ("AC-1078", "M12 sensor cable 10 m"),
    ("AC-1082", "Process adapter G1/2"), ("AC-1090", "IO-Link master 4-port"),
    ("AC-1102", "Silencer G1/4"), ("AC-1110", "Push-in fitting set 8 mm"),
    ("AC-1118", "Filter cartridge 5 micron"), ("AC-1125", "Manifold end plate kit"),
    ("AC-1140", "Motor brake module"), ("AC-1146", "Encoder retrofit kit"),
    ("AC-1152", "Torque arm"), ("AC-1160", "Gearbox oil CLP 220, 1 l"),
    ("AC-1171", "Safety relay module"), ("AC-1180", "Display and keypad unit"),
    ("AC-1188", "Backup battery pack"), ("AC-1195", "Wireless gateway"),
)
FAMILY_ACCESSORIES = {
    "MX": ("AC-1001", "AC-1012", "AC-1015", "AC-1020", "AC-1171", "AC-1180", "AC-1188"),
    "HX": ("AC-1043", "AC-1047", "AC-1049", "AC-1060", "AC-1061", "AC-1075"),
    "SN": ("AC-1075", "AC-1078", "AC-1082", "AC-1090", "AC-1195"),
    "PV": ("AC-1102", "AC-1110", "AC-1118", "AC-1125", "AC-1020"),
    "DR": ("AC-1140", "AC-1146", "AC-1152", "AC-1160", "AC-1171"),
}
