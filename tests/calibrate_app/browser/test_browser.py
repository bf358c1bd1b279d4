"""End-to-end: the real app server (``calibrate app``'s command) driven by Debian's Chromium.

Skipped with a reason when /usr/bin/chromium (or Playwright) is missing, unless
CALIBRATE_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import app_browser
import pytest
from app_browser import ARTIFACTS, Server, open_page, question, question_is, ready, shows

from labels import LabelStore
from labels.importing import import_rows
from labels.models import Criterion
from labels.sampling import QueueSettings

pytestmark = pytest.mark.browser


def test_keyboard_only_labelling_then_reload_resumes(browser: Any, rows_server: Any) -> None:
    from playwright.sync_api import expect

    server = rows_server({"demo": 8})
    page = open_page(browser, server.url + "/label")
    # Pick a name: typed once, Enter submits; it goes into the URL.
    page.get_by_label("Your name").fill("kim")
    page.keyboard.press("Enter")
    ready(page)
    assert re.search(r"[?&]user=kim\b", page.url)
    shows(page, "0 / 8 labelled, 0 skipped")
    page.keyboard.press("h")  # the help lists the keys; Esc closes it
    shows(page, "Keyboard shortcuts")
    shows(page, "skip: the row goes to the end of your queue")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    labelled = []
    for n, key in enumerate(["p", "f", "u", "p"], start=1):
        labelled.append(question(page))
        page.keyboard.press(key)
        shows(page, f"{n} / 8 labelled")
        question_is(page, labelled[-1], negate=True)
    # A fail with a note and a failure tag, keyboard only.
    labelled.append(question(page))
    page.keyboard.press("2")  # tag 2 ("contradiction") before typing
    expect(page.locator('[data-testid="stBaseButton-primary"]', has_text="contradiction")
           ).to_be_visible(timeout=10_000)
    page.keyboard.press("Shift+F")
    page.wait_for_function("document.activeElement && document.activeElement.tagName === "
                           "'TEXTAREA'", timeout=10_000)
    page.keyboard.type("claim about 1.2 not in the sources")
    page.keyboard.press("Control+Enter")
    shows(page, "5 / 8 labelled, 0 skipped")
    question_is(page, labelled[-1], negate=True)
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    # Skip, then go back and change the label of the fourth row.
    skipped = question(page)
    page.keyboard.press("s")
    shows(page, "5 / 8 labelled, 1 skipped")
    question_is(page, skipped, negate=True)
    page.keyboard.press("ArrowLeft")
    shows(page, "Revisiting your earlier label: FAIL")
    question_is(page, labelled[4])
    page.keyboard.press("ArrowLeft")
    shows(page, "Revisiting your earlier label: PASS")
    question_is(page, labelled[3])
    page.keyboard.press("f")  # a new version of row 4
    shows(page, "Revisiting your earlier label: FAIL")
    page.keyboard.press("s")  # Next: back to the queue
    shows(page, "5 / 8 labelled, 1 skipped")
    # Reload: same URL, new session; the queue resumes where it was, and the skipped row
    # stays at the end (skips are stored).
    page.reload()
    ready(page)
    shows(page, "5 / 8 labelled, 1 skipped")
    assert question(page) != skipped
    page.keyboard.press("u")
    shows(page, "6 / 8 labelled")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "label-page.png"), full_page=True)
    page.context.close()

    store = server.open_store()
    try:
        current = store.current_labels("demo", annotator="kim").set_index("item_id")
        history = store.label_history_frame("demo")
        assert len(current) == 6 and len(history) == 7
        by_question = {store.item("demo", i).question: i for i in current.index}
        verdicts = [current.loc[by_question[q], "verdict"] for q in labelled]
        assert verdicts == ["pass", "fail", "unsure", "fail", "fail"]
        noted = current.loc[by_question[labelled[4]]]
        assert noted["note"] == "claim about 1.2 not in the sources"
        assert noted["failure_tags"] == '["contradiction"]'
        assert skipped not in by_question
        assert (current["seconds_spent"] > 0).all()
    finally:
        store.db.close()


def test_two_annotators_at_once_lose_and_duplicate_nothing(
    browser: Any, rows_server: Any
) -> None:
    total = 12
    server = rows_server({"demo": total})
    pages = [open_page(browser, f"{server.url}/label?user={name}&dataset=demo", width=1280)
             for name in ("alice", "bob")]
    for page in pages:
        ready(page)
    # Both press a key before either waits, so the two sessions' reruns overlap on the server.
    for n in range(1, total // 2 + 1):
        before = [question(page) for page in pages]
        for page, key in zip(pages, ("p", "f"), strict=True):
            page.keyboard.press(key)
        for page, old in zip(pages, before, strict=True):
            shows(page, f"{n} / ")
            if n < total // 2:
                question_is(page, old, negate=True)
            # After the last round a page may say the last row is someone else's right now,
            # or that the queue is empty: that depends on which of the two saves came first.
    for page in pages:
        shows(page, f"{total // 2} / ")
        page.context.close()

    store = server.open_store()
    try:
        labels = store.label_history_frame("demo")
        assert len(labels) == total
        assert labels["item_id"].is_unique  # nobody got a row someone else was doing
        assert labels.groupby("annotator").size().to_dict() == {"alice": 6, "bob": 6}
        assert set(labels[labels["annotator"] == "alice"]["verdict"]) == {"pass"}
    finally:
        store.db.close()


def test_untrusted_rows_render_literally(
    browser: Any, make_server: Any, make_rows: Any, injections: tuple[str, ...],
    tmp_path: Path,
) -> None:
    def seed(store: LabelStore) -> None:
        import_rows(store, make_rows(tmp_path / "inj.jsonl", 0, injections=True), "inj")
        store.save_criterion(Criterion(
            name="faithfulness", guidelines="Owner **markdown** is rendered.",
            show_reference=True, failure_tags=("unsupported claim", "contradiction",
                                               "missing condition", "wrong refusal"),
        ))
        store.save_queue_settings("inj", "faithfulness", QueueSettings("file", 0, 1))

    from playwright.sync_api import expect

    server = make_server(seed)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server.url}/label?user=eve&dataset=inj")
    for k, text in enumerate(injections):
        ready(page)
        shows(page, f"{k} / 4 labelled")
        shows(page, f"Injection {k}: {text}")
        # Reveal the reference (allowed here). The expander may keep its open state from the
        # previous row, so click only while the reference stays hidden: a click would close
        # it. Under load the expander can still be settling when first checked, so check again
        # after each click rather than trusting one look.
        reference = page.get_by_text(f"Reference {text}").first
        for _ in range(3):
            try:
                expect(reference).to_be_visible(timeout=3_000)
                break
            except AssertionError:
                page.get_by_text("Reference answer").click()
        for shown in (f"Injection {k}: {text}", f"Answer with {text} inside",
                      f"Source with {text}", f"Reference {text}"):
            shows(page, shown)
        images = page.eval_on_selector_all("img", "els => els.map(e => e.src)")
        external = [src for src in images if not src.startswith((server.url, "data:"))]
        assert external == [], external
        assert page.locator("a[href^='javascript']").count() == 0
        assert page.locator(".katex").count() == 0
        assert page.evaluate("window.__injected") is None
        if k == 1:
            page.wait_for_timeout(500)  # let the reference expander finish opening
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "label-injection.png"), full_page=True)
        page.keyboard.press("p")
    shows(page, "4 / 4 labelled")
    assert not [u for u in requests if "127.0.0.1:9/" in u or u.startswith("javascript")]
    context.close()
    store = server.open_store()
    try:
        assert len(store.current_labels("inj")) == 4
    finally:
        store.db.close()


def test_data_page_imports_an_upload(
    empty_server: Server, data_page: Any, tmp_path: Path
) -> None:
    upload = tmp_path / "uploads" / "mine.csv"
    upload.parent.mkdir()
    upload.write_text("id,question,answer,sources\n"
                      + "".join(f"u{i},Q {i},A {i},passage {i}\n" for i in range(25)))
    data_page.locator("input[type=file]").set_input_files(str(upload))
    shows(data_page, "The first 20 of 25 rows", timeout=30_000)
    data_page.get_by_role("button", name="Import").click()
    shows(data_page, "25 rows read: 25 added")
    data_page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    data_page.screenshot(path=str(ARTIFACTS / "data-page.png"), full_page=True)
    data_page.context.close()
    store = empty_server.open_store()
    try:
        assert store.dataset("mine").items == 25
        assert store.dataset("mine").source_file == "mine.csv"
    finally:
        store.db.close()


def test_no_metrics_without_the_code_and_sigterm_leaves_no_socket(
    browser: Any, make_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import tempfile
    import urllib.request

    from calibrate_app.channel.wire import channel_paths, runtime_dir

    # A short private runtime folder (pytest's paths are too long for a socket's name).
    runtime = tempfile.mkdtemp(prefix="cal-", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    server = make_server(lambda store: None)
    page = open_page(browser, server.url)  # a session opens the store: the channel starts
    paths = channel_paths(server.db_path, runtime_dir())
    deadline = time.monotonic() + 30
    while not paths.socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert paths.socket.exists() and paths.token.exists()
    # Streamlit's metrics route (cache names, sizes, sessions) is not served at all.
    with urllib.request.urlopen(server.url + "/_stcore/metrics", timeout=10) as response:
        body = response.read().decode(errors="replace")
    assert "# TYPE" not in body and "cache_memory_bytes" not in body, body[:300]
    page.close()
    server.stop()  # SIGTERM
    assert server.proc.returncode is not None
    assert not paths.socket.exists() and not paths.token.exists()
    shutil.rmtree(runtime, ignore_errors=True)


def test_missing_chromium_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_browser, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CALIBRATE_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="/nonexistent/chromium is missing"):
        app_browser.require_browser()
    monkeypatch.setenv("CALIBRATE_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="CALIBRATE_REQUIRE_BROWSER=1"):
        app_browser.require_browser()
