"""The documentation site builds with `mkdocs build --strict` (a broken link, a missing snippet or
anchor fails it), and its generated pages say what the code says: the checklist from the specs,
the capabilities from the target contract, the extension API from `ragdiag.extend`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path: Path) -> Path:
    """The site's sources (mkdocs.yml, docs/, the hooks) copied where a build may write."""
    dst = tmp_path / "project"
    dst.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", dst / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", dst / "docs")
    (dst / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "mkdocs_hooks.py", dst / "scripts" / "mkdocs_hooks.py")
    return dst


def _build(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(project / "site")],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "", "HOME": str(project)})


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    project = _project(tmp_path_factory.mktemp("docs"))
    proc = _build(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return project / "site"


def test_the_checklist_page_is_generated_from_the_specs(site):
    from ragdiag.inputs.checklist import load_checklist

    page = (site / "checklist" / "index.html").read_text(encoding="utf-8")
    specs = load_checklist()
    assert f"<strong>{len(specs)} checks</strong>" in page
    for spec in specs.values():
        assert spec.text("title") in page and f"<code>{spec.id}</code>" in page
        for name in spec.thresholds:
            assert f"<code>{name}</code>" in page, (spec.id, name)


def test_the_extension_guide_shows_the_tested_plugin_and_the_contract(site):
    from ragdiag.extend import __all__ as exported
    from ragdiag.targets.base import CAPABILITIES

    page = (site / "extending" / "index.html").read_text(encoding="utf-8")
    assert "WordsPerHit" in page and "AcmeKind" in page and "acme_words" in page  # the snippets were included
    for name in exported:
        assert f"<code>{name}</code>" in page, name
    for cap in CAPABILITIES:
        assert f"<code>{cap}</code>" in page, cap


def test_every_guide_is_built(site):
    for page in ("index.html", "guides/consultants/index.html", "guides/notebooks/index.html", "ci/index.html",
                 "design/index.html", "design/layers/index.html", "checklist/index.html"):
        assert (site / page).is_file(), page


def test_a_broken_link_fails_the_build(tmp_path):
    project = _project(tmp_path)
    (project / "docs" / "ci.md").write_text((project / "docs" / "ci.md").read_text(encoding="utf-8")
                                            + "\nSee [the gone page](gone.md).\n", encoding="utf-8")
    proc = _build(project)
    assert proc.returncode != 0 and "gone.md" in proc.stdout + proc.stderr


def test_a_missing_snippet_fails_the_build(tmp_path):
    project = _project(tmp_path)
    (project / "docs" / "examples" / "ragdiag-acme" / "ragdiag_acme" / "check.py").unlink()
    proc = _build(project)
    assert proc.returncode != 0 and "check.py" in proc.stdout + proc.stderr


def test_the_readme_is_short_and_its_links_resolve():
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 120  # a few screens; the rest lives in docs/
    assert "bash scripts/test.sh" in text and "bash scripts/audit-sample.sh" in text  # .ci/run and tests/README.md
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert links
    broken = [t for t in links if not t.startswith("http") and not (ROOT / t).exists()]
    assert broken == []
