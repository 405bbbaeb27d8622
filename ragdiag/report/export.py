"""Exporting the executed report notebook: standalone HTML (nbconvert) and PDF (WeasyPrint or
Debian's chromium), and the PDF's text for checks.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from ragdiag.errors import MissingDependencyError, RagdiagError
from ragdiag.report.format import _e

PDF_ENGINES: tuple[str, ...] = ("weasyprint", "chromium")

PRINT_CSS = """
@page {
  size: A4;
  margin: 16mm 14mm 16mm 14mm;
  @bottom-right { content: counter(page); font-family: "DejaVu Sans", sans-serif; font-size: 8pt;
                  color: #57606a; }
  @bottom-left { content: string(rd-doc-title); font-family: "DejaVu Sans", sans-serif;
                 font-size: 8pt; color: #57606a; }
}
@page landscape { size: A4 landscape; margin: 14mm 14mm 14mm 14mm; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "DejaVu Sans", "Liberation Sans", Helvetica, Arial, sans-serif; font-size: 10pt;
       line-height: 1.4; color: #1f2328; max-width: 64em; margin: 1.5em auto; padding: 0 1em; }
h1, h2, h3, h4, h5 { line-height: 1.2; break-after: avoid; page-break-after: avoid; }
h1.rd-doc-title { font-size: 22pt; margin: 1.2em 0 0.2em; string-set: rd-doc-title content(); }
h2 { font-size: 15pt; border-bottom: 2px solid #d0d7de; padding-bottom: 0.15em; margin-top: 0.2em; }
h3 { font-size: 11.5pt; margin: 0.9em 0 0.3em; }
h4 { font-size: 10pt; margin: 0.7em 0 0.25em; }
h5 { font-size: 9pt; margin: 0.6em 0 0.2em; }
p { margin: 0.3em 0 0.5em; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 90%; }
a { color: #0b5cad; text-decoration: none; }
.rd-subtitle { font-size: 14pt; color: #57606a; margin: 0 0 0.4em; }
.rd-date { color: #57606a; margin-bottom: 1.4em; }
.rd-verdict { font-size: 12pt; line-height: 1.45; background: #f6f8fa; border-left: 5px solid #6e7781;
              padding: 0.6em 0.9em; margin: 0.8em 0 1.2em; }
.rd-verdict-fail { border-left-color: #cf222e; } .rd-verdict-warn { border-left-color: #9a6700; }
.rd-verdict-pass { border-left-color: #1a7f37; } .rd-verdict-error { border-left-color: #8250df; }
h2.rd-prio-head { border-bottom: none; font-size: 13pt; margin-top: 0.8em; }
ol.rd-prios { padding-left: 1.4em; margin: 0.3em 0 0.6em; }
li.rd-prio { margin: 0 0 0.8em; font-size: 11pt; break-inside: avoid; }
.rd-prio-effect { font-size: 10pt; }
.rd-prio-from { font-size: 8.5pt; color: #57606a; }
.rd-about { margin-top: 2.5em; font-size: 8pt; color: #57606a; border-top: 1px solid #d0d7de; padding-top: 0.4em; }
.rd-title-page { break-after: page; page-break-after: always; }
.rd-summary { }  /* the details follow on the same page: a summary spilling a few lines left a near-empty page */
.rd-appendix { break-before: page; page-break-before: always; }
h2.rd-part { font-size: 17pt; }
.rd-check { margin-top: 1.4em; }
.rd-check h2 { border-top: 3px solid #d0d7de; border-bottom: none; padding-top: 0.35em; }
.rd-kicker { color: #57606a; font-size: 8pt; margin: 0; text-transform: uppercase; letter-spacing: 0.04em;
             break-after: avoid; }
.rd-client { font-size: 10.5pt; font-weight: bold; }
.rd-why { font-size: 9pt; color: #3d444d; }
.rd-headline li { margin: 0.1em 0; }
.rd-note { color: #57606a; font-size: 8pt; font-style: italic; margin: 0.1em 0 0.4em; }
.rd-rule, .rd-remediation { background: #f6f8fa; border-left: 3px solid #d0d7de; padding: 0.3em 0.6em; font-size: 9pt; }
.rd-method { break-inside: auto; }
table.rd-meta { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 9.5pt; }
table.rd-meta th { text-align: left; padding: 2px 1.2em 2px 0; color: #57606a; font-weight: normal; vertical-align: top; }
table.rd-meta td { padding: 2px 0; }
table.rd-table { border-collapse: collapse; width: auto; max-width: 100%; font-size: 8pt;
                 margin: 0.3em 0 0.5em; }
table.rd-summary-table { width: 100%; font-size: 9pt; table-layout: fixed; }
table.rd-summary-table td { padding: 4px 5px; }
table.rd-table.rd-mid { font-size: 7.5pt; width: 100%; }
table.rd-table.rd-wide { font-size: 6.8pt; width: 100%; }
table.rd-table.rd-folded { font-size: 6.5pt; width: 100%; }
table.rd-table.rd-folded td { padding: 1px 3px; white-space: nowrap; overflow-wrap: normal; }
table.rd-table.rd-folded { width: auto; }
table.rd-table th, table.rd-table td { border-bottom: 1px solid #d0d7de; padding: 2px 4px;
  text-align: left; vertical-align: top; overflow-wrap: break-word; word-break: normal; }
table.rd-table th { background: #f6f8fa; font-weight: bold; overflow-wrap: normal; }
table.rd-table th.rd-num { text-align: right; }
table.rd-table td.rd-num { text-align: right; white-space: nowrap; padding-left: 10px; }
table.rd-table th.rd-num { padding-left: 10px; }
table.rd-table.rd-fixed { table-layout: fixed; width: 100%; }
table.rd-table td.rd-nw { overflow-wrap: normal; }
table.rd-table .rd-gap { border: none; background: none; width: 1.2em; padding: 0; }
table.rd-table thead { display: table-header-group; }
table.rd-table tr { break-inside: avoid; page-break-inside: avoid; }
table.rd-metrics td.rd-num { padding-right: 1.2em; }
.rd-summary-table td.rd-st { white-space: nowrap; }
.rd-summary-table td.rd-eff { font-size: 8pt; }
.rd-landscape { page: landscape; }
figure.rd-figure { margin: 0.5em 0; text-align: center; break-inside: avoid; page-break-inside: avoid; }
figure.rd-figure img { max-width: 88%; max-height: 72mm; }
ul { margin: 0.2em 0 0.5em; padding-left: 1.4em; }
li { margin: 0.15em 0; }
.rd-refs { font-size: 8pt; overflow-wrap: anywhere; }
.rd-refs-head { font-size: 8.5pt; margin-bottom: 0; }
@media print { body { max-width: none; margin: 0; padding: 0; font-size: 9.5pt; } a { color: inherit; text-decoration: none; } }
"""


def _report_notebook(nb: Any) -> Any:
    """A copy without stream and error outputs: the report shows only rendered displays."""
    import copy

    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", [])
                               if o.get("output_type") in ("display_data", "execute_result")]
    return out


def export_html(nb: Any, *, title: str = "ragdiag report", lang: str = "en") -> str:
    """The executed notebook as standalone HTML: code, prompts, streams and Markdown hidden,
    print CSS (A4, page breaks, no overflowing tables) inlined, no external scripts."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, exclude_markdown=True, exclude_raw=True)
    body, _ = exporter.from_notebook_node(_report_notebook(nb), resources={"metadata": {"name": title}})
    return (f'<!DOCTYPE html>\n<html lang="{_e(lang)}">\n<head>\n<meta charset="utf-8"/>\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"/>\n'
            f"<title>{_e(title)}</title>\n<style>{PRINT_CSS}</style>\n</head>\n"
            f'<body class="ragdiag-report">\n{body}\n</body>\n</html>\n')


def _pdf_weasyprint(html_text: str, base: Path) -> bytes:
    import logging

    from weasyprint import HTML

    wlog = logging.getLogger("weasyprint")
    level = wlog.level
    wlog.setLevel(logging.ERROR)  # unsupported-CSS chatter
    try:
        return HTML(string=html_text, base_url=str(base)).write_pdf()
    finally:
        wlog.setLevel(level)


CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-pdf-header-footer", "--print-to-pdf-no-header",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _require_chromium() -> str:
    exe = find_chromium()
    if exe is None:
        raise MissingDependencyError(
            "pdf_engine='chromium' needs Debian's chromium (apt-get install chromium); it was not "
            "found on PATH. Use the default pdf_engine='weasyprint' instead")
    return exe


def _pdf_chromium(html_file: Path, workdir: Path, *, timeout: float = 180) -> bytes:
    exe = _require_chromium()
    pdf = workdir / "chromium.pdf"
    profile = workdir / "chromium-profile"
    cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={pdf}",
           html_file.resolve().as_uri()]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RagdiagError(f"chromium did not print the report within {timeout:.0f} s") from None
    if not pdf.exists() or pdf.stat().st_size == 0:
        raise RagdiagError(f"chromium failed to print the report (exit {proc.returncode}): "
                           f"{proc.stderr.strip()[-800:]}")
    return pdf.read_bytes()


def pdf_text(pdf: Path) -> str | None:
    """The PDF's text via ``pdftotext`` (poppler-utils), or None when it is not installed."""
    exe = shutil.which("pdftotext")
    if exe is None:
        return None
    proc = subprocess.run([exe, "-layout", str(pdf), "-"], capture_output=True, check=False)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None

