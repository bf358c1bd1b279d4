"""The app works offline: no page of the demo makes a request that leaves 127.0.0.1.

Also: no Deploy button on any page.

Real Chromium on the real app server (see ``tests/support/app_browser.py``), on the demo
database that ``make run`` builds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from app_browser import shows

from labels import LabelStore

pytestmark = pytest.mark.browser

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
# Each page with a query that makes it render its full content on the demo, and a text
# that shows the page has rendered.
PAGES = (
    ("", "Datasets"),
    ("label?user=newcomer", "labelled"),
    ("judges", "Judges"),
    ("calibration", "Calibration"),
    ("export", "Export"),
)


def test_no_request_leaves_the_machine_on_any_page(
    browser: Any, make_server: Any, copy_demo: Callable[[Path], Path], tmp_path: Path
) -> None:
    def seed(store: LabelStore) -> None:
        store.db.close()  # the demo's file replaces this one
        copy_demo(tmp_path / "app.duckdb")

    server = make_server(seed)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    # Nothing may actually go out either: any other host is answered locally with an abort.
    context.route(
        "**/*",
        lambda route: route.continue_()
        if urlparse(route.request.url).hostname in LOCAL_HOSTS or route.request.url.startswith(
            ("data:", "blob:"))
        else route.abort(),
    )
    page = context.new_page()
    for path, text in PAGES:
        page.goto(f"{server.url}/{path}")
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                               timeout=30_000)
        shows(page, text, timeout=30_000)
        page.wait_for_load_state("networkidle")
        # A local tool: no "Deploy" button (client.toolbarMode in the app's config).
        assert page.get_by_test_id("stAppDeployButton").count() == 0
    context.close()
    outside = sorted({
        url for url in requests
        if not url.startswith(("data:", "blob:")) and urlparse(url).hostname not in LOCAL_HOSTS
    })
    assert outside == []
    # The check saw real traffic: the pages, their scripts and fonts, and the local favicon.
    assert len(requests) > 20
    assert any(urlparse(url).path.endswith((".woff2", ".woff", ".ttf")) for url in requests)
    assert any("favicon" in url or "/media/" in url for url in requests)
