"""Render helpers shared by the pages.

Row text (questions, answers, sources, references, source ids) comes from files nobody here
controls. ``st.markdown`` and widget labels would render its markdown: fetch images from any URL
(leaking the annotator's address), make links clickable, typeset LaTeX. So row text goes only
through :func:`literal` (``st.text``), never into ``st.markdown``, ``st.write``, a caption, a
widget label or a help tooltip. Owner-written guidelines are trusted and rendered as markdown.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from labels.models import Criterion, Item

# Trusted, constant CSS: the question stands out; long text keeps its line breaks.
_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; padding-bottom: 2rem; }
.st-key-question [data-testid="stText"] { font-size: 1.12rem; font-weight: 600; }
.st-key-answer_panel [data-testid="stText"], .st-key-answer_b_panel [data-testid="stText"],
.st-key-sources_panel [data-testid="stText"] { line-height: 1.5; }
[data-testid="stText"] { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
"""


def page_style() -> None:
    """Add the app's small trusted stylesheet to the page."""
    st.html(_CSS)


def literal(text: str | None, *, empty: str = "(empty)") -> None:
    """Show untrusted text exactly as written: no HTML, markdown, links, images or LaTeX."""
    st.text(text if text else empty)


def short_key(prefix: str, value: str) -> str:
    """A widget key derived from ``value`` that is safe as a CSS class name."""
    return f"{prefix}_{hashlib.blake2b(value.encode(), digest_size=6).hexdigest()}"


def sources_panel(item: Item, *, height: int) -> None:
    """The numbered sources in a scrollable box of ``height`` pixels."""
    with st.container(height=height, key="sources_panel", border=True):
        if not item.sources:
            st.caption("This row has no sources.")
        for number, source in enumerate(item.sources, start=1):
            st.caption(f"Source {number}")
            if source.source_id:
                literal(f"id: {source.source_id}")
            literal(source.text)
            if number < len(item.sources):
                st.divider()


def item_card(item: Item, criterion: Criterion, *, height: int = 360) -> None:
    """Question on top, then the answer(s) and the numbered sources side by side.

    The reference answer appears (collapsed) only when ``criterion.show_reference`` is set.
    """
    st.caption("Question")
    with st.container(key="question"):
        literal(item.question)
    if item.kind == "pairwise":
        left, middle, right = st.columns([1, 1, 1], gap="medium")
        with left:
            st.caption("Answer A")
            with st.container(height=height, key="answer_panel", border=True):
                literal(item.answer_a)
        with middle:
            st.caption("Answer B")
            with st.container(height=height, key="answer_b_panel", border=True):
                literal(item.answer_b)
        with right:
            st.caption(f"Sources ({len(item.sources)})")
            sources_panel(item, height=height)
    else:
        left, right = st.columns([1, 1], gap="medium")
        with left:
            st.caption("Answer")
            with st.container(height=height, key="answer_panel", border=True):
                literal(item.answer)
        with right:
            st.caption(f"Sources ({len(item.sources)})")
            sources_panel(item, height=height)
    if criterion.show_reference and item.reference:
        with st.expander("Reference answer (hidden until you open it)"):
            literal(item.reference)


def guidelines(criterion: Criterion) -> None:
    """The criterion's guidelines (owner-written markdown) in a collapsed expander."""
    with st.expander(f"Guidelines: {criterion.name}", icon=":material/menu_book:"):
        if criterion.guidelines.strip():
            st.markdown(criterion.guidelines)
        else:
            st.caption("No guidelines written yet (the Data page edits them).")


def _script(body: str) -> None:
    st.html(f"<script>{body}</script>", unsafe_allow_javascript=True)


def _check_token(value: str) -> str:
    if not all(c.isalnum() or c in "_-. " for c in value):
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
