"""The demo in real Chromium: every page stays offline, and Calibration opens on its answer.

- No page of the demo makes a request that leaves 127.0.0.1, and no page has a Deploy button.
- The Calibration page's first screen on a 1366×768 laptop holds the trust verdict (with an
  icon that says the same) and beside it the library's answer for the default dataset, judge
  and target: the true pass rate, or "can't say" with the reason, its interval and n.

Real Chromium on the real app server (see ``tests/support/app_browser.py``), on the demo
database that ``make run`` builds; one server for the module.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
from app_browser import ARTIFACTS, Server, shows, start_server
from stores import opened_workspace

from judges.calibration import AnswerSummary
from judges.demo import LABELLED_DATASET, PRODUCTION_DATASET, DemoSummary
from judges.reporting import calibration_report, default_judge

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
LAPTOP = {"width": 1366, "height": 768}
NOT_RUNNING = '[data-testid="stApp"][data-test-script-state="notRunning"]'


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory,
                demo_build: DemoSummary) -> Iterator[Server]:
    """The app server on a copy of the demo; its log must hold no traceback."""
    work = tmp_path_factory.mktemp("demo-app")
    db = work / "app.duckdb"
    shutil.copyfile(demo_build.db_path, db)
    server = start_server(db, work)
    try:
        yield server
    finally:
        server.stop()
    log = server.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


@pytest.fixture(scope="module")
def demo_answer(tmp_path_factory: pytest.TempPathFactory,
                demo_build: DemoSummary) -> AnswerSummary:
    """The library's answer for the page's defaults: the demo judge on the production week."""
    db = tmp_path_factory.mktemp("demo-library") / "demo.duckdb"
    shutil.copyfile(demo_build.db_path, db)  # the server holds its own copy's lock
    with opened_workspace(db) as workspace:
        judge = default_judge(workspace, LABELLED_DATASET)
        assert judge is not None and judge.name == "qwen1.5b-claimsplit"
        report = calibration_report(workspace, LABELLED_DATASET, judge, target=PRODUCTION_DATASET)
        return report.answer.summary()


def test_no_request_leaves_the_machine_on_any_page(browser: Any, demo_server: Server) -> None:
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
        page.goto(f"{demo_server.url}/{path}")
        page.wait_for_selector(NOT_RUNNING, timeout=30_000)
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


def _bottom(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None
    return float(box["y"] + box["height"])


def test_calibration_opens_on_the_answer_beside_the_verdict(
    browser: Any, demo_server: Server, demo_answer: AnswerSummary
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.goto(f"{demo_server.url}/calibration")
    answer = page.locator(".st-key-cal_answer")
    expect(answer).to_be_visible(timeout=30_000)
    page.wait_for_selector(NOT_RUNNING, timeout=30_000)
    # The library's answer, as the page shows it: on the production week the segment-aware
    # correction spans [0, 1], so "can't say" with the reason, and the interval and n.
    h = demo_answer.headline
    assert not demo_answer.says
    assert (h["estimate"], h["low"], h["high"], h["n"]) == (0.52, 0.0, 1.0, 95)
    expect(answer).to_contain_text(f"True pass rate of {PRODUCTION_DATASET}")
    expect(answer).to_contain_text("Can't say")
    expect(answer).to_contain_text(f"Because {demo_answer.because}.")
    numbers = answer.get_by_text(
        f"The segment-aware correction: {demo_answer.interval} · n = {h['n']} labelled rows")
    expect(numbers).to_be_visible()
    assert demo_answer.interval == "0.520 [0.000, 1.000]"
    estimand = answer.get_by_text(f"Estimates {demo_answer.estimand}.")
    expect(estimand).to_be_visible()
    # All of it on the first screen of a 1366×768 laptop, without scrolling.
    assert page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTop") == 0
    for part in (numbers, estimand, answer):
        assert _bottom(part) <= LAPTOP["height"]
    # Beside the verdict, in the same box; the icon says "not certified", not a check badge.
    verdict = page.locator(".st-key-cal_verdict")
    expect(verdict.get_by_text("Not certified (")).to_be_visible()
    icons = verdict.get_by_test_id("stAlertDynamicIcon")
    expect(icons).to_have_text(["cancel"])
    assert _bottom(verdict) <= LAPTOP["height"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "calibration-first-screen.png"))
    context.close()
