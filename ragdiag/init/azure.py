"""Route ``--azure-endpoint URL --azure-index NAME``: a live Azure AI Search index, read only.

Reads the index definition (one GET through `ragdiag.targets.azure.AzureTarget`, the client
the audit uses), the document count and three document keys (one search, for the goldset
template), and drafts one profile per sensible combination of
its semantic configurations and vector fields (`ragdiag.init.profiles.azure_policy`), a
goldset template and, when the index has a security field, identities to fill in. The key is
read from the environment variable named by ``--api-key-env``; only that name is written.
Nothing is copied from the index: the audit searches it live.
"""

from __future__ import annotations

from collections.abc import Callable

from ragdiag.errors import ConfigError
from ragdiag.init.draft import Draft
from ragdiag.init.lang import LANGUAGES
from ragdiag.init.profiles import azure_policy

TEMPLATE_CASES = 3


def _analyzer_language(schema) -> str | None:
    """The language of the searchable fields' analyzers, when they name one (``de.lucene``)."""
    langs = {f.analyzer.split(".")[0] for f in schema.fields if f.searchable and f.analyzer and "." in f.analyzer}
    langs &= set(LANGUAGES)
    return langs.pop() if len(langs) == 1 else None


def _some_keys(target, key: str) -> list[str]:
    """A few document keys of the index (one read-only search), so the template names real ones."""
    from ragdiag.errors import TargetError
    from ragdiag.model import SearchRequest

    try:
        trace = target.search(SearchRequest(search="*", top=TEMPLATE_CASES, select=(key,)))
    except TargetError:
        return []
    return [str(k) for k in trace.keys][:TEMPLATE_CASES]


def azure_draft(endpoint: str, index: str, *, api_key_env: str | None, credential: str | None, language: str,
                log: Callable[[str], None], warn: Callable[[str], None]) -> Draft:
    from ragdiag.targets.azure import AzureTarget

    if not endpoint.startswith(("https://", "http://")):
        raise ConfigError(f"--azure-endpoint must be a URL such as https://NAME.search.windows.net, got {endpoint!r}")
    cred = "default" if credential == "default" else "api_key"
    env = api_key_env or "AZURE_SEARCH_API_KEY"
    target = AzureTarget.from_env(endpoint.rstrip("/"), index, api_key_env=env, credential=cred, retries=2)
    try:
        log(f"reading the definition of index {index} at {endpoint}")
        schema = target.schema()
        count = target.count()
        sample_keys = _some_keys(target, schema.key_field.name)
    finally:
        target.close()
    policy, notes = azure_policy(schema)
    analyzed = _analyzer_language(schema)
    if language in LANGUAGES:
        code, note = language, f"{language}: given with --language {language}"
    elif analyzed:
        code, note = analyzed, f"{analyzed}: from the analyzers of the searchable fields"
    else:
        code = "en"
        note = ("en: the index's analyzers name no language and the documents stay in the index (nothing "
                "is read to detect one); pass --language de for a German index")
        if language == "auto":
            warn(f"warning: {note}")
    key = schema.key_field.name
    keys = sample_keys or [f"TODO-a-{key}-of-the-index"] * TEMPLATE_CASES
    template = [{"id": f"case-{n:03d}", "question": f"TODO: a question your users ask (e.g. one document {k} "
                                                    "answers)" if sample_keys else "TODO: a question your users ask",
                 "expect_sources": [{"key": k, "grade": 2}]} for n, k in enumerate(keys, 1)]
    security = schema.security_fields
    if security:
        template[0]["as_user"] = "TODO-user"
        notes.append(f"`{security[0].name}` is a security field: define in [identities] of audit.toml the users "
                     "and groups the goldset's as_user names (e.g. \"anna\" = [\"sales\"]); probes are sent as them")
    else:
        notes.append("the index has no security field (no permission filter, no ACL-named collection): the ACL "
                     "check has nothing to trim")
    if schema.vector_fields:
        notes.append("vector queries are sent as text (`kind: text`): each vector field needs an integrated "
                     "vectorizer in the index definition, or Azure refuses the request")
    notes.append("profiles.toml drafts one profile per combination of semantic configuration and vector field; "
                 "map your system's intents to them in [routes], and delete those your system never uses")
    target_table: dict[str, str] = {"endpoint": endpoint.rstrip("/"), "index": index}
    if cred == "default":
        target_table["credential"] = "default"
    else:
        target_table["api_key_env"] = env
    return Draft(route="azure", source=f"Azure AI Search index {index} at {endpoint.rstrip('/')}", schema=schema,
                 language=code, language_note=note, policy=policy, records=None, template=template,
                 target=target_table, notes=notes,
                 counts={"documents in the index": count, "fields": len(schema.fields),
                         "semantic configurations": len(schema.semantic_configurations),
                         "vector fields": len(schema.vector_fields)})
