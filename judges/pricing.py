"""Prices of judge calls: USD per million input and output tokens, by ``provider/model``.

:data:`DEFAULT_PRICES` is an editable table of list prices; :func:`load_prices` extends it from a
file (``calibrate judge run --prices FILE``). A model without a price has an unknown cost, never
a made-up one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from labels.errors import ImportFileError
from labels.reading import read_regular_text


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Cost of one call with these token counts."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


DEFAULT_PRICES: dict[str, Price] = {
    # List prices (USD / million tokens) as published when this table was written; check them,
    # edit this table, or pass prices= / --prices FILE for your contract. A model missing here
    # has an unknown cost (never a guessed one).
    "anthropic/claude-haiku-4-5": Price(1.00, 5.00),
    "anthropic/claude-sonnet-4-5": Price(3.00, 15.00),
    "anthropic/claude-sonnet-4-6": Price(3.00, 15.00),  # assumed: Sonnet's price since 3.5
    "anthropic/claude-opus-4-1": Price(15.00, 75.00),
    "openai/gpt-4o": Price(2.50, 10.00),
    "openai/gpt-4o-mini": Price(0.15, 0.60),
    "openai/gpt-4.1": Price(2.00, 8.00),
    "openai/gpt-4.1-mini": Price(0.40, 1.60),
    "openai/gpt-4.1-nano": Price(0.10, 0.40),
    "scripted/*": Price(0.0, 0.0),
}


def price_for(model: str, prices: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``provider/model``: an exact entry, else the longest ``prefix*`` entry."""
    table = DEFAULT_PRICES if prices is None else prices
    if model in table:
        return table[model]
    matches = [k for k in table if k.endswith("*") and model.startswith(k[:-1])]
    return table[max(matches, key=len)] if matches else None


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a price table: ``{"provider/model": {input: 0.15, output: 0.6}, ...}`` (YAML/JSON).

    The entries extend (and override) :data:`DEFAULT_PRICES`.
    """
    try:
        data = yaml.safe_load(read_regular_text(path))  # a FIFO or device is refused
    except FileNotFoundError:
        raise ImportFileError("no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ImportFileError(f"cannot read: {error}", path=str(path)) from None
    except yaml.YAMLError as error:
        raise ImportFileError(f"not valid YAML/JSON: {error}", path=str(path)) from None
    if not isinstance(data, dict):
        raise ImportFileError("a price table must map provider/model to prices", path=str(path))
    table = dict(DEFAULT_PRICES)
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ImportFileError(
                f"{model}: give exactly 'input' and 'output' (USD per million tokens)",
                path=str(path),
            )
        try:
            table[str(model)] = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, ValueError):
            raise ImportFileError(f"{model}: prices must be numbers", path=str(path)) from None
    return table


__all__ = ["DEFAULT_PRICES", "Price", "load_prices", "price_for"]
