"""Rules for what people name and what files identify: names, item ids, and how values are shown.

Every front end (CLI, app, notebooks) creates datasets, judges, annotators and criteria through
the libraries, so the rules live here once:

* :func:`check_name` — a name is 1–64 letters, digits, spaces and ``- _ . @``, with no space at
  either end. Names appear in pages, captions, file names and cards; a name cannot carry
  markup (``<script>``), control or invisible characters.
* :func:`normalise_id` — an item id is stripped and put in Unicode NFKC, the same way for rows,
  labels and verdicts, so ``"1 "`` and ``"1"``, a composed and a decomposed ``é``, or a
  fullwidth ``１`` and ``1`` name the same item everywhere.
* :class:`LookalikeIds` — ids that differ only in spaces, Unicode normalisation, invisible
  characters (zero-width space, soft hyphen …) or letters of another script drawn the same
  (Latin ``row-x``, Cyrillic ``rоw-x``: Unicode's confusables, UTS #39) are refused, naming
  both rows, instead of silently becoming two items a person cannot tell apart.
* :func:`shown` — how a cell's value appears in an error message: a short, quoted prefix. A file
  picked by mistake (``.env``) must not have its secrets echoed to a terminal or a log.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

from labels.errors import InvalidNameError

NAME_MAX_CHARS = 64
NAME_RULE = (
    "use letters, digits, spaces and - _ . @ + (1 to 64 characters, no space at either end)"
)
_NAME_PUNCTUATION = frozenset("-_.@+ ")
SHOWN_CHARS = 12
"""How many characters of a cell an error message shows (enough to find it, too few to leak)."""


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    r"""``value`` quoted for an error message, cut to ``limit`` characters.

    Invisible and control characters are escaped (``'a\u200b1'``), so look-alikes can be told
    apart; longer values end in ``…`` with their length, never in full.

    >>> shown("sk-live-0123456789abcdef")
    "'sk-live-0123'… (24 characters)"
    >>> shown("a\u200b1")
    "'a\\u200b1'"
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def shown_id(value: str, limit: int = 24) -> str:
    r"""An id for a look-alike message: :func:`shown`, then its escaped form when not ASCII.

    The escaped form tells apart what looks the same on screen: the Cyrillic id ``rоw-x`` is
    shown as ``'rоw-x' (written 'r\u043ew-x')``.
    """
    text = shown(value, limit)
    if ascii(value[:limit]) == repr(value[:limit]):  # nothing a repr does not escape
        return text
    return f"{text} (written {value[:limit]!a})"


def check_name(value: object, what: str = "name") -> str:
    """The name in Unicode NFC if it follows :data:`NAME_RULE`, else :class:`InvalidNameError`.

    Args:
        value: the proposed name.
        what: what is being named, for the message (``dataset``, ``annotator`` …).

    Raises:
        InvalidNameError: naming the value (escaped, cut short) and the rule.
    """
    if not isinstance(value, str):
        raise InvalidNameError(f"{what} name must be text, got {type(value).__name__}; {NAME_RULE}")
    name = unicodedata.normalize("NFC", value)
    problem = _name_problem(name)
    if problem:
        raise InvalidNameError(f"{what} name {shown(value, 40)} {problem}; {NAME_RULE}")
    return name


def _name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if len(name) > NAME_MAX_CHARS:
        return f"is {len(name)} characters long"
    if name[0] == " " or name[-1] == " ":
        return "starts or ends with a space"
    for position, char in enumerate(name):
        if char.isalnum() or char in _NAME_PUNCTUATION:
            continue
        # Combining marks belong to the letter before them (Devanagari vowel signs, accents
        # NFC cannot compose); alone at the start they would decorate nothing.
        if position and unicodedata.category(char).startswith("M"):
            continue
        return f"contains {char!r} (U+{ord(char):04X}), which is not allowed"
    return None


def normalise_id(value: str) -> str:
    """An item id as stored and looked up: surrounding whitespace removed, Unicode NFKC."""
    stripped = value.strip()
    if stripped.isascii():
        return stripped
    return unicodedata.normalize("NFKC", stripped).strip()


@functools.cache
def _ascii_twins() -> dict[str, str]:
    """Each non-ASCII character Unicode lists as confusable with a printable ASCII one → that one.

    From Unicode's confusables data (UTS #39) as the ``confusable-homoglyphs`` package ships
    it. ASCII characters keep their identity: ``l`` and ``1`` stay two ids.
    """
    data = json.loads(
        resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    )
    twins: dict[str, str] = {}
    for char, glyphs in data.items():
        ascii_glyphs = [g["c"] for g in glyphs if len(g["c"]) == 1 and " " < g["c"] < "\x7f"]
        if char.isascii():
            if " " < char < "\x7f":
                for glyph in glyphs:
                    if len(glyph["c"]) == 1 and not glyph["c"].isascii():
                        twins.setdefault(glyph["c"], char)
        elif ascii_glyphs:
            twins.setdefault(char, ascii_glyphs[0])
    return twins


def lookalike_key(item_id: str) -> str:
    """What a person sees of an id.

    That is its NFKC form, without invisible (format/control) characters, with each run of
    spaces read as one, and each letter of another script that Unicode lists as drawn like an
    ASCII one read as that one (Cyrillic ``о`` as ``o``).

    Two different ids with the same key cannot be told apart on screen.
    """
    if item_id.isascii() and item_id.isprintable() and "  " not in item_id:
        return item_id
    folded = unicodedata.normalize("NFKC", item_id)
    visible = "".join(c for c in folded if unicodedata.category(c) not in ("Cf", "Cc"))
    if not visible.isascii():
        twins = _ascii_twins()
        visible = "".join(twins.get(c, c) for c in visible)
    return " ".join(visible.split())


PLAIN_ID_PATTERN = r"[!-~]+( [!-~]+)*"
"""An id of printable ASCII words separated by single spaces: its own look-alike key."""


def all_plain(ids: list[str]) -> bool:
    """True when every id is printable ASCII with single inner spaces and none around it.

    No two such ids can look alike unless equal. Checked on one joined string, at C speed.
    """
    joined = "\n".join(ids)
    return (
        joined.isascii()
        and joined.replace("\n", "").isprintable()
        and "  " not in joined
        and "\n " not in joined
        and " \n" not in joined
        and not joined.startswith(" ")
        and not joined.endswith(" ")
        and "\n\n" not in joined
        and all(ids[:1])
        and not joined.endswith("\n")
    )


@dataclass
class LookalikeIds:
    """Collects a file's ids and refuses two that differ only in invisible ways.

    ``add(raw, row)`` returns the normalised id, or raises :class:`LookalikeIdError` naming
    both rows when another row's id looks the same but is written differently (spaces around
    it, NFC vs NFD, a zero-width character). Equal raw ids are not look-alikes: the caller
    decides whether a repeated id is an error.
    """

    _seen: dict[str, tuple[str, int]] = field(default_factory=dict)

    def add(self, raw: str, row: int) -> str:
        """Record ``raw`` (found at ``row``) and return its normalised id."""
        normalised = normalise_id(raw)
        key = lookalike_key(normalised)
        first = self._seen.setdefault(key, (raw, row))
        if first[0] != raw:
            raise LookalikeIdError(first[0], first[1], raw, row)
        return normalised


class LookalikeIdError(ValueError):
    """Two ids that look the same but are written differently (rows 1-based)."""

    def __init__(self, first: str, first_row: int, second: str, second_row: int) -> None:
        """Record both ids and their rows; the message quotes both, cut short."""
        self.first, self.first_row = first, first_row
        self.second, self.second_row = second, second_row
        super().__init__(
            f"the id {shown_id(second)} looks the same as {shown_id(first)} of row "
            f"{first_row} but is written differently (spaces, Unicode normalisation, an "
            "invisible character or a letter of another script); give the rows clearly "
            "different ids, or the same id"
        )


__all__ = [
    "NAME_MAX_CHARS", "NAME_RULE", "PLAIN_ID_PATTERN", "SHOWN_CHARS", "LookalikeIdError",
    "LookalikeIds", "all_plain", "check_name", "lookalike_key", "normalise_id", "shown",
    "shown_id",
]
