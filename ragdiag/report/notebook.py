"""Running the report notebook: its papermill parameters and its execution in a kernel of this
interpreter.

A failing cell becomes a `NotebookRunError` (cell index and traceback); the
partially executed notebook is kept, after the secret scan.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragdiag.errors import NotebookRunError
from ragdiag.report.secrets import assert_no_secrets


def _split_checks(checks: str | Sequence[str] | None) -> list[str]:
    if not checks:
        return []
    items = checks.split(",") if isinstance(checks, str) else list(checks)
    return [c.strip() for c in items if c and c.strip()]


def _parameters(config: Path | None, lang: str, client: str | None, system: str | None,
                checks: str | Sequence[str] | None, findings_json: str | Path | None,
                optimize_json: str | Path | None = None) -> dict[str, str]:
    return {
        "config": str(config) if config else "",
        "client": client or "",
        "system": system or "",
        "lang": lang,
        "checks": ",".join(_split_checks(checks)),
        "findings_json": str(Path(findings_json).resolve()) if findings_json else "",
        "optimize_json": str(Path(optimize_json).resolve()) if optimize_json else "",
    }


@contextmanager
def _kernel(workdir: Path):
    """The name of a kernel that runs this interpreter.

    The ``python3`` kernelspec is used when it resolves to `sys.executable` (ipykernel
    installed in this venv); otherwise a throw-away kernelspec is written under
    `workdir` and made visible through a temporary ``JUPYTER_PATH`` (nothing global).
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        exe = spec.argv[0] if spec.argv else ""
        ok = exe in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}") or (
            Path(exe).exists() and Path(exe).resolve() == Path(sys.executable).resolve())
    except NoSuchKernel:
        ok = False
    if ok:
        yield "python3"
        return
    name = "ragdiag-report"
    kdir = workdir / "jupyter" / "kernels" / name
    kdir.mkdir(parents=True, exist_ok=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (ragdiag report)", "language": "python"}), encoding="utf-8")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(workdir / "jupyter"), old) if p)
    try:
        yield name
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _notebook_text(nb: Any) -> str:
    """Every source and output text of a notebook (for the secret scan)."""
    import nbformat

    return nbformat.writes(nb)


def run_notebook(src: Path, executed: Path, parameters: Mapping[str, str], *, workdir: Path,
                 progress: bool, keep: Path) -> tuple[Any, str]:
    """Execute `src` into `executed` with papermill (cwd `workdir`); the executed notebook and its
    text. On a failing cell or error output the notebook is secret-scanned and copied to `keep`
    and `NotebookRunError` is raised."""
    import nbformat
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    with _kernel(workdir) as kernel_name:
        try:
            pm.execute_notebook(str(src), str(executed), parameters=parameters,
                                kernel_name=kernel_name, progress_bar=progress,
                                cwd=str(workdir), log_output=False)
        except PapermillExecutionError as exc:
            if executed.exists():
                assert_no_secrets({"notebook": executed.read_text(encoding="utf-8")})
                shutil.copyfile(executed, keep)
            tb = _strip_ansi("\n".join(exc.traceback or ()))
            raise NotebookRunError(
                f"report notebook failed in cell {exc.cell_index}: {exc.ename}: "
                f"{_strip_ansi(str(exc.evalue))}; the partially executed notebook is kept at "
                f"{keep}", cell_index=exc.cell_index, traceback=tb) from None
    nb = nbformat.read(str(executed), as_version=4)
    errors = [i for i, c in enumerate(nb.cells) if c.get("cell_type") == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    nb_text = _notebook_text(nb)
    if errors:  # papermill raises on errors; a tolerated one must still not pass silently
        assert_no_secrets({"notebook": nb_text})
        shutil.copyfile(executed, keep)
        raise NotebookRunError(f"report notebook has error output in cell {errors[0]}",
                               cell_index=errors[0])
    return nb, nb_text
