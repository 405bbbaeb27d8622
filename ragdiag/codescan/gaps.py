"""What the scan knows it does not know: the gaps derived from the sites and the skipped files.

The scanners record the gaps they meet while reading a file (an HTTP call of the app's own
wrapper whose URL they cannot resolve, a model call whose prompt they cannot trace). Two more
kinds are derived here, once the whole tree is read:

* ``unresolved_param``: a search site whose filter (the parameter trimming and drift verdicts
  rest on), body, `top` or `k` is an expression the resolver could not follow. Values known per
  caller but different between callers (source ``callers``) are not gaps: they are known;
* ``unsupported_language`` / ``unreadable_file``: a file the scanner skipped (a language it
  does not read, a syntax error, a file too large or not UTF-8) whose text mentions retrieval.

A gap carries the file:line and the expression, so a check can say exactly what it could not
resolve instead of passing on what it could.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import Gap, SearchCallSite, Skipped

__all__ = ["derive_gaps"]

#: Parameters whose unresolved value leaves a verdict open (filter: trimming and drift; top/k: pools).
GAP_PARAMS = ("filter", "body", "top", "k")
#: Words that make a skipped file matter: it may hold retrieval or its prompt.
_RETRIEVAL_TEXT = re.compile(r"search|retriev|vector|embedding|similarity|knn|docs/search|pgvector|"
                             r"chat/completions|openai", re.I)
_NOT_SOURCE = ("binary file", "minified or bundled")


def _unresolved(site: SearchCallSite) -> Iterable[tuple[str, str]]:
    for name in GAP_PARAMS:
        p = site.params.get(name)
        if p is None or p.resolved or p.source == "callers":
            continue
        if name == "filter" and (isinstance(p.value, str) or C.SECURITY_NAME_RE.search(p.expression or "")):
            continue  # a partly known string keeps its clauses; a helper named like a security filter is one
        if name in ("top", "k") and p.override and p.value is not None:
            continue
        yield name, p.expression or p.source


def derive_gaps(project: Any, sites: Iterable[SearchCallSite], skipped: Iterable[Skipped]) -> list[Gap]:
    """Gaps of unresolved search parameters and of skipped files that mention retrieval."""
    out: list[Gap] = []
    for s in sites:
        for name, expr in _unresolved(s):
            out.append(Gap(file=s.file, line=s.line, kind="unresolved_param", param=name,
                           detail=f"{name}: {expr}"[:240], function=s.function, site=s.location,
                           language=s.language, cell=s.cell))
    for sk in skipped:
        if any(sk.reason.startswith(x) for x in _NOT_SOURCE):
            continue
        text = project.read_text(sk.file) if not sk.reason.startswith(("larger than", "unreadable")) else None
        if text is not None and not _RETRIEVAL_TEXT.search(text):
            continue
        kind = "unsupported_language" if sk.reason.startswith("unsupported language") else "unreadable_file"
        out.append(Gap(file=sk.file, line=1, kind=kind, detail=sk.reason[:240], language=""))
    return out


def _count(site: SearchCallSite) -> tuple[int | None, str, str]:
    """(how many results a site returns when known, else None; the expression when not; what overrides it)."""
    for name in ("top", "k"):
        p = site.params.get(name)
        if p is None:
            continue
        if p.resolved and isinstance(p.value, int) and not isinstance(p.value, bool):
            return p.value, "", p.override
        return None, f"{name}: {p.expression or p.source}", p.override
    return None, "no top or k passed", ""


_STATE_READ = re.compile(r"\bstate\s*(?:\.\s*(\w+)|\[\s*[\"'](\w+)[\"']\s*\])")


def _state_reducer(project: Any, c: Any) -> str:
    """Where a graph-state field the prompt's function reads is declared with a reducer (`documents:
    Annotated[list[Document], reduce_docs]`, LangGraph.js `Annotation<T>({reducer})`): it accumulates over the
    graph's steps, so no per-search count bounds it. "" when none is (or the file cannot be read)."""
    text = project.read_text(c.file) if project is not None else None
    if not text:
        return ""
    lines = text.splitlines()
    start = c.line - 1
    while start > 0 and not re.match(r"\s*(async\s+)?(def|function)\b|\s*(export\s+)?(async\s+)?function\b",
                                     lines[start]):
        start -= 1
    fields = {a or b for a, b in _STATE_READ.findall("\n".join(lines[start:c.line]))}
    if not fields:
        return ""
    for rel in project.files:
        if not rel.endswith((".py", ".ts", ".js")):
            continue
        src = project.read_text(rel) or ""
        if "Annotated[" not in src and "reducer" not in src:
            continue
        for f in sorted(fields):
            m = re.search(rf"^\s*{f}\s*:\s*Annotated\[[^\n]*,\s*[\w.]+\s*\]", src, re.M) or \
                re.search(rf"\b{f}\s*:\s*Annotation<[^\n]*>\(\s*\{{[^}}]*\breducer\b", src, re.S)
            if m:
                return f"the graph state's {f} ({rel}:{src.count(chr(10), 0, m.start()) + 1}) has a reducer"
    return ""


def trace_context(llm_calls: list[Any], sites: list[SearchCallSite],
                  project: Any = None) -> tuple[list[Any], list[Gap]]:
    """Follow each model call's prompt back to the searches that fill it (here and one call away, across
    files); a prompt filled by searches of a fixed result count is bounded by count (`count_bound`),
    one whose count the request sets or that grows over a loop of searches is not, and a count the
    scanner cannot resolve is a gap.

    The scanners record the sites whose results feed a prompt in the same file (`context_from`) and the
    functions called to produce its inputs (`context_calls`); a function of that name holding a search
    site anywhere in the tree is followed (matched by name, as the call graph is)."""
    import dataclasses

    by_loc = {s.location: s for s in sites}
    by_func: dict[str, list[SearchCallSite]] = {}
    for s in sites:
        by_func.setdefault(s.function.rsplit(".", 1)[-1], []).append(s)
    out: list[Any] = []
    gaps: list[Gap] = []
    for c in llm_calls:
        found = [by_loc[loc] for loc in c.context_from if loc in by_loc]
        for name in c.context_calls:
            found += [s for s in by_func.get(name, ()) if s.location not in c.context_from]
        found = list({s.location: s for s in found}.values())
        if not found and c.retrieved_context and sites and not (c.context_bounded or c.context_accumulated
                                                                or c.context_unresolved):
            # retrieved content by its name (`retrievedDocs`, `docs`) that no search of the tree is traced into (graph
            # state, a store read elsewhere): how many results it holds is not known, so neither bound nor its absence
            grows = _state_reducer(project, c)
            if grows:  # what the searches add accumulates over the graph's steps: no count bounds the prompt
                out.append(dataclasses.replace(c, bound_evidence=f"{grows}: the retrieved documents accumulate over "
                                                                 f"the graph's steps, no count bounds them"[:300]))
                continue
            why = "retrieved content reaches the prompt by a path not traced to any search call site: its size is not known"
            out.append(dataclasses.replace(c, context_unresolved=why, bound_evidence=why))
            gaps.append(Gap(file=c.file, line=c.line, kind="unresolved_context", function=c.function, detail=why,
                            site=c.location, language=c.language, cell=c.cell))
            continue
        if not found:
            out.append(c)
            continue
        froms = tuple(s.location for s in found)
        counts = [(_count(s), s) for s in found]
        unknown = [f"{s.location} ({why})" for (n, why, _o), s in counts if n is None]
        # a count the request sets, or a fallback an unknown run-time expression replaces (`ctx?.top ? Number(ctx.top)
        # : 3`), is no fixed bound; a count the deployment configures (env, settings) or a caller passes is one
        requested = [f"{s.location} ({o})" for (n, _w, o), s in counts if n is not None
                     and o.startswith(("request", "expression"))]
        change: dict[str, Any] = {"context_from": froms, "retrieved_context": True}
        if c.context_bounded:
            pass
        elif c.context_accumulated:
            change["bound_evidence"] = (f"the results of {', '.join(froms[:3])} accumulate over a loop of searches: "
                                        f"a count bound holds per search, not for the prompt")
        elif unknown:
            change["context_unresolved"] = "result count not known: " + "; ".join(unknown)[:240]
            change["bound_evidence"] = change["context_unresolved"]
            gaps.append(Gap(file=c.file, line=c.line, kind="unresolved_context", function=c.function,
                            detail=change["context_unresolved"], site=c.location, language=c.language,
                            cell=c.cell))
        elif requested:
            change["bound_evidence"] = "the request or a run-time expression sets the result count: " + \
                "; ".join(requested)[:200]
        else:
            total = sum(n for (n, _w, _o), _s in counts if n is not None)
            change["count_bound"] = total
            change["bound_evidence"] = ("only by the result count: " + ", ".join(
                f"the {n} results of {s.location}" for (n, _w, _o), s in counts)
                + " (whole chunks, no token budget)")[:300]
        out.append(dataclasses.replace(c, **change))
    return out, gaps
