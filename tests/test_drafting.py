"""Drafting a goldset by rules: well-formed cases with existing sources, refusals the corpus
cannot answer, the same draft for the same seed, the review sheet and the merge.

A hand-made corpus of seven documents (English and German; contracts with a table and
parallel clauses, a policy with a glossary, a ticket with codes, an HR record restricted to
HR) in three levels (document, section, evidence chunk), indexed by the local target with a
fake embedder: drafting only uses its keyword leg and its records.
"""

from __future__ import annotations

import pytest
import yaml

from ragdiag.drafting import draft_from_corpus, merge_accepted, review_sheet, write_draft
from ragdiag.drafting.case import Candidate
from ragdiag.drafting.corpus import corpus_from_records
from ragdiag.drafting.draft import _resolve
from ragdiag.drafting.rules import RULES
from ragdiag.drafting.rules.values import find_values
from ragdiag.drafting.sources import REFUSAL_SUPPORT, SourceFinder, normalise
from ragdiag.drafting.text import lexical_overlap
from ragdiag.errors import InputDataError
from ragdiag.inputs.goldset import load_goldset
from ragdiag.model.schema import BOOLEAN, STRING, STRING_COLLECTION, Field, IndexSchema
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder

IDENTITIES = {"sam.support": ("all-staff", "support"), "lena.legal": ("all-staff", "legal", "sales"),
              "hanna.hr": ("all-staff", "hr")}

DOCS = [
    ("CON-1", "en", ["legal", "sales"], "Supply Agreement Nordwind Textil GmbH (2020)",
     "Supply agreement between Muster AG and Nordwind Textil GmbH, effective 1 March 2020.", [
         ("3. Term and Termination", "This Agreement enters into force on 1 March 2020 and runs for three years. "
                                     "Ordinary termination requires a notice period of 90 days."),
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
    assert lexical_overlap("What notice period applies?", "a notice period of 90 days") == pytest.approx(2 / 3)
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
    d_de = draft_goldset(sample_target, per_intent=12, seed=1, identities=config.identities,
                         rules=["table", "comparison"])
    assert "de" in {c.language for c in d_de.cases}


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
    assert len(overviews) >= 6
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
