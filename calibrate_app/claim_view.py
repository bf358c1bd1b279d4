"""The Label page's answer as numbered sentences, each linked to the passages that share its terms.

Selecting a sentence (a click, or ``[`` / ``]`` for the previous / next one) highlights the
passages that share its content words and numbers (:mod:`labels.claim_links`), marks the shared
words in them and in the sentence, and scrolls the sources to the best passage. The links are
computed here, in Python, once per row; the selection happens in the browser, so a key press
costs no rerun.

No data is rendered as markup: the answer goes into the page as HTML built here, where every
piece of row text is escaped with :func:`html.escape` and the only tags are this module's own
``<div>`` and ``<span>`` with constant classes and ``data-`` attributes holding integers. The
passages are HTML built the same way (:func:`calibrate_app.widgets.sources_html`); their words
are marked with the CSS Custom Highlight API (``CSS.highlights``), which paints ranges of the
existing text without changing the page's elements. The offsets sent to the browser count
UTF-16 code units, as JavaScript strings do.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Sequence

import streamlit as st

from labels.claim_links import SentenceLinks, link_answer

# Trusted, constant CSS (in the Label page's stylesheet, :func:`widgets.label_page_style`, so
# a new row does not insert a style sheet, which restyles the whole page). ``::highlight``
# paints the ranges the script registers.
CSS = """<style>
.calibrate-answer { white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.5;
  font-size: 1rem; }
.calibrate-sentence { cursor: pointer; border-radius: 0.25rem;
  -webkit-box-decoration-break: clone; box-decoration-break: clone; }
.calibrate-sentence:hover { background: rgba(151, 166, 195, 0.15); }
.calibrate-sentence.calibrate-selected { background: rgba(255, 189, 69, 0.25);
  box-shadow: 0 0 0 2px rgba(255, 189, 69, 0.6); }
.calibrate-sn { display: inline-block; min-width: 1.2em; margin-right: 0.2em; padding: 0 0.25em;
  border-radius: 0.6em; background: rgba(151, 166, 195, 0.3); color: inherit;
  font-size: 0.7rem; font-weight: 600; text-align: center; vertical-align: 0.15em;
  user-select: none; }
.calibrate-selected .calibrate-sn { background: rgba(255, 140, 0, 0.85); color: white; }
.calibrate-claim-status { position: sticky; bottom: 0; margin-top: 0.5rem; padding: 0.1rem 0.4rem;
  border-radius: 0.25rem; font-size: 0.8rem; white-space: normal; color: inherit;
  background: rgba(151, 166, 195, 0.2); backdrop-filter: blur(8px); }
.calibrate-claim-status:empty { display: none; }
.st-key-sources_panel .calibrate-linked { box-shadow: -4px 0 0 0 rgba(255, 189, 69, 0.55); }
.st-key-sources_panel .calibrate-best { box-shadow: -6px 0 0 0 rgba(255, 140, 0, 0.9);
  background: rgba(255, 189, 69, 0.08); }
::highlight(calibrate-claim) { background-color: rgba(255, 189, 69, 0.55); }
</style>"""


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _utf16(text: str) -> Sequence[int]:
    """``text``'s code-point offsets (0 … len) as UTF-16 offsets, as JavaScript counts them.

    Only characters beyond the Basic Multilingual Plane (emoji, rare CJK) take two units;
    without any, the offsets are the same (a ``range``, built in no time).
    """
    if _ASTRAL.search(text) is None:
        return range(len(text) + 1)
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + (2 if ord(char) > 0xFFFF else 1))
    return offsets


def shown_text(text: str | None) -> str:
    """Row text (an answer, a passage) as the browser's HTML parser will hold it.

    The parser turns CR LF and a lone CR into LF and drops NUL; doing the first here and
    showing NUL as U+FFFD keeps every span pointing at the same characters.
    """
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def _flat(pairs: Sequence[tuple[int, int]], offsets: Sequence[int], base: int = 0) -> list[int]:
    return [offsets[base + k] - offsets[base] for pair in pairs for k in pair]


def _links(linked: SentenceLinks, passages: Sequence[Sequence[int]]) -> list[list[object]]:
    """``[[passage, score, [start, end, …], focus], …]`` best first, offsets in UTF-16 units.

    ``focus`` is the index of the span to bring into view (:attr:`PassageMatch.focus`).
    """
    return [[m.passage, round(m.score, 3), _flat(m.spans, passages[m.passage]), m.focus]
            for m in linked.matches]


@functools.lru_cache(maxsize=64)
def _cached_html(answer: str | None, sources: tuple[str, ...]) -> str:
    return answer_html(answer, sources)


def answer_html(answer: str | None, sources: Sequence[str]) -> str:
    """The answer as numbered, selectable sentences: HTML whose every text piece is escaped.

    Text between sentences (white space, list markers, a ``---`` rule) is kept, so the answer
    reads as written. Each sentence is ``<span class="calibrate-sentence">`` with its number,
    its text, ``data-links`` (its passages, best first: index, score and the shared words'
    UTF-16 offsets) and ``data-found`` (the offsets of its own shared words). The answer's
    ``data-passages`` holds each passage's UTF-16 length, so the browser marks words only in a
    passage whose text is the one the offsets were computed on.
    """
    text = shown_text(answer)
    sources = [shown_text(source) for source in sources]  # as sources_html shows them
    sentences = link_answer(text, sources)
    passages = [_utf16(source) for source in sources]
    lengths = [offsets[-1] for offsets in passages]
    own = _utf16(text)
    parts = [f'<div class="calibrate-answer" data-passages="{json.dumps(lengths)}">']
    at = 0
    for number, linked in enumerate(sentences, start=1):
        span = linked.sentence
        found = _flat(linked.found, own, span.start)
        links = json.dumps(_links(linked, passages), separators=(",", ":"))
        parts.append(html.escape(text[at:span.start]))
        parts.append(
            f'<span class="calibrate-sentence" data-sentence="{number}" '
            f'data-links="{html.escape(links)}" '
            f'data-found="{html.escape(json.dumps(found, separators=(",", ":")))}">'
            f'<span class="calibrate-sn">{number}</span>'
            f'<span class="calibrate-st">{html.escape(span.text)}</span></span>'
        )
        at = span.end
    parts.append(html.escape(text[at:]) if text else html.escape("(empty)"))
    # Filled by the script with constant words and numbers only: what the selection found.
    parts.append('<div class="calibrate-claim-status" aria-live="polite"></div></div>')
    return "".join(parts)


def answer_sentences(answer: str | None, sources: Sequence[str], *, title: str = "") -> None:
    """Show the answer as numbered sentences linked to ``sources`` (see :func:`answer_html`).

    ``title``: the page's own words above the answer, in the same element (escaped).
    """
    # Cached: a note or a tag reruns the page on the same row (and every annotator of a row
    # gets the same HTML); the links of a long row take tens of milliseconds.
    st.html((panel_title(title) if title else "") + _cached_html(answer, tuple(sources)))


def panel_title(text: str) -> str:
    """``text`` as the caption-like first line of an evidence panel (escaped HTML)."""
    return f'<div class="calibrate-panel-title">{html.escape(text)}</div>'


# Installed once per page load (the window flag), with the evidence keys' script, which fires
# ``calibrate-row`` when a new row comes on screen: it starts with no sentence selected and no
# passage or word marked.
_CLAIMS_JS = """(() => {
if (!window.__calibrateClaims) {
  window.__calibrateClaims = true;
  const claimsClear = () => {
    if (window.CSS && CSS.highlights) { CSS.highlights.delete('calibrate-claim'); }
    document.querySelectorAll('.calibrate-selected, .calibrate-linked, .calibrate-best')
      .forEach((el) => el.classList.remove('calibrate-selected', 'calibrate-linked',
                                           'calibrate-best'));
    document.querySelectorAll('.calibrate-claim-status').forEach(
      (el) => { el.textContent = ''; });
  };
  document.addEventListener('calibrate-row', claimsClear);
  const typing = (el) => el && (el.tagName === 'TEXTAREA' || el.tagName === 'INPUT' ||
    el.isContentEditable || (el.closest && el.closest('[role="combobox"], [role="dialog"]')));
  const GAP = 8;  // the best passage sits this far below the panel's top edge, as with N
  // Ranges over the text of `root` for flat [start, end, ...] UTF-16 offsets; none when the
  // text is not `expected` long (then it is not the text the offsets were computed on).
  const ranges = (root, flat, expected) => {
    if (!root) { return []; }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let total = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push([n, total]);
      total += n.data.length;
    }
    if (expected !== undefined && total !== expected) { return []; }
    const at = (offset) => {
      for (let i = nodes.length - 1; i >= 0; i--) {
        if (nodes[i][1] <= offset) { return [nodes[i][0], offset - nodes[i][1]]; }
      }
      return null;
    };
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const a = at(flat[i]), b = at(flat[i + 1]);
      if (!a || !b) { continue; }
      const range = new Range();
      range.setStart(a[0], a[1]);
      range.setEnd(b[0], b[1]);
      out.push(range);
    }
    return out;
  };
  const into = (box, el, gap) => {  // scroll `box` so that `el`'s top sits `gap` px below its top
    const top = box.getBoundingClientRect().top - box.scrollTop;
    return el.getBoundingClientRect().top - top - gap;
  };
  const select = (sentence) => {
    claimsClear();
    const answer = sentence.closest('.calibrate-answer');
    sentence.classList.add('calibrate-selected');
    const box = sentence.closest('.st-key-answer_panel');
    if (box) {
      const y = into(box, sentence, 0);
      if (y < box.scrollTop || y + sentence.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = Math.max(0, y - GAP);
      }
    }
    const links = JSON.parse(sentence.dataset.links || '[]');
    const lengths = JSON.parse((answer && answer.dataset.passages) || '[]');
    const marked = ranges(sentence.querySelector('.calibrate-st'),
                          JSON.parse(sentence.dataset.found || '[]'));
    const panel = document.querySelector('.st-key-sources_panel');
    let best = null, focus = null;
    if (panel) {
      panel.querySelectorAll('.calibrate-current').forEach(
        (el) => el.classList.remove('calibrate-current'));
      links.forEach(([p, score, spans, at], rank) => {
        const el = panel.querySelector(`.calibrate-passage[data-passage="${p + 1}"]`);
        if (!el) { return; }
        el.classList.add('calibrate-linked');
        const found = ranges(el.querySelector('.calibrate-passage-text'), spans, lengths[p]);
        marked.push(...found);
        if (rank === 0) { best = el; focus = found[at] || found[0] || null; }
      });
    }
    if (window.Highlight && CSS.highlights) {
      CSS.highlights.set('calibrate-claim', new Highlight(...marked));
    }
    const status = answer && answer.querySelector('.calibrate-claim-status');
    if (status) {
      const n = sentence.dataset.sentence;
      const others = links.slice(1).map((link) => link[0] + 1);
      status.textContent = links.length === 0
        ? `Sentence ${n}: no source shares its words or numbers.`
        : `Sentence ${n}: best Source ${links[0][0] + 1} (${Math.round(links[0][1] * 100)} % ` +
          'of its words and numbers)' +
          (others.length ? `; also Sources ${others.join(', ')}.` : '.');
    }
    if (!best) { return; }
    // The best passage becomes the current one, so N / Shift+N go on from it.
    best.classList.add('calibrate-best', 'calibrate-current');
    let y = into(panel, best, GAP);
    // The passage's most telling stretch (the focus word) below the fold: bring it into view,
    // a third of the way down.
    const word = focus ? focus.getBoundingClientRect() : null;
    if (word && word.height > 0) {
      const wordAt = word.top - (panel.getBoundingClientRect().top - panel.scrollTop);
      if (wordAt > y + panel.clientHeight - 2 * word.height) {
        y = wordAt - Math.round(panel.clientHeight / 3);
      }
    }
    panel.scrollTop = Math.max(0, y);
    const fold = best.querySelector('details:not([open]) > summary');
    if (fold) { fold.focus({ preventScroll: true }); }  // Enter opens it, as after N
  };
  document.addEventListener('click', (e) => {
    const sentence = e.target && e.target.closest && e.target.closest('.calibrate-sentence');
    const picked = window.getSelection && !window.getSelection().isCollapsed;
    if (sentence && !picked) { select(sentence); }  // not when the click ends a text selection
  }, true);
  document.addEventListener('keydown', (e) => {
    if (e.key !== '[' && e.key !== ']') { return; }
    // AltGr (Ctrl+Alt on Windows) types [ and ] on many keyboard layouts: let it through.
    if (e.metaKey || (e.ctrlKey && !e.altKey) || typing(e.target)) { return; }
    const answer = document.querySelector('.calibrate-answer');
    const all = answer ? [...answer.querySelectorAll('.calibrate-sentence')] : [];
    if (!all.length) { return; }
    e.preventDefault();
    const now = all.findIndex((el) => el.classList.contains('calibrate-selected'));
    const next = e.key === ']' ? (now < 0 ? 0 : Math.min(now + 1, all.length - 1))
                               : (now < 0 ? all.length - 1 : Math.max(now - 1, 0));
    select(all[next]);
  }, true);
}
})();
"""


def sentence_script() -> str:
    """The script by which a click or ``[`` / ``]`` selects a sentence (trusted, constant code).

    It runs in the browser only, installed once per page load. A new row starts unselected (on
    the ``calibrate-row`` event of :func:`calibrate_app.widgets.evidence_keys`). Keys typed into
    text boxes, dropdowns and dialogs are left alone.
    """
    return _CLAIMS_JS
