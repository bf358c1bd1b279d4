"""What a reader sees of a string the app passed through ``widgets.escape_markdown``.

AppTest reports the markdown source of captions, alerts and labels; the browser shows it with
the backslash escapes resolved and the invisible word joiners unseen. Tests compare against this.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from calibrate_app.widgets import WORD_JOINER


def shown(markdown: object) -> str:
    """``markdown`` as rendered text: escapes resolved, word joiners and hard breaks removed."""
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown))
    return text.replace(WORD_JOINER, "").replace("  \n", "\n")


class _Tags(HTMLParser):
    """The tags and the text of an HTML fragment, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.skip = 0  # inside an element whose text is not the answer's

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        classes = (dict(attrs).get("class") or "").split()
        if tag == "style" or self.skip or {"calibrate-sn", "calibrate-claim-status",
                                           "calibrate-panel-title"} & set(classes):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.text.append(data)


def answer_shown(body: str) -> tuple[set[str], str]:
    """The tags of the Label page's answer HTML and the answer text a reader sees in it.

    The panel's title, the sentence numbers, the status line and the stylesheet are left out
    of the text.
    """
    parser = _Tags()
    parser.feed(body)
    parser.close()
    return parser.tags, "".join(parser.text)


class _Passages(HTMLParser):
    """The tags of the sources HTML, each passage's title and each passage's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.titles: list[str] = []
        self.texts: list[str] = []
        self.into: list[str] | None = None
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if self.into is not None:
            self.depth += 1
            return
        classes = set((dict(attrs).get("class") or "").split())
        for name, into in (("calibrate-passage-title", self.titles),
                           ("calibrate-passage-text", self.texts)):
            if name in classes:
                into.append("")
                self.into, self.depth = into, 1

    def handle_endtag(self, tag: str) -> None:
        if self.into is not None:
            self.depth -= 1
            if self.depth == 0:
                self.into = None

    def handle_data(self, data: str) -> None:
        if self.into is not None:
            self.into[-1] += data


def sources_shown(body: str) -> tuple[set[str], list[str], list[str]]:
    """The tags of the sources HTML, the passages' titles and their texts as a reader sees them."""
    parser = _Passages()
    parser.feed(body)
    parser.close()
    return parser.tags, parser.titles, parser.texts
