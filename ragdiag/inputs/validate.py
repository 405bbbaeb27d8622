"""Every input checked against the target before any request is sent.

Each loader checks its own file (types, required keys); this module checks how the inputs
fit together and fit the target's index definition, so a mistake is an error with file and
line instead of a number (100 % failed requests, an nDCG of 0.002):

- profiles: search fields exist and are searchable; select fields are retrievable; vector
  query fields are vector fields, of one dimension per query and of the query embedder's
  dimension where the target embeds the text itself; semantic configurations and scoring
  profiles (and their parameters) exist; filters parse against the schema; the policy's
  security field can carry the identity clause;
- ``[target] vector_sources``: each key is a vector field, each source a text field, and each
  vector field has the dimension of the embedder that will fill it (known before anything is
  embedded: the model is named in ``[target] embedding_model``);
- ``[target] fields``: each role names a field of the index;
- a local index's analyzers: each names an analyzer Azure has (a typo such as ``de.lucen``
  would be analysed as standard.lucene and refused by Azure);
- goldset: intents are intents the policy routes (the nearest name is suggested), ``as_user``
  names an identity of ``[identities]`` (or is an inline ``groups=[...]`` identity),
  expected keys can be Azure AI Search document keys.

`input_problems` returns (path, line, message) triples; `check_inputs` raises one
`InputValidationError` listing them all. `ragdiag.audit.build_context` calls it, so the
audit, ``--plan``, ``ragdiag search``, the report and the tuner all get it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError, InputValidationError, RagdiagError
from ragdiag.inputs.limits import excerpt

__all__ = ["AZURE_KEY_CHARACTERS", "MAX_KEY_LENGTH", "azure_key_problem", "check_inputs",
           "check_vector_sources", "input_problems", "query_dimension", "request_problems"]

Problem = tuple[str | None, int | None, str]

#: Azure AI Search document keys: "Letters, numbers, dashes (-), underscores (_), equal signs
#: (=)", at most 1,024 characters, and "First character can't be an underscore" (REST API
#: reference, "Naming rules", https://learn.microsoft.com/rest/api/searchservice/naming-rules).
#: Letters and digits are taken as ASCII: other keys are to be URL-safe Base64 encoded (same page).
AZURE_KEY_CHARACTERS = "letters, digits, '_', '-' and '='"
MAX_KEY_LENGTH = 1024
_KEY_RE = re.compile(r"[A-Za-z0-9_\-=]+")


def azure_key_problem(key: str) -> str | None:
    """Why `key` cannot be an Azure AI Search document key, or None when it can."""
    if not key:
        return "is empty"
    if len(key) > MAX_KEY_LENGTH:
        return f"has {len(key):,} characters; Azure document keys have at most {MAX_KEY_LENGTH:,}"
    if not _KEY_RE.fullmatch(key):
        bad = sorted({c for c in key if not _KEY_RE.fullmatch(c)})
        shown = ", ".join("space" if c == " " else repr(c) for c in bad[:8])
        return (f"holds {shown}; Azure AI Search document keys hold only {AZURE_KEY_CHARACTERS} "
                "(encode other keys with URL-safe Base64, as the index does)")
    if key.startswith("_"):
        return "starts with '_'; Azure document keys may not"
    return None


# ---- the entry points -------------------------------------------------------------------
def check_inputs(config: Any, *, schema: Any, policies: Sequence[Any] = (), goldset: Any = None,
                 identities: Iterable[str] = (), query_dim: int | None = None,
                 embed_dim: int | None = None) -> None:
    """Raise `InputValidationError` listing every problem `input_problems` finds."""
    problems = input_problems(config, schema=schema, policies=policies, goldset=goldset,
                              identities=identities, query_dim=query_dim, embed_dim=embed_dim)
    if problems:
        raise InputValidationError(problems)


def input_problems(config: Any, *, schema: Any, policies: Sequence[Any] = (), goldset: Any = None,
                   identities: Iterable[str] = (), query_dim: int | None = None,
                   embed_dim: int | None = None) -> list[Problem]:
    """Every problem of the inputs on the target's `schema` (None: a code-only audit, where
    only the goldset's intents and identities are checked). `query_dim` is the dimension of
    the vectors the target embeds questions into (None when it does not embed them);
    `embed_dim` the dimension of the embedder that fills the ``vector_sources`` fields."""
    out: list[Problem] = []
    policies = [p for p in policies if p is not None]
    identities = set(identities)
    # the identity clause is built only for a question asked as someone: without identities
    # (an IR collection, a public corpus) the security field is never used, so not checked
    asked_as = bool(identities) or any(c.as_user for c in (goldset or ()))
    if schema is not None:
        for policy in policies:
            out.extend(_policy_problems(policy, schema, query_dim, check_security=asked_as))
        if config is not None and config.target is not None:
            options = config.target.options
            out.extend(_vector_source_problems(config, schema, options.get("vector_sources")))
            out.extend(_embedder_problems(config, schema, options.get("vector_sources"), embed_dim))
            out.extend(_field_role_problems(config, schema, options.get("fields")))
            if config.target.kind == "local":
                out.extend(_analyzer_problems(config, schema))
    if goldset is not None:
        out.extend(_goldset_problems(goldset, policies, identities, schema))
    return out


def check_vector_sources(config: Any, schema: Any, vector_sources: Mapping[str, Sequence[str]] | None) -> None:
    """Before a local index is built (embedding every record): `vector_sources` fits `schema`."""
    problems = _vector_source_problems(config, schema, vector_sources)
    if problems:
        raise InputValidationError(problems)


# ---- profiles -----------------------------------------------------------------------------
def _policy_problems(policy: Any, schema: Any, query_dim: int | None, *,
                     check_security: bool = True) -> list[Problem]:
    path = str(policy.path) if policy.path else None
    loc = _locator(path)
    trims = check_security and any(p.security_trimming for p in policy.profiles.values())
    out: list[Problem] = [(path, _line(loc, ("policy",), "security_field"), message)
                          for message in (policy.security_problems(schema) if trims else ())]
    for name, profile in policy.profiles.items():
        problems = [*profile.problems_against(schema),
                    *_dimension_problems(schema, [(vq.fields, None) for vq in profile.vector_queries], query_dim)]
        for key, index, message in problems:
            out.append((path, _profile_line(loc, name, key, index), f"profile '{name}': {message}"))
    return out


def _dimension_problems(schema: Any, queries: Sequence[tuple[Sequence[str], Sequence[float] | None]],
                        query_dim: int | None) -> list[tuple[str, int | None, str]]:
    """Vector queries (fields, raw vector or None for a text the target embeds) whose vector
    cannot have the fields' dimensions: (key, query index, message)."""
    vectors = {f.name: f for f in schema.vector_fields}
    out: list[tuple[str, int | None, str]] = []
    for i, (fields, vector) in enumerate(queries):
        dim, what = (len(vector), "the request's vector has") if vector is not None else (
            query_dim, "the target embeds questions into")
        for fname in fields:
            f = vectors.get(fname)
            if dim is not None and f is not None and f.dimensions is not None and f.dimensions != dim:
                out.append(("vector" if vector is not None else "fields", i,
                            f"vector query {i + 1}: field '{fname}' has {f.dimensions} dimensions, {what} "
                            f"{dim}; the vector query would be rejected (use the embedder the index "
                            "was built with, or fix 'dimensions')"))
    return out


def request_problems(request: Any, schema: Any, *, path: str | None = None,
                     query_dim: int | None = None) -> list[Problem]:
    """Problems of one `SearchRequest` (a ``ragdiag search --request`` file) on `schema`."""
    from ragdiag.policy.profile import request_shape_problems

    differs = any(vq.text is not None and vq.text != request.search for vq in request.vector_queries)
    problems = [*request_shape_problems(request, schema, vector_text_differs=differs),
                *_dimension_problems(schema, [(vq.fields, vq.vector) for vq in request.vector_queries],
                                     query_dim)]
    return [(path, None, f"{_REQUEST_KEYS.get(key, key)}: {message}") for key, _, message in problems]


#: the REST names of the request keys the problems name
_REQUEST_KEYS = {"search_fields": "searchFields", "select": "select", "semantic_configuration":
                 "semanticConfiguration", "query_type": "queryType", "scoring_profile": "scoringProfile",
                 "scoring_parameters": "scoringParameters", "fields": "vectorQueries", "vector": "vectorQueries",
                 "filter_override": "vectorQueries", "filter": "filter", "query_rewrites": "queryRewrites",
                 "captions": "captions", "answers": "answers"}


def _profile_line(loc: Any, profile: str, key: str, index: int | None) -> int | None:
    """Line of `key` in [profiles.NAME] (or the [defaults] it inherits it from)."""
    if loc is None:
        return None
    table = ("profiles", profile)
    if index is not None:
        def has_queries(t: tuple[str, ...]) -> bool:
            return "vector_queries" in loc.keys.get(t, {}) or (*t, "vector_queries", 0) in loc.headers

        origin = table if has_queries(table) or not has_queries(("defaults",)) else ("defaults",)
        return loc.line((*origin, "vector_queries", index), key)
    for origin in (table, ("defaults",)):
        if key in loc.keys.get(origin, {}):
            return loc.keys[origin][key]
    return loc.line(table)


# ---- [target] vector_sources -------------------------------------------------------------
def _vector_source_problems(config: Any, schema: Any, sources: Mapping[str, Sequence[str]] | None
                            ) -> list[Problem]:
    if not sources:
        return []
    path = str(config.path) if config is not None and getattr(config, "path", None) else None
    line = _line(_locator(path), ("target",), "vector_sources")
    vectors = [f.name for f in schema.vector_fields]
    texts = [f.name for f in schema.fields if not f.is_vector and f.element_type == "Edm.String"]
    out: list[Problem] = []
    for vector, fields in sources.items():
        if vector not in vectors:
            out.append((path, line, f"vector_sources names '{vector}', which is not a vector field of "
                        f"index '{schema.name}'{_nearest(vector, vectors)}; vector fields: "
                        f"{', '.join(vectors) or 'none'}"))
        for name in fields:
            if name not in texts:
                what = "not a field" if not schema.has_field(name) else "not a text (Edm.String) field"
                out.append((path, line, f"vector_sources['{vector}'] names '{name}', {what} of index "
                            f"'{schema.name}'{_nearest(name, texts)}: it would embed empty strings; "
                            f"text fields: {', '.join(texts) or 'none'}"))
    return out


def _embedder_problems(config: Any, schema: Any, sources: Mapping[str, Sequence[str]] | None,
                       embed_dim: int | None) -> list[Problem]:
    """Vector fields the embedder will fill whose `dimensions` differ from its vectors: found
    before a single record is embedded (an hour of embedding would end on this error)."""
    if not sources or embed_dim is None:
        return []
    vectors = {f.name: f for f in schema.vector_fields}
    model = config.target.options.get("embedding_model") or "the bundled all-MiniLM-L6-v2"
    schema_path = config.target.options.get("schema")
    out: list[Problem] = []
    for name in sources:
        f = vectors.get(name)
        if f is not None and f.dimensions is not None and f.dimensions != embed_dim:
            out.append((str(schema_path) if schema_path else None, None,
                        f"vector field '{name}' has {f.dimensions} dimensions, but [target] embedding_model "
                        f"({model}) makes {embed_dim}-dimensional vectors; nothing was embedded. Fix: set "
                        f"\"dimensions\": {embed_dim} for '{name}' in the schema, or choose the embedder the "
                        f"schema was written for"))
    return out


def _field_role_problems(config: Any, schema: Any, roles: Mapping[str, str] | None) -> list[Problem]:
    """``[target] fields`` roles naming fields the index lacks (the chunk analysis would stop late)."""
    if not roles:
        return []
    path = str(config.path) if getattr(config, "path", None) else None
    line = _line(_locator(path), ("target",), "fields")
    names = list(schema.field_names)
    return [(path, line, f"[target] fields: {role} = '{name}', but index '{schema.name}' has no field "
                         f"'{name}'{_nearest(name, names)}; fields: {', '.join(names)}")
            for role, name in roles.items() if not schema.has_field(name)]


#: analyzers Azure AI Search has besides the language ones (<lang>.lucene, <lang>.microsoft)
BUILTIN_ANALYZERS = ("standard.lucene", "standardasciifolding.lucene", "keyword", "pattern", "simple",
                     "stop", "whitespace")
_LANGUAGE_ANALYZER = re.compile(r"[a-z]{2}(?:-[A-Za-z]{2,4})?\.(?:lucene|microsoft)")


def _analyzer_problems(config: Any, schema: Any) -> list[Problem]:
    """A local index's analyzers that Azure does not have (a local schema defines no custom ones)."""
    from ragdiag.targets.local.analyzers import _LANGUAGES

    known = [*BUILTIN_ANALYZERS, *(f"{lang}.{fam}" for lang in _LANGUAGES for fam in ("lucene", "microsoft"))]
    schema_path = config.target.options.get("schema")
    out: list[Problem] = []
    for f in schema.fields:
        a = (f.analyzer or "").strip()
        if not a or f.is_vector or a.lower() in BUILTIN_ANALYZERS or _LANGUAGE_ANALYZER.fullmatch(a):
            continue
        out.append((str(schema_path) if schema_path else None, None,
                    f"field '{f.name}' names analyzer '{a}', which Azure AI Search does not have"
                    f"{_nearest(a, known)} and the schema defines no custom analyzers; it would be "
                    f"analysed as standard.lucene here and refused by Azure. Fix: a language analyzer "
                    f"such as en.lucene or de.lucene, or one of {', '.join(BUILTIN_ANALYZERS)}"))
    return out


# ---- goldset -------------------------------------------------------------------------------
def _goldset_problems(goldset: Any, policies: Sequence[Any], identities: set[str], schema: Any
                      ) -> list[Problem]:
    from ragdiag.inputs.goldset import DEFAULT_INTENT
    from ragdiag.policy.routing import INTENTS

    intents = (*INTENTS, DEFAULT_INTENT)
    out: list[Problem] = []
    for case in goldset:
        if policies and case.intent not in intents:
            routed = sorted({i for p in policies for i in p.routes})
            out.append((case.path, case.line_of("intent"),
                        f"case '{case.id}': intent '{case.intent}' is not an intent the policy routes"
                        f"{_nearest(case.intent, intents)}; intents: {', '.join(intents)} ('{DEFAULT_INTENT}' "
                        f"lets the classifier route the question; the policy routes "
                        f"{', '.join(routed) or 'none by name'}, the rest go to its default)"))
        if case.as_user and case.as_groups is None and case.as_user not in identities:
            out.append((case.path, case.line_of("as_user"),
                        f"case '{case.id}': identity '{case.as_user}' is not defined in [identities]"
                        f"{_nearest(case.as_user, identities)}; known: {', '.join(sorted(identities)) or 'none'} "
                        "(or write the groups inline: as_user: groups=[a, b])"))
        if schema is not None:
            where = "expect_source" if "expect_source" in dict(case.key_lines) else "expect_sources"
            for key, what in [*((k, where) for k in case.source_keys),
                              *((k, "forbidden_sources") for k in case.forbidden_sources)]:
                problem = azure_key_problem(key)
                if problem:  # names were resolved to keys already, where the target lists documents
                    out.append((case.path, case.line_of(what),
                                f"case '{case.id}': {excerpt(key, 80)} is not a chunk key (it {problem}) "
                                "and was not resolved as a document, section or page name: the target "
                                "cannot list its documents; give the chunk keys of the index"))
    return out


# ---- helpers --------------------------------------------------------------------------------
def _nearest(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _locator(path: str | None) -> Any:
    """The TOML locator of `path` (None when it cannot be read: then messages carry no line)."""
    if not path:
        return None
    from ragdiag.inputs.limits import read_text
    from ragdiag.inputs.tomlfile import TomlLocator

    try:
        return TomlLocator(read_text(Path(path), what="TOML file", error=ConfigError))
    except (RagdiagError, OSError):
        return None


def _line(loc: Any, table: tuple[str, ...], key: str) -> int | None:
    return loc.line(table, key) if loc is not None else None


def query_dimension(target: Any) -> int | None:
    """The dimension of the vectors `target` embeds questions into, if it embeds them itself."""
    from ragdiag.targets.base import has_capability

    embedder = target.embedder if has_capability(target, "embedder") else None
    if embedder is None:
        return None
    try:
        return int(embedder.dim)
    except Exception:  # a model that cannot report it: the request itself will say
        return None
