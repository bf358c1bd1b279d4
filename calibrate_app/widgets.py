"""Render helpers shared by the pages.

Nothing stored in the database or read from a file is trusted: row text (questions, answers,
sources, references), ids, notes, guidelines, judge replies, and the names of datasets, judges,
annotators, criteria and failure tags can all be written by someone other than the person looking
at the page (an uploaded file, a CLI import, a judge, a browser user with the access code, a row
written before names were validated). Streamlit renders markdown in ``st.markdown``, captions,
alerts, toasts, widget labels, button labels, expander and tab titles, metric labels and values,
progress text, help tooltips and radio / pills / segmented-control options: an image there is
fetched from any URL (leaking the viewer's address), a link is clickable, LaTeX is typeset.

So: long text goes through :func:`literal` (``st.text``) or ``st.code``, or into HTML built here
with every piece of it escaped by :func:`html.escape` (the sources, :func:`sources_html`, and the
Label page's answer, :mod:`calibrate_app.claim_view`); a value inside a message
or a label goes through :func:`escape_markdown`; selectbox and multiselect options and dataframe
cells and headers are plain text already (checked in Chromium) and need nothing.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import streamlit as st

from calibrate_app import claim_view
from labels.errors import CalibrateError
from labels.models import Criterion, Item

if TYPE_CHECKING:
    from judges.reporting import JudgeRef

T = TypeVar("T")

# Trusted, constant CSS: the question stands out; long text keeps its line breaks.
_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; padding-bottom: 2rem; }
.st-key-question [data-testid="stText"] { font-size: 1.12rem; font-weight: 600; }
.st-key-answer_panel [data-testid="stText"], .st-key-answer_b_panel [data-testid="stText"]
{ line-height: 1.5; }
[data-testid="stText"], .calibrate-passage-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.calibrate-passage-text { line-height: 1.5; font-size: 1rem; }
.calibrate-passage-title { font-size: 0.875rem; opacity: 0.65; margin-bottom: 0.25rem; }
.calibrate-panel-title { font-size: 0.875rem; opacity: 0.6; margin-bottom: 0.75rem; }
/* The evidence panels side by side: a single answer 1 : 1.5 to the sources, two answers 1 : 1. */
.st-key-evidence_row > * { flex: 1 1 0; min-width: 0; }
.st-key-evidence_row:not(:has(.st-key-answer_b_panel)) > :has(> .st-key-sources_panel) {
  flex: 1.5 1 0; }
.calibrate-passage + .calibrate-passage {
  border-top: 1px solid rgba(128, 128, 128, 0.25); margin-top: 0.75rem; padding-top: 0.75rem; }
.calibrate-passage summary.calibrate-passage-title { opacity: 1; cursor: pointer;
  padding: 0.4rem 0.75rem; border: 1px solid rgba(128, 128, 128, 0.3); border-radius: 0.5rem; }
.calibrate-passage details[open] > summary { margin-bottom: 0.5rem; }
</style>
"""


# Markdown syntax lives in ASCII punctuation; a backslash before any of it is always a literal
# (CommonMark 2.4). This stops links, images, emphasis, code, HTML, headings, lists, tables,
# ``$`` math and ``:color[...]`` directives, which are recognised while the text is parsed.
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Some Streamlit markdown plugins rewrite the *parsed* text, after the backslashes are gone:
# emoji / ``:streamlit:`` / ``:material/…:`` shortcodes, GFM autolinks (``http://``, ``www.``,
# e-mail addresses) and typographic arrows (``->``, ``<=``, ``--``). An invisible word joiner
# between the characters they match keeps each pattern from matching.
_PARSED_TEXT_PATTERNS = re.compile(
    r"(?<=:)(?=[\w+-]+:)|(?<=https)(?=:)|(?<=http)(?=:)|(?<=www)(?=\.)|(?<=@)"
    r"|(?<=[<-])(?=-)|(?<=-)(?=>)|(?<=[<>~])(?==)",
    re.IGNORECASE,
)
WORD_JOINER = "\u2060"


def escape_markdown(text: object) -> str:
    """``text`` (any value, as ``str``) made safe to put inside Streamlit markdown.

    The result renders as the same characters (plus invisible word joiners where a shortcode,
    autolink or arrow would start), never as an element: no image, link, HTML, LaTeX, emoji,
    icon, colour or emphasis. Line breaks stay line breaks. Use it for every data value put into
    a message, caption, label, toast, title or tooltip.
    """
    joined = _PARSED_TEXT_PATTERNS.sub(WORD_JOINER, str(text))
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", joined)
    return re.sub(r"\r\n?|\n", "  \n", escaped)  # a hard line break, not a new paragraph


def judge_caption(judge: JudgeRef, against: str, *, kind: str = "") -> None:
    """The caption over a report: which judge revision (and config) against which labels."""
    st.caption(escape_markdown(
        f"{kind}{judge.name} r{judge.revision} ({judge.config_id}) vs {against}"
    ))


def message(kind: str, text: str, **options: Any) -> None:
    """Show ``text`` escaped as an ``st.success/info/warning/error`` box or as a ``toast``."""
    shows: dict[str, Callable[..., object]] = {
        "success": st.success, "info": st.info, "warning": st.warning, "error": st.error,
        "toast": st.toast,
    }
    show = shows.get(kind, st.info)
    show(escape_markdown(text), **options)


def interval_text(value: Mapping[str, Any], *, agreement: bool = False) -> str:
    """The interval under a metric: ``CI 0.315–0.568``, or words where it collapsed.

    The one place the pages decide how an interval reads: a zero-width one (``[1.000, 1.000]``
    at n = 14) is said in the library's words (``all 14 agree``, see
    :func:`judges.calibration.describe_interval`), never as a certain-looking interval.
    ``agreement``: the value is a kappa (1 means every row agrees).
    """
    # Lazily: the label page uses this module too and needs no statistics.
    from judges.calibration import collapsed, describe_interval

    if value.get("estimate") is None or value.get("low") is None:
        return "no interval"
    if collapsed(value):
        return describe_interval(value, agreement=agreement)
    return f"CI {value['low']:.3f}–{value['high']:.3f}"


def interval_metric(col: Any, title: str, value: Mapping[str, Any], help_text: str, *,
                    after_n: str = "", agreement: bool = False) -> None:
    """A metric in ``col`` with its interval and n below it, or why it was not computed.

    ``value`` is an interval's JSON (``estimate``, ``low``, ``high``, ``n``, ``reason``);
    ``after_n`` follows the count (its unit, a small-sample note); ``agreement`` as in
    :func:`interval_text`.
    """
    from judges.calibration import format_point

    with col:
        if value["estimate"] is None:
            st.metric(title, "—", help=help_text)
            st.caption(f"Not computed: {escape_markdown(value['reason'])}")
            return
        st.metric(title, format_point(value), help=help_text)
        st.caption(f"{interval_text(value, agreement=agreement)} · n={value['n']}{after_n}")


def or_warning(build: Callable[[], T]) -> T | None:
    """``build()``, or ``None`` once its :class:`CalibrateError` is shown as a warning box.

    The reports raise that error with the reason the data cannot give a result.
    """
    try:
        return build()
    except CalibrateError as error:
        message("warning", str(error))
        return None


def warnings_expander(warnings: Sequence[str]) -> None:
    """A report's warnings as plain text in a closed expander that counts them (none: nothing)."""
    if not warnings:
        return
    with st.expander(f"Warnings ({len(warnings)})", icon=":material/warning:"):
        for warning in warnings:
            st.text(warning)


def file_name(text: str) -> str:
    """``text`` as a download file name: letters, digits, ``.``, ``-`` and ``_`` only."""
    return re.sub(r"[^\w.-]+", "_", text, flags=re.ASCII).strip("._") or "download"


# The label page must show its verdict buttons, failure tags and save button without scrolling
# on a 1366×768 laptop, and give the evidence what height is left: the answer and source panels
# each scroll on their own and grow with the window (at 768 px the sources get 40 % of it).
# EVIDENCE_CHROME is the height of everything else on the page, measured in Chromium; on a
# narrow window the buttons below wrap onto more lines, so the evidence leaves them more.
# Measured with the status line under the progress (24 px more than the 420 before it), then
# with the panels' captions inside the panels (26 px less); at 800×900 the save button ends
# at 889 px, with the guidelines panel open or closed.
EVIDENCE_CHROME, NARROW_CHROME = 418, 532
GUIDELINES_PANEL = 320  # px: the guidelines panel's width beside the page on a wide window
_LABEL_CSS = """
<style>
:root { --evidence-height: clamp(160px, calc(100vh - CHROMEpx), 1400px); }
@media (max-width: 1000px) {
  :root { --evidence-height: clamp(160px, calc(100vh - NARROWpx), 1400px); }
}
.st-key-answer_panel, .st-key-answer_b_panel, .st-key-sources_panel,
.st-key-evidence_row > [data-testid="stLayoutWrapper"] {
  height: var(--evidence-height) !important;
}
.st-key-sources_panel .calibrate-current { box-shadow: -4px 0 0 0 rgba(255, 75, 75, 0.6); }
/* The question, progress and side buttons share their row as columns of 2.6 : 1.2 : 1.7 did. */
.st-key-top_row > * { min-width: 0; }
.st-key-top_row > :has(> .st-key-question) { flex: 2.6 1 0; }
.st-key-top_row > :has(> .st-key-progress) { flex: 1.2 1 0; }
.st-key-top_row > :has(> .st-key-side_column) { flex: 1.7 1 0; }
/* The note box takes a third of its row; beside it the tags under their title, then the note
   buttons from a new line (the ::after, ordered between them, is the line break). */
.st-key-note_row > * { min-width: 0; }
.st-key-note_row > :has(textarea) { flex: 1 1 0; }
.st-key-note_row > :has(> .st-key-note_side) { flex: 2 1 0; }
.st-key-note_side:has([class*="st-key-tag_"])::before {
  content: "Failure tags"; font-size: 0.875rem; opacity: 0.6; order: 0;
}
.st-key-note_side { row-gap: 0; }
.st-key-note_side > [class*="st-key-tag_"] { margin-bottom: 0.5rem; }
.st-key-note_side::after { content: ""; flex-basis: 100%; height: 0; order: 1; }
.st-key-note_side > :is([class*="st-key-note_verdict_"], .st-key-save_note) { order: 2; }
.st-key-row_seen { display: none; }
.st-key-button_bar > [class*="st-key-"] { flex: 1 1 0; min-width: 0; }
.st-key-button_bar > .st-key-nav_back { margin-left: 4%; }
.st-key-progress [data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]) {
  min-height: 1.4rem; margin-top: -0.9rem;
}
.st-key-progress [data-testid="stCaptionContainer"] { margin: 0; }
.st-key-guidelines_panel [data-testid="stText"] { font-size: 0.9rem; }
/* The guidelines panel (G) hangs below its button: beside the question's evidence on a wide
   window, which moves aside for it; across the page on a narrow one, where the evidence moves
   down and gives up the panel's height. The verdict, tag and note rows below keep their width. */
.st-key-side_column { position: relative; }
[data-testid="stLayoutWrapper"]:has(> .st-key-guidelines_panel) { display: contents; }
.st-key-guidelines_panel {
  position: absolute; top: calc(100% + 0.5rem); right: 0; z-index: 3; overflow-y: auto;
  background: var(--st-background-color, #fff);
}
@media (min-width: 1001px) {
  .st-key-guidelines_panel { width: PANELpx; height: calc(var(--evidence-height) + 1.6rem); }
  :root:has(.st-key-guidelines_panel) .st-key-evidence_row,
  :root:has(.st-key-guidelines_panel) .st-key-revisit_banner {
    max-width: calc(100% - PANELpx - 1rem);
  }
}
@media (max-width: 1000px) {
  .st-key-guidelines_panel { width: calc(100vw - 2rem); max-width: none; height: 18vh; }
  :root:has(.st-key-guidelines_panel) {
    --evidence-height: clamp(160px, calc(82vh - NARROWpx - 1rem), 1400px);
  }
  :root:has(.st-key-guidelines_panel) .st-key-evidence_row {
    margin-top: calc(18vh + 1rem);
  }
}
</style>
""".replace("CHROME", str(EVIDENCE_CHROME)).replace("NARROW", str(NARROW_CHROME)).replace(
    "PANEL", str(GUIDELINES_PANEL))


def label_page_style() -> None:
    """Fit the labelling layout to the window's height, style the answer's sentences.

    Trusted, constant CSS, sent once per page run rather than with each row.
    """
    st.html(_LABEL_CSS + claim_view.CSS)


def page_style() -> None:
    """Add the app's small trusted stylesheet to the page."""
    st.html(_CSS)


def literal(text: str | None, *, empty: str = "(empty)") -> None:
    """Show untrusted text exactly as written: no HTML, markdown, links, images or LaTeX."""
    st.text(text if text else empty)


def short_key(prefix: str, value: str) -> str:
    """A widget key derived from ``value`` that is safe as a CSS class name."""
    return f"{prefix}_{hashlib.blake2b(value.encode(), digest_size=6).hexdigest()}"


# A passage longer than this many characters starts folded: its title stays visible, Enter (on
# the title, where N puts the focus) or a click opens it.
LONG_PASSAGE = 1500


def sources_html(item: Item, *, row: str = "", title: str = "") -> str:
    """The numbered passages as one piece of HTML whose every text from the row is escaped.

    One element, not a container, caption and text per passage: each element is a message to
    the browser on every key press of the Label page (3 passages were 10 messages, now 1).
    Each passage is ``<div class="calibrate-passage" data-passage="n">`` holding its title
    (``Source n``, its id escaped) and its text, as the browser's HTML parser will hold it
    (:func:`claim_view.shown_text`), so the answer's sentence marks (UTF-16 offsets into that
    text) land on the same characters. A passage longer than :data:`LONG_PASSAGE` characters is
    a ``<details>`` whose title stays visible. ``row`` (a checked token, the Label page's) goes
    into ``data-row``: the page's script starts a new row's sources at the top. ``title`` (the
    page's own words, escaped all the same) heads the passages.
    """
    parts = [f'<div class="calibrate-sources" data-row="{_check_token(row)}">']
    if title:
        parts.append(claim_view.panel_title(title))
    if not item.sources:
        parts.append('<div class="calibrate-passage-title">This row has no sources.</div>')
    for number, source in enumerate(item.sources, start=1):
        named = f" · id: {html.escape(source.source_id)}" if source.source_id else ""
        text = html.escape(claim_view.shown_text(source.text)) or "(empty)"
        body = f'<div class="calibrate-passage-text">{text}</div>'
        parts.append(f'<div class="calibrate-passage" data-passage="{number}">')
        if len(source.text) <= LONG_PASSAGE:
            parts.append(f'<div class="calibrate-passage-title">Source {number}{named}</div>{body}')
        else:
            parts.append(f'<details><summary class="calibrate-passage-title">Source {number}: a '
                         f"long passage, {len(source.text):,} characters (folded){named}"
                         f"</summary>{body}</details>")
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


def sources_panel(item: Item, *, height: int, row: str = "") -> None:
    """The numbered sources (:func:`sources_html`) in a box of ``height`` px that scrolls.

    The Label page's CSS may resize the box; its keys (:func:`evidence_keys`) scroll it and jump
    between the passages.
    """
    with st.container(height=height, key="sources_panel", border=True):
        st.html(sources_html(item, row=row, title=(
            f"Sources ({len(item.sources)}) · J / K scroll · N / Shift+N next / previous "
            "passage")))


def question(item: Item) -> None:
    """The row's question, as written, in the container keyed ``question``."""
    with st.container(key="question"):
        literal(item.question)


def item_card(item: Item, criterion: Criterion, *, height: int = 360,
              with_question: bool = True, sentences: bool = False, row: str = "") -> None:
    """Question on top (unless ``with_question`` is false), then the answer(s) and the sources.

    Each answer and the sources scroll on their own, side by side; the sources column is the
    widest, since checking claims against them is the work. With ``sentences``, a pointwise
    answer shows as numbered sentences linked to the passages (:mod:`calibrate_app.claim_view`).
    The reference answer appears (collapsed) only when ``criterion.show_reference`` is set.
    ``row``: the Label page's token of the row on screen (see :func:`sources_html`).
    """
    if with_question:
        question(item)
    answers = (
        [("Answer A", "answer_panel", item.answer_a), ("Answer B", "answer_b_panel", item.answer_b)]
        if item.kind == "pairwise" else [("Answer", "answer_panel", item.answer)]
    )
    linked = sentences and item.kind == "pointwise"
    # The panels side by side in one horizontal container (the page's CSS gives the sources
    # 1.5 shares of the width beside a single answer), each titled inside its box: columns
    # and a caption above each panel were five messages more to the browser on every key
    # press of the Label page.
    with st.container(horizontal=True, wrap=False, key="evidence_row", gap="medium"):
        for caption, key, text in answers:
            with st.container(height=height, key=key, border=True):
                if linked:
                    claim_view.answer_sentences(
                        text, [s.text for s in item.sources],
                        title=caption + " · click a sentence or [ / ] to see its sources")
                else:
                    st.caption(caption)
                    literal(text)
        sources_panel(item, height=height, row=row)
    if criterion.show_reference and item.reference:
        with st.expander("Reference answer (hidden until you open it)"):
            literal(item.reference)


def _script(body: str) -> None:
    st.html(f"<script>{body}</script>", unsafe_allow_javascript=True)


def _check_token(value: str) -> str:
    if not all(c.isalnum() or c in "_-. " for c in value):
        raise ValueError(f"unexpected characters in {value!r}")
    return value


def _check_selector(value: str) -> str:
    """A CSS selector of the constant kind the label page builds (attribute tests allowed)."""
    if not all(c.isalnum() or c in "_-. []*=\"" for c in value):
        raise ValueError(f"unexpected characters in {value!r}")
    return value


def focus_script(css_selector: str, nonce: str) -> None:
    """Move keyboard focus to the element matching ``css_selector`` (trusted, constant code).

    ``nonce`` makes the element differ between runs, so the script runs again.
    """
    _script(
        f"/* {_check_token(nonce)} */ setTimeout(() => {{ const el = document.querySelector("
        f"'{_check_token(css_selector)}'); if (el) {{ el.focus(); }} }}, 60);"
    )


def focus_in_dialog(css_selector: str, nonce: str) -> None:
    """Put the focus on ``css_selector`` once a dialog that just opened has taken it.

    A dialog focuses itself as it opens, a moment after its content renders (later on a busy
    machine), so a single delayed ``focus()`` is not enough. For two seconds this hands the
    focus over whenever it rests on the dialog itself, the page or nothing, and never takes
    it from a field or button the person has moved to. Trusted, constant code.
    """
    _script(
        f"/* {_check_token(nonce)} */ (() => {{ let n = 0; const t = setInterval(() => {{ "
        f"const el = document.querySelector('{_check_token(css_selector)}'); "
        "const at = document.activeElement; n += 1; "
        "const idle = !at || at === document.body || at.getAttribute('role') === 'dialog' "
        "|| !at.closest('[role=\"dialog\"]'); "
        "if (el && idle) { el.focus(); } if (n >= 20) { clearInterval(t); } }, 100); })();"
    )


def leave_note_on_save() -> None:
    """After Ctrl+Enter in a text box, take the focus out of it (trusted, constant code).

    Ctrl+Enter saves the note through the button's shortcut; the next row reuses the same
    textarea element, so without this the annotator's next letter key would be typed into the
    new row's note instead of labelling it. Installed once per page load.
    """
    _script(
        "if (!window.__calibrateLeaveNote) { window.__calibrateLeaveNote = true; "
        "document.addEventListener('keydown', (e) => { "
        "if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && e.target && "
        "e.target.tagName === 'TEXTAREA') { setTimeout(() => e.target.blur(), 0); } "
        "}, true); }"
    )


# Installed once per page load (the window flag); HELP is replaced by a checked CSS selector.
# The key map (letter -> button selector) is set on every change of it, outside the flag, so a
# switch between pointwise and pairwise datasets updates it without a reload.
_KEYBOARD_JS = """
window.__calibrateKeyMap = KEYMAP;
if (!window.__calibrateKeys) {
  window.__calibrateKeys = true;
  const inSelect = (el) => el && el.closest &&
    el.closest('[data-testid="stSelectbox"], [data-testid="stMultiSelect"], [role="combobox"]');
  const typing = (el) => el && (el.tagName === 'TEXTAREA' || el.isContentEditable ||
    el.tagName === 'INPUT' || inSelect(el));
  const dialogKeys = ['Escape', 'Tab', 'Enter', ' ', 'ArrowUp', 'ArrowDown'];
  document.addEventListener('keydown', (e) => {
    // While a dialog or drawer is open ("My labels", the keys), the row behind it takes no
    // key: Streamlit's shortcuts listen on the document after this capture listener, so a
    // key stopped here cannot label, skip or step back on a row the annotator cannot see.
    // The dialog keeps Escape, Tab, Enter, Space, Up and Down, and typing in its fields.
    if (document.querySelector('[role="dialog"]')) {
      const save = e.key === 'Enter' && (e.ctrlKey || e.metaKey);
      if (save || (!typing(e.target) && !dialogKeys.includes(e.key))) {
        e.stopPropagation();
      }
      return;
    }
    if (e.key === '?' && !typing(e.target)) {
      const button = document.querySelector('HELP');
      if (button) { e.preventDefault(); button.click(); }
      return;
    }
    // Focus is handed back only here, on a verdict or skip key pressed while a *closed*
    // dropdown holds the focus (e.g. just after choosing a dataset with the keyboard): the
    // key labels the row instead of typing into the dropdown. Nothing is blurred on a rerun
    // or a choice, so a dropdown the annotator opens is never closed under them.
    if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey || !inSelect(e.target)) { return; }
    if (e.target.getAttribute('aria-expanded') === 'true') { return; }
    const selector = (window.__calibrateKeyMap || {})[e.key.toLowerCase()];
    const button = selector && document.querySelector(selector);
    if (button && !button.disabled) {
      e.preventDefault();
      e.stopImmediatePropagation();
      e.target.blur();
      button.click();
    }
  }, true);
}
"""


def keyboard_helpers(*, help_button: str, keys: dict[str, str]) -> None:
    """Two keyboard habits Streamlit's shortcuts cannot express (trusted, constant code).

    - ``?`` opens the help (shortcuts take no punctuation): it clicks ``help_button``.
    - While a dialog is open, no key reaches the page's shortcuts except those the dialog
      needs (Escape, Tab, Enter, Space, Up, Down, typing in its fields).
    - A key of ``keys`` (a letter -> the CSS selector of its button) pressed while a closed
      dropdown has the focus clicks that button and takes the focus out of the dropdown.
      Streamlit's own shortcuts ignore keys typed into a dropdown, so without this the first
      verdict after choosing a dataset with the keyboard would be lost. The focus is never
      moved at any other time: a dropdown the annotator has just opened stays open.

    Keys typed into text boxes and open dropdowns are left alone.
    """
    checked = {_check_token(k.lower()): _check_selector(v) for k, v in keys.items()}
    _script(_KEYBOARD_JS.replace("HELP", _check_token(help_button))
            .replace("KEYMAP", json.dumps(checked, sort_keys=True)))


# Installed once per page load (the window flag), outside the Label page's fragment, so a key
# press does not send it again. A new row (the sources' ``data-row`` changed: see
# :func:`sources_html`) starts with its sources and answer scrolled to the top and no passage
# marked, and fires ``calibrate-row`` for the sentence script.
_EVIDENCE_JS = """(() => {
const panelNow = () => document.querySelector('.st-key-sources_panel');
if (!window.__calibrateEvidence) {
  window.__calibrateEvidence = true;
  const typing = (el) => el && (el.tagName === 'TEXTAREA' || el.tagName === 'INPUT' ||
    el.isContentEditable || (el.closest && el.closest('[role="combobox"], [role="dialog"]')));
  const GAP = 8;  // a passage jumped to sits this far below the panel's top edge
  const rowNow = () => {
    const sources = document.querySelector('.calibrate-sources');
    return sources ? sources.dataset.row : null;
  };
  let row = rowNow();
  new MutationObserver(() => {
    const now = rowNow();
    if (now === row) { return; }
    row = now;
    document.querySelectorAll('.st-key-sources_panel, .st-key-answer_panel').forEach(
      (el) => { el.scrollTop = 0; });
    document.dispatchEvent(new Event('calibrate-row'));
  }).observe(document.body, { childList: true, subtree: true });
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) { return; }
    const key = e.key.toLowerCase();
    if (!['j', 'k', 'n'].includes(key) || (key !== 'n' && e.shiftKey)) { return; }
    const panel = panelNow();
    if (!panel) { return; }
    e.preventDefault();
    const passages = [...panel.querySelectorAll('.calibrate-passage')];
    if (key !== 'n') {
      passages.forEach((el) => el.classList.remove('calibrate-current'));
      const step = Math.max(48, Math.round(panel.clientHeight * 0.4));
      panel.scrollTop += key === 'j' ? step : -step;
      return;
    }
    const top = panel.getBoundingClientRect().top - panel.scrollTop;
    const at = passages.map((el) => el.getBoundingClientRect().top - top - GAP);
    const current = passages.findIndex((el) => el.classList.contains('calibrate-current'));
    let target = -1;
    if (!e.shiftKey) {
      // At the top the first passage is the one being read: N goes on to the second.
      const from = Math.max(panel.scrollTop, at.length ? at[0] : 0) + 1;
      target = at.findIndex((y, i) => i > current && y > from);
    } else {
      for (let i = passages.length - 1; i >= 0; i--) {
        if ((current < 0 || i < current) && (at[i] < panel.scrollTop - 1 || current >= 0)) {
          target = i; break;
        }
      }
    }
    if (target < 0) { return; }
    passages.forEach((el) => el.classList.remove('calibrate-current'));
    passages[target].classList.add('calibrate-current');
    panel.scrollTop = Math.max(0, at[target]);
    const fold = passages[target].querySelector('details:not([open]) > summary');
    if (fold) { fold.focus({ preventScroll: true }); }
  }, true);
}
})();
"""


def evidence_keys(*, sentences: bool = False) -> None:
    """J / K scroll the sources panel, N / Shift+N jump to the next / previous passage.

    Trusted, constant code that runs in the browser only (no rerun), installed once per page
    load: a new row starts at its first passage. Keys typed into text boxes, dropdowns and
    dialogs are left alone. N marks the passage it jumps to and, when the passage is folded,
    puts the focus on its title so Enter opens it. With ``sentences``, the same element also
    carries :func:`claim_view.sentence_script` (one message, not two).
    """
    _script(_EVIDENCE_JS + (claim_view.sentence_script() if sentences else ""))
