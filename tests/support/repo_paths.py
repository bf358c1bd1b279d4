"""Where things are, for tests in any folder (``tests/support`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
APP_SCRIPT = REPO / "calibrate_app" / "streamlit_app.py"
FAKE_SERVER_SCRIPT = TESTS / "support" / "fake_llm_server.py"
BAD_FILES = TESTS / "data" / "bad"
NOTEBOOKS = REPO / "notebooks"
# Shared data beside the repository (FaithBench, the synthetic oracle sets); absent in a clone.
SHARED_DATA = REPO.parent / "shared" / "data"
