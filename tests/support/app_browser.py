"""The real app server and Debian's Chromium, for the browser tests of the app and of reliability.

The ``browser`` and ``make_server`` fixtures built on these live in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO

from calibrate_app.cli._app import streamlit_command
from labels import LabelStore, open_store

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
# Buttons on the label page of a pointwise faithfulness row: switch user, 3 verdicts, back,
# skip, keys, guidelines, my labels, 3 "verdict + note", save with note, 4 failure tags, save
# queue settings.
LABEL_PAGE_BUTTONS = 18


def require_browser() -> Any:
    """Playwright's sync API; skip without a browser (fail with CALIBRATE_REQUIRE_BROWSER=1)."""
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    else:
        try:
            from playwright import sync_api
        except ImportError:
            reason = "the playwright package is missing (pip install playwright)"
    if reason is not None:
        if os.environ.get("CALIBRATE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required (CALIBRATE_REQUIRE_BROWSER=1) but {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    return sync_api


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running app server on a temporary database."""

    url: str
    db_path: Path
    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop within 15 s)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)

    def open_store(self) -> LabelStore:
        """The database, once the server has stopped (it holds the file while running)."""
        self.stop()
        return open_store(str(self.db_path))


def start_server(db_path: Path, cwd: Path, *, port: int | None = None,
                 env_extra: dict[str, str] | None = None) -> Server:
    """Start the app server (the command `calibrate app` runs) and wait until it is healthy."""
    port = port or free_port()
    command, env = streamlit_command(str(db_path), "127.0.0.1", port)
    env.update(env_extra or {})
    env["CALIBRATE_LOCK_TIMEOUT"] = "0"
    env["TMPDIR"] = str(cwd)  # uploads land in the test's folder, not the system's /tmp
    log = cwd / f"server-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", db_path, proc, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the app server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(server.url + "/_stcore/health", timeout=2) as reply:
                if reply.read() == b"ok":
                    return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"the app server did not become healthy: {log.read_text()[-2000:]}")


def open_page(browser: Any, url: str, *, width: int = 1400, height: int = 900) -> Any:
    """A page in a new browser context of ``width``×``height`` pixels, opened on ``url``."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(url)
    return page


def ready(page: Any, buttons: int = LABEL_PAGE_BUTTONS) -> None:
    """Wait until the label page's buttons are mounted (keys pressed earlier are lost)."""
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=30_000)
    expect(page.get_by_test_id("stButton")).to_have_count(buttons, timeout=30_000)


def shows(page: Any, text: str, timeout: float = 10_000) -> None:
    """Wait until ``text`` is visible on the page."""
    from playwright.sync_api import expect

    expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=timeout)


def settled(page: Any, buttons: int = LABEL_PAGE_BUTTONS) -> None:
    """Wait for the rerun to finish and the new row's buttons (and their keys) to be mounted.

    A row's buttons carry the row in their key, so they mount anew with each row; a key
    pressed in the few milliseconds before that would be lost (no person is that fast).
    """
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=30_000)
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=\"stButton\"]').length === n && "
        "[...document.querySelectorAll('[class*=\"st-key-verdict_\"]')].every("
        "el => el.querySelector('button') !== null)", arg=buttons, timeout=30_000,
    )


def tags_chosen(page: Any, *tags: str) -> None:
    """Wait until each failure tag's button shows as chosen."""
    from playwright.sync_api import expect

    for tag in tags:
        expect(page.locator('[data-testid="stBaseButton-primary"]', has_text=tag)
               ).to_be_visible(timeout=10_000)


def fail_with_note(page: Any, note: str) -> None:
    """Shift+F, type ``note`` into the note box, Ctrl+Enter: keyboard only."""
    page.keyboard.press("Shift+F")
    page.wait_for_function("document.activeElement && document.activeElement.tagName === "
                           "'TEXTAREA'", timeout=10_000)
    page.keyboard.type(note)
    page.keyboard.press("Control+Enter")


def question(page: Any) -> str:
    """The question of the row on screen."""
    return str(page.locator(".st-key-question").inner_text()).strip()


def question_is(page: Any, text: str, *, negate: bool = False) -> None:
    """Wait for the question (it may update a moment after the progress line), then settle."""
    from playwright.sync_api import expect

    box = expect(page.locator(".st-key-question"))
    if negate:
        box.not_to_have_text(text, timeout=10_000)
    else:
        box.to_have_text(text, timeout=10_000)
    settled(page)
