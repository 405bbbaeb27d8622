"""Session fixtures: the sample system is opened once per test session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def sample_target():
    """The structure-aware sample index (built on first use, cached on disk)."""
    from ragdiag.sample.system import open_sample_target

    return open_sample_target("structured", progress=False)


def _context(config_name: str, cache_dir):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    # a per-session trace cache: tests never read traces an older build of ragdiag wrote
    return build_context(load_config(sample_dir() / config_name), progress=False, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def misconfigured_ctx(sample_target, tmp_path_factory):
    """Audit context of the sample as it runs in production (misconfigured policy)."""
    return _context("audit.toml", tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="session")
def tuned_ctx(sample_target, tmp_path_factory):
    """Audit context of the sample after the fixes (tuned policy, sound client app)."""
    return _context("audit-tuned.toml", tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="session")
def checklist():
    from ragdiag.inputs.checklist import load_checklist

    return load_checklist()


@pytest.fixture(scope="module")
def specs():
    """The checklist, loaded once per test module (a test may not mutate it for the next module)."""
    from ragdiag.inputs.checklist import load_checklist

    return load_checklist()
