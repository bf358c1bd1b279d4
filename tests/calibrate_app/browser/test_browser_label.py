"""The label page in real Chromium.

Re-labelling keeps tags and notes, an empty queue points elsewhere, skips survive a reload, the
keyboard stays on the page, everything needed to label fits a 1366×768 laptop screen with 40 %
of its height for the sources, keys scroll the sources and jump between their passages, an
answer sentence marks the passages and words it shares, and "My labels" finds a label, opens it
and its edit keeps the row's provenance (at 1366×768 and 800×900, with screenshots in
``test-artifacts/``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_browser import (
    ARTIFACTS,
    fail_with_note,
    open_page,
    question,
    question_is,
    ready,
    settled,
    shows,
    tags_chosen,
)

from calibrate_app.widgets import LONG_PASSAGE
from judges.workspace import Workspace
from labels import LabelStore, Provenance, import_rows
from labels.sampling import QueueSettings

pytestmark = pytest.mark.browser
KIM_ON_DEMO = "/label?user=kim&dataset=demo&criterion=faithfulness"


def _file_order(store: LabelStore) -> None:
    for criterion in ("faithfulness", "correctness"):
        store.save_queue_settings("demo", criterion, QueueSettings("file", 0, 1))


def test_relabelling_keeps_the_tags_and_note(browser: Any, rows_server: Any) -> None:
    from playwright.sync_api import expect

    server = rows_server({"demo": 4}, then=_file_order)
    page = open_page(browser, server.url + KIM_ON_DEMO)
    ready(page)
    first = question(page)
    page.keyboard.press("2")  # contradiction
    page.keyboard.press("3")  # missing condition
    tags_chosen(page, "contradiction", "missing condition")
    fail_with_note(page, "drops the weekend condition")
    shows(page, "1 / 4 labelled")
    question_is(page, first, negate=True)
    # Back to it: the earlier tags and note are on screen, and a verdict key keeps them.
    page.keyboard.press("ArrowLeft")
    shows(page, "Revisiting your earlier label: FAIL")
    question_is(page, first)
    tags_chosen(page, "contradiction", "missing condition")
    expect(page.locator("textarea")).to_have_value("drops the weekend condition")
    page.keyboard.press("f")
    shows(page, "1 / 4 labelled")
    question_is(page, first, negate=True)
    page.context.close()

    store = server.open_store()
    try:
        history = store.label_history_frame("demo")
        assert len(history) == 2
        assert list(history["verdict"]) == ["fail", "fail"]
        assert [json.loads(t) for t in history["failure_tags"]] == [
            ["contradiction", "missing condition"]] * 2
        assert list(history["note"]) == ["drops the weekend condition"] * 2
    finally:
        store.db.close()


def test_a_newcomer_lands_on_work_and_an_empty_queue_points_to_more(
    browser: Any, rows_server: Any
) -> None:
    from playwright.sync_api import expect

    def label(store: LabelStore) -> None:
        for item_id in ("q0", "q1"):  # "done" is fully labelled for both pointwise criteria
            for criterion in ("faithfulness", "correctness"):
                store.add_label("done", item_id, "dana", "pass", criterion=criterion)
        store.add_label("todo", "q0", "dana", "pass", criterion="faithfulness")

    server = rows_server({"done": 2, "todo": 3}, then=label)
    # No dataset in the address: the first dataset and criterion with rows left, not "done".
    page = open_page(browser, f"{server.url}/label?user=newcomer")
    ready(page)
    assert re.search(r"[?&]dataset=todo\b", page.url)
    assert re.search(r"[?&]criterion=faithfulness\b", page.url)  # the default criterion first
    shows(page, "0 / 2 labelled")
    # A dataset with nothing left says why and lists where labels are still needed.
    page.goto(f"{server.url}/label?user=newcomer&dataset=done&criterion=faithfulness")
    shows(page, "Nothing left for you here", timeout=30_000)
    shows(page, "labels from one annotator")
    shows(page, "These still need labels from you")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(1, timeout=10_000)
    page.get_by_role("button", name="Label the first of these").click()
    page.wait_for_url(re.compile(r"dataset=todo"), timeout=10_000)
    ready(page)
    shows(page, "0 / 2 labelled")
    page.context.close()


def test_skips_survive_a_reload_and_come_last(browser: Any, rows_server: Any) -> None:
    server = rows_server({"demo": 3}, then=_file_order)
    page = open_page(browser, server.url + KIM_ON_DEMO)
    ready(page)
    assert question(page) == "Question number 0?"
    page.keyboard.press("s")
    shows(page, "0 / 3 labelled, 1 skipped")
    question_is(page, "Question number 1?")
    page.reload()
    ready(page)
    shows(page, "0 / 3 labelled, 1 skipped")
    question_is(page, "Question number 1?")  # not the skipped row
    page.keyboard.press("p")
    question_is(page, "Question number 2?")
    page.keyboard.press("p")
    question_is(page, "Question number 0?")  # the skipped row, last
    shows(page, "2 / 3 labelled, 1 skipped")
    page.context.close()


def test_keys_work_after_choosing_a_dataset_and_question_mark_opens_help(
    browser: Any, rows_server: Any
) -> None:
    from playwright.sync_api import expect

    server = rows_server({"alpha": 3, "beta": 4})
    page = open_page(browser, f"{server.url}/label?user=kim&dataset=alpha&criterion=faithfulness")
    ready(page)
    shows(page, "0 / 3 labelled")
    # Choose the other dataset with the keyboard only.
    page.get_by_label("Dataset").click()
    page.keyboard.type("beta")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"dataset=beta"), timeout=10_000)
    shows(page, "0 / 4 labelled")
    settled(page)
    # The focus is still in the (closed) dropdown: nothing moves it on a rerun or a choice.
    focus_in_dropdown = ("!!document.activeElement && "
                         "!!document.activeElement.closest('[data-testid=\"stSelectbox\"]')")
    assert page.evaluate(focus_in_dropdown)
    page.keyboard.press("p")  # labels the row; typed into the dropdown it would do nothing
    shows(page, "1 / 4 labelled")
    expect(page.get_by_label("Dataset")).not_to_have_value("p")
    assert not page.evaluate(focus_in_dropdown)  # the verdict key handed the focus back
    settled(page)
    page.keyboard.press("?")
    shows(page, "Keyboard shortcuts")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    page.context.close()


def test_a_dropdown_opened_right_after_a_choice_stays_open(
    browser: Any, rows_server: Any
) -> None:
    """A fast user picks a dataset and at once opens the criterion list: it must stay open.

    Before, the page took the focus out of any dropdown 150 ms after a choice, which closed a
    dropdown opened within that time (tests had to reopen it).
    """
    from playwright.sync_api import expect

    server = rows_server({"alpha": 3, "beta": 4})
    page = open_page(browser, f"{server.url}/label?user=kim&dataset=alpha&criterion=faithfulness")
    ready(page)
    page.keyboard.press("p")  # a verdict reruns the labelling part of the page
    shows(page, "1 / 3 labelled")
    # Keyboard speed: choose beta, Tab to the criterion list and open it, all within a few
    # milliseconds (the old hand-back blurred whatever dropdown had focus 150 ms later).
    page.get_by_label("Dataset").click()
    page.keyboard.type("beta")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")
    option = page.get_by_role("option", name="correctness")
    expect(option).to_be_visible()
    page.wait_for_url(re.compile(r"dataset=beta"), timeout=10_000)
    settled(page)
    page.wait_for_timeout(500)  # longer than any hand-back delay the page ever had
    expect(option).to_be_visible()
    option.click()
    page.wait_for_url(re.compile(r"criterion=correctness"), timeout=10_000)
    shows(page, "0 / 4 labelled")
    page.context.close()


def _long_sources(tmp_path: Path) -> Callable[[LabelStore], None]:
    """A dataset ``long``: two rows whose four passages overflow the sources panel.

    Passage 1 is 40 lines (taller than the panel), 2 is one line, 3 is longer than
    ``LONG_PASSAGE`` (so it starts folded) and 4 is 20 lines, so that N can bring 3 to the top.
    The answer's first sentence shares most with passage 4's line 15 (its only "1500" and
    "refunds"); the second shares nothing. The second row differs from the first only in its
    question: its evidence must still start at the top, with nothing marked.
    """
    lines = "\n".join
    four = [f"Passage four, line {k}." for k in range(20)]
    four[15] = "Passage four, line 15: refunds 1500 in total."
    sources = [lines(f"Passage one, line {k}." for k in range(40)), "Passage two.",
               "Passage three. " * (LONG_PASSAGE // 15 + 10), lines(four)]
    answer = "Line 15 of passage four says 1,500 refunds. The moon is made of cheese."
    rows = [{"id": f"long{k}", "question": f"Question {k} with long sources?",
             "answer": answer, "sources": sources} for k in range(2)]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return lambda store: import_rows(store, path, "long")  # type: ignore[func-returns-value]


# The panel's scroll position and where passage n (1-based) sits below its top edge, in px.
_PANEL = """n => { const panel = document.querySelector('.st-key-sources_panel');
  const passage = panel.querySelector(`.calibrate-passage[data-passage="${n}"]`);
  return {top: panel.scrollTop, client: panel.clientHeight,
          offset: passage.getBoundingClientRect().top - panel.getBoundingClientRect().top,
          marked: passage.classList.contains('calibrate-current')}; }"""


def test_evidence_gets_the_screen_and_keys_move_through_it_at_1366_by_768(
    browser: Any, rows_server: Any, tmp_path: Path
) -> None:
    """The controls fit 1366×768 and the sources get 40 % of its height.

    J / K scroll the sources; N / Shift+N jump between passages; a long one is folded. ] / [
    (or a click) select a sentence of the answer, which marks its passages and words, at
    1366×768 and at 800×900.
    """
    from playwright.sync_api import expect

    server = rows_server({}, then=_long_sources(tmp_path))
    page = open_page(browser, server.url + "/label?user=kim&dataset=long&criterion=faithfulness",
                     width=1366, height=768)
    ready(page)
    # The progress bar can reach the browser after the buttons on a loaded machine: wait for it.
    expect(page.get_by_test_id("stProgress")).to_have_count(1, timeout=10_000)
    controls = {
        "verdicts": page.locator("[class*='st-key-verdict_'] button"),
        "tags": page.locator("[class*='st-key-tag_'] button"),
        "save": page.locator("[class*='st-key-save_note'] button"),
    }
    counts = {name: loc.count() for name, loc in controls.items()}
    assert counts == {"verdicts": 3, "tags": 4, "save": 1}
    for name, loc in controls.items():
        for k in range(loc.count()):
            box = loc.nth(k).bounding_box()
            assert box is not None, name
            assert box["y"] >= 0 and box["y"] + box["height"] <= 768, (name, k, box)
    sources = page.locator(".st-key-sources_panel").bounding_box()
    answer = page.locator(".st-key-answer_panel").bounding_box()
    assert sources is not None and answer is not None
    assert sources["height"] >= 0.4 * 768, sources  # 126-128 px before issue 29
    assert answer["height"] == sources["height"]  # the answer scrolls on its own, as tall
    # Passage 3 is folded: its title shows, its text does not.
    shows(page, "Source 3: a long passage")
    expect(page.get_by_text("Passage three.", exact=False)).not_to_be_visible()

    def panel(n: int) -> dict[str, float]:
        return dict(page.evaluate(_PANEL, n))

    def moved(condition: str) -> None:
        page.wait_for_function(
            f"() => {{ const p = document.querySelector('.st-key-sources_panel'); "
            f"return {condition}; }}", timeout=5_000)

    assert panel(1)["top"] == 0
    page.keyboard.press("j")  # 40 % of the panel's height down, then back up
    moved("p.scrollTop > 0")
    step = panel(1)
    assert abs(step["top"] - round(0.4 * step["client"])) <= 1, step
    page.keyboard.press("j")
    moved(f"p.scrollTop > {step['top']}")
    page.keyboard.press("k")
    page.keyboard.press("k")
    moved("p.scrollTop === 0")
    page.keyboard.press("n")  # passage 2 to the top, then 3, then back to 2
    moved("p.scrollTop > 0")
    second = panel(2)
    assert second["marked"] and 0 <= second["offset"] <= 12, second
    page.keyboard.press("n")
    moved(f"p.scrollTop > {second['top']}")
    third = panel(3)
    assert third["marked"] and 0 <= third["offset"] <= 12, third
    page.keyboard.press("Enter")  # N put the focus on the folded passage's title: it opens
    expect(page.get_by_text("Passage three.", exact=False)).to_be_visible(timeout=5_000)
    page.keyboard.press("Shift+N")
    moved(f"p.scrollTop === {second['top']}")
    assert panel(2)["marked"] and not panel(3)["marked"]
    # The answer's sentences read like the passages' text: the same font and size.
    font = ("sel => { const s = getComputedStyle(document.querySelector(sel)); "
            "return [s.fontFamily, s.fontSize]; }")
    assert page.evaluate(font, ".calibrate-st") == page.evaluate(
        font, ".calibrate-passage[data-passage='2'] .calibrate-passage-text")
    _sentences_link_to_passages(page, "1366x768")
    page.keyboard.press("?")  # the cheat sheet lists the sentence keys
    shows(page, "next / previous answer sentence (or click one)")
    page.screenshot(path=str(ARTIFACTS / "label-keys-dialog.png"))
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    page.set_viewport_size({"width": 800, "height": 900})
    page.locator(".calibrate-sentence").first.click()  # the mouse selects too
    _sentence_selected(page, 1, "800x900")
    page.keyboard.press("]")
    _sentence_selected(page, 2, "800x900")
    page.keyboard.press("[")
    _sentence_selected(page, 1, "800x900")
    shows(page, "0 / 2 labelled")  # none of these keys labelled the row
    # A verdict: the next row (the same evidence) starts at the top, with nothing marked.
    page.keyboard.press("j")
    moved("p.scrollTop > 0")
    page.keyboard.press("p")
    shows(page, "1 / 2 labelled")
    moved("p.scrollTop === 0")
    fresh = page.evaluate("""() => [document.querySelector('.st-key-answer_panel').scrollTop,
      document.querySelectorAll('.calibrate-selected, .calibrate-linked, .calibrate-best, '
        + '.calibrate-current').length, CSS.highlights.has('calibrate-claim')]""")
    assert fresh == [0, 0, False], fresh
    page.context.close()


# The selected sentence, the passages marked as linked / best, the marked words, and whether the
# best passage's telling word (1500, on its line 15 of 20) is in view in the sources panel.
_CLAIMS = """() => {
  const panel = document.querySelector('.st-key-sources_panel');
  const selected = [...document.querySelectorAll('.calibrate-sentence.calibrate-selected')];
  const passages = [...panel.querySelectorAll('.calibrate-passage')];
  const marked = (cls) => passages.filter((el) => el.classList.contains(cls)).map(
    (el) => el.dataset.passage);
  const words = CSS.highlights.get('calibrate-claim');
  const ranges = words ? [...words] : [];
  const box = panel.getBoundingClientRect();
  const inBest = ranges.filter((r) => panel.querySelector('.calibrate-best') &&
    panel.querySelector('.calibrate-best').contains(r.startContainer));
  const number = inBest.find((r) => r.toString() === '1500');
  const first = number ? number.getBoundingClientRect() : null;
  const status = document.querySelector('.calibrate-claim-status');
  return {selected: selected.map((el) => el.dataset.sentence), status: status.textContent,
          linked: marked('calibrate-linked'), best: marked('calibrate-best'),
          words: ranges.map((r) => r.toString()), bestWords: inBest.map((r) => r.toString()),
          visible: first !== null && first.top >= box.top && first.bottom <= box.bottom};
}"""


def _sentence_selected(page: Any, number: int, size: str) -> dict[str, Any]:
    page.wait_for_function(
        f"() => !!document.querySelector('.calibrate-sentence.calibrate-selected"
        f"[data-sentence=\"{number}\"]')", timeout=5_000)
    claims = dict(page.evaluate(_CLAIMS))
    assert claims["selected"] == [str(number)], claims
    if number == 1:  # its best passage is marked, its telling line scrolled to, words marked
        assert claims["best"] == ["4"], claims
        assert claims["linked"] == ["1", "2", "3", "4"], claims  # all say "passage"
        assert {"1500", "refunds", "15", "four"} <= set(claims["bestWords"]), claims
        assert {"Line", "15", "1,500", "refunds"} <= set(claims["words"]), claims  # sentence's
        assert claims["visible"], claims
        # 8 of 9: line, 15 (2), passage, four, 1500 (2), refund; only "says" is not there.
        assert claims["status"] == ("Sentence 1: best Source 4 (89 % of its words and "
                                    "numbers); also Sources 1, 2, 3."), claims
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"label-sentence-{number}-{size}.png"))
    return claims


def _sentences_link_to_passages(page: Any, size: str) -> None:
    """] selects sentence 1 and marks passage 4; ] again selects 2, which marks nothing."""
    shows(page, "click a sentence or [ / ] to see its sources")
    page.keyboard.press("]")
    _sentence_selected(page, 1, size)
    page.keyboard.press("]")
    claims = _sentence_selected(page, 2, size)
    assert claims["best"] == claims["linked"] == claims["words"] == [], claims
    assert claims["status"] == "Sentence 2: no source shares its words or numbers.", claims
    page.keyboard.press("]")  # the last sentence stays selected
    _sentence_selected(page, 2, size)


# Every visible button whose label is cut (its text wider than its box) or that sticks out of
# the window: at 800 px buttons and tags must wrap onto more lines instead.
_CUT_BUTTONS = """() => [...document.querySelectorAll('button')].filter(b => b.offsetParent)
  .filter(b => { const text = b.querySelector('[data-testid="stMarkdownContainer"]') || b;
    return text.scrollWidth > text.clientWidth + 1 || b.getBoundingClientRect().right >
      window.innerWidth + 1; }).map(b => b.innerText)"""


def _stratified(tmp_path: Path) -> Callable[[LabelStore], None]:
    """File-free judge verdicts for ``demo`` (q0..q5) and the stratified order on them."""

    def seed(store: LabelStore) -> None:
        from judges.verdicts import import_verdicts

        verdicts = tmp_path / "verdicts.csv"
        verdicts.write_text("id,verdict\n" + "".join(
            f"q{i},{'pass' if i % 2 else 'fail'}\n" for i in range(6)), encoding="utf-8")
        import_verdicts(Workspace.of(store), verdicts, dataset="demo", judge="strata-judge")
        store.save_queue_settings("demo", "faithfulness", QueueSettings("stratified", 0, 1))

    return seed


def test_my_labels_finds_a_label_and_its_edit_keeps_the_provenance(
    browser: Any, rows_server: Any, tmp_path: Path
) -> None:
    """M, a search, Open, a verdict key: the edit is stored with the row's first provenance.

    At 1366×768 and 800×900: the guidelines panel (open on the first row, G toggles it), the
    drawer, and the inline "Saved" line where a toast covered the switch-user button.
    """
    from playwright.sync_api import expect

    server = rows_server({"demo": 6}, then=_stratified(tmp_path))
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_page(browser, server.url + KIM_ON_DEMO, width=1366, height=768)
    ready(page)
    expect(page.locator(".st-key-guidelines_panel")).to_be_visible()  # the first row
    page.screenshot(path=str(ARTIFACTS / "label-1366x768-first-row.png"))
    noted = question(page)
    page.keyboard.press("2")  # contradiction
    tags_chosen(page, "contradiction")
    fail_with_note(page, "drops the weekend condition")
    shows(page, "1 / 6 labelled")
    question_is(page, noted, negate=True)
    expect(page.locator(".st-key-guidelines_panel")).to_have_count(0)  # closed from row 2 on
    # The confirmation is a line under the progress, not a toast over the top bar.
    shows(page, "Saved: fail with a note")
    expect(page.get_by_test_id("stToast")).to_have_count(0)
    switch = page.get_by_role("button", name="Not kim?")
    box = switch.bounding_box()
    assert box is not None
    assert page.evaluate("([x, y]) => !!document.elementFromPoint(x, y).closest("
                         "'.st-key-switch_user')",
                         [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
    for n, key in enumerate(("p", "u"), start=2):
        before = question(page)
        page.keyboard.press(key)
        shows(page, f"{n} / 6 labelled")
        question_is(page, before, negate=True)
    skipped = question(page)
    page.keyboard.press("s")
    shows(page, "3 / 6 labelled, 1 skipped")
    queue_row = question(page)
    assert queue_row != skipped
    # M opens the drawer with the focus in its search box: type, Enter, one row matches.
    page.keyboard.press("m")
    shows(page, "Only you see this list")
    drawer = page.get_by_role("dialog")
    expect(drawer.locator("[class*='st-key-history_row_']")).to_have_count(4, timeout=10_000)
    expect(page.locator(".st-key-history_search input")).to_be_focused(timeout=5_000)
    page.keyboard.type("WEEKEND")
    page.keyboard.press("Enter")
    expect(drawer.locator("[class*='st-key-history_row_']")).to_have_count(1, timeout=10_000)
    expect(drawer.get_by_text(noted)).to_be_visible()
    expect(drawer.get_by_text("Note: drops the weekend condition")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "my-labels-1366x768.png"))
    drawer.locator(".st-key-history_open_0 button").focus()
    for key in ("p", "s", "ArrowLeft"):  # the row behind the drawer takes no key
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    shows(page, "Revisiting your earlier label: FAIL")
    shows(page, "Next (S) goes back to your queue")
    question_is(page, noted)
    shows(page, "3 / 6 labelled, 1 skipped")  # the keys pressed in the drawer did nothing
    tags_chosen(page, "contradiction")
    expect(page.locator("textarea")).to_have_value("drops the weekend condition")
    page.screenshot(path=str(ARTIFACTS / "label-1366x768-opened-from-my-labels.png"))
    page.keyboard.press("p")  # the edit
    shows(page, "Edited: pass with a note")
    question_is(page, queue_row)  # back to the queue, where the label was opened from
    shows(page, "3 / 6 labelled, 1 skipped")
    assert page.evaluate(_CUT_BUTTONS) == []
    page.screenshot(path=str(ARTIFACTS / "label-1366x768.png"))
    page.context.close()

    # 800×900: G opens the panel above the evidence; nothing is cut, the drawer fits.
    page = open_page(browser, server.url + KIM_ON_DEMO, width=800, height=900)
    ready(page)
    expect(page.locator(".st-key-guidelines_panel")).to_have_count(0)
    page.keyboard.press("g")
    expect(page.locator(".st-key-guidelines_panel")).to_be_visible(timeout=10_000)
    settled(page)
    assert page.evaluate(_CUT_BUTTONS) == []
    panel = page.locator(".st-key-guidelines_panel").bounding_box()
    answer = page.locator(".st-key-answer_panel").bounding_box()
    assert panel is not None and answer is not None
    assert panel["y"] + panel["height"] <= answer["y"]  # above the evidence, not over it
    for selector in ("[class*='st-key-verdict_'] button", "[class*='st-key-tag_'] button",
                     "[class*='st-key-save_note'] button"):  # every control without scrolling
        for k in range(page.locator(selector).count()):
            box = page.locator(selector).nth(k).bounding_box()
            assert box is not None and box["y"] + box["height"] <= 900, (selector, k, box)
    page.screenshot(path=str(ARTIFACTS / "label-800x900-guidelines.png"))
    page.keyboard.press("m")
    shows(page, "Only you see this list")
    expect(page.get_by_role("dialog").locator("[class*='st-key-history_row_']")
           ).to_have_count(4, timeout=10_000)
    # The drawer slides in from the right edge: its buttons are past the window until it is in.
    page.wait_for_function(f"() => ({_CUT_BUTTONS})().length === 0", timeout=5_000)
    page.screenshot(path=str(ARTIFACTS / "my-labels-800x900.png"))
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=10_000)
    page.context.close()

    store = server.open_store()
    try:
        item = next(i for i in store.item_ids("demo") if store.item("demo", i).question == noted)
        history = store.history("demo", item, annotator="kim")
        assert [(h.verdict, h.note, h.failure_tags) for h in history] == [
            ("fail", "drops the weekend condition", ("contradiction",)),
            ("pass", "drops the weekend condition", ("contradiction",))]
        kept = store.current_provenance("demo", item, "kim", "faithfulness")
        # How the stratified queue served it: the judge's verdict of the row is its stratum.
        judge = {store.current_provenance("demo", i, "kim", "faithfulness").judge
                 for i in store.labelled_item_ids("demo", "kim", "faithfulness")}
        assert len(judge) == 1 and None not in judge
        assert kept == Provenance("by_verdict", stratum="pass" if int(item[1:]) % 2 else "fail",
                                  judge=judge.pop())
        assert store.skipped("demo", "faithfulness", "kim") == [
            next(i for i in store.item_ids("demo") if store.item("demo", i).question == skipped)]
    finally:
        store.db.close()
