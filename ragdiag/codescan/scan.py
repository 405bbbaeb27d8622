"""Walk a client's code tree and collect everything the checks need; `CodeScan` holds the result.

    scan = scan_path(Path("client_app"))
    scan.summary()                 # counts and the headline facts, JSON-safe
    scan.builders()                # modules building search requests (check 7: centralisation)
    scan.drift()                   # parameters / filter clauses that differ between call sites
    scan.contradictions()          # prompt length rules that disagree (check 4)

The client's code is only read, never imported or executed. Files are visited
in sorted order, so the result is deterministic. A file that cannot be read
or parsed lands in `skipped` with the reason; the scan never raises for a bad
file.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import scanner_for
from ragdiag.codescan.model import (
    Gap,
    ResolvedValue,
    Skipped,
)
from ragdiag.codescan.prompts import is_prompt_file, prompt_rules
from ragdiag.codescan.tree import CodeUnreadable, check_root, read_code, walk
from ragdiag.errors import InputDataError

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hg", ".svn", ".next",
                       ".idea", ".vscode", "site-packages"})
#: Source files that may hold retrieval code but that the scanner cannot read: reported as skipped.
UNSUPPORTED_SUFFIXES = (".java", ".cs", ".go", ".rb", ".php", ".kt", ".scala", ".rs", ".vue", ".svelte",
                        ".swift", ".fs", ".r")
#: Call-site kinds that send Azure AI Search requests (compared by `drift`).
AZURE_KINDS = ("azure_search", "rest_search")


def _kind_of(rel: str) -> str | None:
    """The language scanner's name for `rel`, ``unsupported``, ``prompt`` or None (not a file to read)."""
    scanner = scanner_for(rel)
    if scanner is not None:
        return scanner.name
    lower = rel.lower()
    if lower.endswith(UNSUPPORTED_SUFFIXES):
        return "unsupported"
    if is_prompt_file(rel.rsplit("/", 1)[-1]):
        return "prompt"
    return None


def list_files(root: Path) -> list[str]:
    """Relative POSIX paths of the regular files under `root` (sorted), skipping vendored/build
    folders; symlinks, FIFOs, devices and unreadable folders are left out (`tree.walk` says why)."""
    return walk(root, skip_dirs=SKIP_DIRS).files


def scan_file(project: C.Project, rel: str) -> C.FileResult:
    """Scan one file of `project`; never raises (problems become `Skipped`)."""
    kind = _kind_of(rel)
    if kind is None:
        return C.FileResult(scanned=False)
    result = C.FileResult(scanned=False)
    if kind == "unsupported":
        result.skipped.append(Skipped(rel, f"unsupported language ({Path(rel).suffix}): not scanned"))
        return result
    path = project.root / rel
    # a notebook's size is mostly its outputs (images, tables): only the code cells are read
    limit = project.max_file_bytes * (25 if kind == "notebook" else 1)
    try:
        data = read_code(path, limit)  # a regular file, never a symlink, FIFO or device
    except CodeUnreadable as exc:
        result.skipped.append(Skipped(rel, exc.reason))
        return result
    if b"\x00" in data[:8192]:
        result.skipped.append(Skipped(rel, "binary file"))
        return result
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.skipped.append(Skipped(rel, f"not UTF-8 (invalid byte at offset {exc.start})"))
        return result
    if text.startswith("\ufeff"):
        text = text[1:]
    if kind == "js" and _bundled(rel, text):
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, "minified or bundled build output: not the client's source"))
        return result
    try:
        scanner = scanner_for(rel) if kind != "prompt" else None
        if scanner is not None:
            result = scanner.scan(project, rel, text)
            if scanner.name in ("python", "js"):
                result.functions = _graph_nodes(scanner.name, rel, text)
            return result
        result = C.FileResult(scanned=True)
        result.prompt_rules.extend(prompt_rules(text, file=rel))
        return result
    except Exception as exc:  # noqa: BLE001 - a bad file must never stop the scan
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"analysis error: {type(exc).__name__}: {exc}"[:300]))
        return result


def _call_graph(project: C.Project, merged: C.FileResult) -> Any:
    """The call graph of the whole tree, from the nodes each file yielded while it was scanned (no second read)."""
    from ragdiag.codescan.reach import CallGraph, langgraph_entries

    served: list[str] = []
    for rel in project.files:
        if rel.rsplit("/", 1)[-1] == "langgraph.json":
            text = project.read_text(rel)
            base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
            served.extend(base + f for f in langgraph_entries(text or ""))
    return CallGraph(list(merged.functions), tuple(served))


def _bundled(rel: str, text: str) -> bool:
    """A minified bundle (`*.min.js`, `static/assets/index-3f2a.js`, lines of thousands of characters)."""
    if ".min." in rel or re.search(r"(^|/)(static/assets|assets/index-|public/build)/?", rel):
        return True
    head = text[:20000]
    return any(len(line) > 2500 for line in head.split("\n", 40)[:40])


def _graph_nodes(kind: str, rel: str, text: str) -> list[Any]:
    from ragdiag.codescan.reach import js_graph, python_graph

    if kind == "python":
        return python_graph(rel, text)
    if kind == "js" and not _bundled(rel, text):
        return js_graph(rel, text)
    return []


#: Allocations between two young collections of the cyclic garbage collector while a scan runs (CPython's default: 700).
GC_YOUNG_THRESHOLD = 10_000


@contextmanager
def _rarer_collections() -> Iterator[None]:
    """Young garbage collections made rarer for the scan's duration (the thresholds are restored after).

    A scan allocates millions of short-lived AST nodes while the modules it resolves against stay
    parsed; at CPython's default threshold (700) the collector runs every few hundred nodes, promotes
    nodes that are about to die anyway and re-traverses the live modules again and again: about a
    quarter of the scan's CPU time on langchain-community. At 10,000 the peak memory is the same
    (the nodes are freed by reference counting); nothing is disabled and no result changes."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


# ---- parallel workers ---------------------------------------------------------------------

_WORKER_PROJECT: C.Project | None = None


def _init_worker(root: str, files: list[str], max_file_bytes: int, check_syntax: bool) -> None:
    global _WORKER_PROJECT
    _WORKER_PROJECT = C.Project(Path(root), files, max_file_bytes, check_syntax)
    old = gc.get_threshold()  # a worker process does nothing but scan (see `_rarer_collections`)
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), old[1], old[2])


def _worker_scan(rel: str) -> C.FileResult:
    assert _WORKER_PROJECT is not None
    return scan_file(_WORKER_PROJECT, rel)


def scan_path(root: str | os.PathLike[str], *, max_file_bytes: int = 1_000_000,
              workers: int = 1, check_syntax: bool = False) -> CodeScan:
    """Scan the code tree at `root` (a folder, or a single file).

    `workers` > 1 scans files in that many processes (worth it above a few
    thousand files); the result is the same and in the same order.
    Python files containing no trigger word at all (nothing the scanner looks
    for could be in them) are not parsed, so a syntax error in such a file is
    not reported; `check_syntax=True` parses every file and reports them all.
    """
    with _rarer_collections():
        return _scan_path(root, max_file_bytes, workers, check_syntax)


def _scan_path(root: str | os.PathLike[str], max_file_bytes: int, workers: int, check_syntax: bool) -> CodeScan:
    base = Path(root)
    tree = None
    if base.is_file():
        check_root(base)
        files = [base.name]
        base = base.parent
    elif base.is_dir():
        check_root(base)  # an unreadable root is an error, never an empty code base
        tree = walk(base, skip_dirs=SKIP_DIRS)
        files = tree.files
    else:
        raise InputDataError("client code folder not found: give the folder holding the client's code",
                             path=str(root))
    project = C.Project(base, files, max_file_bytes, check_syntax)
    candidates = [f for f in files if _kind_of(f) is not None]
    if workers > 1 and len(candidates) >= 2 * workers:
        from concurrent.futures import ProcessPoolExecutor

        chunk = max(1, min(64, len(candidates) // (workers * 4)))
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                                 initargs=(str(base), files, max_file_bytes, check_syntax)) as pool:
            results = list(pool.map(_worker_scan, candidates, chunksize=chunk))
    else:
        results = [scan_file(project, rel) for rel in candidates]
    merged = C.FileResult()
    if tree is not None:  # what the walk did not read: symlinks, FIFOs, devices, unreadable folders
        merged.skipped.extend(tree.skipped)
    scanned = 0
    for res in results:
        scanned += res.scanned
        for name in _MERGED:
            getattr(merged, name).extend(getattr(res, name))
    from ragdiag.codescan.goldsets import classify_goldsets

    _callers_pass_request_data(merged)
    graph = _call_graph(project, merged)
    from ragdiag.codescan.callers_across import request_ids_from_callers, resolve_from_callers

    resolve_from_callers(project, merged, graph)  # k, top, filter, query text passed by other modules' callers
    request_ids_from_callers(project, merged, graph)  # security ids callers take from the request
    from ragdiag.codescan.js_agents import js_agent_graphs

    js_agent_graphs(project, merged, graph)  # LangGraph.js graphs, their search nodes judged across files
    goldset, eval_results = classify_goldsets(base, project) if (len(files) > 1 or base.is_dir()) else ((), ())

    def order(items: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(sorted((_classified(r, graph) for r in items),
                            key=lambda r: (r.file, r.line, getattr(r, "kind", ""))))

    from ragdiag.codescan.gaps import derive_gaps, trace_context

    llm_calls, context_gaps = trace_context(_through_wrappers(merged), merged.search_calls, project)
    gaps = [*merged.gaps, *derive_gaps(project, merged.search_calls, merged.skipped), *context_gaps]

    return CodeScan(
        root=base.as_posix(), files_scanned=scanned,
        search_calls=order(merged.search_calls), vector_queries=order(merged.vector_queries),
        llm_calls=order(llm_calls), budget_constants=order(merged.budget_constants),
        citation_checks=order(merged.citation_checks), prompt_rules=order(merged.prompt_rules),
        security_filters=order(merged.security_filters), goldset_files=tuple(goldset),
        skipped=tuple(sorted(merged.skipped, key=lambda s: s.file)),
        acl_sites=order(merged.acl_sites), fail_open=order(merged.fail_open), delegated=order(merged.delegated),
        thresholds=order(merged.thresholds), budget_units=order(merged.budget_units),
        agent_graphs=order(merged.agent_graphs), frontend_defaults=order(merged.frontend_defaults),
        eval_result_files=tuple(eval_results), gaps=order(gaps))


_MERGED = ("search_calls", "vector_queries", "llm_calls", "budget_constants", "citation_checks", "prompt_rules",
           "security_filters", "skipped", "acl_sites", "fail_open", "delegated", "thresholds", "budget_units",
           "agent_graphs", "frontend_defaults", "functions", "arg_origins", "gaps", "llm_wrappers")


def _through_wrappers(merged: C.FileResult) -> list[Any]:
    """Model calls through the app's own client: keep the callers of a wrapper, judge them, not the wrapper.

    A wrapper is a function whose model call's prompt is one of its parameters (`def
    get_chat_completion(self, messages): return self.client.chat.completions.create(messages=messages)`).
    The scanners record every call that may go through such a client (`kind="app_client"`, `via` the
    method name); those whose name matches a wrapper anywhere in the tree are model calls, given the
    wrapper's kind and name (`via` = its qualified name), the rest are dropped. A wrapper with callers
    is not judged itself (its prompt is theirs); one without any keeps its `context_unresolved` gap."""
    import dataclasses

    wrappers: dict[str, tuple[str, str, int]] = {}
    for name, qual, file, line in merged.llm_wrappers:
        wrappers.setdefault(name, (qual, file, line))
    kinds = {(c.file, c.line): c.kind for c in merged.llm_calls if c.kind != "app_client"}
    called: set[str] = set()
    out: list[Any] = []
    for c in merged.llm_calls:
        if c.kind != "app_client":
            out.append(c)
            continue
        hit = wrappers.get(c.via)
        if hit is None or (c.file, c.function.rsplit(".", 1)[-1]) == (hit[1], c.via):
            continue
        called.add(c.via)
        out.append(dataclasses.replace(c, kind=kinds.get((hit[1], hit[2]), "other"), via=f"{hit[0]} ({hit[1]}:{hit[2]})"))
    final = []
    for c in out:
        name = c.function.rsplit(".", 1)[-1]
        if c.context_unresolved.startswith("the prompt is the parameter") and name in called:
            c = dataclasses.replace(c, context_unresolved="", retrieved_context=False,
                                    bound_evidence="the app's model client: its callers' prompts are judged at their calls")
        elif c.context_unresolved.startswith("the prompt is the parameter"):
            merged.gaps.append(Gap(file=c.file, line=c.line, kind="llm_wrapper", function=c.function,
                                   detail=c.context_unresolved + "; no caller of it was found in the tree",
                                   site=c.location, language=c.language, cell=c.cell))
        final.append(c)
    return final


def _callers_pass_request_data(merged: C.FileResult) -> None:
    """A site whose filter (or token) is a parameter its callers fill from the request: client-controllable."""
    from ragdiag.codescan.model import FailOpen

    by_callee: dict[tuple[str, str], list[Any]] = {}
    for origin in merged.arg_origins:
        by_callee.setdefault((origin[0], origin[1]), []).append(origin)
    if not by_callee:
        return
    seen = {(f.site, f.kind) for f in merged.fail_open}
    for site in merged.search_calls:
        for key in ("filter", "query_source_authorization"):
            p = site.params.get(key)
            if p is None or not p.source.startswith("parameter:"):
                continue
            param = p.source.split(":", 1)[1]
            kw = "x_ms_query_source_authorization" if key == "query_source_authorization" else param
            callers = by_callee.get((site.function.rsplit(".", 1)[-1], kw), [])
            if callers and (site.location, "client_can_disable") not in seen:
                c = callers[0]
                seen.add((site.location, "client_can_disable"))
                merged.fail_open.append(FailOpen(
                    file=site.file, line=site.line, function=site.function, kind="client_can_disable",
                    evidence=f"{key} is the parameter {param}; {c[2]}:{c[3]} ({c[4]}) passes {c[5]} from the request",
                    site=site.location, language=site.language))


def _classified(rec: Any, graph: Any) -> Any:
    """`rec` with its `site_class` / `class_reason` set (records without those fields unchanged)."""
    if not hasattr(rec, "site_class"):
        return rec
    from ragdiag.codescan.classify import classify

    params = getattr(rec, "params", None) or {}
    text = params.get("search_text")
    # Only a text every request sends classes a site as listing the index: a default something else can
    # replace (`q if q else ""`, `x or "*"`) says nothing about what the request path sends.
    query = text.value if text is not None and text.resolved and not text.override else None
    if query is None and text is not None and text.resolved and text.source == "callers":
        query = ""  # every caller sends no query text (`undefined`, None): the search lists the index
    cls, why = classify(rec.file, getattr(rec, "function", "<module>"), rec.line, graph,
                        search_text=query,
                        call=getattr(rec, "call", ""), vector="k" in params)
    return dataclasses.replace(rec, site_class=cls, class_reason=why)


from ragdiag.codescan.result import CodeScan  # noqa: E402  (re-exported)

__all__ = ["CodeScan", "ResolvedValue", "list_files", "scan_file", "scan_path"]
