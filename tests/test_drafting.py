"""Drafting a goldset by rules: well-formed cases with existing sources, refusals the corpus
cannot answer, the same draft for the same seed, the review sheet and the merge.

A hand-made corpus of seven documents (English and German; contracts with a table and
parallel clauses, a policy with a glossary, a ticket with codes, an HR record restricted to
HR) in three levels (document, section, evidence chunk), indexed by the local target with a
fake embedder: drafting only uses its keyword leg and its records.
"""

from __future__ import annotations

import math

import pytest
import yaml

from ragdiag.drafting import draft_from_corpus, merge_accepted, review_sheet, write_draft
from ragdiag.drafting.case import Candidate
from ragdiag.drafting.corpus import corpus_from_records
from ragdiag.drafting.draft import _resolve
from ragdiag.drafting.rules import RULES
from ragdiag.drafting.rules.values import find_values
from ragdiag.drafting.sources import REFUSAL_SUPPORT, SourceFinder, normalise
from ragdiag.drafting.text import CAP_EXEMPT, OVERLAP_CAP, lexical_overlap
from ragdiag.errors import InputDataError
from ragdiag.inputs.goldset import load_goldset
from ragdiag.model.schema import BOOLEAN, STRING, STRING_COLLECTION, Field, IndexSchema
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.drafting_worlds import ByTopTarget, tops_policy
from tests.fakes import FakeEmbedder

IDENTITIES = {"sam.support": ("all-staff", "support"), "lena.legal": ("all-staff", "legal", "sales"),
              "hanna.hr": ("all-staff", "hr")}

DOCS = [
    ("CON-1", "en", ["legal", "sales"], "Supply Agreement Nordwind Textil GmbH (2020)",
     "Supply agreement between Muster AG and Nordwind Textil GmbH, effective 1 March 2020.", [
         ("3. Term and Termination", "This Agreement enters into force on 1 March 2020 and runs for three years. "
                                     "Ordinary termination requires a notice period of 90 days. "
                                     "The parties have cooperated since 2016."),
         ("5. Service Levels", "| Metric | Target | Service credit |\n|---|---|---|\n"
                               "| Availability | 99.5% | 3% per point |\n| Response to incidents | 8 hours | none |"),
     ]),
    ("CON-2", "en", ["legal", "sales"], "Supply Agreement Harbourview Plastics Ltd (2018)",
     "Supply agreement between Muster AG and Harbourview Plastics Ltd, effective 1 July 2018.", [
         ("3. Term and Termination", "This Agreement enters into force on 1 July 2018 and runs for five years. "
                                     "Ordinary termination requires a notice period of 30 days."),
         ("5. Service Levels", "| Metric | Target | Service credit |\n|---|---|---|\n"
                               "| Availability | 98% | 2% per point |\n| Response to incidents | 24 hours | none |"),
     ]),
    ("POL-1", "en", ["all-staff"], "Travel Policy", "Rules for business trips, bookings and allowances.", [
         ("Definitions", "*Business trip*: a journey for work purposes away from the home site.\n"
                         "The term *per diem* refers to the daily allowance for meals during a business trip."),
         ("Booking", "Flights and hotels are booked through the travel desk at least 14 days before departure."),
     ]),
    ("TIC-1", "en", ["support"], "TIC-0101: MX-1000 E-4711 overheating (Brightwater Ltd)",
     "Brightwater Ltd reported error E-4711 (overheating) on an MX-1000.", [
         ("Problem", "Brightwater Ltd reported error E-4711 on the MX-1000 during the night shift."),
         ("Resolution", "The cooling fan was replaced by Anna Weber on 3 May 2024, after which E-4711 "
                        "did not occur again."),
     ]),
    ("HRR-1", "en", ["hr"], "Salary Record Jonas Brandt (EMP-2001)", "Confidential salary record of Jonas Brandt.", [
         ("Salary", "Jonas Brandt earns an annual base salary of EUR 61,200 effective 1 April 2025. "
                    "The bonus target is 8% of the base salary."),
     ]),
    ("CON-3", "de", ["legal", "sales"], "Rahmenvertrag mit Bergblick Logistik GmbH (2019)",
     "Rahmenvertrag zwischen der Muster AG und der Bergblick Logistik GmbH.", [
         ("3. Laufzeit", "Der Vertrag tritt am 01.01.2019 in Kraft. Die Kündigungsfrist beträgt 3 Monate "
                         "zum Quartalsende."),
         ("Begriffe", "*Lieferzeit*: die Zeit zwischen Bestellung und Lieferung beim Kunden."),
     ]),
    ("CON-4", "de", ["legal", "sales"], "Rahmenvertrag mit Talgrund Chemie AG (2021)",
     "Rahmenvertrag zwischen der Muster AG und der Talgrund Chemie AG.", [
         ("3. Laufzeit", "Der Vertrag tritt am 01.04.2021 in Kraft. Die Kündigungsfrist beträgt 6 Monate "
                         "zum Quartalsende."),
     ]),
]


def _records() -> list[dict]:
    out = []
    for doc_id, lang, groups, title, summary, sections in DOCS:
        base = {"doc_id": doc_id, "language": lang, "group_ids": groups, "title": title}
        out.append({**base, "key": doc_id, "level": "document", "citable": False, "summary": summary,
                    "section_title": "", "content": summary + "\n\n" + sections[0][1]})
        for i, (stitle, text) in enumerate(sections, 1):
            out.append({**base, "key": f"{doc_id}-s{i}", "level": "section", "citable": False, "summary": "",
                        "section_title": stitle, "content": f"{stitle}\n{text}"})
            out.append({**base, "key": f"{doc_id}-s{i}-c1", "level": "evidence", "citable": True, "summary": "",
                        "section_title": stitle, "content": text})
    return out


def _schema() -> IndexSchema:
    text = [Field(n, STRING, searchable=True) for n in ("content", "title", "section_title", "summary")]
    return IndexSchema(name="drafting", fields=(
        Field("key", STRING, key=True, filterable=True), *text,
        Field("doc_id", STRING, filterable=True), Field("language", STRING, filterable=True),
        Field("level", STRING, filterable=True), Field("citable", BOOLEAN, filterable=True),
        Field("group_ids", STRING_COLLECTION, filterable=True)))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    records = _records()
    target = LocalTarget.build(records, LocalIndexSpec("drafting", _schema(), {}),
                               index_dir=tmp_path_factory.mktemp("idx"), embedder=FakeEmbedder(),
                               vectors={}, progress=False, semantic=False)
    return target, corpus_from_records(records)


@pytest.fixture(scope="module")
def drafted(world):
    target, corpus = world
    return draft_from_corpus(corpus, target, per_intent=2, seed=7, identities=IDENTITIES)


def _readable(identity: str, groups) -> bool:
    return groups is None or bool(set(IDENTITIES[identity]) & set(groups))


def test_every_rule_drafts_well_formed_cases_whose_sources_exist_and_hold_the_evidence(world, drafted, tmp_path):
    _target, corpus = world
    by_rule = drafted.by_rule()
    assert set(by_rule) == set(RULES), f"rules without a case: {set(RULES) - set(by_rule)}; notes {drafted.notes}"
    path = write_draft(drafted, tmp_path / "draft.yaml")
    gs = load_goldset(path)  # the drafted file is a goldset ragdiag loads
    assert len(gs) == len(drafted.cases)
    assert all(c.draft and c.rule in RULES for c in gs)
    for case in drafted.cases:
        if case.refused:
            assert not case.sources
            continue
        keys = [k for k, _ in case.sources]
        assert keys and all(k in corpus.by_key for k in keys), case
        assert len(keys) == len(set(keys))
        first = corpus.by_key[keys[0]]
        assert dict(case.sources)[keys[0]] == 3
        if case.rule not in ("comparison", "overview"):
            assert normalise(case.evidence) in normalise(first.text), (case.rule, case.evidence, first.text)
        if case.answer and case.rule != "overview":
            source_text = " ".join(corpus.by_key[k].text for k in keys)
            assert all(a in source_text for a in case.answer), case
        # asked as someone who may read every passage drawn from
        assert case.as_user is not None
        assert _readable(case.as_user, first.groups), case
    assert {"en", "de"} <= {c.language for c in drafted.cases}


def test_near_duplicates_are_the_same_text_at_other_levels_of_the_same_document(drafted, world):
    _target, corpus = world
    fact = next(c for c in drafted.cases if c.rule == "fact")
    drawn = fact.sources[0][0]
    for key, grade in fact.sources[1:]:
        assert grade == 1
        assert corpus.by_key[key].doc_id == corpus.by_key[drawn].doc_id
        assert normalise(fact.evidence) in normalise(corpus.by_key[key].text)


def test_a_comparison_names_two_documents_with_a_parallel_value(drafted, world):
    _target, corpus = world
    comp = drafted.by_rule()["comparison"][0]
    drawn = [k for k, g in comp.sources if g == 3]
    assert len({corpus.by_key[k].doc_id for k in drawn}) == 2
    assert len(comp.answer) == 2 and comp.answer[0] != comp.answer[1]


def test_refusal_drafts_have_no_supporting_passage_and_the_check_can_fail(world, drafted):
    target, corpus = world
    finder = SourceFinder(target, corpus)
    refusals = drafted.by_rule()["refusal_out_of_corpus"]
    assert refusals
    for case in refusals:
        support, _key = finder.support(case.question, case.language)
        assert support < REFUSAL_SUPPORT, (case.question, support)
    # the same test rejects a question the corpus does answer
    answered = "Which notice period applies to ordinary termination of the Nordwind Textil agreement?"
    support, key = finder.support(answered)
    assert support >= REFUSAL_SUPPORT and corpus.by_key[key].doc_id == "CON-1"
    case, reason = _resolve(Candidate("refusal_out_of_corpus", answered, (), "", refused=True), finder, IDENTITIES, 1)
    assert case is None and "may answer" in reason


def test_restricted_refusals_are_asked_by_an_identity_that_may_read_no_passage_with_the_answer(world, drafted):
    _target, corpus = world
    restricted = drafted.by_rule()["refusal_restricted"]
    assert restricted
    for case in restricted:
        assert case.refused and case.as_user
        holding = [p for p in corpus.passages if normalise(case.evidence) in normalise(p.text)]
        assert holding, case.evidence
        assert not any(_readable(case.as_user, p.groups) for p in holding), (case.as_user, case.evidence)


def test_the_same_seed_drafts_the_same_file_and_another_seed_another(world, tmp_path):
    target, corpus = world
    texts = []
    for i, seed in enumerate((3, 3, 4)):
        d = draft_from_corpus(corpus, target, per_intent=2, seed=seed, identities=IDENTITIES)
        texts.append(write_draft(d, tmp_path / f"d{i}.yaml").read_text())
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


def test_overlap_is_measured_per_rule_and_paraphrasing_moves_questions_off_the_source(drafted):
    assert lexical_overlap("What notice period holds?", "a notice period of 90 days") == pytest.approx(2 / 3)
    assert lexical_overlap("What is it?", "anything") is None
    overlap = drafted.overlap_by_rule()
    assert set(overlap) >= {"fact", "table", "definition", "exact_id"}
    assert all(0.0 <= v["mean"] <= 1.0 for v in overlap.values())
    facts = [c for c in drafted.cases if c.rule in ("fact", "table")]
    assert any(c.overlap is not None and c.overlap < 1.0 for c in facts)


def test_values_and_their_kinds():
    kinds = [(v.text, v.kind) for v in find_values(
        "Notice of 90 days, EUR 61,200 per year, 99.5% uptime, from 1 March 2020 at 07:00, rated IP67.")]
    assert kinds == [("90 days", "duration"), ("EUR 61,200", "money"), ("99.5%", "percent"),
                     ("1 March 2020", "date"), ("07:00", "time"), ("IP67", "measure")]
    assert [v.kind for v in find_values("Der Vertrag tritt am 01.01.2019 in Kraft; Frist 3 Monate.")] == [
        "date", "duration"]


def test_review_sheet_and_merge_of_accepted_cases(drafted, tmp_path):
    path = write_draft(drafted, tmp_path / "draft.yaml")
    sheet = review_sheet(path)
    for case in drafted.cases:
        assert case.id in sheet and case.question in sheet
    assert "to review" in sheet and "evidence:" in sheet

    raw = yaml.safe_load(path.read_text())
    raw[0]["accepted"] = True            # accepted explicitly
    del raw[1]["draft"]                  # or by removing the draft marker
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    gold = tmp_path / "goldset.yaml"
    gold.write_text("- id: own-1\n  question: What is the travel desk?\n  intent: fact\n"
                    "  expect_sources: [POL-1-s2-c1]\n")
    result = merge_accepted(path, gold)
    assert result.added == [raw[0]["id"], raw[1]["id"]]
    assert result.pending == len(raw) - 2
    merged = load_goldset(gold)
    assert [c.id for c in merged] == ["own-1", raw[0]["id"], raw[1]["id"]]
    assert not any(c.draft for c in merged)
    text = gold.read_text()
    assert "accepted:" not in text and "evidence:" not in text and "draft: true" not in text
    with pytest.raises(InputDataError, match="already in the goldset"):
        merge_accepted(path, gold)


def test_goldset_loader_checks_the_review_keys(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: a\n  question: q?\n  expect: refused\n  draft: 'yes'\n")
    with pytest.raises(InputDataError, match="'draft' must be true or false") as err:
        load_goldset(bad)
    assert err.value.line == 4
    ok = tmp_path / "ok.yaml"
    ok.write_text("- id: a\n  question: q?\n  expect: refused\n  draft: true\n  rule: fact\n  accepted: true\n")
    case = load_goldset(ok).cases[0]
    assert case.rule == "fact" and case.draft is False  # accepted: no longer a draft


def test_cli_review_and_merge(drafted, tmp_path, capsys):
    from ragdiag.cli import main

    path = write_draft(drafted, tmp_path / "draft.yaml")
    assert main(["goldset", "draft", "--review", str(path)]) == 0
    assert drafted.cases[0].question in capsys.readouterr().out
    assert main(["goldset", "merge", str(path), "--into", str(tmp_path / "new.yaml")]) == 0
    assert "merged 0 accepted case(s)" in capsys.readouterr().out
    assert main(["goldset", "draft"]) == 2  # neither --out nor --review
    assert "--out FILE" in capsys.readouterr().err


@pytest.mark.slow
def test_drafting_on_the_sample_index_covers_every_rule_and_both_languages(sample_target, tmp_path):
    from ragdiag.drafting import draft_goldset
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_config

    config = load_config(sample_config())
    d = draft_goldset(sample_target, per_intent=3, seed=0, identities=config.identities)
    assert set(d.by_rule()) == set(RULES), d.notes
    keys = {r["key"] for r in sample_target.iter_documents(select=["key"])}
    assert all(k in keys for c in d.cases for k, _ in c.sources)
    gs = load_goldset(write_draft(d, tmp_path / "sample-draft.yaml"))
    assert len(gs) == len(d.cases) and len(gs.refusals()) == 3
    from ragdiag.drafting.corpus import load_corpus

    corpus = load_corpus(sample_target)
    # the German table and comparison questions name a row, a column or a clause as the source
    # words them (the German synonym table is short): drafted without the cap, dropped under it
    d_de = draft_from_corpus(corpus, sample_target, per_intent=12, seed=1, identities=config.identities,
                             rules=["table", "comparison"], overlap_cap=1.01)
    assert "de" in {c.language for c in d_de.cases}
    capped = draft_from_corpus(corpus, sample_target, per_intent=12, seed=1, identities=config.identities,
                               rules=["table", "comparison"])
    assert all(c.capped_overlap is None or c.capped_overlap <= OVERLAP_CAP for c in capped.cases)
    assert any("over the overlap cap" in k for k in capped.rejected)


TITLELESS = [
    "the dielectric constant of liquids measured with microwave cavity resonators at several frequencies",
    "microwave cavity resonators for measuring the dielectric loss of polar liquids",
    "dielectric relaxation of polar liquids studied with a microwave bridge",
    "a transistor binary counter built from packaged units with reversible counting",
    "transistor counter circuits for reversible binary counting in computers",
    "binary counting with transistor flip flops for digital computers",
    "radar echoes from meteor trails and the orbits of sporadic meteors",
    "meteor showers observed by radar echoes in the southern hemisphere",
    "orbits of meteor showers from radar echo measurements",
    "ozone in the upper atmosphere measured by absorption of solar ultraviolet",
    "atmospheric ozone and the absorption of solar radiation",
    "seasonal variation of atmospheric ozone over the alps",
]


def test_a_corpus_without_titles_is_asked_about_topics_with_words_its_records_do_not_hold(tmp_path):
    records = [{"key": f"v{i}", "content": t} for i, t in enumerate(TITLELESS)]
    schema = IndexSchema(name="titleless", fields=(Field("key", STRING, key=True, filterable=True),
                                                   Field("content", STRING, searchable=True)))
    target = LocalTarget.build(records, LocalIndexSpec("titleless", schema, {}), index_dir=tmp_path / "idx",
                               embedder=FakeEmbedder(), vectors={}, progress=False, semantic=False)
    corpus = corpus_from_records(records, security_field=None)
    d = draft_from_corpus(corpus, target, per_intent=12, seed=2)
    by_rule = d.by_rule()
    assert "fact" not in by_rule and "verification" not in by_rule  # no document to name: not drafted
    assert any(n.startswith("fact: 0 of 12") for n in d.notes)
    overviews = by_rule["overview"]
    # ten-word records: most topic questions keep more of their record than the cap allows and
    # are dropped (counted), the rest stay under it
    assert len(overviews) >= 2
    assert all(c.capped_overlap is not None and c.capped_overlap <= OVERLAP_CAP for c in overviews)
    assert any("over the overlap cap" in k for k in d.rejected)
    assert all(c.sources[0][0] in corpus.by_key for c in overviews)
    # the association thesaurus replaced words: some questions hold topic words their source lacks
    # (template words such as "research" or "overview" do not count)
    assert any(c.overlap is not None and c.overlap < 1.0 for c in overviews), [c.question for c in overviews]
    assert lexical_overlap("Research on counter transistor?", "a transistor counter") == 1.0
    assert all(c.as_user is None for c in d.cases)  # no identities, no security field


def test_the_goldset_check_warns_while_cases_are_unreviewed_drafts(tmp_path):
    from dataclasses import replace

    from ragdiag.inputs.goldset import Goldset
    from tests.checkhelp import assert_german
    from tests.test_check_goldset import ANSWERABLE, REFUSED, _check, _spec
    from tests.test_checks_minimal import GOOD_SCORES, SOUND, _ctx

    spec = _spec(min_cases_per_intent=1)
    ctx = _ctx(tmp_path / "a", SOUND, GOOD_SCORES)
    ctx.goldset = Goldset(cases=(replace(ANSWERABLE, draft=True, rule="fact"), REFUSED))
    f = _check(ctx, spec)
    assert f.status == "warn"
    assert f.headline.startswith("1 of 2 cases are unreviewed drafts")
    assert f.metrics["draft_cases"] == 1
    assert_german(f)
    reviewed = _ctx(tmp_path / "b", SOUND, GOOD_SCORES)
    reviewed.goldset = Goldset(cases=(replace(ANSWERABLE, rule="fact"), REFUSED))  # accepted: no longer a draft
    assert _check(reviewed, spec).status == "pass"


# ---- drafts that measure retrieval, not copying ----------------------------------------------
# Two manuals cut into paragraphs, no document id field: the title makes the document.
MANUALS = [
    ("pump-0", "Aurora Pump Manual", "The Aurora pump moves cooling water through the plant. "
                                     "The warranty period of the pump is 24 months."),
    ("pump-1", "Aurora Pump Manual", "Installation needs two technicians and a crane for the housing."),
    ("pump-2", "Aurora Pump Manual", "After 24 months the guarantee ends and a service contract applies."),
    ("pump-3", "Aurora Pump Manual", "Cleaning the strainer every week keeps the flow rate stable."),
    ("valve-0", "Borealis Valve Manual", "The Borealis valve closes the cooling circuit during repairs. "
                                         "Its seals are replaced after 12 months."),
    ("valve-1", "Borealis Valve Manual", "An actuator opens the valve within seconds on a signal."),
    ("fan-0", "Cyclone Fan Guide", "The Cyclone fan ventilates the hall; its filters are changed after 6 months."),
    ("fan-1", "Cyclone Fan Guide", "Noise stays low because the blades are balanced at the factory."),
]


@pytest.fixture(scope="module")
def manuals(tmp_path_factory):
    records = [{"key": k, "title": t, "content": c} for k, t, c in MANUALS]
    schema = IndexSchema(name="manuals", fields=(Field("key", STRING, key=True, filterable=True),
                                                 Field("title", STRING, searchable=True),
                                                 Field("content", STRING, searchable=True)))
    target = LocalTarget.build(records, LocalIndexSpec("manuals", schema, {}),
                               index_dir=tmp_path_factory.mktemp("manuals"), embedder=FakeEmbedder(),
                               vectors={}, progress=False, semantic=False)
    return target, corpus_from_records(records, security_field=None)


def test_documents_without_an_id_field_are_grouped_by_title(manuals):
    _t, corpus = manuals
    docs = corpus.documents()
    assert sorted(len(v) for v in docs.values()) == [2, 2, 4]
    assert corpus.by_key["pump-0"].doc_id == corpus.by_key["pump-3"].doc_id != corpus.by_key["valve-0"].doc_id


def test_drafts_of_a_document_level_question_list_all_its_passages(manuals):
    target, corpus = manuals
    d = draft_from_corpus(corpus, target, per_intent=5, seed=0, rules=["fact", "overview"])
    by_rule = d.by_rule()
    pump = next(c for c in by_rule["overview"] if "pump-0" in dict(c.sources))
    assert set(dict(pump.sources)) == {"pump-0", "pump-1", "pump-2", "pump-3"}
    assert sorted(dict(pump.sources).values()) == [2, 2, 2, 3]  # the drawn passage first, graded
    # the warranty fact is held by two passages of the pump manual: both are sources, asked once
    warranty = [c for c in by_rule["fact"] if c.answer == ("24 months",)]
    assert len(warranty) == 1, [c.question for c in by_rule["fact"]]
    assert dict(warranty[0].sources) == {"pump-0": 3, "pump-2": 2}
    assert d.rejected.get("fact: fact already asked", 0) >= 1
    facts = [(corpus.by_key[c.sources[0][0]].doc_id, c.answer) for c in d.cases if c.answer]
    assert len(facts) == len(set(facts))  # one question per fact


def test_paraphrased_questions_stay_under_the_overlap_cap(drafted, manuals):
    target, corpus = manuals
    for d in (drafted, draft_from_corpus(corpus, target, per_intent=5, seed=1)):
        for c in d.cases:
            if c.rule in CAP_EXEMPT or c.capped_overlap is None:
                continue
            assert c.capped_overlap <= OVERLAP_CAP, (c.rule, c.question, c.capped_overlap)
        assert all(d_id in {c.id for c in d.cases if c.rule in CAP_EXEMPT} for d_id in d.flagged)
        assert d.summary()["overlap_cap"] == OVERLAP_CAP
    # template words ("Worum geht es in", "Give me an overview of") are not the source's: a
    # question that is its title plus the template copies its source completely
    assert lexical_overlap("Worum geht es in Super Bowl 50?", "Super Bowl 50", "de") == 1.0
    assert lexical_overlap("Give me an overview of Semantic Clustering.", "Semantic Clustering") == 1.0
    # an overview that would copy its title is asked by the document's subject instead
    over = [c for c in draft_from_corpus(corpus, target, per_intent=5, seed=0, rules=["overview"]).cases]
    assert over and all("Manual" not in c.question and "Guide" not in c.question for c in over)


def test_the_overlap_counts_the_title_a_keyword_engine_searches():
    from ragdiag.drafting.text import lexical_overlap_without, searchable_text

    p = next(iter(corpus_from_records([{"key": "k", "title": "Aurora Pump Manual", "content": "Flow rate."}],
                                      security_field=None).passages))
    assert lexical_overlap("What is the Aurora Pump Manual about?", p.text) == 0.0
    assert lexical_overlap("What is the Aurora Pump Manual about?", searchable_text(p)) == 1.0
    # a question that names its document is capped on the rest of its words
    assert lexical_overlap_without("What is the flow rate in Aurora Pump Manual?", searchable_text(p),
                                   "Aurora Pump Manual") == 1.0
    assert lexical_overlap_without("How quick is the stream in Aurora Pump Manual?", searchable_text(p),
                                   "Aurora Pump Manual") == 0.0


@pytest.mark.parametrize("sentence", ["See lines 10:20 of main.py for the loop.", "The trace ends in main.py:12:30.",
                                      "The game ended with 4:51 minutes left.", "Es fehlten noch 4:51 Minuten.",
                                      "Run it as L14:28 in the listing.", "Range 10:20-30 of the log."])
def test_no_time_of_day_from_code_line_ranges(sentence):
    assert [v for v in find_values(sentence) if v.kind == "time"] == []


def test_times_of_day_are_still_found():
    assert [v.text for v in find_values("The office opens at 08:30 and closes at 17:00.") if v.kind == "time"] \
        == ["08:30", "17:00"]


@pytest.mark.parametrize("sentence", ["The corps was led by Major General Hooker in 1863.",
                                      "The decree was signed by President Lincoln.",
                                      "Die Urkunde wurde von Kaiser Wilhelm unterzeichnet."])
def test_no_person_names_from_rank_titles(sentence):
    assert [v.text for v in find_values(sentence) if v.kind == "person"] == []
    assert [v.text for v in find_values("The coil was designed by Nikola Tesla.") if v.kind == "person"] \
        == ["Nikola Tesla"]


def test_markup_stripping_does_not_mangle_titles():
    from ragdiag.drafting.rules.base import clean_markup

    assert clean_markup("Nikola_Tesla") == "Nikola Tesla"
    assert clean_markup("**Bold** and _emphasis_ in ''Wiki'' text") == "Bold and emphasis in Wiki text"
    assert clean_markup("=== Seilloser Aufzug ===\nText") == "Seilloser Aufzug\nText"


class _RotatingTarget(ByTopTarget):
    """Returns x, y, z rotated by the request's `top` (10: x y z, 20: y z x, 30: z x y)."""

    def rankings(self, request):
        return (["x", "y", "z"], ["y", "z", "x"], ["z", "x", "y"])


_policy_with_tops = tops_policy


def test_the_draft_reports_its_own_expected_agreement():
    from ragdiag.drafting.agreement import TRUST_TAU, expected_agreement
    from ragdiag.drafting.case import DraftCase
    from ragdiag.drafting.draft import Draft

    def draft(relevant: str, seed: int) -> Draft:
        return Draft([DraftCase("c1", "Which one?", "fact", "fact", "en", sources=[(relevant, 1)])], seed, 1)

    policy = _policy_with_tops()
    # draft A judges x relevant: p10 ranks it 1st (nDCG 1), p30 2nd (1/log2(3)), p20 3rd (1/2);
    # draft B judges z: p30 1st, p20 2nd, p10 3rd: one concordant pair of three, tau = (1 - 2) / 3
    a = expected_agreement(_RotatingTarget(), policy, [draft("x", 0), draft("z", 1)])
    assert a["profiles"]["p10"] == [1.0, 0.5] and a["profiles"]["p30"][0] == pytest.approx(1 / math.log2(3), abs=1e-4)
    assert a["tau"] == pytest.approx(-1 / 3, abs=1e-3)
    assert a["trusted"] is False and "cannot be trusted" in a["verdict"] and a["seeds"] == [0, 1]
    same = expected_agreement(_RotatingTarget(), policy, [draft("x", 0), draft("x", 1)])
    # consistent, but with no real questions to compare with, validity is unmeasured: never trusted
    # (tests/test_drafting_validity.py: when real questions make it trusted or "cannot say")
    assert same["tau"] == 1.0 and TRUST_TAU == 0.8
    assert same["trusted"] is False and same["status"] == "unmeasured"
    assert "necessary, not proof" in same["verdict"]


def test_question_types_that_rank_the_profiles_oppositely_make_a_draft_untrusted():
    from ragdiag.drafting.agreement import FAMILY_TAU, MIN_FAMILY_CASES, expected_agreement
    from ragdiag.drafting.case import DraftCase
    from ragdiag.drafting.draft import Draft

    n = MIN_FAMILY_CASES
    cases = ([DraftCase(f"f{i}", "Which one?", "fact", "fact", "en", sources=[("x", 1)]) for i in range(n)]
             + [DraftCase(f"o{i}", "What about it?", "overview", "overview", "en", sources=[("z", 1)])
                for i in range(n)])
    d0, d1 = Draft(list(cases), 0, n), Draft(list(cases), 1, n)
    a = expected_agreement(_RotatingTarget(), _policy_with_tops(), [d0, d1])
    # the seeds agree (the same cases), but facts (x) and overviews (z) rank p10 / p30 oppositely:
    # tau (1 - 2) / 3 as above
    assert a["tau"] == 1.0
    assert a["families"]["tau"]["fact vs overview"] == pytest.approx(-1 / 3, abs=1e-3)
    assert a["families"]["tau"]["fact vs overview"] < FAMILY_TAU
    assert a["trusted"] is False and "question types rank the profiles in opposite ways" in a["verdict"]
