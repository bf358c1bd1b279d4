"""Team mode end to end: a real OpenID Connect provider, the app in team mode, and Chromium.

The provider is node-oidc-provider, installed by ``.ci/run`` from ``tests/support/oidc``; the
app runs with ``CALIBRATE_AUTH=oidc``.

An annotator signs in through the provider's login form, labels a row by keyboard and signs
out; the label's annotator is the address the provider vouched for, and the provider's account
is bound to it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_browser import ARTIFACTS, free_port, open_page, question, shows, start_server

from labels.importing import import_rows
from labels.stores.db import Database
from labels.stores.label_store import LabelStore
from labels.stores.team_store import TeamStore

OIDC = Path(__file__).resolve().parents[2] / "support" / "oidc"
CLIENT_ID, CLIENT_SECRET = "calibrate-test", "a-client-secret-only-for-this-test"


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The OIDC provider on a free port; yields its issuer and the app port it redirects to."""
    node = shutil.which("node")
    if node is None or not (OIDC / "node_modules" / "oidc-provider").is_dir():
        reason = ("the test OIDC provider is not installed "
                  "(npm ci --prefix tests/support/oidc; .ci/run does it)")
        if os.environ.get("CALIBRATE_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    port, app_port = free_port(), free_port()
    log = (tmp_path / "oidc.log").open("wb")
    proc = subprocess.Popen(
        [node, str(OIDC / "server.js"), str(port), CLIENT_ID, CLIENT_SECRET,
         f"http://127.0.0.1:{app_port}/oauth2callback"],
        stdout=log, stderr=subprocess.STDOUT, cwd=OIDC)
    issuer = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration",
                                            timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "oidc.log").read_text()) from None
                time.sleep(0.1)
        yield issuer, app_port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def test_an_annotator_signs_in_labels_as_their_identity_and_signs_out(
        browser: Any, provider: tuple[str, int], tmp_path: Path, make_rows: Any) -> None:
    from playwright.sync_api import expect

    issuer, app_port = provider
    db_path = tmp_path / "team.duckdb"
    db = Database(db_path)
    try:
        import_rows(LabelStore(db), make_rows(tmp_path / "rows.jsonl", 3), "teamset")
        team = TeamStore(db, LabelStore(db))
        team.set_role("owner@example.org", "owner", actor="cli:test")
        team.set_role("ann@example.org", "annotator", actor="cli:test")
    finally:
        db.close()
    folder = tmp_path / ".streamlit"
    folder.mkdir(mode=0o700)
    secrets = folder / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"\n'
        f'cookie_secret = "{"c" * 40}"\n'
        f'client_id = "{CLIENT_ID}"\n'
        f'client_secret = "{CLIENT_SECRET}"\n'
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n'
        # Streamlit asks for prompt=select_account, which this provider does not know.
        'client_kwargs = { prompt = "login" }\n',
        encoding="utf-8")
    secrets.chmod(0o600)
    server = start_server(db_path, tmp_path, port=app_port, env_extra={"CALIBRATE_AUTH": "oidc"})
    try:
        page = open_page(browser, server.url + "/label?user=owner@example.org")
        page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
        shots = ARTIFACTS / "team-sign-in"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "1-sign-in.png"))
        page.get_by_role("button", name="Sign in").click(timeout=60_000)
        # The provider's own login and consent forms.
        page.wait_for_url(f"{issuer}/**", timeout=30_000)
        page.screenshot(path=str(shots / "2-provider-login.png"))
        page.fill('input[name="login"]', "ann@example.org")
        page.fill('input[name="password"]', "anything")
        page.locator('button[type="submit"]').click()
        page.wait_for_selector('button[type="submit"]', timeout=30_000)
        page.locator('button[type="submit"]').click()  # consent: Continue
        page.wait_for_url(f"{server.url}/**", timeout=30_000)
        shows(page, "Question number", timeout=30_000)
        body = page.locator("body").inner_text()
        assert "Not owner@example.org?" not in body and "Who is labelling?" not in body
        assert page.get_by_role("link", name="Calibration").count() == 0  # annotators: Label
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                               timeout=30_000)
        page.locator('[class*="st-key-verdict_pass"] button').wait_for(timeout=30_000)
        # After the run settles, so the picture is the page a person sees, not its skeleton.
        expect(page.locator(".st-key-progress")).to_contain_text("labelled", timeout=30_000)
        page.screenshot(path=str(shots / "3-label-page-signed-in.png"))
        first = question(page)
        page.keyboard.press("p")  # Pass, by keyboard
        expect(page.locator(".st-key-question")).not_to_have_text(first, timeout=30_000)
        page.get_by_role("button", name="Sign out").click()
        # Streamlit ends the provider's session too (RP-initiated logout): its confirmation.
        page.wait_for_url(f"{issuer}/**", timeout=30_000)
        page.locator('button[type="submit"]').first.click()
        page.wait_for_url(f"{server.url}/**", timeout=30_000)
        page.get_by_role("button", name="Sign in").wait_for(timeout=30_000)
        page.screenshot(path=str(shots / "4-signed-out.png"))
        assert "Question number" not in page.locator("body").inner_text()
    finally:
        server.stop()
    db = Database(db_path)
    try:
        labels = LabelStore(db).current_labels("teamset")
        trail = TeamStore(db, LabelStore(db)).audit()
    finally:
        db.close()
    assert labels["annotator"].tolist() == ["ann@example.org"]
    assert labels["verdict"].tolist() == ["pass"]
    bound = next(e for e in trail if e.action == "sign-in")
    assert bound.after == {"issuer": issuer, "subject": "ann@example.org"}
