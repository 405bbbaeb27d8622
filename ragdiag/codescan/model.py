"""What the code scanner reports: frozen, JSON-safe records with file:line.

Every record has `to_dict()` (JSON-safe), `from_dict()` (its inverse) and a
`location` ("file:line", the file relative to the scanned root, POSIX
separators). Mappings are plain dicts; tuples stand for lists.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, ClassVar

#: Kinds of search call sites.
SEARCH_KINDS = ("azure_search", "azure_vector_query", "rest_search", "faiss_search", "langchain",
                "llamaindex", "sql_similarity", "on_your_data", "agentic_retrieval", "haystack", "vector_db")
#: Kinds of LLM call sites.
LLM_KINDS = ("openai_chat", "azure_openai_chat", "langchain_chat", "other")
#: Parameters the scanner resolves on search call sites (more may appear, e.g. `weight`).
PARAM_NAMES = ("top", "k", "exhaustive", "filter", "query_type", "semantic_configuration",
               "vector_fields", "scoring_profile", "vector_filter_mode", "select", "search_text",
               "query_source_authorization", "fetch_k", "score_threshold", "text_k", "strictness", "in_scope")
#: Where a site runs (see `ragdiag.codescan.classify`).
SITE_CLASSES = ("request", "ingestion", "admin", "evaluation", "test", "script", "unreachable")
#: Outcomes of a resolved value (`ResolvedValue.outcome`).
OUTCOMES = ("resolved", "library_default", "unresolved")
#: What the scan knows it could not read (`Gap.kind`).
GAP_KINDS = ("unresolved_param", "http_wrapper", "unsupported_language", "unreadable_file", "llm_wrapper",
             "sql_function_missing", "unresolved_context")
#: Prompt rule kinds.
PROMPT_RULE_KINDS = ("length", "sole_input")


def jsonable(value: Any) -> Any:
    """`value` with tuples/sets as lists, mappings as dicts, records via `to_dict()`, NaN as None."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "to_dict") and dataclasses.is_dataclass(value):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, PurePath):
        return value.as_posix()
    return repr(value)


class _Record:
    """Shared helpers: `to_dict()` / `from_dict()` (one serialiser for every record), `location`."""

    #: properties written after the fields (computed, so `from_dict` ignores them)
    _derived: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The fields in declaration order, then the derived properties, JSON-safe (`jsonable`)."""
        out = {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        out.update((name, jsonable(getattr(self, name))) for name in self._derived)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """The record `to_dict()` wrote: lists back to tuples, nested records rebuilt by the field types.

        ``cls.from_dict(r.to_dict()) == r`` for every record whose `Any` fields hold JSON values
        (a tuple in an `Any` field comes back as a list); derived keys are ignored.
        """
        hints = _field_types(cls)
        return cls(**{name: _decode(tp, data[name]) for name, tp in hints.items() if name in data})

    @property
    def location(self) -> str:
        line = getattr(self, "line", None)
        path = getattr(self, "file", None) or getattr(self, "path", "")
        return f"{path}:{line}" if line else str(path)


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """The dataclass fields of `cls` and their resolved types (the annotations are strings here)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _decode(tp: Any, value: Any) -> Any:
    """`value` as `jsonable` wrote it, turned back into type `tp` (tuples, mappings, records, optionals)."""
    if value is None or tp is Any:
        return value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]
        return _decode(arms[0], value) if len(arms) == 1 else value
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        return tuple(_decode(a, v) for a, v in zip(args, value, strict=True))
    if origin in (Mapping, dict):
        return {k: _decode(args[1], v) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, _Record):
        return tp.from_dict(value)
    return value


@dataclass(frozen=True)
class ResolvedValue(_Record):
    """A parameter value as far as static analysis can tell.

    `resolved` is True when the value is fully known (a literal, a constant, a
    simple local, an f-string whose parts are all known...). When it is not,
    `value` may still carry a partial string with `{placeholders}` (Python) or
    `${placeholders}` (JS/TS) for the unknown parts, or None. `source` says
    where it came from: ``literal``, ``constant:NAME``, ``import:module.NAME``,
    ``local:NAME``, ``parameter:NAME``, ``fstring``, ``concat``, ``call:NAME``,
    ``rest_body``, ``vector_query@file:line`` (folded in from a vector query),
    ``env:NAME`` (the default of `os.getenv("NAME", "3")`), ``settings:Class.field``
    (a pydantic-settings / dataclass / model field default), ``default:NAME``
    (a function parameter's default), ``attribute:self.x``, ``library_default:...``
    (a framework's documented default, e.g. LangChain's `k=4`),
    ... `provenance` is the file:line the value was read from (the default, the
    constant, the `self.x = ...` in `__init__`), empty for a literal at the call;
    `override` says what can replace a default at run time (``env:TOP_K``,
    ``request:overrides.get('top')``, ``parameter:k``, ``constructor:top_k``),
    empty when nothing can. `from_fstring` marks strings built by interpolation (f-string,
    template literal, `str.format`, `%`) and `fstring_vars` the expressions
    they interpolate (also those of strings concatenated with variables).
    """

    _derived: ClassVar[tuple[str, ...]] = ("outcome",)

    value: Any
    resolved: bool
    source: str
    expression: str = ""
    from_fstring: bool = False
    fstring_vars: tuple[str, ...] = ()
    provenance: str = ""
    override: str = ""

    @property
    def is_default(self) -> bool:
        """A default that something else (the environment, the request, a caller) can override."""
        return bool(self.override)

    @property
    def outcome(self) -> str:
        """``resolved`` (the value and where it was read), ``library_default`` (the call is the library's
        and the argument is absent: the library's documented default applies) or ``unresolved``
        (`expression` shows what could not be followed). A check never judges an unresolved value."""
        if not self.resolved:
            return "unresolved"
        return "library_default" if self.source.startswith("library_default") else "resolved"

    def __repr__(self) -> str:
        mark = "" if self.resolved else "?"
        return f"ResolvedValue({self.value!r}{mark}, {self.source})"


@dataclass(frozen=True)
class SearchCallSite(_Record):
    """One place in the client code that sends (or builds) a retrieval request."""

    file: str
    line: int
    kind: str
    function: str
    module: str
    params: Mapping[str, ResolvedValue] = field(default_factory=dict)
    channel_vars: Mapping[str, str | None] = field(default_factory=dict)
    shared_text: bool = False
    builder: str | None = None
    language: str = "python"
    call: str = ""
    is_async: bool = False
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""

    def param(self, name: str) -> ResolvedValue | None:
        """The resolved parameter `name`, or None when the call does not pass it."""
        return self.params.get(name)

    def value(self, name: str, default: Any = None) -> Any:
        """The parameter's value when resolved, else `default`."""
        p = self.params.get(name)
        return p.value if p is not None and p.resolved else default

    def __repr__(self) -> str:
        return f"SearchCallSite({self.kind} at {self.location} in {self.function})"


@dataclass(frozen=True)
class LLMCallSite(_Record):
    """A call to a chat/response model, and whether the retrieved context it gets is bounded.

    `context_from` are the retrieval calls (file:line) whose results were traced into the prompt,
    with their count bound in `bound_evidence` when the count is all that bounds it;
    `context_unresolved` is the prompt input that could not be traced (a parameter no caller
    fills visibly, a value from another module): the context is then neither bounded nor
    unbounded as far as the code shows. `via` names the app's own client method the call goes
    through (``OpenAIClient.chat``) when the model call sits in that wrapper and this record is
    its caller. `context_calls` are the functions called to produce the prompt's inputs (matched to
    the functions holding search sites across the tree once every file is read);
    `context_accumulated` is True when those inputs grow in a loop (a count bound then holds per
    step, not for the prompt). `count_bound` is the number of results when only the searches' fixed
    result count bounds what the prompt holds (whole chunks, no token budget, no cap at the prompt):
    bounded by count, not by a budget (`context_bounded` stays False).
    """

    file: str
    line: int
    kind: str
    function: str
    context_bounded: bool
    bound_evidence: str
    context_vars: tuple[str, ...] = ()
    retrieved_context: bool = False
    output_cap: ResolvedValue | None = None
    module: str = ""
    language: str = "python"
    call: str = ""
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""
    context_from: tuple[str, ...] = ()
    context_unresolved: str = ""
    via: str = ""
    context_calls: tuple[str, ...] = ()
    context_accumulated: bool = False
    count_bound: int | None = None


@dataclass(frozen=True)
class BudgetConstant(_Record):
    """A module-level context/token/source budget constant."""

    file: str
    line: int
    name: str
    value: Any
    language: str = "python"


@dataclass(frozen=True)
class CitationCheck(_Record):
    """A function handling citations, and whether it checks them against the retrieved ids."""

    file: str
    line: int
    function: str
    validated: bool
    evidence: str
    language: str = "python"


@dataclass(frozen=True)
class PromptRule(_Record):
    """A rule in a prompt: a word-count range for a query, or "this one query feeds every stage"."""

    file: str
    line: int
    text: str
    kind: str
    min_words: int | None = None
    max_words: int | None = None

    @property
    def word_range(self) -> tuple[int | None, int | None]:
        return (self.min_words, self.max_words)


@dataclass(frozen=True)
class SecurityFilterSite(_Record):
    """Where a filter on a security field (group_ids, acl, oid, allowed_*...) is built."""

    file: str
    line: int
    function: str
    expression: str
    uses_search_in: bool
    escaped: bool
    from_identity: bool | None
    from_request: bool | None
    fstring: bool
    fields: tuple[str, ...] = ()
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""
    from_llm: bool | None = None

    @property
    def injection_risk(self) -> bool:
        """Interpolated without escaping: hostile values can widen the filter."""
        return self.fstring and not self.escaped


@dataclass(frozen=True)
class GoldsetFile(_Record):
    """A goldset-like file found in the client code (relative path).

    `kind`: ``goldset`` (questions with expected source ids),
    ``inline_sources`` (the sources are cited inside the expected answer,
    `[file.pdf#page=7]`), ``no_source_ids`` (questions and answers, no
    sources: it measures answers, not retrieval), ``questions_only``.
    Evaluation *results* are not goldsets: `CodeScan.eval_result_files`. The validation over the
    records read: `questions` (records with a question), `with_expected` (records naming their
    expected sources, or answers for a file without sources), `duplicates` (repeated questions),
    `problems` (what keeps it from measuring, in words).
    """

    path: str
    kind: str = "goldset"
    fields: tuple[str, ...] = ()
    records: int | None = None
    evidence: str = ""
    questions: int = 0
    with_expected: int = 0
    duplicates: int = 0
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skipped(_Record):
    """A file the scanner did not (fully) analyse, and why."""

    file: str
    reason: str


@dataclass(frozen=True)
class Gap(_Record):
    """Something on the code's retrieval or answer path the scanner could not read: evidence it lacks.

    `kind`: ``unresolved_param`` (a search parameter a verdict needs, e.g. the filter, is an
    expression the scanner could not follow: `detail` is the expression), ``http_wrapper`` (an
    HTTP call of the app's own client whose URL or body it could not resolve, on a path that looks
    like retrieval), ``unsupported_language`` / ``unreadable_file`` (a file that mentions retrieval
    but was not read), ``llm_wrapper`` (a model call through the app's own client whose prompt
    could not be traced), ``sql_function_missing`` (a database function called for retrieval
    whose SQL is not in the tree), ``unresolved_context`` (retrieved content reaches a prompt by a
    path the scanner could not follow). A check whose evidence has a gap never passes on it.
    """

    file: str
    line: int
    kind: str
    detail: str
    function: str = ""
    site: str = ""
    param: str = ""
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class Builder(_Record):
    """A module that builds search requests: its functions and the call sites it owns or feeds."""

    module: str
    files: tuple[str, ...]
    functions: tuple[str, ...]
    sites: tuple[str, ...]


@dataclass(frozen=True)
class Drift(_Record):
    """One parameter (or filter clause) that differs between call sites.

    `values` maps a rendered value to the call sites (file:line) using it;
    ``present``/``absent`` for clauses, ``<unset>`` for a parameter not passed.
    `kind` is ``filter_clause``, ``security_clause`` or ``param``; `role` is the
    clause's field role (``security``, ``quality``, ``recency``, ``source``,
    ``scope``, ``other``) or None for plain parameters.
    """

    param: str
    values: Mapping[str, tuple[str, ...]]
    kind: str = "param"
    role: str | None = None

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}: {len(v)}" for k, v in self.values.items())
        return f"Drift({self.param!r}: {counts})"


# ---- what real applications do besides calling `search` --------------------------------------------------
#: Permission-trimming mechanisms (`AclSite.mechanism`).
ACL_MECHANISMS = ("odata_filter", "query_source_authorization", "framework_filter", "sql_where",
                  "row_level_security")
#: Fail-open kinds (`FailOpen.kind`).
FAIL_OPEN_KINDS = ("token_error_swallowed", "retry_without_trimming", "client_can_disable", "ids_from_llm",
                   "ids_from_request", "unescaped_interpolation", "off_by_default", "dropped_when_absent",
                   "rls_bypassed")
#: Delegated retrieval kinds (`DelegatedRetrieval.kind`).
DELEGATED_KINDS = ("on_your_data", "agentic_retrieval", "vector_store", "retriever")


@dataclass(frozen=True)
class AclSite(_Record):
    """How a request is trimmed to what the caller may see.

    `mechanism`: ``odata_filter`` (a filter on a security field),
    ``query_source_authorization`` (the user's token in
    `x_ms_query_source_authorization` / the `x-ms-query-source-authorization`
    header: Azure AI Search's native document-level security),
    ``framework_filter`` (a vector store's metadata filter on a security
    field), ``sql_where`` (a WHERE or JOIN binding the caller's ids, lists or arrays),
    ``row_level_security`` (Postgres row-level security policies on the searched tables keyed on
    the caller's identity, with the caller's token or role on the connection). `enabled_by` is the
    condition that switches it on
    (``env:AZURE_ENFORCE_ACCESS_CONTROL``, ``setting:self.use_acl``,
    ``request:overrides.get('use_oid_security_filter')``), empty when it
    always applies. `site` is the search call it belongs to (file:line).
    """

    file: str
    line: int
    function: str
    mechanism: str
    detail: str
    enabled_by: str = ""
    site: str = ""
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class FailOpen(_Record):
    """A path on which a search goes out with weaker (or no) permission trimming than intended.

    `kind`: ``token_error_swallowed`` (getting the on-behalf-of / user token
    raised, the exception was swallowed and the search sent anyway),
    ``retry_without_trimming`` (a retry after a failed search drops the
    header or the security filter), ``client_can_disable`` (the request body
    switches trimming off or replaces the filter), ``ids_from_llm`` (security
    ids taken from an LLM tool-call argument), ``ids_from_request``,
    ``unescaped_interpolation`` (ids interpolated into the filter without
    escaping), ``off_by_default`` (trimming depends on a setting whose default
    is off), ``dropped_when_absent`` (the clause or header is added only when an optional
    parameter, argument or setting has a value: without it the search goes out untrimmed),
    ``rls_bypassed`` (row-level security exists but the search runs as a role that bypasses it:
    a `security definer` function, the service key).
    """

    file: str
    line: int
    function: str
    kind: str
    evidence: str
    site: str = ""
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class DelegatedRetrieval(_Record):
    """Retrieval a service or framework performs with its own settings: the app sends no search itself.

    `kind`: ``on_your_data`` (Azure OpenAI `extra_body={"data_sources": [...]}`),
    ``agentic_retrieval`` (a knowledge agent / knowledge base `retrieve`),
    ``vector_store`` (LangChain `AzureSearch`, `FAISS`, LlamaIndex, Semantic
    Kernel, Haystack stores), ``retriever``. `settings` are the values the code
    passes (`top_n_documents`, `strictness`, `in_scope`, `filter`,
    `query_type`, `k`, `fetch_k`, `score_threshold`...), `defaults` the
    framework's documented defaults that apply because they are not passed
    (LangChain `k=4`, `fetch_k=20`; On your data `top_n_documents=5`,
    `strictness=3`, `in_scope=True`).
    """

    file: str
    line: int
    function: str
    kind: str
    framework: str
    store: str = ""
    settings: Mapping[str, ResolvedValue] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    call: str = ""
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""

    def value(self, name: str, default: Any = None) -> Any:
        """The setting's value when passed and resolved, else the framework default, else `default`."""
        p = self.settings.get(name)
        if p is not None and p.resolved:
            return p.value
        return self.defaults.get(name, default)


@dataclass(frozen=True)
class ClientThreshold(_Record):
    """A score or distance cut the app applies to the hits the service returned.

    `measure`: ``reranker_score`` (`@search.rerankerScore`, 0-4, higher is
    better), ``score`` (a relevance score, higher is better), ``distance``
    (lower is better), ``unknown``. `keeps` is the side kept (``above`` /
    ``below``); `reversed` is True when that is the worse side for the
    measure, or a distance is passed where the library expects a relevance
    score (LangChain `score_threshold`). `after_top` is True when the cut
    applies to a search capped by `top`/`k`: the pool shrinks silently.
    """

    file: str
    line: int
    function: str
    field: str
    op: str
    value: ResolvedValue
    measure: str
    keeps: str
    reversed: bool = False
    after_top: bool = False
    evidence: str = ""
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class BudgetUnitIssue(_Record):
    """A context budget whose units do not add up, or that bounds only the output.

    `kind`: ``chars_from_tokens`` (a character count, `len(text)`, taken
    from a token limit), ``output_only`` (an LLM call given retrieved context
    with no input budget while `max_tokens` caps the output).
    """

    file: str
    line: int
    function: str
    kind: str
    expression: str
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class AgentGraph(_Record):
    """An agentic retrieval loop (a LangGraph `StateGraph`): which nodes search, rewrite, and what bounds the loop.

    `unsecured_search_nodes` search without the identity's security clause;
    `rewrite_nodes_touching_filters` rebuild or drop filter state while they
    "improve" the query; `loop_limit` is the evidence of a bound (a
    `recursion_limit`, an iteration counter compared in a conditional edge),
    empty when none is visible; `loop_limit_effective` is False when the
    counter the router compares is never advanced by a node on the loop (the
    bound never trips), None without a loop; `filter_logged` says whether a search node
    logs its filter (or its hash) with the search text.
    """

    file: str
    line: int
    function: str
    framework: str
    nodes: Mapping[str, str] = field(default_factory=dict)
    search_nodes: tuple[str, ...] = ()
    unsecured_search_nodes: tuple[str, ...] = ()
    rewrite_nodes: tuple[str, ...] = ()
    rewrite_nodes_touching_filters: tuple[str, ...] = ()
    has_cycle: bool = False
    loop_limit: str = ""
    loop_limit_effective: bool | None = None
    filter_logged: bool = False
    language: str = "python"
    cell: str = ""
    site_class: str = "request"
    class_reason: str = ""


@dataclass(frozen=True)
class FrontendDefault(_Record):
    """A retrieval setting the frontend holds and sends with every request (React state, a form default)."""

    file: str
    line: int
    name: str
    value: ResolvedValue
    sent_as: str = ""
    language: str = "typescript"
    site_class: str = "request"
    class_reason: str = ""
