"""Which source passages share a sentence's content words and numbers (lexical, no model).

The Label page splits the answer into sentences; selecting one highlights the passages that
share its content words and numbers, and the shared words within them, so the expert checks each
claim against the lines that could support it instead of rereading every source. Everything here
is pure and deterministic: text in, character spans and scores out; no model, no network.

A *term* is a content word or a number of the text:

- words are runs of letters (any script), case-folded, accents removed, with a light English
  suffix stemmer (``refunds``, ``refunded`` and ``refunding`` all read ``refund``); stop words
  and single letters are dropped;
- numbers are normalised, so ``1,500`` == ``1500`` and ``3.0`` == ``3`` == ``03``; a ``%`` or a
  currency sign next to a number is not part of it.

The score of a passage for a sentence is the weighted share of the sentence's distinct terms
that the passage contains, a number weighing :data:`NUMBER_WEIGHT` (numbers are what answers
most often get wrong, and what a shared stop word never makes up for). Spans are character
offsets into the strings given, Python ``str`` indices (code points).

>>> [s.text for s in split_sentences("Refunds take 5 days. Ask Dr. Lee.")]
['Refunds take 5 days.', 'Ask Dr. Lee.']
>>> best = link_sentence("Refunds take 5 days.", ["Shipping is free.", "A refund takes 5 days."])[0]
>>> best.passage, best.score, best.terms
(1, 1.0, ('5', 'day', 'refund', 'tak'))
"""

from __future__ import annotations

import functools
import heapq
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NUMBER_WEIGHT = 2.0
# The stretch of a passage, in characters, that :func:`focus_index` weighs: about two lines.
FOCUS_WINDOW = 160
# The most occurrences a passage match lists (those around its focus).
MAX_SPANS = 64

# English function words: they link every sentence to every passage. Contractions lose their
# apostrophe part in tokenising ("don't" -> "don", "t"), hence "don", "doesn", "isn" and so on.
STOP_WORDS = frozenset(re.split(r"\s+", """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each either else ever every few for from further had hadn has hasn have haven having he
her here hers herself him himself his how however i if in into is isn it its itself just let ll
may me might more most must mustn my myself neither no nor not now of off on once only or other
ought our ours ourselves out over own per re same shall shan she should shouldn so some such than
that the their theirs them themselves then there these they this those through thus to too under
until up upon us ve very via was wasn we were weren what when where which while who whom whose
why will with within without won would wouldn yes yet you your yours yourself yourselves
""".strip()))

# A number: digits with optional thousands groups ("1,500", "1 500" with a no-break space) and
# an optional decimal part. A thousands group is exactly three digits, so "1,5" is two numbers.
_NUMBER = r"\d+(?:[,\u00a0\u202f]\d{3}(?!\d))*(?:\.\d+)?"
# A word: letters of any script, with any combining marks (a decomposed "é" stays one word).
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_WORD = rf"[^\W\d_][^\W\d_{_MARKS}]*(?:[{_MARKS}]+[^\W\d_]*)*"
_TOKEN = re.compile(rf"(?P<number>{_NUMBER})|(?P<word>{_WORD})")

# Sentence ends: Western terminators (one or more, then closing quotes or brackets), which end
# a sentence only before white space or the end; CJK terminators end one wherever they are.
_WESTERN_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]\u00bb]*(?=\s|$)")
_CJK_END = re.compile(r"[\u3002\uff01\uff1f]+[\"'\u201d\u2019)\]\u300d\u300f]*")
# A list item's marker at the start of a line: "-", "*", "•", "1.", "2)", "(a)".
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*\u2022\u00b7]|\(?\d{1,3}[.)]|\([a-z]\))[ \t]+")
_NUMBERED_ITEM = re.compile(r"[ \t]*\(?\d{1,3}\.")
_SPACE = re.compile(r"\s*")
# How far back from a full stop the abbreviation and list-marker checks look, in characters.
_LOOK_BACK = 64
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# Abbreviations whose full stop does not end a sentence (lower case, without the final dot).
ABBREVIATIONS = frozenset(re.split(" ", (
    "e.g i.e etc vs cf al approx ca dr mr mrs ms prof sr jr st no nos fig figs inc ltd co corp "
    "dept est min max jan feb mar apr jun jul aug sep sept oct nov dec mt ft u.s u.k a.m p.m "
    "vol pp ed eds")))
_LAST_WORD = re.compile(r"([^\W\d_][\w.]*)\.+$")


@dataclass(frozen=True)
class Span:
    """A piece of a text: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Term:
    """A content word or number of a text, normalised (``key``), and where it is."""

    key: str
    start: int
    end: int
    number: bool


@dataclass(frozen=True)
class PassageMatch:
    """How one passage relates to one sentence.

    Attributes:
        passage: the passage's index in the list given.
        score: the weighted share of the sentence's distinct terms found in the passage, in
            ``(0, 1]`` (a number weighs :data:`NUMBER_WEIGHT`, a word 1).
        terms: the shared terms (normalised), sorted.
        spans: ``(start, end)`` of the occurrences of shared terms in the passage, in order:
            all of them, or the :data:`MAX_SPANS` around the focus when there are more.
        focus: the index in ``spans`` where the passage's most telling stretch starts (see
            :func:`focus_index`): where a reader should look first.
    """

    passage: int
    score: float
    terms: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    focus: int = 0


@dataclass(frozen=True)
class SentenceLinks:
    """A sentence of the answer and the passages that share its terms, best first.

    ``found`` holds the sentence's own spans (offsets into the sentence) of the terms that some
    passage shares.
    """

    sentence: Span
    matches: tuple[PassageMatch, ...]
    found: tuple[tuple[int, int], ...]


def _stem(word: str) -> str:
    """A light English suffix stemmer: plural, past and -ing forms meet their base form.

    Deliberately simple and predictable (no dictionary): a stem only has to be the same for the
    forms an expert would call the same word, and a trailing ``e`` is dropped so that
    ``price`` / ``priced`` / ``pricing`` meet.
    """
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    # "stopped" -> "stopp" -> "stop"; but not "fall", "pass", "buzz".
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeioulsz":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=65536)
def _word_key(word: str) -> str | None:
    # Cached: a text repeats its words, and folding plus stemming is most of the tokenising.
    folded = unicodedata.normalize("NFKD", word.casefold())
    bare = "".join(c for c in folded if not unicodedata.combining(c))
    if len(bare) < 2 or bare in STOP_WORDS:
        return None
    return _stem(bare)


def _number_key(number: str) -> str:
    # Any script's decimal digits read as ASCII ones ("١٥" is 15).
    digits = "".join(str(unicodedata.decimal(c)) if c.isdigit() else c for c in number)
    whole, _, fraction = digits.replace(",", "").replace("\u00a0", "").replace(
        "\u202f", "").partition(".")
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def terms(text: str) -> list[Term]:
    """The content words and numbers of ``text``, in order, with their spans.

    >>> [(t.key, t.start, t.end) for t in terms("The 1,500 refunds, at 3.0%.")]
    [('1500', 4, 9), ('refund', 10, 17), ('3', 22, 25)]
    """
    found: list[Term] = []
    for match in _TOKEN.finditer(text):
        number = match.group("number")
        if number is not None:
            found.append(Term(_number_key(number), match.start(), match.end(), True))
            continue
        key = _word_key(match.group())
        if key is not None:
            found.append(Term(key, match.start(), match.end(), False))
    return found


def _ends_sentence(text: str, end: int, next_start: int) -> bool:
    """Whether the terminator ending at ``end`` closes a sentence.

    The text after it starts at ``next_start`` (after the white space).
    """
    # Only the end of the line matters; slicing the whole text here would make long answers
    # quadratic.
    line_start = text.rfind("\n", 0, end) + 1
    piece = text[max(line_start, end - _LOOK_BACK):end].rstrip("\"'\u201d\u2019)]\u00bb")
    if line_start >= end - _LOOK_BACK and _NUMBERED_ITEM.fullmatch(piece):  # "1. First step"
        return False
    if piece.endswith(".") and not piece.endswith(".."):
        last = _LAST_WORD.search(piece)
        if last is not None:
            word = last.group(1).lower()
            # An abbreviation, or an initial ("J. Smith"): unless a new line follows.
            if (word in ABBREVIATIONS or len(word) == 1) and "\n" not in text[end:next_start]:
                return False
    following = text[next_start:next_start + 1]
    # A sentence rarely starts in lower case: "approx. three days" is one sentence.
    return not (following.islower() and "\n" not in text[end:next_start])


def _line_breaks(text: str) -> list[int]:
    """Offsets of the line breaks that end a sentence.

    Those of a blank line; a line break before a list item, after a list item, or after a line
    ending in a terminator or colon. Others are hard wraps inside a sentence.
    """
    cuts: list[int] = []
    for match in re.finditer(r"\n", text):
        at = match.start()
        line = text[text.rfind("\n", 0, at) + 1:at].rstrip(" \t")
        if (not line.strip() or _BLANK_LINE.match(text, at) or _LIST_MARKER.match(text, at + 1)
                or _LIST_MARKER.match(line)
                or line.endswith((".", "!", "?", ":", ";", "\u2026", "\u3002", "\uff01",
                                  "\uff1f"))):
            cuts.append(at)
    return cuts


def split_sentences(text: str) -> list[Span]:
    r"""The sentences of ``text``, as spans into it, in order.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing quotes or brackets) before
    white space, at ``。！？``, at a blank line, and at a line break before a list item or after
    a line ending in a terminator or a colon; a full stop after a known abbreviation
    (:data:`ABBREVIATIONS`) or an initial, or before a lower-case word, does not end one.
    Decimal points ("3.5") never do. Spans are trimmed of white space and of a leading list
    marker; a piece with no letter or digit (a rule ``---``, a lone bullet) is not a sentence.

    >>> [s.text for s in split_sentences("Costs are approx. 3.5 USD (e.g. in the U.S.).\n"
    ...                                  "- Ships free!\n- Returns: 30 days")]
    ['Costs are approx. 3.5 USD (e.g. in the U.S.).', 'Ships free!', 'Returns: 30 days']
    """
    cuts = set(_line_breaks(text))
    for match in _WESTERN_END.finditer(text):
        space = _SPACE.match(text, match.end())
        if _ends_sentence(text, match.end(), space.end() if space else match.end()):
            cuts.add(match.end())
    cuts.update(m.end() for m in _CJK_END.finditer(text))
    spans: list[Span] = []
    start = 0
    for cut in [*sorted(cuts), len(text)]:
        if cut <= start:
            continue
        begin, end = start, cut
        start = cut
        while begin < end and text[begin].isspace():
            begin += 1
        marker = _LIST_MARKER.match(text, begin, end)
        if marker is not None:
            begin = marker.end()
            while begin < end and text[begin].isspace():
                begin += 1
        while end > begin and text[end - 1].isspace():
            end -= 1
        if any(c.isalnum() for c in text[begin:end]):
            spans.append(Span(begin, end, text[begin:end]))
    return spans


def _weight(number: bool) -> float:
    return NUMBER_WEIGHT if number else 1.0


def _index(passage_terms: Sequence[Term]) -> dict[str, list[Term]]:
    """A passage's terms by key, each list in text order."""
    index: dict[str, list[Term]] = {}
    for term in passage_terms:
        index.setdefault(term.key, []).append(term)
    return index


def _match(sentence_terms: Sequence[Term], index: Mapping[str, Sequence[Term]],
           passage: int) -> PassageMatch | None:
    wanted = {t.key: t.number for t in sentence_terms}
    shared = sorted(k for k in wanted if k in index)
    if not shared:
        return None
    total = sum(_weight(n) for n in wanted.values())
    score = sum(_weight(wanted[k]) for k in shared) / total
    hits = list(heapq.merge(*(index[k] for k in shared), key=lambda t: t.start))
    focus = focus_index(hits, {k: _weight(wanted[k]) for k in shared})
    # A word the passage repeats hundreds of times would mark (and send) hundreds of spans:
    # keep the MAX_SPANS around the focus, where the reader looks.
    first = min(max(0, focus - MAX_SPANS // 2), max(0, len(hits) - MAX_SPANS))
    kept = hits[first:first + MAX_SPANS]
    return PassageMatch(passage, score, tuple(shared), tuple((t.start, t.end) for t in kept),
                        focus - first)


def focus_index(hits: Sequence[Term], weights: Mapping[str, float], *,
                window: int = FOCUS_WINDOW) -> int:
    """Where in a passage the shared terms say most: the index of the hit to look at first.

    Each shared term weighs its sentence weight divided by how often the passage repeats it (a
    word on every line tells little: the one line with the sentence's number tells most). A
    stretch is the ``window`` characters from a hit on, worth the weights of the distinct terms
    in it; in the first of the best stretches, the first hit of the weightiest term is the
    focus. Linear in the number of hits.

    >>> hits = [t for t in terms("row one, row two, row: 1500") if t.key in ("row", "1500")]
    >>> [h.start for h in hits], focus_index(hits, {"row": 1.0, "1500": 2.0}, window=12)
    ([0, 9, 18, 23], 3)
    """
    if not hits:
        return 0
    counts = Counter(t.key for t in hits)
    value = {key: weights.get(key, 1.0) / n for key, n in counts.items()}
    inside: Counter[str] = Counter()
    best, best_at, total, end = -1.0, 0, 0.0, 0
    for first, hit in enumerate(hits):
        while end < len(hits) and hits[end].start - hit.start <= window:
            if inside[hits[end].key] == 0:
                total += value[hits[end].key]
            inside[hits[end].key] += 1
            end += 1
        if total > best + 1e-12:
            best, best_at = total, first
        inside[hit.key] -= 1
        if inside[hit.key] == 0:
            total -= value[hit.key]
    start = hits[best_at].start
    stretch = range(best_at, len(hits))
    in_window = [i for i in stretch if hits[i].start - start <= window]
    return max(in_window, key=lambda i: (value[hits[i].key], -i))


def _ranked(matches: list[PassageMatch]) -> tuple[PassageMatch, ...]:
    # Best first; equal scores keep the passages' order, so the result is deterministic.
    return tuple(sorted(matches, key=lambda m: (-m.score, m.passage)))


def link_sentence(sentence: str, passages: Sequence[str]) -> list[PassageMatch]:
    """The passages that share a content word or number with ``sentence``, best first.

    Passages sharing nothing are left out; equal scores keep the passages' order. A sentence
    without content words or numbers ("Yes.") matches nothing.

    "costs" is not in the passage: it shares 1500 (weight 2) and "eur" (1) of 4.

    >>> [(m.passage, m.score, m.spans) for m in link_sentence("It costs 1,500 EUR.",
    ...                                                        ["Price: 1500 eur", "Free"])]
    [(0, 0.75, ((7, 11), (12, 15)))]
    """
    own = terms(sentence)
    if not own:
        return []
    found = (_match(own, _index(terms(text)), n) for n, text in enumerate(passages))
    return list(_ranked([m for m in found if m is not None]))


def link_answer(answer: str, passages: Sequence[str]) -> list[SentenceLinks]:
    """Every sentence of ``answer`` (:func:`split_sentences`) with its passage matches.

    The same as :func:`link_sentence` per sentence, with each passage tokenised once.
    """
    passage_terms = [_index(terms(text)) for text in passages]
    linked: list[SentenceLinks] = []
    for sentence in split_sentences(answer):
        own = terms(sentence.text)
        found = [_match(own, theirs, n) for n, theirs in enumerate(passage_terms)] if own else []
        matches = _ranked([m for m in found if m is not None])
        shared = {k for m in matches for k in m.terms}
        spans = tuple((t.start, t.end) for t in own if t.key in shared)
        linked.append(SentenceLinks(sentence, matches, spans))
    return linked


__all__ = [
    "ABBREVIATIONS", "FOCUS_WINDOW", "MAX_SPANS", "NUMBER_WEIGHT", "STOP_WORDS", "PassageMatch",
    "SentenceLinks", "Span", "Term", "focus_index", "link_answer", "link_sentence",
    "split_sentences", "terms",
]
