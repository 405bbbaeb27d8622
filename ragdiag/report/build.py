"""`build_report`: the report notebook run, exported and written as ipynb, HTML and PDF.

Arguments are checked in this process first (clearer than a kernel
traceback); every output is secret-scanned before anything is written.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import ConfigError
from ragdiag.report.export import (
    PDF_ENGINES,
    _pdf_chromium,
    _pdf_weasyprint,
    _require_chromium,
    export_html,
    pdf_text,
)
from ragdiag.report.notebook import _parameters, _split_checks, run_notebook
from ragdiag.report.secrets import assert_no_secrets
from ragdiag.report.texts import _check_lang, _t


@dataclass(frozen=True)
class ReportPaths:
    ipynb: Path
    html: Path
    pdf: Path

    def __iter__(self):
        return iter((self.ipynb, self.html, self.pdf))


def template_path() -> Path:
    """The report notebook template, shipped as package data (``ragdiag/report/template``)."""
    from importlib.resources import files

    return Path(str(files("ragdiag.report") / "template" / "audit_report.ipynb"))


def _log_fn(log: Callable[[str], None] | None) -> Callable[[str], None]:
    return log if log is not None else (lambda m: None)


def build_report(config: str | Path | None, out_dir: str | Path, *, lang: str = "en",
                 client: str | None = None, system: str | None = None,
                 checks: str | Sequence[str] | None = None, pdf_engine: str = "weasyprint",
                 progress: bool = True, log: Callable[[str], None] | None = print,
                 findings_json: str | Path | None = None,
                 template: str | Path | None = None,
                 optimize_json: str | Path | None = None) -> ReportPaths:
    """Run the report notebook and write ``report.ipynb``, ``report.html`` and ``report.pdf``.

    `config` is an audit config (None: the embedded sample's). The notebook runs in a
    kernel of this interpreter; a failing cell raises `NotebookRunError` (cell index and
    traceback) and the partially executed notebook is kept as ``report.ipynb``. Every
    output is scanned for secret environment values before it is written.

    `optimize_json` (an optimize.json or its folder) adds the section "From the current to the
    proposed policy"; without it an ``optimize.json`` in `out_dir` (``ragdiag optimize --out``
    the same folder) is used, and with neither the report has no such section.
    """
    say = _log_fn(log)
    _check_lang(lang)
    if pdf_engine not in PDF_ENGINES:
        raise ConfigError(f"pdf_engine must be one of {', '.join(PDF_ENGINES)}, got {pdf_engine!r}",
                          key="pdf_engine")
    if pdf_engine == "chromium":
        _require_chromium()
    # fail fast in this process on a bad config or check name (clearer than a kernel traceback)
    cfg_path = Path(config).expanduser().resolve() if config else None
    title = _t("report_title", lang)
    if cfg_path is not None:
        from ragdiag.inputs.config import load_config

        cfg = load_config(cfg_path)
        title = f"{title}: {client or cfg.client}" if (client or cfg.client) else title
    elif not findings_json:
        title = f"{title}: {client}" if client else title
    wanted = _split_checks(checks)
    if wanted:
        from ragdiag.inputs.checklist import load_checklist

        unknown = [c for c in wanted if c not in load_checklist()]
        if unknown:
            raise ConfigError(f"no check named {', '.join(unknown)}; available: "
                              f"{', '.join(load_checklist())}", key="checks")
    src = Path(template) if template else template_path()
    if not src.is_file():
        raise ConfigError("report notebook template not found", path=str(src))

    out = Path(out_dir).expanduser().resolve()
    if optimize_json is None and (out / "optimize.json").is_file():
        optimize_json = out / "optimize.json"
    if optimize_json:
        from ragdiag.report.optimization import load_optimization

        load_optimization(optimize_json)  # fail fast here on a file that is not an optimizer result
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(out / "report.ipynb", out / "report.html", out / "report.pdf")
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        executed = work / "report.ipynb"
        params = _parameters(cfg_path, lang, client, system, checks, findings_json, optimize_json)
        say(f"executing notebook {src.name} ({'sample' if cfg_path is None else cfg_path.name}, "
            f"lang={lang})")
        nb, nb_text = run_notebook(src, executed, params, workdir=work, progress=progress,
                                   keep=paths.ipynb)

        say("exporting HTML")
        html_text = export_html(nb, title=title, lang=lang)
        assert_no_secrets({"notebook": nb_text, "HTML": html_text})

        say(f"writing PDF ({pdf_engine})")
        staged_html = work / "report.html"
        staged_html.write_text(html_text, encoding="utf-8")
        if pdf_engine == "chromium":
            pdf_bytes = _pdf_chromium(staged_html, work)
        else:
            pdf_bytes = _pdf_weasyprint(html_text, work)
        staged_pdf = work / "report.pdf"
        staged_pdf.write_bytes(pdf_bytes)
        text = pdf_text(staged_pdf)
        assert_no_secrets({"PDF": (text or "") + "\n" + pdf_bytes.decode("latin-1")})

        shutil.copyfile(executed, paths.ipynb)
        paths.html.write_text(html_text, encoding="utf-8")
        paths.pdf.write_bytes(pdf_bytes)
        say(f"report written: {paths.pdf} ({len(pdf_bytes) / 1024:.0f} KiB), {paths.html.name}, "
            f"{paths.ipynb.name}")
        return paths
    finally:
        shutil.rmtree(work, ignore_errors=True)
