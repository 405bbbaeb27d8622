"""Property-based fuzzing of every input loader: any file gives a value or a RagdiagError.

Each loader gets structured inputs (its own keys with values of any type, written in its
own format) and raw bytes. Whatever is accepted must satisfy the loader's promises
(ranges, types); whatever is refused must be a RagdiagError with a bounded message.
Bounded examples keep the unit tier fast.
"""

from __future__ import annotations

import json
import math
import os
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiag.errors import RagdiagError

# The same examples on every run, so a CI result depends on the code, not on the draw;
# RAGDIAG_FUZZ_RANDOM=1 explores new ones and RAGDIAG_FUZZ_EXAMPLES=N draws more (tests/README.md).
FUZZ = settings(max_examples=int(os.environ.get("RAGDIAG_FUZZ_EXAMPLES", "60")), deadline=None, database=None,
                derandomize=not os.environ.get("RAGDIAG_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
MAX_MESSAGE = 2200

# ---- value strategies -------------------------------------------------------------------------
texts = st.one_of(st.text(max_size=12), st.sampled_from(["", " ", "x" * 300, "\x00", "a\nb", "lots",
                                                         "Edm.String", "en", "semantic", "refused"]))
numbers = st.one_of(st.integers(-10, 100), st.integers(), st.sampled_from([0, -5, 2**63, 10**30, 10**400]),
                    st.floats(allow_nan=True, allow_infinity=True))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(texts, inner, max_size=4)),
                      max_leaves=12)
toml_scalars = st.one_of(st.booleans(), st.integers(-2**63, 2**63 - 1), st.floats(), texts)
toml_values = st.recursive(toml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=6),
                                                 inner, max_size=3)), max_leaves=10)


def _refused_cleanly(call):
    """Run `call`; a RagdiagError must have a bounded message. Returns the value or None."""
    try:
        return call()
    except RagdiagError as exc:
        assert len(str(exc)) <= MAX_MESSAGE
        return None


def _toml(doc) -> str | None:
    import tomli_w

    try:
        return tomli_w.dumps(doc)
    except Exception:
        return None


def _write(tmp_path, name: str, data) -> object:
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, encoding="utf-8", errors="surrogatepass")
    return p


# ---- audit config -------------------------------------------------------------------------------
CONFIG_KEYS = {"runner": ["budget", "concurrency", "cache", "timeout_s", "retries", "max_consecutive_failures"],
               "budgets": ["context_tokens", "model_window_tokens", "answer_reserve_tokens", "tokenizer"],
               "audit": ["name", "client", "system", "language"],
               "inputs": ["goldset", "profiles", "entities", "checklist"],
               "output": ["dir"], "target": ["kind", "variant", "records", "schema", "endpoint", "index"]}


@st.composite
def configs(draw):
    doc = {}
    for table in draw(st.lists(st.sampled_from(sorted(CONFIG_KEYS)), max_size=3, unique=True)):
        keys = draw(st.lists(st.sampled_from(CONFIG_KEYS[table]), max_size=3, unique=True))
        doc[table] = {k: draw(toml_values) for k in keys}
    if draw(st.booleans()):
        doc["identities"] = draw(st.dictionaries(st.text(max_size=5), toml_values, max_size=2))
    return doc


@FUZZ
@given(configs())
def test_config_values_are_checked_or_refused(tmp_path_factory, doc):
    from ragdiag.inputs.config import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT_S, load_config

    text = _toml(doc)
    if text is None:
        return
    path = _write(tmp_path_factory.mktemp("cfg"), "audit.toml", text)
    cfg = _refused_cleanly(lambda: load_config(path))
    if cfg is not None:
        assert 1 <= cfg.concurrency <= MAX_CONCURRENCY and 0 <= cfg.retries <= MAX_RETRIES
        assert math.isfinite(cfg.timeout_s) and 0 < cfg.timeout_s <= MAX_TIMEOUT_S
        assert isinstance(cfg.cache, bool) and cfg.max_consecutive_failures >= 1
        for k in ("context_tokens", "model_window_tokens", "answer_reserve_tokens"):
            v = cfg.budgets.get(k)
            assert v is None or (type(v) is int and v > 0)


# ---- profiles -------------------------------------------------------------------------------------
PROFILE_KEYS = ["query_type", "search_mode", "semantic_configuration", "search_fields", "keyword_text",
                "semantic_text", "vector_filter_mode", "max_text_recall_size", "filter", "scoring_profile",
                "scoring_parameters", "top", "select", "count", "captions", "security_trimming"]
VQ_KEYS = ["fields", "k", "exhaustive", "weight", "text", "filter_override", "override_security"]


@st.composite
def policies(draw):
    prof = {k: draw(toml_values) for k in draw(st.lists(st.sampled_from(PROFILE_KEYS), max_size=4,
                                                        unique=True))}
    if draw(st.booleans()):
        prof["vector_queries"] = [{k: draw(toml_values) for k in draw(
            st.lists(st.sampled_from(VQ_KEYS), max_size=4, unique=True))}]
    doc = {"profiles": {draw(st.sampled_from(["fact", "x", ""])): prof}}
    if draw(st.booleans()):
        doc["routes"] = {draw(st.sampled_from(["fact", "default", "nope"])): draw(toml_values)}
    if draw(st.booleans()):
        doc["policy"] = {draw(st.sampled_from(["name", "security_field", "extra"])): draw(toml_values)}
    return doc


@FUZZ
@given(policies())
def test_profiles_load_or_refuse(policy_doc):
    from ragdiag.policy import loads_policy

    text = _toml(policy_doc)
    if text is not None:
        _refused_cleanly(lambda: loads_policy(text, path="p.toml"))


# ---- goldset ---------------------------------------------------------------------------------------
GOLD_KEYS = ["id", "question", "intent", "as_user", "expect_sources", "expect_answer_contains", "expect",
             "notes"]
gold_cases = st.one_of(values, st.dictionaries(st.sampled_from(GOLD_KEYS), values, max_size=6),
                       st.fixed_dictionaries({"id": texts, "question": texts,
                                              "expect_sources": st.one_of(values, st.lists(
                                                  st.dictionaries(st.sampled_from(["key", "grade", "x"]),
                                                                  values, max_size=3), max_size=3))}))


@FUZZ
@given(st.lists(gold_cases, max_size=4))
def test_goldset_yaml_loads_or_refuses(tmp_path_factory, cases):
    from ragdiag.inputs.goldset import load_goldset

    try:
        text = yaml.safe_dump(cases, allow_unicode=True)
    except Exception:
        return
    path = _write(tmp_path_factory.mktemp("g"), "g.yaml", text)
    gold = _refused_cleanly(lambda: load_goldset(path))
    if gold is not None:
        for c in gold:
            assert c.id and c.question and all(g >= 1 for _, g in c.expect_sources)
            assert c.expect_refused != bool(c.expect_sources)


@FUZZ
@given(st.lists(st.one_of(gold_cases, st.text(max_size=30)), max_size=4))
def test_goldset_jsonl_loads_or_refuses(tmp_path_factory, rows):
    from ragdiag.inputs.goldset import load_goldset

    lines = [r if isinstance(r, str) else json.dumps(r, allow_nan=True) for r in rows]
    path = _write(tmp_path_factory.mktemp("g"), "g.jsonl", "\n".join(lines))
    _refused_cleanly(lambda: load_goldset(path))


trec_tokens = st.sampled_from(["q1", "0", "doc-1", "1", "-1", "2", "x", "9" * 40, "\t", " ", "<top>",
                               "<num>", "</top>", "<title>", "Number:", "\x00", "é"])


@FUZZ
@given(st.lists(st.lists(trec_tokens, max_size=6).map(" ".join), max_size=6),
       st.lists(st.lists(trec_tokens, max_size=6).map(" ".join), max_size=6))
def test_trec_qrels_and_topics_load_or_refuse(tmp_path_factory, qrels_lines, topic_lines):
    from ragdiag.inputs.goldset import load_trec_qrels

    d = tmp_path_factory.mktemp("trec")
    q = _write(d, "run.qrels", "\n".join(qrels_lines))
    t = _write(d, "topics.txt", "\n".join(topic_lines))
    _refused_cleanly(lambda: load_trec_qrels(q))
    _refused_cleanly(lambda: load_trec_qrels(q, t))


# ---- query log -------------------------------------------------------------------------------------
LOG_KEYS = ["timestamp", "question", "route", "user", "session", "profile", "keyword_text", "filter",
            "top", "k", "latency_ms", "results", "attempt", "vector_fields", "extra"]
log_rows = st.one_of(values, st.dictionaries(st.sampled_from(LOG_KEYS), values, max_size=8),
                     st.fixed_dictionaries({"timestamp": st.one_of(numbers, texts,
                                                                   st.just("2026-05-04T09:12:33Z")),
                                            "question": texts, "route": texts}))


@FUZZ
@given(st.lists(log_rows, min_size=1, max_size=4))
def test_query_log_loads_or_refuses(tmp_path_factory, rows):
    from ragdiag.inputs.querylog import load_query_log

    path = _write(tmp_path_factory.mktemp("q"), "q.jsonl",
                  "\n".join(json.dumps(r, allow_nan=True) for r in rows))
    log = _refused_cleanly(lambda: load_query_log(path))
    if log is not None:
        for e in log:
            assert isinstance(e.question, str) and e.timestamp.tzinfo is not None
            assert e.top is None or e.top >= 0


# ---- entities ---------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(values, st.dictionaries(texts, st.one_of(values, st.lists(texts, max_size=4)), max_size=4)))
def test_entities_load_or_refuse_and_never_match_everything(tmp_path_factory, lexicon):
    from ragdiag.inputs.entities import MIN_NAME_CHARS, entity_matcher, load_entities

    path = _write(tmp_path_factory.mktemp("e"), "entities.json", json.dumps(lexicon, allow_nan=True))
    table = _refused_cleanly(lambda: load_entities(path))
    if table is not None:
        assert all(len(n) >= MIN_NAME_CHARS for names in table.values() for n in names)
        assert entity_matcher(path)("zq") == () or any(
            n.lower() in "zq" for names in table.values() for n in names)


# ---- index schema -----------------------------------------------------------------------------------
FIELD_KEYS = ["name", "type", "key", "searchable", "filterable", "retrievable", "hidden", "sortable",
              "dimensions", "vectorSearchProfile", "analyzer", "permissionFilter"]
schema_fields = st.dictionaries(st.sampled_from(FIELD_KEYS), st.one_of(
    values, st.sampled_from(["Edm.String", "Collection(Edm.Single)", "Edm.Int32", "key"])), max_size=6)


@FUZZ
@given(st.one_of(values, st.fixed_dictionaries(
    {"name": texts, "fields": st.lists(schema_fields, max_size=4)},
    optional={"semantic": values, "vectorSearch": values, "scoringProfiles": values})))
def test_index_schema_loads_or_refuses(tmp_path_factory, definition):
    from ragdiag.model.schema import IndexSchema

    path = _write(tmp_path_factory.mktemp("s"), "schema.json", json.dumps(definition, allow_nan=True))
    schema = _refused_cleanly(lambda: IndexSchema.load(path))
    if schema is not None:
        assert len({f.name for f in schema.fields}) == len(schema.fields)
        assert sum(f.key for f in schema.fields) <= 1
        assert IndexSchema.from_azure(schema.to_azure()) == schema


# ---- records ------------------------------------------------------------------------------------------
RECORD_KEYS = ["key", "title", "content", "page", "confidence_score", "is_table", "last_updated",
               "group_ids", "content_vector", "nope"]


@pytest.fixture(scope="module")
def sample_schema():
    from ragdiag.model.schema import IndexSchema
    from ragdiag.sample.system import sample_dir

    return IndexSchema.load(sample_dir() / "index" / "schema.json")


@FUZZ
@given(st.lists(st.one_of(values, st.dictionaries(st.sampled_from(RECORD_KEYS), values, max_size=6)),
                max_size=4))
def test_records_load_or_refuse(tmp_path_factory, sample_schema, rows):
    from ragdiag.inputs.records import load_records

    path = _write(tmp_path_factory.mktemp("r"), "records.jsonl",
                  "\n".join(json.dumps(r, allow_nan=True) for r in rows))
    records = _refused_cleanly(lambda: load_records(path, sample_schema))
    if records is not None:
        keys = [r["key"] for r in records]
        assert len(set(keys)) == len(keys) and all(isinstance(k, str) and k.strip() for k in keys)


# ---- checklist specs ------------------------------------------------------------------------------------
SPEC_KEYS = ["id", "order", "references", "title", "question", "why", "status_rules", "thresholds",
             "roles", "extras", "messages", "labels", "severity"]


@FUZZ
@given(st.dictionaries(st.sampled_from(SPEC_KEYS), toml_values, max_size=6),
       st.booleans())
def test_checklist_specs_load_or_refuse(tmp_path_factory, spec, valid_head):
    from ragdiag.inputs.checklist import load_spec

    if valid_head:
        spec = {"id": "fuzzed", "title": {"en": "T"}, "question": {"en": "Q?"}, "thresholds": {}, **spec}
    text = _toml(spec)
    if text is not None:
        path = _write(tmp_path_factory.mktemp("c"), "fuzzed.toml", text)
        _refused_cleanly(lambda: load_spec(path))


# ---- raw bytes into every loader --------------------------------------------------------------------------
RAW_LOADERS = ["config", "profiles", "goldset.yaml", "goldset.jsonl", "qrels", "query_log", "entities",
               "schema", "records", "spec"]


@FUZZ
@given(st.sampled_from(RAW_LOADERS), st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(st.sampled_from(["[", "]", "{", "}", "- ", ":", "\"", "'", "=", "\n", "#", "&a", "*a", "1",
                              "0x", "9" * 30, "\x00", "\t", "a", ",", "<top>", "\\u", "\ufeff"]),
             max_size=80).map(lambda xs: "".join(xs).encode("utf-8", "surrogatepass"))))
def test_raw_bytes_never_escape_as_another_exception(tmp_path_factory, sample_schema, which, blob):
    from ragdiag.inputs.checklist import load_spec
    from ragdiag.inputs.config import load_config
    from ragdiag.inputs.entities import load_entities
    from ragdiag.inputs.goldset import load_goldset, load_trec_qrels
    from ragdiag.inputs.querylog import load_query_log
    from ragdiag.inputs.records import load_records
    from ragdiag.model.schema import IndexSchema
    from ragdiag.policy import load_policy

    names = {"config": "audit.toml", "profiles": "p.toml", "goldset.yaml": "g.yaml",
             "goldset.jsonl": "g.jsonl", "qrels": "g.qrels", "query_log": "q.jsonl",
             "entities": "e.json", "schema": "s.json", "records": "r.jsonl", "spec": "fuzzed.toml"}
    loaders = {"config": load_config, "profiles": load_policy, "goldset.yaml": load_goldset,
               "goldset.jsonl": load_goldset, "qrels": load_trec_qrels, "query_log": load_query_log,
               "entities": load_entities, "schema": IndexSchema.load,
               "records": lambda p: load_records(p, sample_schema), "spec": load_spec}
    path = _write(tmp_path_factory.mktemp("raw"), names[which], blob)
    _refused_cleanly(lambda: loaders[which](path))


# ---- the limits helper itself -------------------------------------------------------------------------------
@FUZZ
@given(values, st.integers(8, 300))
def test_excerpt_is_bounded_and_never_raises(value, limit):
    from ragdiag.inputs.limits import excerpt

    text = excerpt(value, limit)
    assert len(text) <= limit + 30  # the cut plus "(N characters)"


def test_excerpt_of_huge_and_self_referential_values():
    from ragdiag.inputs.limits import excerpt

    loop: list = []
    loop.append(loop)
    assert len(excerpt(loop)) < 160
    assert "digits" in excerpt(10**10000)
    assert excerpt("a" * 10**6).endswith("(1,000,000 characters)")
    assert excerpt({"k": "v"}) == "{'k': 'v'}"


# ---- the loaders issue 23 found crashing: chunk exports, sources, answers, findings, requests ----
CHUNK_KEYS = ["id", "content", "text", "page_content", "sourcefile", "metadata", "page", "position", "level"]
chunk_rows = st.one_of(values, st.dictionaries(st.sampled_from(CHUNK_KEYS), values, max_size=5))
raw_text = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=120).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"[" * 5000, b"\xff\xfe{\x00}\x00", "Grüße".encode("latin-1"), b"\x00\x00", b"\xef\xbb\xbf"]),
    st.lists(st.sampled_from(["[", "]", "{", "}", '"', ",", ":", "\n", "\x00", "a", "1", '"x"', "\t", "\r"]),
             max_size=60).map(lambda xs: "".join(xs).encode("utf-8")))


@FUZZ
@given(st.sampled_from([".jsonl", ".json", ".csv", ".tsv"]), st.one_of(
    st.lists(chunk_rows, max_size=4).map(lambda rows: "\n".join(json.dumps(r, allow_nan=True) for r in rows)
                                         .encode("utf-8")), raw_text))
def test_chunk_exports_load_or_refuse(tmp_path_factory, suffix, blob):
    from ragdiag.chunks.export import check_chunk_file

    path = _write(tmp_path_factory.mktemp("ck"), f"chunks{suffix}", blob)
    verdict = _refused_cleanly(lambda: check_chunk_file(path, lang="en"))
    if verdict is not None:
        assert verdict.status in ("pass", "warn", "fail", "skipped")


@FUZZ
@given(st.sampled_from([".jsonl", ".json", ".txt"]), st.one_of(
    st.lists(st.dictionaries(st.sampled_from(["id", "doc_id", "text", "content", "x"]), values, max_size=3),
             max_size=3).map(lambda rows: "\n".join(json.dumps(r, allow_nan=True) for r in rows).encode("utf-8")),
    raw_text))
def test_chunk_sources_load_or_refuse(tmp_path_factory, suffix, blob):
    from ragdiag.chunks.source import load_sources

    path = _write(tmp_path_factory.mktemp("src"), f"sources{suffix}", blob)
    sources = _refused_cleanly(lambda: load_sources(path))
    if sources is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items())


@FUZZ
@given(st.one_of(st.lists(st.one_of(values, st.dictionaries(
    st.sampled_from(["id", "answer", "citations", "refused", "x"]), values, max_size=4)), max_size=4)
    .map(lambda rows: "\n".join(json.dumps(r, allow_nan=True) for r in rows).encode("utf-8")), raw_text))
def test_answers_load_or_refuse(tmp_path_factory, blob):
    from ragdiag.inputs.answers import load_answers

    path = _write(tmp_path_factory.mktemp("ans"), "answers.jsonl", blob)
    answers = _refused_cleanly(lambda: load_answers(path))
    if answers is not None:
        assert all(isinstance(a.citations, tuple) and isinstance(a.refused, bool) for a in answers)


FINDING_KEYS = ["check_id", "status", "headline", "metrics", "evidence", "incomplete", "failures", "locations",
                "effects", "observed", "figures", "recommendations"]


@FUZZ
@given(st.one_of(values, st.fixed_dictionaries(
    {"findings": st.one_of(values, st.lists(st.one_of(values, st.dictionaries(st.sampled_from(FINDING_KEYS),
                                                                              values, max_size=6)), max_size=3))},
    optional={"schema_version": values, "meta": values})), st.booleans())
def test_findings_files_load_or_refuse(tmp_path_factory, data, raw):
    from ragdiag.model.findings import AuditResult

    blob = json.dumps(data, allow_nan=True).encode("utf-8") if not raw else json.dumps(data).encode("utf-16")
    path = _write(tmp_path_factory.mktemp("fi"), "findings.json", blob)
    result = _refused_cleanly(lambda: AuditResult.from_json(path))
    if result is not None:
        assert all(f.status in ("pass", "warn", "fail", "skipped", "error") for f in result.findings)


REQUEST_KEYS = ["search", "top", "skip", "filter", "select", "searchFields", "queryType", "vectorQueries",
                "semanticConfiguration", "count", "maxTextRecallSize", "hybridSearch", "scoringParameters"]
VQ_REQUEST_KEYS = ["kind", "text", "vector", "fields", "k", "exhaustive", "weight", "filterOverride"]


@FUZZ
@given(st.one_of(values, st.dictionaries(st.sampled_from(REQUEST_KEYS), st.one_of(
    values, st.lists(st.dictionaries(st.sampled_from(VQ_REQUEST_KEYS), values, max_size=5), max_size=2)),
    max_size=6)))
def test_request_bodies_build_or_refuse(body):
    from ragdiag.model import SearchRequest

    req = _refused_cleanly(lambda: SearchRequest.from_dict(body))
    if req is not None:
        assert req.top >= 0 and all(vq.k >= 1 for vq in req.vector_queries)
        assert isinstance(req.search, str | type(None)) and isinstance(req.count, bool)


sql_words = st.sampled_from(["select", "id", "from", "chunks", "where", "and", "or", "order", "by", "embedding",
                             "<=>", ":embedding", ":groups", "limit", "30", "(", ")", "'", '"', "--", "/*", "*/",
                             ";", "insert", "into", "update", "set", "delete", "with", "as", "for", "$$", "ü", "о",
                             "\n", ",", "::text[]", "&&", "nextval(", "union"])


@FUZZ
@given(st.lists(sql_words, max_size=30).map(" ".join))
def test_sql_templates_parse_or_refuse_and_never_let_a_write_through(sql):
    from ragdiag.targets.pgvector.sqltemplate import _WRITES, SqlTemplate, _blank_quoted

    template = _refused_cleanly(lambda: SqlTemplate(sql))
    if template is not None:
        blank = _blank_quoted(template.sql)
        assert not _WRITES.search(blank) and ";" not in blank
        words = blank.lower().split()
        assert words[0] in ("select", "with") and "nextval(" not in blank.replace(" ", "").lower()
