"""``widgets.escape_markdown``: every markdown construct Streamlit 1.67 renders is neutralised.

Streamlit's markdown pipeline has two stages. The parser (micromark: CommonMark, GFM, math,
directives) honours backslash escapes. Then plugins rewrite the parsed text nodes, where the
backslashes are gone: emoji and ``:streamlit:`` shortcodes, ``:material/…:`` icons, GFM autolink
literals and typographic arrows. The patterns below are the ones in Streamlit 1.67's frontend
bundle (``StreamlitMarkdown.*.js``, ``remark-emoji.*.js``, mdast-util-gfm-autolink-literal).
The browser test (``test_hostile_text.py``) checks the same in Chromium.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from markup import shown

from calibrate_app.widgets import WORD_JOINER, escape_markdown, file_name

# Rewrites applied to the parsed text (after escapes are resolved), from the Streamlit bundle.
TEXT_NODE_PATTERNS = {
    "emoji": re.compile(r":\+1:|:-1:|:[\w-]+:"),
    "streamlit logo": re.compile(r":streamlit:"),
    "material icon": re.compile(r":material_(\w+):"),
    "autolink url": re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE),
    "autolink email": re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)"),
    "arrow": re.compile(r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)"),
}
HOSTILE = [
    "![t](http://127.0.0.1:9/track)", "<img src=http://127.0.0.1:9/x>", "[x](javascript:alert(1))",
    "$x^2$", ":red[x]", ":material/home:", ":smile: :+1: :streamlit:", "<script>x()</script>",
    "**b** _i_ `c` ~~s~~", "# h", "- li", "1. one", "| a | b |", "www.example.com",
    "dana@example.com", "https://example.com/x", "a -> b <= c -- d", "<!-- c -->", "[r]: /x",
]


def parsed_text(escaped: str) -> str:
    """What the markdown parser hands to the text plugins: escapes resolved."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", escaped)


def test_every_markdown_character_is_escaped() -> None:
    for text in HOSTILE:
        escaped = escape_markdown(text)
        # Every ASCII punctuation character is preceded by a backslash (or is one).
        bare = re.sub(r"\\[!-/:-@\[-`{-~]", "", escaped)
        assert not re.search(r"[!-/:-@\[-`{-~]", bare), (text, escaped)


def test_no_text_plugin_pattern_survives() -> None:
    for text in HOSTILE:
        resolved = parsed_text(escape_markdown(text))
        for name, pattern in TEXT_NODE_PATTERNS.items():
            assert not pattern.search(resolved), (name, text, resolved)
    # The raw-source rewrite of :material/ icons happens before parsing.
    assert ":material/" not in escape_markdown(":material/home:")


def test_examples() -> None:
    assert escape_markdown("![t](http://x/y)") == "\\!\\[t\\]\\(http\u2060\\:\\/\\/x\\/y\\)"
    assert escape_markdown("a:b:c") == "a\\:\u2060b\\:c"
    assert escape_markdown("plain words 12") == "plain words 12"
    assert escape_markdown("two\nlines") == "two  \nlines"
    assert escape_markdown(None) == "None"


@given(st.text(alphabet=st.characters(blacklist_characters=WORD_JOINER + "\r")))
def test_the_reader_sees_the_original_text(text: str) -> None:
    assert shown(escape_markdown(text)) == text


def test_download_file_names_keep_only_safe_characters() -> None:
    assert file_name("../![t](http://x)-labels.csv") == "t_http_x_-labels.csv"
    assert file_name("support-bot-labels.csv") == "support-bot-labels.csv"
    assert file_name("///") == "download"
