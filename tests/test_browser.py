"""The profile playground in a real JupyterLab, driven through Debian's chromium (Playwright).

Starts JupyterLab on 127.0.0.1 (free port, empty token, announcements off) over a
temporary copy of the playground notebook, runs all cells, waits for the tuner,
moves its k slider and checks that the pool-size display changes. A screenshot
lands in test-artifacts/browser/playground.png.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
POOL = ".ragdiag-pool .ragdiag-pool-tuned"


def _chromium() -> Path:
    """Debian's chromium; installed with apt when missing and possible, else the test skips."""
    if CHROMIUM.exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
            subprocess.run(cmd, env=env, capture_output=True, timeout=900, check=False)
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not at /usr/bin/chromium and could not be installed "
                    "(apt-get install chromium needs root and the Debian package mirror)")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server over a copy of the playground notebook: yields its base URL."""
    root = tmp_path / "notebooks"
    root.mkdir()
    shutil.copy(REPO / "notebooks" / "profile_playground.ipynb", root)
    config = tmp_path / "jupyter-config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    port = _free_port()
    env = {**os.environ,
           "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           # the kernelspec `python3` resolves to this interpreter: the venv's
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    log = open(tmp_path / "jupyterlab.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
         "--ServerApp.open_browser=False",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
        + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError("JupyterLab exited: " + (tmp_path / "jupyterlab.log").read_text()[-3000:])
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start: "
                                   + (tmp_path / "jupyterlab.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        try:  # the server's session holds the kernel too: stop only what this fixture started
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()


def _pool_text(page) -> str:
    return page.locator(POOL).first.inner_text()


def test_playground_slider_updates_pool(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    chromium = _chromium()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1800})
            page.goto(f"{lab}/lab/tree/profile_playground.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            # wait until the kernel is idle, then Run > Run All Cells (again if nothing started)
            page.get_by_text(re.compile(r"\|\s*Idle")).first.wait_for(timeout=120_000)
            for _attempt in range(3):
                page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
                page.locator("li.lm-Menu-item[data-command='runmenu:run-all'], "
                             "li.lm-Menu-item[data-command='notebook:run-all-cells']").first.click()
                prompt = page.locator(".jp-CodeCell .jp-InputPrompt").first
                if _wait_for(lambda prompt=prompt: "[ ]" not in prompt.inner_text(), 15):
                    break
            pool = page.locator(POOL).first
            pool.wait_for(state="visible", timeout=600_000)
            page.wait_for_function(f"() => /median/.test(document.querySelector({POOL!r})?.innerText || '')",
                                   timeout=60_000)
            before = _pool_text(page)
            page.screenshot(path=str(tmp_path / "before.png"), full_page=True)

            # move the k slider: focus its handle, then the keyboard (5 steps per PageUp)
            handle = page.locator(".ragdiag-k .noUi-handle").first
            handle.scroll_into_view_if_needed()
            handle.focus()
            for _ in range(6):
                handle.press("PageUp")
            changed = _wait_changed(page, before, 60)
            if changed:  # the kernel is at the last value once the status names it
                status = page.locator(".ragdiag-status").first
                _wait_for(lambda: "→ 50" in status.inner_text(), 60)
            else:  # fallback: click the track at about k = 100
                track = page.locator(".ragdiag-k .noUi-base, .ragdiag-k .noUi-target").first
                box = track.bounding_box()
                page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] / 2)
                changed = _wait_changed(page, before, 60)
            tuner = page.locator(".ragdiag-tuner").first
            tuner.scroll_into_view_if_needed()
            tuner.screenshot(path=str(ARTIFACTS / "playground.png"))
            after = _pool_text(page)
            assert changed, f"pool display did not change after moving k: {before!r}"
            assert after != before
            readout = page.locator(".ragdiag-k .widget-readout").first.inner_text()
            assert int(readout) > 20, readout
            _record_timings(page, handle)
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t]
            assert not tracebacks, tracebacks
        finally:
            browser.close()


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except Exception:  # the element is being re-rendered
            pass
        time.sleep(0.25)
    return False


def _wait_changed(page, before: str, seconds: float) -> bool:
    return _wait_for(lambda: _pool_text(page) != before, seconds)


STATUS = ".ragdiag-status"


def _timed_change(page, handle, key: str) -> dict:
    """One key press on the k slider, timed in the browser until the pool shows new numbers and
    until the status (sent last) replaces "computing…"; milliseconds from the press."""
    page.evaluate("""([pool, status]) => {
        window.__rd = {t0: performance.now(), pool: null, status: null, busySeen: false,
                       before: document.querySelector(pool).innerText};
        const obs = new MutationObserver(() => {
            const r = window.__rd, now = performance.now();
            const st = document.querySelector(status)?.innerText || '';
            if (/computing/.test(st)) r.busySeen = true;
            if (r.pool === null && document.querySelector(pool).innerText !== r.before) r.pool = now - r.t0;
            if (r.pool !== null && r.status === null && !/computing/.test(st)) r.status = now - r.t0;
            if (r.pool !== null && r.status !== null) obs.disconnect();
        });
        obs.observe(document.querySelector('.ragdiag-tuner'), {subtree: true, childList: true,
                                                                characterData: true});
    }""", [POOL, STATUS])
    handle.press(key)
    page.wait_for_function("() => window.__rd.pool !== null && window.__rd.status !== null", timeout=60_000,
                           polling=10)
    out = page.evaluate("() => window.__rd")
    kernel = page.locator(STATUS).first.inner_text()
    m = re.search(r"(\d+) new requests, (\d+) ms", kernel)
    return {"key": key, "pool_ms": round(out["pool"]), "status_ms": round(out["status"]),
            "busy_seen": out["busySeen"], "kernel_ms": int(m.group(2)) if m else None,
            "new_requests": int(m.group(1)) if m else None}


def _record_timings(page, handle, reps: int = 3) -> None:
    """The tuner's click-to-numbers time in a real browser, a benchmark figure (not asserted):
    a k never evaluated before (PageUp) and back to one seen before (PageDown: the memo)."""
    rows = []
    for _ in range(reps):
        rows.append({"setting": "new", **_timed_change(page, handle, "PageUp")})
        rows.append({"setting": "memoised", **_timed_change(page, handle, "PageDown")})
        handle.press("PageUp")  # the next rep starts one step higher: a k not seen before
        page.wait_for_timeout(1500)
    (ARTIFACTS / "tuner_timings.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    assert all(r["pool_ms"] <= r["status_ms"] for r in rows)  # the status (end of busy) comes last
