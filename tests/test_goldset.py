"""Tests of ragdiag.inputs.goldset: YAML/JSONL loading, every error with its line, TREC qrels, discovery."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from ragdiag.errors import InputDataError
from ragdiag.inputs.goldset import (
    ALLOWED_KEYS,
    GoldCase,
    Goldset,
    find_goldset_files,
    load_goldset,
    load_trec_qrels,
)

GOLD_YAML = """\
- id: fact-001
  question: "What notice period applies to the framework agreement with Nordlicht GmbH?"
  intent: fact
  as_user: lena.legal
  expect_sources:
    - {key: CON-0007-s3-c1, grade: 3}
    - CON-0007-s3
  expect_answer_contains: ["90 days"]
- id: fact-002
  question: "Who signed the Nordlicht agreement?"
  intent: fact
  expect_sources: CON-0007-s1
  expect_answer_contains: Jens Vogel
- id: cmp-001
  question: "what notice period applies to the framework agreement with   Nordlicht GmbH"
  intent: compare
  expect_sources:
    - key: CON-0007-s3
      grade: 2
- id: refuse-004
  question: "What is the CEO's salary?"
  intent: fact
  expect: refused
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def error_of(path: Path) -> InputDataError:
    with pytest.raises(InputDataError) as info:
        load_goldset(path)
    return info.value


def assert_line(exc: InputDataError, path: Path, line: int) -> None:
    assert exc.line == line, str(exc)
    assert exc.path == str(path)
    assert str(exc).startswith(f"{path}:{line}: ")


def test_load_yaml(tmp_path):
    p = write(tmp_path, "goldset.yaml", GOLD_YAML)
    gs = load_goldset(p)
    assert len(gs) == 4 and gs.path == str(p)
    first = gs.cases[0]
    assert first == GoldCase(
        id="fact-001",
        question="What notice period applies to the framework agreement with Nordlicht GmbH?",
        intent="fact", as_user="lena.legal",
        expect_sources=(("CON-0007-s3-c1", 3), ("CON-0007-s3", 1)),
        expect_answer_contains=("90 days",), expect_refused=False, path=str(p), line=1)
    assert gs["fact-002"].expect_sources == (("CON-0007-s1", 1),)
    assert gs["fact-002"].expect_answer_contains == ("Jens Vogel",)
    assert gs["fact-002"].line == 9
    assert gs["cmp-001"].expect_sources == (("CON-0007-s3", 2),)
    refusal = gs["refuse-004"]
    assert refusal.expect_refused and refusal.expect_sources == () and refusal.line == 20
    assert [c.id for c in gs] == ["fact-001", "fact-002", "cmp-001", "refuse-004"]


def test_goldset_views(tmp_path):
    gs = load_goldset(write(tmp_path, "goldset.yml", GOLD_YAML))
    assert {k: [c.id for c in v] for k, v in gs.by_intent().items()} == {
        "fact": ["fact-001", "fact-002", "refuse-004"], "compare": ["cmp-001"]}
    assert [c.id for c in gs.answerable()] == ["fact-001", "fact-002", "cmp-001"]
    assert [c.id for c in gs.refusals()] == ["refuse-004"]
    assert [c.id for c in gs.restricted()] == ["fact-001"]
    assert gs.qrels() == {
        "fact-001": {"CON-0007-s3-c1": 3, "CON-0007-s3": 1},
        "fact-002": {"CON-0007-s1": 1},
        "cmp-001": {"CON-0007-s3": 2},
    }
    # asked as lena.legal and without an identity: a pair by design, not a duplicate
    assert gs.duplicate_questions() == []
    assert gs.paired_questions() == [(
        "what notice period applies to the framework agreement with nordlicht gmbh",
        ["fact-001", "cmp-001"])]
    assert replace(gs, cases=(*gs.cases, replace(gs["cmp-001"], id="cmp-002"))).duplicate_questions() == [(
        "what notice period applies to the framework agreement with nordlicht gmbh",
        ["cmp-001", "cmp-002"])]
    text = repr(gs)
    assert "4 cases" in text and "fact 3" in text and "compare 1" in text
    assert "1 refusals" in text and "lena.legal" in text
    assert "<table>" in gs._repr_html_()
    df = gs.to_dataframe()
    assert list(df["id"]) == ["fact-001", "fact-002", "cmp-001", "refuse-004"]
    assert df.loc[0, "n_sources"] == 2 and bool(df.loc[3, "expect_refused"])


def test_load_jsonl(tmp_path):
    lines = [
        {"id": "a", "question": "Q one?", "intent": "fact", "expect_sources": ["k1", {"key": "k2", "grade": 2}]},
        {"id": 7, "question": "Q two?", "expect": "refused"},
    ]
    p = write(tmp_path, "ground_truth.jsonl",
              json.dumps(lines[0]) + "\n\n" + json.dumps(lines[1]) + "\n")
    gs = load_goldset(p)
    assert [(c.id, c.line) for c in gs] == [("a", 1), ("7", 3)]
    assert gs["a"].expect_sources == (("k1", 1), ("k2", 2))
    assert gs["7"].intent == "unknown" and gs["7"].expect_refused


CASE = "- id: c1\n  question: q1\n  expect_sources: [k]\n"


@pytest.mark.parametrize(("body", "line", "fragment"), [
    # missing id: line of the case
    (CASE + "- question: q2\n  expect_sources: [k]\n", 4, "needs an 'id'"),
    # missing question
    (CASE + "- id: c2\n  expect_sources: [k]\n", 4, "needs a 'question'"),
    # both expect: refused and expect_sources: line of expect_sources
    (CASE + "- id: c2\n  question: q2\n  expect: refused\n  expect_sources: [k]\n", 7,
     "both 'expect: refused' and 'expect_sources'"),
    # neither
    (CASE + "- id: c2\n  question: q2\n  intent: fact\n", 4, "needs 'expect_sources'"),
    # expect with another value
    (CASE + "- id: c2\n  question: q2\n  expect: answered\n", 6, "'expect' may only be 'refused'"),
    # grade 0 in a block mapping: line of the grade key
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - key: k\n      grade: 0\n", 8,
     "integer >= 1"),
    # grade not an int, flow mapping on its own line
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - k0\n    - {key: k, grade: high}\n",
     8, "integer >= 1"),
    # boolean grade
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - {key: k, grade: true}\n", 7,
     "integer >= 1"),
    # unknown key: line of that key, message lists allowed keys
    (CASE + "- id: c2\n  question: q2\n  expect_sources: [k]\n  source: x\n", 7,
     "allowed keys: " + ", ".join(ALLOWED_KEYS)),
    # unknown key inside a source mapping
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - {key: k, weight: 2}\n", 7,
     "allowed keys: key, grade"),
    # source mapping without key
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - grade: 2\n", 7, "needs a 'key'"),
    # empty expect_sources
    (CASE + "- id: c2\n  question: q2\n  expect_sources: []\n", 6, "is empty"),
    # the same source twice: line of the second
    (CASE + "- id: c2\n  question: q2\n  expect_sources:\n    - k\n    - x\n    - k\n", 9,
     "listed twice (first on line 7)"),
    # duplicate id: second case's line, naming both lines
    (CASE + "- id: c1\n  question: q2\n  expect_sources: [k]\n", 4,
     "first on line 1, again on line 4"),
    # a case that is not a mapping
    (CASE + "- just a string\n", 4, "must be a mapping"),
    # empty question
    (CASE + "- id: c2\n  question: ''\n  expect_sources: [k]\n", 5, "non-empty string"),
    # expect_answer_contains of the wrong type
    (CASE + "- id: c2\n  question: q2\n  expect_sources: [k]\n  expect_answer_contains: {a: 1}\n",
     7, "expect_answer_contains"),
    # a key repeated inside one case
    (CASE + "- id: c2\n  question: q2\n  question: q3\n  expect_sources: [k]\n", 6, "given twice"),
    # YAML syntax error
    (CASE + "- id: c2\n  question: \"unterminated\n  expect_sources: [k]\n", None, "invalid YAML"),
])
def test_yaml_errors_carry_the_line(tmp_path, body, line, fragment):
    p = write(tmp_path, "goldset.yaml", body)
    exc = error_of(p)
    assert fragment in str(exc)
    if line is None:
        assert exc.line is not None and exc.path == str(p)
    else:
        assert_line(exc, p, line)


def test_yaml_not_a_list(tmp_path):
    p = write(tmp_path, "goldset.yaml", "id: c1\nquestion: q\n")
    assert "must be a list" in str(error_of(p))


def test_empty_files(tmp_path):
    assert "empty" in str(error_of(write(tmp_path, "g.yaml", "# nothing\n")))
    assert "no cases" in str(error_of(write(tmp_path, "g.jsonl", "\n\n")))


def test_unsupported_suffix_and_missing_file(tmp_path):
    assert "unsupported goldset file type" in str(error_of(write(tmp_path, "g.csv", "id,q\n")))
    assert "not found" in str(error_of(tmp_path / "nope.yaml"))


@pytest.mark.parametrize(("lines", "line", "fragment"), [
    (['{"id": "a", "question": "q", "expect": "refused"}', '{"id": "b", "question": '], 2,
     "invalid JSON"),
    (['{"id": "a", "question": "q", "expect": "refused"}', '["a"]'], 2, "must be a mapping"),
    (['{"id": "a", "question": "q", "expect": "refused"}', "",
      '{"id": "a", "question": "q2", "expect": "refused"}'], 3, "first on line 1, again on line 3"),
    (['{"id": "a", "question": "q", "expect_sources": [{"key": "k", "grade": 1.5}]}'], 1,
     "integer >= 1"),
    (['{"id": "a", "question": "q", "expect_sources": ["k"], "notes": "x"}'], 1, "unknown key 'notes'"),
])
def test_jsonl_errors_carry_the_line(tmp_path, lines, line, fragment):
    p = write(tmp_path, "goldset.jsonl", "\n".join(lines) + "\n")
    exc = error_of(p)
    assert fragment in str(exc)
    assert_line(exc, p, line)


def test_duplicate_questions_are_not_errors(tmp_path):
    p = write(tmp_path, "g.jsonl", "\n".join(json.dumps(o) for o in [
        {"id": "a", "question": "Where is  the office?", "expect_sources": ["k"]},
        {"id": "b", "question": "where is the office", "expect_sources": ["k"]},
        {"id": "c", "question": "Where is the canteen?", "expect": "refused"},
        {"id": "d", "question": "WHERE IS THE OFFICE?!", "expect": "refused"},
    ]))
    assert load_goldset(p).duplicate_questions() == [("where is the office", ["a", "b", "d"])]


QRELS = """\
401 0 DOC-1 1
401 0 DOC-2 0
401 0 DOC-3 2

402 0 DOC-9 1
403 0 DOC-4 0
401 0 DOC-1 3
"""

TOPICS = """\
<top>
<num> Number: 401
<title> Topic: foreign minorities,
  Germany
<desc> Description: ...
</top>
<top>
<num>402</num><title>
behavioral genetics
</title>
</top>
<top>
<num>403</num><title>osteoporosis</title>
</top>
"""


def test_trec_qrels_and_topics(tmp_path):
    q = write(tmp_path, "qrels.txt", QRELS)
    t = write(tmp_path, "topics.trec", TOPICS)
    gs = load_trec_qrels(q, t)
    assert [c.id for c in gs] == ["401", "402"]  # 403 has no positive judgment
    assert gs.qrels() == {"401": {"DOC-1": 3, "DOC-3": 2}, "402": {"DOC-9": 1}}
    assert gs["401"].question == "foreign minorities, Germany"
    assert gs["402"].question == "behavioral genetics"
    assert gs["401"].intent == "unknown" and gs["402"].line == 5 and gs["401"].line == 1
    no_topics = load_trec_qrels(q)
    assert no_topics["401"].question == "" and no_topics.duplicate_questions() == []


def test_trec_tsv_topics(tmp_path):
    q = write(tmp_path, "qrels", "1 0 d1 1\n2 Q0 d2 1\n")
    t = write(tmp_path, "queries.tsv", "1\tfirst query\n2\tsecond query\n")
    gs = load_trec_qrels(q, t)
    assert [c.question for c in gs] == ["first query", "second query"]


@pytest.mark.parametrize(("qrels", "line", "fragment"), [
    ("1 0 d1 1\n1 0 d2\n", 2, "this qrels line has 3 fields, line 1 has 4"),
    ("1 d1 1\n1 0 d2 1\n", 2, "this qrels line has 4 fields, line 1 has 3"),
    ("1 0 d1 1\n1 0 d2 1 extra\n", 2, "needs 4 fields 'qid iter docno rel' or 3 fields"),
    ("1 0 d1 1\n\n1 0 d2 yes\n", 3, "relevance must be an integer"),
])
def test_trec_qrels_errors(tmp_path, qrels, line, fragment):
    q = write(tmp_path, "qrels.txt", qrels)
    with pytest.raises(InputDataError) as info:
        load_trec_qrels(q)
    assert fragment in str(info.value)
    assert_line(info.value, q, line)


def test_trec_topic_errors(tmp_path):
    q = write(tmp_path, "qrels.txt", "1 0 d1 1\n2 0 d2 1\n")
    t = write(tmp_path, "topics.trec", "<top><num>1</num><title>one</title></top>\n")
    with pytest.raises(InputDataError) as info:
        load_trec_qrels(q, t)
    assert "'2' has judgments but no topic" in str(info.value)
    assert_line(info.value, q, 2)
    bad = write(tmp_path, "bad.trec", "<top><num>1</num><title>one</title></top>\n\n"
                "<top>\n<num>2</num>\n</top>\n")
    with pytest.raises(InputDataError) as info:
        load_trec_qrels(q, bad)
    assert "no <title>" in str(info.value)
    assert_line(info.value, bad, 3)
    with pytest.raises(InputDataError, match="no positive judgments"):
        load_trec_qrels(write(tmp_path, "zero.txt", "1 0 d1 0\n"))


def test_find_goldset_files(tmp_path):
    files = [
        "eval/ground_truth.jsonl", "tests/data/goldset.yaml", "golden_answers.json",
        "eval_set.yaml", "data/qrels.txt", "data/qrels", "docs/test_questions.csv",
        # not goldsets:
        "src/golden_test.py", "src/app.ts", "README.md", "config.yaml",
        ".git/goldset.yaml", "node_modules/pkg/ground_truth.jsonl", ".venv/lib/qrels.txt",
        "sub/.venv/eval.yaml",
    ]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x\n")
    found = [p.relative_to(tmp_path).as_posix() for p in find_goldset_files(tmp_path)]
    assert found == sorted([
        "data/qrels", "data/qrels.txt", "docs/test_questions.csv", "eval/ground_truth.jsonl",
        "eval_set.yaml", "golden_answers.json", "tests/data/goldset.yaml"])
    with pytest.raises(InputDataError, match="not a directory"):
        find_goldset_files(tmp_path / "missing")


def test_goldset_constructed_directly():
    gs = Goldset(cases=(GoldCase(id="x", question="q", expect_sources=(("k", 1),)),))
    assert gs.qrels() == {"x": {"k": 1}} and len(gs) == 1
    assert "1 cases" in repr(gs)
