"""The Label page's widgets keep their keys from row to row.

A key press costs less when the browser reuses its widgets (issue 29 item 9); that must not let
a quick second press label a row the annotator has not seen, or a note carry over to the next row.
"""

from __future__ import annotations

from labels import LabelStore
from tests.calibrate_app.pages.test_data_and_label_pages import app, press, question


def test_a_press_for_a_row_the_browser_has_not_shown_yet_is_dropped(seeded: LabelStore) -> None:
    at = app(dataset="demo")
    seen = at.text_input(key="row_seen")
    first, first_token = question(at), seen.value
    press(at, "verdict_pass")
    second = question(at)
    assert second != first and at.text_input(key="row_seen").value != first_token
    # A second press sent before the browser received the second row: its widget values
    # still name the first row, while the button's arguments name the second.
    at.text_input(key="row_seen").set_value(first_token)
    press(at, "verdict_fail")
    labels = seeded.current_labels("demo", annotator="alice")
    assert list(labels["verdict"]) == ["pass"]
    assert question(at) == second
    press(at, "verdict_fail")  # the browser has the second row now: the press counts
    assert sorted(seeded.current_labels("demo", annotator="alice")["verdict"]) == ["fail", "pass"]


def test_the_note_box_starts_empty_on_the_next_row(seeded: LabelStore) -> None:
    at = app(dataset="demo")
    note = at.text_area(key="note")
    note.input("only about this row")
    press(at, "nav_skip")
    assert at.text_area(key="note").value == ""
    at.text_area(key="note").input("kept while the row stays")
    press(at, "tag_1")
    assert at.text_area(key="note").value == "kept while the row stays"
    press(at, "verdict_fail")
    label = seeded.current_labels("demo", annotator="alice").iloc[0]
    assert label["note"] == "kept while the row stays"
    assert at.text_area(key="note").value == ""


def test_a_revisited_label_brings_back_its_note(seeded: LabelStore) -> None:
    at = app(dataset="demo")
    at.text_area(key="note").input("first thoughts")
    press(at, "verdict_unsure")
    assert at.text_area(key="note").value == ""
    press(at, "nav_back")
    assert at.text_area(key="note").value == "first thoughts"
