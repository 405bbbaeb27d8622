"""The retrieval policy an init route drafts: profiles.toml text with comments to edit.

For a drafted local index: keyword, vector, hybrid and hybrid with the semantic ranker, one
route (``default``) to hybrid.

Channel texts as the ``shared_query_text`` check recommends: the keyword leg gets the question's
keywords (`ragdiag.policy.text.keywords`), the vector leg and the semantic ranker the question as
asked. Without a security field in the index no profile builds an identity clause
(``security_trimming = false``): a clause on a field the index lacks would be refused, and the
policy would fail its own audit; the comment says how to add one. For a live Azure index: one profile per sensible combination
of its semantic configurations and vector fields (keyword alone, each vector field with the
keyword leg, each semantic configuration, each semantic configuration with each vector
field), capped at `MAX_AZURE_PROFILES`.
"""

from __future__ import annotations

import json
import re

from ragdiag.model.schema import IndexSchema

MAX_AZURE_PROFILES = 12
VECTOR_K = 50


def _q(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _vector_query(profile: str, field: str) -> str:
    return (f"  [[profiles.{_q(profile)}.vector_queries]]\n  fields = [{_q(field)}]\n  k = {VECTOR_K}\n"
            "  text = \"verbatim\"   # the question as asked\n")


def _head(name: str, description: str, schema: IndexSchema, search_fields: list[str], default: str,
          top: int) -> list[str]:
    security = [f.name for f in schema.security_fields]
    lines = [
        "# The retrieval policy drafted by `ragdiag init`: one profile per way of searching.",
        "# [routes] maps your system's question intents to profiles (e.g. fact = \"hybrid\");",
        "# every goldset question whose intent has no route uses `default`.",
        "[policy]",
        f"name = {_q(name)}",
        f"description = {_q(description)}",
    ]
    if security:
        lines.append(f"security_field = {_q(security[0])}   # the index field holding each document's groups")
    else:
        lines += ["# The index has no security field, so no profile trims by identity ([defaults]",
                  "# security_trimming = false). To audit permissions: add a filterable Collection(Edm.String)",
                  "# field with each document's groups to the index (schema.json and every record), name it",
                  "# here (security_field = \"group_ids\"), delete security_trimming = false below and list",
                  "# the users and their groups under [identities] in audit.toml."]
    lines += ["", "[routes]", f"default = {_q(default)}", "", "[defaults]",
              f"search_fields = [{', '.join(_q(f) for f in search_fields)}]",
              "keyword_text = \"keywords\"   # BM25 gets the question's keywords; vectors and the ranker the question",
              f"top = {top}"]
    if not security:
        lines.append("security_trimming = false   # no security field in the index (see above)")
    return [*lines, ""]


def local_policy(schema: IndexSchema, search_fields: list[str], vector: str, semantic: str | None) -> str:
    """Keyword, vector, hybrid (the default route) and hybrid + semantic ranker."""
    lines = _head("drafted", "drafted by ragdiag init: keyword, vector and hybrid search", schema,
                  search_fields, "hybrid", 10)
    lines += ["# The goldset check measures every profile side by side (and hybrid's two legs alone);",
              "# [routes] default is the profile the other checks audit.",
              "[profiles.keyword]", "description = \"BM25 over the search fields only\"", "",
              "[profiles.vector]", f"description = \"one vector query on {vector}, k = {VECTOR_K}\"",
              "keyword_text = \"none\"", _vector_query("vector", vector),
              "[profiles.hybrid]", f"description = \"BM25 plus one vector query on {vector}, fused by RRF\"",
              _vector_query("hybrid", vector)]
    if semantic:  # commented out: an unrouted profile is measured by no check, only edited
        lines += ["# The semantic ranker over the hybrid pool (locally a bi-encoder stand-in for Azure's",
                  "# cross-encoder: its scores are not Azure's). Uncomment and route to it to audit it:",
                  "# [profiles.hybrid_semantic]", "# description = \"hybrid, reranked by the semantic ranker\"",
                  "# query_type = \"semantic\"", f"# semantic_configuration = {_q(semantic)}",
                  "# semantic_text = \"verbatim\"",
                  *("# " + x for x in _vector_query("hybrid_semantic", vector).splitlines())]
    return "\n".join(lines)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "x"


def azure_combinations(schema: IndexSchema) -> list[tuple[str, str | None, str | None]]:
    """(profile name, semantic configuration, vector field) per sensible combination."""
    vectors = [f.name for f in schema.vector_fields]
    semantics = [c.name for c in schema.semantic_configurations]
    combos: list[tuple[str, str | None, str | None]] = [("keyword", None, None)]
    combos += [(f"hybrid_{_slug(v)}", None, v) for v in vectors]
    combos += [(f"semantic_{_slug(s)}", s, None) for s in semantics]
    combos += [(f"semantic_{_slug(s)}_hybrid_{_slug(v)}", s, v) for s in semantics for v in vectors]
    return combos


def azure_policy(schema: IndexSchema) -> tuple[str, list[str]]:
    """The drafted policy of a live index and the notes about it."""
    notes: list[str] = []
    search_fields = [f.name for f in schema.fields if f.searchable and not f.is_vector
                     and f.element_type == "Edm.String"]
    combos = azure_combinations(schema)
    if len(combos) > MAX_AZURE_PROFILES:
        notes.append(f"the index allows {len(combos)} combinations of semantic configurations and vector "
                     f"fields; profiles.toml drafts the first {MAX_AZURE_PROFILES} (add the others by hand)")
        combos = combos[:MAX_AZURE_PROFILES]
    default = combos[-1][0]
    lines = _head("drafted", f"drafted by ragdiag init from the definition of index {schema.name}", schema,
                  search_fields, default, 10)
    if schema.vector_fields:
        lines += ["# Vector queries are sent as text: each vector field needs an integrated vectorizer",
                  "# in the index definition, or Azure refuses the request.", ""]
    for name, semantic, vector in combos:
        what = ["BM25"] + ([f"a vector query on {vector}"] if vector else []) + \
               ([f"the semantic ranker ({semantic})"] if semantic else [])
        lines += [f"[profiles.{_q(name)}]", f"description = {_q(' + '.join(what))}"]
        if semantic:
            lines += ["query_type = \"semantic\"", f"semantic_configuration = {_q(semantic)}",
                      "semantic_text = \"verbatim\"   # the ranker reads the question as asked"]
        lines.append(_vector_query(name, vector) if vector else "")
    return "\n".join(lines), notes
