"""The goldset formats a newcomer brings: the seed-002 style YAML (`expect_source`, inline
`as_user: groups=[...]`), TREC qrels with 3 or 4 columns and their topics, BEIR's tsv."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiag.errors import ConfigError, InputDataError
from ragdiag.inputs.goldset import is_trec_qrels, load_goldset, load_trec_qrels

# the shape of a hand-written German goldset (own text, not the seed's)
INLINE = """\
- id: urlaub-antrag
  as_user: groups=[personal, alle]
  question: Wer genehmigt meinen Urlaubsantrag?
  expect_source: urlaubsrichtlinie-antrag
  expect_answer_contains: ["Teamleitung"]
- id: bonus-ohne-recht
  as_user: groups=[vertrieb]
  question: Wie hoch ist der Bonus der Geschäftsführung?
  expect: refused
- id: kantine
  as_user: {groups: [alle]}
  question: Was kostet das Mittagessen?
  expect_source: {key: kantine-preise, grade: 2}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_expect_source_and_inline_identities_load(tmp_path):
    gs = load_goldset(write(tmp_path, "goldset.yaml", INLINE))
    first, refused, third = gs.cases
    assert first.expect_sources == (("urlaubsrichtlinie-antrag", 1),)
    assert first.as_user == "groups=[personal, alle]" and first.as_groups == ("personal", "alle")
    assert refused.expect_refused and refused.as_groups == ("vertrieb",)
    assert third.expect_sources == (("kantine-preise", 2),) and third.as_user == "groups=[alle]"
    assert first.line_of("expect_source") == 4 and third.line_of("as_user") == 11


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("- id: a\n  question: q\n  expect_source: k1\n  expect_sources: [k2]\n", 3,
     "has both 'expect_source' and 'expect_sources'"),
    ("- id: a\n  question: q\n  as_user: groups=[]\n  expect_source: k\n", 3,
     "an inline identity needs at least one group name"),
    ("- id: a\n  question: q\n  as_user: groups=vertrieb\n  expect_source: k\n", 3,
     "looks like an inline identity but is not 'groups=[a, b]'"),
    ("- id: a\n  question: q\n  as_user: {group: [x]}\n  expect_source: k\n", 3,
     "an inline 'as_user' mapping holds only 'groups'"),
])
def test_inline_format_errors_name_the_line(tmp_path, text, line, fragment):
    p = write(tmp_path, "g.yaml", text)
    with pytest.raises(InputDataError) as info:
        load_goldset(p)
    assert str(info.value).startswith(f"{p}:{line}: ") and fragment in str(info.value)


def test_inline_identities_reach_the_audit_without_an_identities_table(tmp_path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    write(tmp_path, "goldset.yaml", INLINE)
    cfg = write(tmp_path, "a.toml", '[inputs]\ngoldset = "goldset.yaml"\n')
    ctx = build_context(load_config(cfg), progress=False)
    assert ctx.identity("groups=[personal, alle]").groups == ("personal", "alle")
    assert ctx.identity("groups=[vertrieb]").groups == ("vertrieb",)


QRELS4 = "1 0 d1 2\n1 0 d2 0\n2 Q0 d3 1\n"
QRELS3 = "1 d1 2\n1 d2 0\n2 d3 1\n"
BEIR_TSV = "query-id\tcorpus-id\tscore\n1\td1\t2\n1\td2\t0\n2\td3\t1\n"
TOPICS = "<top>\n<num> Number: 1\n<title> alpha particles\n</top>\n<top>\n<num>2</num><title>beta decay</title>\n</top>\n"


@pytest.mark.parametrize(("name", "qrels"), [("qrels.txt", QRELS4), ("run.trec", QRELS4), ("q.qrels", QRELS3),
                                             ("test.tsv", BEIR_TSV), ("qrels", QRELS3)])
def test_three_and_four_column_qrels_read_alike(tmp_path, name, qrels):
    q = write(tmp_path, name, qrels)
    assert is_trec_qrels(q)
    gs = load_trec_qrels(q, write(tmp_path, "topics.txt", TOPICS))
    assert gs.qrels() == {"1": {"d1": 2}, "2": {"d3": 1}}
    assert [c.question for c in gs] == ["alpha particles", "beta decay"]


@pytest.mark.parametrize("topics", [
    "1\talpha particles\n2\tbeta decay\n",
    "1 alpha particles\n2 beta decay\n",
    '{"_id": "1", "text": "alpha particles"}\n{"_id": 2, "text": "beta decay"}\n',
])
def test_topics_as_tab_space_or_beir_jsonl_lines(tmp_path, topics):
    gs = load_trec_qrels(write(tmp_path, "qrels", QRELS3), write(tmp_path, "queries", topics))
    assert [c.question for c in gs] == ["alpha particles", "beta decay"]


def test_a_topic_defined_twice_is_an_error(tmp_path):
    t = write(tmp_path, "queries.tsv", "1\ta\n1\tb\n")
    with pytest.raises(InputDataError, match=r"queries\.tsv:2: topic '1' is defined twice \(first on line 1\)"):
        load_trec_qrels(write(tmp_path, "qrels", QRELS3), t)


def test_inputs_topics_and_its_old_name(tmp_path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    write(tmp_path, "qrels.tsv", BEIR_TSV)
    write(tmp_path, "topics.trec", TOPICS)
    cfg = tmp_path / "a.toml"
    for key in ("topics", "goldset_topics"):
        cfg.write_text(f'[inputs]\ngoldset = "qrels.tsv"\n{key} = "topics.trec"\n')
        ctx = build_context(load_config(cfg), progress=False)
        assert [c.question for c in ctx.goldset] == ["alpha particles", "beta decay"]
    cfg.write_text('[inputs]\ngoldset = "qrels.tsv"\ntopics = "topics.trec"\ngoldset_topics = "topics.trec"\n')
    with pytest.raises(ConfigError, match=r"a\.toml:4: \[inputs\] has both 'topics' and 'goldset_topics'"):
        load_config(cfg)


def test_topics_without_a_goldset_is_an_error(tmp_path):
    from ragdiag.inputs.config import load_config

    write(tmp_path, "topics.trec", TOPICS)
    cfg = write(tmp_path, "a.toml", '[audit]\nname = "x"\n\n[inputs]\ntopics = "topics.trec"\n')
    with pytest.raises(ConfigError, match=r"a\.toml:5: 'topics' holds the questions of a TREC qrels goldset"):
        load_config(cfg)
