"""Hostile text everywhere, every page and dialog in Chromium: no element, no request comes from it.

Every name (dataset, annotators, criterion, failure tags, judges), item id, row text, segment,
note, guideline, judge reply and reasoning holds markdown/HTML that would fetch a tracker image,
make a link, run a script, open an iframe, typeset LaTeX or colour text if it were rendered. Names
the store now refuses are written straight into the database, as rows written before names were
validated would be. The pages are then visited with a local tracker server counting requests: an
uploaded CSV with a hostile header, duplicate hostile ids, a hostile typed path and criterion
name on the Data page; the label page with its guidelines, tags, a selected answer sentence, a
revisited label and the keys dialog; the Judges page's results and raw replies; a Calibration
disagreement; the Export buttons.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from app_browser import shows

from judges.config import builtin_names, load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.stores.judge_store import bound_key
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import LabelStore, import_rows
from labels.models import Criterion
from labels.sampling import QueueSettings

MARK = "hx7"  # in every hostile string, so any element made from one can be recognised
ROWS = 12


class Tracker:
    """A local HTTP server that counts every request (an image, frame or link fetched)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def hostile(self, tag: str) -> str:
        """One string holding every construct that must not render."""
        t, m = self.url, f"{MARK}{tag}"
        return (f"![{m}]({t}/img/{m}) <img src={t}/html/{m}> [{m}](javascript:alert(1)) "
                f"[{m}]({t}/link/{m}) ${m}$ :red[{m}] :material/home: :smile: "
                f"<script>/*{m}*/window.__hostile=1</script> <iframe src={t}/frame/{m}></iframe> "
                f"{t}/auto/{m} www.{m}.example {m}@example.org")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    server = Tracker()
    yield server
    server.stop()


def _rename(store: LabelStore, columns: list[tuple[str, str]], old: str, new: str) -> None:
    with store.db.transaction() as cur:
        for table, column in columns:
            cur.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", [new, old])


def _seed(store: LabelStore, tmp_path: Path, hostile: Any) -> dict[str, str]:
    """Rows, labels, a judge run and imported verdicts; then hostile names written by SQL."""
    rows = [
        {"id": f"r{k}", "question": f"Question {k} " + hostile(f"question{k}"),
         "answer": f"Answer {k} " + hostile(f"answer{k}"),
         "sources": [hostile(f"source{k}"), f"Plain passage {k}."],
         "reference": hostile(f"reference{k}"), "segment": hostile("segment") if k % 2 else "b"}
        for k in range(ROWS)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_rows(store, path, "plainset")
    store.save_criterion(Criterion(name="critx", guidelines="plain", show_reference=True,
                                   failure_tags=("tagx", "tagy")))
    for name in ("ann1", "ann2", "eve"):
        store.add_annotator(name)
    for k in range(ROWS):
        store.add_label("plainset", f"r{k}", "ann1", "pass" if k % 3 else "fail",
                        criterion="critx", note="plain")
        if k < 6:
            store.add_label("plainset", f"r{k}", "ann2", "pass" if k % 2 else "fail",
                            criterion="critx", note="plain")
    store.add_label("plainset", "r0", "eve", "fail", criterion="critx", note="plain")
    store.save_queue_settings("plainset", "critx", QueueSettings("file", 0, 3))  # eve's turn
    # A judge run of the first pointwise built-in (the Judges page's default choice)...
    builtin = next(n for n in builtin_names() if load_builtin(n).kind == "pointwise")
    # (in a thread: Playwright's event loop runs in this one, and the runner starts its own)
    runner = threading.Thread(target=run_judge, args=(load_builtin(builtin), "plainset"),
                              kwargs={"workspace": Workspace.of(store),
                                      "provider": ScriptedProvider(), "limit": 4,
                                      "concurrency": 1})
    runner.start()
    runner.join()
    # ...then imported verdicts of an external judge (the most recent: the pages' default).
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("id,verdict,reasoning\n" + "".join(
        f"r{k},{'pass' if k % 2 else 'fail'},plain\n" for k in range(ROWS)), encoding="utf-8")
    import_verdicts(Workspace.of(store), verdicts, dataset="plainset", judge="extjudge",
                    criterion="critx")

    names = {"dataset": hostile("dataset"), "criterion": hostile("criterion"),
             "judge": hostile("judge"), "annotator": hostile("annotator")}
    with store.db.transaction() as cur:
        cur.execute("UPDATE labels SET note = ?", [hostile("note")])
        cur.execute("UPDATE criteria SET guidelines = ?, failure_tags = ? WHERE name = 'critx'",
                    [hostile("guidelines"), json.dumps([hostile("tag1"), hostile("tag2")])])
        cur.execute("UPDATE judge_calls SET reasoning = ?, reply = ?, detail = ?",
                    [hostile("reasoning"), hostile("reply"), hostile("detail")])
        cur.execute("UPDATE judge_calls SET status = 'unscored', verdict = NULL, "
                    "unscored_reason = ?, error = ? WHERE item_id = 'r1'",
                    [hostile("unscored"), hostile("error")])
        cur.execute("UPDATE judge_configs SET name = ? WHERE origin = 'external'",
                    [names["judge"]])
        cur.execute("UPDATE judge_configs SET name = ? WHERE origin = 'config'",
                    [hostile("config")])
    for k in range(ROWS):
        _rename(store, [("items", "item_id"), ("labels", "item_id"), ("judge_calls", "item_id")],
                f"r{k}", hostile(f"id{k}"))
    # Imported verdicts are keyed by their row's id (judges.stores.judge_store.bound_key): a renamed
    # id
    # takes its key along, as an import of the hostile ids would have made it.
    with store.db.transaction() as cur:
        rows = cur.execute("SELECT item_id, item_hash FROM items").fetchall()
        for item_id, content in rows:
            cur.execute("UPDATE judge_calls SET item_hash = ? WHERE item_id = ? AND starts_with("
                        "item_hash, 'v')", [bound_key(item_id, content), item_id])
    _rename(store, [("datasets", "name"), ("items", "dataset"), ("labels", "dataset"),
                    ("judge_runs", "dataset"), ("queue_settings", "dataset")],
            "plainset", names["dataset"])
    _rename(store, [("criteria", "name"), ("labels", "criterion"), ("judge_configs", "criterion"),
                    ("queue_settings", "criterion")], "critx", names["criterion"])
    _rename(store, [("annotators", "name"), ("labels", "annotator")], "ann1", names["annotator"])
    _rename(store, [("annotators", "name"), ("labels", "annotator")], "ann2",
            hostile("annotator2"))
    return names


# Every element a hostile string could turn into, and any element pointing at the tracker.
FIND_INJECTED = """([mark, host]) => {
    const found = [];
    const sel = 'img, a, script, iframe, object, embed, video, audio, svg image, .katex, ' +
                '[class*="stMarkdownColored"], [data-testid="stIconMaterial"]';
    for (const el of document.querySelectorAll(sel)) {
        // The app's own links may carry a (URL-encoded) name in their query string.
        const own = el.tagName === 'A' && el.href.startsWith(location.origin + '/');
        const text = [own ? '' : el.getAttribute('href'), el.getAttribute('src'),
                      el.getAttribute('alt'), el.textContent].join(' ');
        if (text.includes(mark) || text.includes(host)) found.push(el.outerHTML.slice(0, 300));
    }
    return found;
}"""


def _settle(page: Any) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=30_000)
    page.wait_for_timeout(400)  # let lazily loaded elements mount


def _assert_clean(page: Any, tracker: Tracker, where: str) -> None:
    _settle(page)
    injected = page.evaluate(FIND_INJECTED, [MARK, tracker.url.removeprefix("http://")])
    assert injected == [], f"{where}: {injected}"
    assert page.evaluate("window.__hostile") is None, where
    assert tracker.hits == [], f"{where}: the tracker was fetched: {tracker.hits}"


def _visible(page: Any, tag: str) -> None:
    """The hostile string tagged ``tag`` is on the page as literal text."""
    shows(page, f"![{MARK}{tag}](", timeout=15_000)


def _literal(page: Any, text: str) -> None:
    """``text`` is shown as plain text (st.text or st.code), not only inside a table."""
    from playwright.sync_api import expect

    shown = page.locator('[data-testid="stText"], [data-testid="stCode"]').filter(has_text=text)
    expect(shown.first).to_be_visible(timeout=15_000)


def _choose(page: Any, label: str, option: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    _settle(page)
    choice = page.get_by_role("option", name=option).first
    # The label page no longer moves the focus out of a dropdown on its own (only a verdict
    # key does), but the Judges page's polling fragments still rerun while the test opens a
    # list, so open it until it stays.
    for _ in range(5):
        page.get_by_label(label, exact=True).click()
        try:
            choice.wait_for(state="visible", timeout=3_000)
            break
        except PlaywrightTimeout:
            _settle(page)
    choice.click()
    _settle(page)


def test_no_hostile_text_renders_on_any_page(
    browser: Any, make_server: Any, tracker: Tracker, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    names: dict[str, str] = {}

    def seed(store: LabelStore) -> None:
        names.update(_seed(store, tmp_path, tracker.hostile))

    server = make_server(seed)
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.dismiss())
    files = tmp_path / "files"
    files.mkdir()

    # Data: the datasets table, a criterion's guidelines, a failed upload with a hostile
    # header, duplicate hostile ids beyond the preview, a hostile typed path and criterion.
    page.goto(server.url)
    shows(page, "Datasets", timeout=30_000)
    _settle(page)
    page.locator("summary", has_text="Criteria: what annotators judge").click()
    # The hostile criterion sorts first, so it is the one shown.
    expect(page.get_by_label("Criterion", exact=True)).to_have_value(names["criterion"])
    expect(page.get_by_label("Guidelines (shown to annotators as written)")).to_have_value(
        tracker.hostile("guidelines"))
    _assert_clean(page, tracker, "Data page, criteria")
    header = files / "header.csv"
    header.write_text(f'id,"{tracker.hostile("header")}",answer\nh1,q,a\n', encoding="utf-8")
    page.locator("input[type=file]").set_input_files(str(header))
    shows(page, "missing required column 'question'", timeout=30_000)
    _visible(page, "header")
    _assert_clean(page, tracker, "Data page, hostile CSV header")
    dup = files / "dup.csv"
    dup_id = tracker.hostile("dupid")
    dup.write_text("id,question,answer\n" + f'"{dup_id}",q,a\n'
                   + "".join(f"d{i},q {i},a\n" for i in range(23)) + f'"{dup_id}",q2,a2\n',
                   encoding="utf-8")
    page.locator("input[type=file]").set_input_files(str(dup))
    shows(page, "The first 20 of 25 rows", timeout=30_000)
    page.get_by_role("button", name="Import").click()
    shows(page, "share the id")
    _visible(page, "dupid")
    _assert_clean(page, tracker, "Data page, duplicate ids")
    page.get_by_text("On the server").click()
    _choose(page, "File on the server", "Another path...")
    page.get_by_label("Path, relative to the app's directory").fill("../" + tracker.hostile("path"))
    page.keyboard.press("Enter")
    shows(page, "only files under the app's directory")
    _visible(page, "path")
    _assert_clean(page, tracker, "Data page, typed path")
    if not page.get_by_label("Criterion", exact=True).is_visible():
        page.locator("summary", has_text="Criteria: what annotators judge").click()
    _choose(page, "Criterion", "New criterion...")
    page.get_by_label("Name", exact=True).fill(tracker.hostile("newcrit"))
    page.keyboard.press("Enter")
    _settle(page)
    save = page.get_by_role("button", name="Save criterion")
    expect(save).to_be_enabled()
    save.click()
    _visible(page, "newcrit")  # saved, or refused by name validation: either way, literal
    _assert_clean(page, tracker, "Data page, new criterion")

    # Label: the name picker lists hostile annotators; then a hostile row, its guidelines,
    # failure tags, a revisited label with its note, and the keys dialog.
    page.goto(server.url + "/label")
    shows(page, "Who is labelling?", timeout=30_000)
    page.get_by_label("Your name", exact=True).first.click()
    expect(page.get_by_role("option").first).to_be_visible()
    _assert_clean(page, tracker, "Label page, name picker")
    page.keyboard.press("Escape")
    page.goto(f"{server.url}/label?user=eve&dataset={quote(names['dataset'])}"
              f"&criterion={quote(names['criterion'])}")
    shows(page, "labelled", timeout=30_000)
    if page.locator(".st-key-guidelines_panel").count() == 0:  # open on a first row only
        page.get_by_role("button", name="Guidelines").click()
    _literal(page, tracker.hostile("guidelines"))
    page.get_by_text("Reference answer").click()
    _visible(page, "tag1")
    _assert_clean(page, tracker, "Label page, row")
    # The answer is the one piece of row text the page builds HTML for (numbered sentences):
    # select its first sentence, which marks the hostile passage and its words.
    page.keyboard.press("]")
    expect(page.locator(".calibrate-sentence.calibrate-selected")).to_have_count(1)
    expect(page.locator(".calibrate-sentence").first).to_contain_text(f"![{MARK}answer")
    expect(page.locator(".calibrate-best")).to_have_count(1)
    _assert_clean(page, tracker, "Label page, a sentence selected")
    page.keyboard.press("ArrowLeft")
    shows(page, "Revisiting your earlier label")
    _literal(page, tracker.hostile("note"))
    _assert_clean(page, tracker, "Label page, revisited label")
    page.get_by_role("button", name="My labels").click()  # the note, tags and row, listed
    shows(page, "Only you see this list")
    expect(page.get_by_role("dialog").get_by_text("Note: ", exact=False).first).to_be_visible()
    _assert_clean(page, tracker, "Label page, My labels")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    page.keyboard.press("h")
    shows(page, "Keyboard shortcuts")
    _assert_clean(page, tracker, "Label page, keys dialog")
    page.keyboard.press("Escape")

    # Judges: the default built-in's results on the hostile dataset, a row's calls, raw reply.
    page.goto(server.url + "/judges")
    shows(page, "Results of this revision", timeout=30_000)
    _choose(page, "Row details", "row 2")  # the unscored call (reason and error are hostile)
    _literal(page, tracker.hostile("reasoning"))
    page.get_by_text("Raw reply and request").first.click()
    _literal(page, tracker.hostile("reply"))
    _assert_clean(page, tracker, "Judges page")

    # Calibration: the caption names dataset, judge and criterion; open a disagreement.
    page.goto(server.url + "/calibration")
    shows(page, "Disagreements (", timeout=60_000)
    _visible(page, "judge")
    shows(page, "Human note(s)")
    _assert_clean(page, tracker, "Calibration page")

    # Export: the download buttons carry the judge's and dataset's names.
    page.goto(server.url + "/export")
    shows(page, "Labels and verdicts", timeout=30_000)
    expect(page.get_by_role("button", name=f"Download verdicts of ![{MARK}judge]")).to_have_count(
        1, timeout=15_000)
    _assert_clean(page, tracker, "Export page")
    context.close()
    assert tracker.hits == []
