"""``claim_view.answer_html``: the answer as numbered sentences, escaped, with offsets that agree.

Also the sources beside it (``widgets.sources_html``), escaped, holding the text they count.

The browser side (a key selects a sentence, its passage and words are marked) is tested in
Chromium by ``browser/test_browser_label.py``; here the HTML and its data, without Streamlit.
"""

from __future__ import annotations

import html
import json
import re

import pytest
from markup import answer_shown, sources_shown

from calibrate_app.claim_view import answer_html, panel_title, shown_text
from calibrate_app.widgets import LONG_PASSAGE, sources_html
from labels.models import Item, Source

HOSTILE = [
    "<script>window.__hostile = 1</script> is bad.", "![x](http://127.0.0.1:9/t) *b* $x$.",
    '"><img src=x onerror=alert(1)> 1,500 refunds.', "&lt;b&gt; &amp; entities stay text.",
    "<!-- c --> </div></span> closes nothing.", "\u202e reversed \u2060 joiner.",
]


def sentences(body: str) -> list[dict[str, object]]:
    """Each sentence's number, text (unescaped), links and found offsets."""
    found = re.findall(
        r'<span class="calibrate-sentence" data-sentence="(\d+)" data-links="([^"]*)" '
        r'data-found="([^"]*)"><span class="calibrate-sn">\d+</span>'
        r'<span class="calibrate-st">([^<]*)</span></span>', body)
    return [{"n": int(n), "links": json.loads(html.unescape(links)),
             "found": json.loads(html.unescape(own)), "text": html.unescape(text)}
            for n, links, own, text in found]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_answers_are_text_in_the_page_own_tags(text: str) -> None:
    answer = f"First {text} Second sentence here."
    body = answer_html(answer, [text, "Second passage."])
    tags, shown = answer_shown(body)
    assert tags == {"div", "span"}
    assert shown == answer
    assert "<script" not in body and "<img" not in body and "<!--" not in body


def test_sentences_are_numbered_and_link_to_their_passages() -> None:
    answer = "Refunds take 14 days.\n\n- Shipping is free. The moon is cheese."
    sources = ["Shipping is free on all orders.", "Refunds are issued within 14 days."]
    found = sentences(answer_html(answer, sources))
    assert [(s["n"], s["text"]) for s in found] == [
        (1, "Refunds take 14 days."), (2, "Shipping is free."), (3, "The moon is cheese.")]
    # Sentence 1: refund, tak, 14 (2), day = 5; passage 2 (index 1) shares refund, 14, day: 4/5.
    assert found[0]["links"] == [[1, 0.8, [0, 7, 26, 28, 29, 33], 1]]
    assert found[0]["found"] == [0, 7, 13, 15, 16, 20]  # "Refunds", "14", "days"
    assert found[1]["links"] == [[0, 1.0, [0, 8, 12, 16], 0]]  # shipping, free
    assert found[2]["links"] == [] and found[2]["found"] == []


def test_offsets_count_utf16_units_as_javascript_does() -> None:
    # "😀" is one code point and two UTF-16 units: offsets after it shift by one more.
    body = answer_html("😀 Refunds 1500.", ["😀😀 refunds: 1500"])
    (only,) = sentences(body)
    assert only["text"] == "😀 Refunds 1500."
    assert only["found"] == [3, 10, 11, 15]
    assert only["links"] == [[0, 1.0, [5, 12, 14, 18], 1]]
    assert 'data-passages="[18]"' in body  # the passage's length in UTF-16 units


def test_line_breaks_and_nul_become_what_the_browser_holds() -> None:
    assert shown_text("a\r\nb\rc\0d") == "a\nb\nc\ufffdd"
    assert shown_text(None) == ""
    _, shown = answer_shown(answer_html("One.\r\nTwo.", []))
    assert shown == "One.\nTwo."


def test_an_empty_answer_says_so() -> None:
    body = answer_html("", ["A passage."])
    assert sentences(body) == []
    assert answer_shown(body) == ({"div"}, "(empty)")


# -- the sources beside the answer: one element of escaped passages (widgets.sources_html) ----


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_passages_and_ids_are_text_in_the_page_own_tags(text: str) -> None:
    item = Item(item_id="r", question="q", answer="a", sources=(
        Source(text=f"Passage {text}", source_id=f"id {text}"),
        Source(text=f"Long {text} " + "x" * LONG_PASSAGE, source_id=text)))
    body = sources_html(item, row="row_abc")
    tags, titles, texts = sources_shown(body)
    assert tags == {"div", "details", "summary"}
    assert texts == [f"Passage {text}", f"Long {text} " + "x" * LONG_PASSAGE]
    assert titles == [f"Source 1 · id: id {text}", f"Source 2: a long passage, "
                      f"{len(item.sources[1].text):,} characters (folded) · id: {text}"]
    assert "<script" not in body and "<img" not in body and "<!--" not in body
    assert 'data-row="row_abc"' in body


def test_passages_hold_what_the_answer_offsets_count() -> None:
    """A passage shows as the browser will hold it, the same text the sentence links count."""
    passage = "Refunds:\r\n1500 in 14 days\rok\0."
    body = sources_html(Item(item_id="r", question="q", answer="a",
                             sources=(Source(text=passage), Source(text=""))))
    _, titles, texts = sources_shown(body)
    assert texts == [shown_text(passage), "(empty)"] and titles == ["Source 1", "Source 2"]
    lengths = json.loads(re.search(r'data-passages="([^"]*)"',
                                   answer_html("1500 refunds.", [passage])).group(1))
    assert lengths == [len(shown_text(passage))]


def test_no_sources_says_so_and_the_row_token_is_checked() -> None:
    body = sources_html(Item(item_id="r", question="q", answer="a"))
    assert sources_shown(body) == ({"div"}, ["This row has no sources."], [])
    with pytest.raises(ValueError):
        sources_html(Item(item_id="r", question="q", answer="a"), row='x" onclick="y')


def test_a_panel_title_heads_the_passages_as_text_and_is_not_a_passage() -> None:
    """The caption of each evidence panel is its first line, escaped (one element, no block)."""
    item = Item(item_id="r", question="q", answer="a", sources=(Source(text="P"),))
    body = sources_html(item, row="row_abc", title="Sources (1) · <b>J</b> & K")
    assert body.startswith('<div class="calibrate-sources" data-row="row_abc">'
                           '<div class="calibrate-panel-title">Sources (1) · &lt;b&gt;J&lt;/b&gt; '
                           "&amp; K</div>")
    assert sources_shown(body) == ({"div"}, ["Source 1"], ["P"])
    assert panel_title("Answer <i>") == '<div class="calibrate-panel-title">Answer &lt;i&gt;</div>'
