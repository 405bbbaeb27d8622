"""Static analysis of a client's RAG code: where it searches, with what, and what it does with the hits.

The client's code is read, never imported or executed: Python through `ast`,
JavaScript/TypeScript through tree-sitter, prompt files as text.

    from ragdiag.codescan import scan_path
    scan = scan_path("client_app")
    scan.search_calls          # SearchCallSite: kind, file:line, params (ResolvedValue), channel_vars
    scan.builders()            # modules building search requests (one is the goal)
    scan.drift()               # filter clauses / security clause / top / k / exhaustive differing by path
    scan.llm_calls             # LLMCallSite: is the retrieved context bounded, and by what
    scan.citation_checks       # are cited ids checked against the retrieved ids
    scan.prompt_rules          # "2 to 7 words", "SOLE input to ALL THREE stages"; scan.contradictions()
    scan.security_filters      # how security filters are built (f-string from request data? escaped?)
    scan.goldset_files         # a measuring stick, if the client has one
    scan.skipped               # files not analysed, with the reason

Used by the checks `prerank_filters`, `shared_query_text`, `call_sites`,
`context_budgets`, `acl_trimming` and `goldset`.
"""

from __future__ import annotations

from ragdiag.codescan.model import (
    LLM_KINDS,
    PARAM_NAMES,
    SEARCH_KINDS,
    BudgetConstant,
    Builder,
    CitationCheck,
    Drift,
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
    "BudgetConstant",
    "Builder",
    "CitationCheck",
    "CodeScan",
    "Drift",
    "GoldsetFile",
    "LLMCallSite",
    "PromptRule",
    "ResolvedValue",
    "SearchCallSite",
    "SecurityFilterSite",
    "Skipped",
    "contradictions",
    "prompt_rules",
    "scan_path",
]
