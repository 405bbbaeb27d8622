"""Static analysis of a client's RAG code: where it searches, with what, and what it does with the hits.

The client's code is read, never imported or executed: Python through `ast`,
JavaScript/TypeScript through tree-sitter, Jupyter notebooks' code cells as
Python, prompt files as text. Each language is a `LanguageScanner` on one
shared resolution core (`core.py`); values carry their provenance (the
file:line of the default or definition) and what overrides them.

    from ragdiag.codescan import scan_path
    scan = scan_path("client_app")
    scan.search_calls          # SearchCallSite: kind, file:line, params (ResolvedValue), channel_vars
    scan.builders()            # modules building search requests (one is the goal)
    scan.drift()               # filter clauses / security clause / top / k / exhaustive differing by path
    scan.llm_calls             # LLMCallSite: is the retrieved context bounded, and by what
    scan.citation_checks       # are cited ids checked against the retrieved ids
    scan.prompt_rules          # "2 to 7 words", "SOLE input to ALL THREE stages"; scan.contradictions()
    scan.security_filters      # how security filters are built (f-string from request data? escaped?)
    scan.goldset_files         # a measuring stick, if the client has one (with its kind)
    scan.eval_result_files     # evaluation results, which are not goldsets
    scan.skipped               # files not analysed, with the reason

Every site has a `site_class` (request, ingestion, admin, evaluation, test,
script); `builders()`, `drift()`, `centralisation()` and `acl()` look at the
request path unless given `scope="all"`. What real applications do besides
calling `search`:

    scan.acl_sites             # AclSite: OData security filter, the user's token (x-ms-query-source-
                               #   authorization), a framework filter; what switches it on
    scan.fail_open             # FailOpen: swallowed token errors, retries without trimming, client-
                               #   controllable trimming, ids from LLM arguments, off by default...
    scan.delegated             # DelegatedRetrieval: On your data, agentic retrieval, vector stores,
                               #   with their settings and the framework defaults that apply
    scan.thresholds            # ClientThreshold: score/distance cuts after top, and their direction
    scan.budget_units          # BudgetUnitIssue: characters taken from tokens; output-only caps
    scan.agent_graphs          # AgentGraph: LangGraph loops, unsecured search nodes, loop bounds
    scan.frontend_defaults     # FrontendDefault: UI state sent with every request

Used by the checks `prerank_filters`, `shared_query_text`, `call_sites`,
`context_budgets`, `acl_trimming` and `goldset`.
"""

from __future__ import annotations

from ragdiag.codescan.core import LanguageScanner
from ragdiag.codescan.model import (
    LLM_KINDS,
    PARAM_NAMES,
    SEARCH_KINDS,
    SITE_CLASSES,
    AclSite,
    AgentGraph,
    BudgetConstant,
    BudgetUnitIssue,
    Builder,
    CitationCheck,
    ClientThreshold,
    DelegatedRetrieval,
    Drift,
    FailOpen,
    FrontendDefault,
    GoldsetFile,
    LLMCallSite,
    PromptRule,
    ResolvedValue,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
)
from ragdiag.codescan.prompts import contradictions, prompt_rules
from ragdiag.codescan.scan import CodeScan, scan_path

__all__ = [
    "LLM_KINDS",
    "PARAM_NAMES",
    "SEARCH_KINDS",
    "SITE_CLASSES",
    "AclSite",
    "AgentGraph",
    "BudgetConstant",
    "BudgetUnitIssue",
    "Builder",
    "CitationCheck",
    "ClientThreshold",
    "CodeScan",
    "DelegatedRetrieval",
    "Drift",
    "FailOpen",
    "FrontendDefault",
    "GoldsetFile",
    "LLMCallSite",
    "LanguageScanner",
    "PromptRule",
    "ResolvedValue",
    "SearchCallSite",
    "SecurityFilterSite",
    "Skipped",
    "contradictions",
    "prompt_rules",
    "scan_path",
]
