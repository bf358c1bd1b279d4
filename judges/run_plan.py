"""Plan a judge run before anything is sent: which calls, which are cached, what they cost.

:func:`plan_run` renders every call of a run (``items × repeats × orders``), leaves out the calls
whose reply is already stored (same item content, repeat and order), and estimates tokens and
cost (:class:`CostEstimate`). ``calibrate judge run --dry-run`` stops here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from judges.config import JudgeConfig
from judges.pricing import Price, price_for
from judges.prompts import ORDERS, Neutraliser, Order, RenderedPrompt, render, render_check
from judges.store import JudgeStore, item_hash
from labels.errors import CalibrateError, NotFoundError
from labels.models import Item
from labels.store import LabelStore

TYPICAL_OUTPUT_TOKENS = {
    "marker": 150, "json": 250, "label": 3, "claims": 450, "claim_split": 60,
}
"""Output tokens assumed per call before any call of the config has been stored."""
TYPICAL_CLAIMS = 3
"""Claims per answer assumed when estimating a claim-split judgement (one check call each)."""


@dataclass(frozen=True)
class PlannedCall:
    """One call to make: an item, a repeat index, an order, and the rendered prompt."""

    item: Item
    item_hash: str
    repeat: int
    order: Order
    prompt: RenderedPrompt

    @property
    def key(self) -> tuple[str, int, str]:
        """The cache key within the config."""
        return (self.item_hash, self.repeat, self.order)


@dataclass(frozen=True)
class CostEstimate:
    """What a run will cost before it starts.

    ``*_max`` assumes every reply uses ``max_tokens``; ``*_typical`` uses the mean output
    tokens of this config's stored calls, or a per-contract guess before there are any.
    Costs are ``None`` when the model has no price.
    """

    model: str
    calls_planned: int
    calls_cached: int
    calls_to_make: int
    input_tokens: int
    output_tokens_typical: int
    output_tokens_max: int
    price: Price | None
    cost_typical: float | None
    cost_max: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def describe(self) -> str:
        """One paragraph for people."""
        cost = (
            "cost unknown (no price for this model; pass --prices FILE)"
            if self.cost_typical is None or self.cost_max is None
            else f"about ${self.cost_typical:,.4f} (at most ${self.cost_max:,.4f})"
        )
        return (
            f"{self.calls_planned} calls planned, {self.calls_cached} already stored, "
            f"{self.calls_to_make} to make with {self.model}: ~{self.input_tokens:,} input "
            f"tokens, ~{self.output_tokens_typical:,} output tokens (at most "
            f"{self.output_tokens_max:,}); {cost}"
        )


@dataclass
class RunPlan:
    """The calls a run will make and what they will cost."""

    config: JudgeConfig
    dataset: str
    items: list[Item]
    repeats: int
    orders: tuple[Order, ...]
    planned: int
    cached: int
    calls: list[PlannedCall]
    estimate: CostEstimate


def select_items(
    store: LabelStore, dataset: str, config: JudgeConfig, *, item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
) -> list[Item]:
    """The items a run covers, in file order.

    Args:
        store: the label store holding ``dataset``.
        dataset: the dataset name; its kind (pointwise/pairwise) must match ``config.kind``.
        config: the judge; its criterion decides what counts as labelled.
        item_ids: only these items (unknown ids raise :class:`NotFoundError`).
        labelled_only: only items with at least one human label for ``config.criterion``.
        limit: the first ``limit`` items after the other filters.
    """
    info = store.dataset(dataset)
    if info.kind != config.kind:
        raise CalibrateError(
            f"judge {config.name!r} is {config.kind} but dataset {dataset!r} is {info.kind}; "
            f"pick a {info.kind} judge"
        )
    wanted = list(item_ids) if item_ids is not None else None
    items = store.items(dataset, item_ids=wanted)
    if wanted is not None:
        missing = sorted(set(wanted) - {i.item_id for i in items})
        if missing:
            raise NotFoundError(
                f"dataset {dataset!r} has no item {missing[0]!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
    if labelled_only:
        labelled = set(store.label_counts(dataset, config.criterion))
        items = [i for i in items if i.item_id in labelled]
        if not items:
            raise CalibrateError(
                f"dataset {dataset!r} has no rows labelled for criterion {config.criterion!r}; "
                "label some first or drop --labelled-only"
            )
    if limit is not None:
        if limit < 1:
            raise CalibrateError("limit must be at least 1")
        items = items[:limit]
    if not items:
        raise CalibrateError(f"dataset {dataset!r} has no items to judge")
    return items


def _typical_output_tokens(config: JudgeConfig, judge_store: JudgeStore | None) -> int:
    if judge_store is not None:
        mean = judge_store.mean_output_tokens(config.config_id)
        if mean is not None:
            return min(config.generation.max_tokens, round(mean))
    if config.strategy == "claim_split":
        return TYPICAL_OUTPUT_TOKENS["claim_split"]
    kind = "claims" if config.output.verdict_from_claims else config.output.format
    return min(config.generation.max_tokens, TYPICAL_OUTPUT_TOKENS[kind])


def _input_tokens(config: JudgeConfig, call: PlannedCall, neutralise: Neutraliser) -> int:
    """Approximate input tokens of one judgement (a claim split adds its typical checks)."""
    tokens = call.prompt.approx_tokens()
    if config.claim_split is not None:
        check = render_check(config, call.item, "a typical claim of about this length",
                             call.order, neutralise=neutralise)
        tokens += TYPICAL_CLAIMS * check.approx_tokens()
    return tokens


def plan_run(
    store: LabelStore, config: JudgeConfig, dataset: str, *, repeats: int | None = None,
    swap: bool | None = None, item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
    prices: Mapping[str, Price] | None = None, judge_store: JudgeStore | None = None,
    model: str | None = None,
) -> RunPlan:
    """Render every call of a run and estimate its cost; nothing is sent or written.

    ``repeats``/``swap`` override the config's defaults; ``model`` (``provider/model``, default
    ``config.model``) is what the prices are looked up for. Calls already stored for this config
    (same item content, repeat and order) count as cached and are not planned again.

    Raises:
        RenderError: an item lacks a variable the template uses (before any call is made).
    """
    n_repeats = config.repeats if repeats is None else repeats
    if n_repeats < 1:
        raise CalibrateError("repeats must be at least 1")
    do_swap = config.swap if swap is None else swap
    orders: tuple[Order, ...] = ORDERS if do_swap else ("original",)
    items = select_items(
        store, dataset, config, item_ids=item_ids, labelled_only=labelled_only, limit=limit
    )
    done = judge_store.completed_keys(config.config_id) if judge_store is not None else set()
    neutralise = Neutraliser(config)
    calls: list[PlannedCall] = []
    planned = 0
    rendered: dict[tuple[str, Order], RenderedPrompt] = {}
    for item in items:
        digest = item_hash(item)
        for order in orders:
            for repeat in range(n_repeats):
                planned += 1
                if (digest, repeat, order) in done:
                    continue
                # Two rows with the same content share one call.
                done.add((digest, repeat, order))
                prompt = rendered.get((item.item_id, order))
                if prompt is None:
                    prompt = render(config, item, order, neutralise=neutralise)
                    rendered[(item.item_id, order)] = prompt
                calls.append(PlannedCall(item, digest, repeat, order, prompt))
    typical = _typical_output_tokens(config, judge_store)
    model = model or config.model
    price = price_for(model, prices)
    input_tokens = sum(_input_tokens(config, c, neutralise) for c in calls)
    out_typical = typical * len(calls)
    per_call_max = config.generation.max_tokens
    if config.claim_split is not None:
        per_call_max += config.claim_split.max_claims * config.claim_split.check_max_tokens
    out_max = per_call_max * len(calls)
    estimate = CostEstimate(
        model=model, calls_planned=planned, calls_cached=planned - len(calls),
        calls_to_make=len(calls), input_tokens=input_tokens, output_tokens_typical=out_typical,
        output_tokens_max=out_max, price=price,
        cost_typical=price.cost(input_tokens, out_typical) if price else None,
        cost_max=price.cost(input_tokens, out_max) if price else None,
    )
    return RunPlan(config, dataset, items, n_repeats, orders, planned, planned - len(calls),
                   calls, estimate)


__all__ = [
    "TYPICAL_CLAIMS", "TYPICAL_OUTPUT_TOKENS", "CostEstimate", "PlannedCall", "RunPlan",
    "plan_run", "select_items",
]
