"""What a judge's calls say about its confidence in each row: the signals of a confidence score.

Per row, from its calls: how many gave a pass/fail verdict and how many of those agree with
the row's aggregated verdict (repeats and swapped source orders), the verdict probability a
claim-split judge writes as ``p_yes`` in its reasoning, and optionally how many other judges
agree. :func:`scores_of` turns the signals named in
:data:`judges.calibration.vocabulary.SIGNALS` into one score per row
(:func:`judges.calibration.confidence_score`); :mod:`judges.selective` certifies a threshold on
it and :func:`judges.selective.apply_selection` applies a card's threshold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import confidence_score
from judges.calibration.vocabulary import SIGNALS
from labels.errors import CalibrateError

__all__ = ["available_signals", "call_signals", "scores_of"]

_P_YES = re.compile(r"p_yes=([0-9]*\.?[0-9]+)")

def call_signals(calls: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per item: its aggregated verdict and the signals of its calls.

    Args:
        calls: One row per (item, repeat, order): ``item_id``, ``verdict`` and optionally
            ``reasoning``.
        items: The aggregated verdicts (``item_id``, ``verdict``).

    Returns:
        ``item_id``, ``verdict``, ``scored`` (calls with a pass/fail verdict), ``agreeing`` (of
        those, calls giving the aggregated verdict) and ``pass_probability`` (the mean over
        calls of the smallest claim ``p_yes`` in their reasoning: the margin a claim-split
        judge's verdict has; ``NaN`` when no call carries one).
    """
    verdict = items.set_index(items["item_id"].astype(str))["verdict"].astype(str)
    frame = calls.assign(item_id=calls["item_id"].astype(str),
                         verdict=calls["verdict"].astype(object).fillna("unscored").astype(str))
    decided = frame["verdict"].isin(["pass", "fail"])
    agree = decided & frame["verdict"].eq(frame["item_id"].map(verdict))
    grouped = pd.DataFrame({"item_id": frame["item_id"], "scored": decided, "agreeing": agree})
    if "reasoning" in frame:
        texts = frame["reasoning"].astype(object).where(frame["reasoning"].notna(), "")
        margins = [min((float(x) for x in _P_YES.findall(str(t))), default=np.nan)
                   for t in texts]
        grouped["margin"] = np.where(decided, margins, np.nan)
    else:
        grouped["margin"] = np.nan
    out = grouped.groupby("item_id", sort=False).agg(
        scored=("scored", "sum"), agreeing=("agreeing", "sum"), pass_probability=("margin",
                                                                                  "mean"))
    out = out.reindex(verdict.index).fillna({"scored": 0, "agreeing": 0})
    return pd.DataFrame({
        "item_id": verdict.index.to_numpy(dtype=object),
        "verdict": verdict.to_numpy(dtype=object),
        "scored": out["scored"].to_numpy(dtype=np.int64),
        "agreeing": out["agreeing"].to_numpy(dtype=np.int64),
        "pass_probability": out["pass_probability"].clip(0.0, 1.0).to_numpy(dtype=float),
    })


def scores_of(signals: pd.DataFrame, used: Sequence[str], *,
              others: Sequence[Mapping[str, str]] = ()) -> npt.NDArray[np.float64]:
    """The confidence score of each row of ``signals`` from the signals ``used``.

    Rows whose aggregated verdict is not pass/fail get ``NaN`` (no rule accepts them).
    """
    unknown = sorted(set(used) - set(SIGNALS))
    if unknown or not used:
        raise CalibrateError(f"unknown signals {unknown} (signals: {', '.join(SIGNALS)})"
                             if unknown else "name at least one signal")
    verdict = signals["verdict"].astype(str).to_numpy()
    parts: dict[str, Any] = {}
    if "agreement" in used:
        parts.update(agreeing=signals["agreeing"].to_numpy(), scored=signals["scored"].to_numpy())
    if "probability" in used:
        parts["pass_probability"] = signals["pass_probability"].to_numpy(dtype=float)
    if "judges" in used:
        ids = signals["item_id"].astype(str).tolist()
        theirs = [[o.get(i) for i in ids] for o in others]
        decided = np.array([[v in ("pass", "fail") for v in t] for t in theirs], dtype=bool) \
            if theirs else np.zeros((0, len(ids)), dtype=bool)
        same = np.array([[v == verdict[k] for k, v in enumerate(t)] for t in theirs],
                        dtype=bool) if theirs else decided
        parts.update(others_agreeing=(decided & same).sum(axis=0),
                     others=decided.sum(axis=0))
    score = confidence_score(**parts)
    score[~np.isin(verdict, ["pass", "fail"])] = np.nan
    return score


def available_signals(signals: pd.DataFrame, *, with_judges: bool = False) -> tuple[str, ...]:
    """The signals these calls carry: agreement, probability when a call has a ``p_yes``."""
    used = ["agreement"]
    if bool(np.isfinite(signals["pass_probability"].to_numpy(dtype=float)).any()):
        used.append("probability")
    if with_judges:
        used.append("judges")
    return tuple(used)
