"""The files of the demo's judge card (tests/judges/integrations/conftest.py makes them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoCard:
    """A card exported from the demo database, and verdicts of its judge."""

    db: Path
    card: Path
    calibration: Path  # the verdicts of the card's own run (demo-labelled)
    week: Path  # the verdicts of the production week
