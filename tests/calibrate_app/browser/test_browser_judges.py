"""The Judges page in real Chromium at 1366×768: nothing clipped, a try that stores nothing.

The real app server (``calibrate app``'s command) on a dataset of 12 labelled rows: the preview's
Order control shows both its labels, the scripted stand-in is picked from the Model picker, "Try
on 4 rows" shows the verdicts beside the experts', and once the server has stopped the database
holds no judge config, run or call. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from app_browser import ARTIFACTS, open_page, shows

from judges.stores.judge_store import JudgeStore
from labels import LabelStore

pytestmark = pytest.mark.browser

ROWS = 12
# Columns whose content is wider than the column (the overflow is cut off, as "swappe…" was),
# and buttons whose text is wider than the button.
CLIPPED = """() => {
  const out = [];
  for (const el of document.querySelectorAll('[data-testid="stColumn"], button')) {
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      out.push(`${el.tagName} "${el.innerText.slice(0, 40)}" ${el.scrollWidth}>${el.clientWidth}`);
    }
  }
  return out;
}"""
ORDER_FITS = """() => {
  const group = document.querySelector('.st-key-judge_preview_order');
  const column = group.closest('[data-testid="stColumn"]').getBoundingClientRect();
  return [...group.querySelectorAll('button')].map(b => {
    const box = b.getBoundingClientRect();
    return {text: b.innerText, fits: box.right <= column.right + 0.5
            && b.scrollWidth <= b.clientWidth};
  });
}"""


def _labelled(store: LabelStore) -> None:
    for k in range(ROWS):
        store.add_label("docs", f"q{k}", "alice", "pass" if k % 3 else "fail")


def test_judges_page_fits_1366_and_a_try_stores_nothing(browser: Any, rows_server: Any) -> None:
    from playwright.sync_api import expect

    server = rows_server({"docs": ROWS}, then=_labelled)
    page = open_page(browser, server.url + "/judges", width=1366, height=768)
    shows(page, "Preview row", timeout=60_000)
    expect(page.locator(".st-key-judge_preview_order button")).to_have_count(2, timeout=10_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "judges-1366x768.png"))
    order = page.evaluate(ORDER_FITS)
    assert [o["text"] for o in order] == ["original", "swapped"]
    assert all(o["fits"] for o in order), order
    assert page.evaluate(CLIPPED) == []
    # The one-shot faithfulness judge (the rows are labelled for faithfulness)...
    page.locator(".st-key-judge_config").click()
    page.get_by_role("option", name="faithfulness-oneshot (built-in)").click()
    editor = page.get_by_role("textbox", name="Config (YAML)")
    expect(editor).to_have_value(re.compile("^name: faithfulness-oneshot"), timeout=30_000)
    # ...with the scripted stand-in from the Model picker: an unsaved edit, labelled no model.
    page.locator(".st-key-judge_model").click()
    page.get_by_role("option", name="scripted/demo — stand-in, not a model").click()
    shows(page, "Scripted stand-in: not a model", timeout=30_000)
    expect(editor).to_have_value(re.compile("model: scripted/demo"))
    expect(page.locator(".st-key-judge_run button")).to_be_disabled(timeout=10_000)
    page.locator(".st-key-judge_try_rows input").fill("4")
    page.keyboard.press("Enter")
    try_button = page.get_by_role("button", name="Try on 4 rows")
    expect(try_button).to_be_visible(timeout=10_000)
    try_button.click()
    shows(page, "of 4 rows agree with the experts", timeout=30_000)
    shows(page, "Nothing was saved")
    page.get_by_text("Nothing was saved").scroll_into_view_if_needed()
    page.mouse.move(5, 5)  # no tooltip over the result
    expect(page.get_by_role("tooltip")).to_have_count(0, timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "judges-try-1366x768.png"))
    assert page.evaluate(CLIPPED) == []
    page.context.close()

    store = server.open_store()
    try:
        judges = JudgeStore(store.db)
        assert (len(judges.configs()), len(judges.runs()), len(judges.calls_frame())) == (0, 0, 0)
    finally:
        store.db.close()
