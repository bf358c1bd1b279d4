"""What a reader sees of a string the app passed through ``widgets.escape_markdown``.

AppTest reports the markdown source of captions, alerts and labels; the browser shows it with
the backslash escapes resolved and the invisible word joiners unseen. Tests compare against this.
"""

from __future__ import annotations

import re

from calibrate_app.widgets import WORD_JOINER


def shown(markdown: object) -> str:
    """``markdown`` as rendered text: escapes resolved, word joiners and hard breaks removed."""
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown))
    return text.replace(WORD_JOINER, "").replace("  \n", "\n")
