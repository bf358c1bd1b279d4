"""Plan a judge run before anything is sent: which calls, which are cached, what they cost.

:func:`plan_run` renders every call of a run (``items × repeats × orders``), leaves out the calls
whose reply is already stored (same item content, repeat and order), and estimates tokens and
cost (:class:`CostEstimate`). ``calibrate judge run --dry-run`` stops here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast, overload

import numpy as np
import pyarrow as pa

from judges.config import JudgeConfig, template_variables
from judges.pricing import Price, price_for
from judges.prompts import ORDERS, Neutraliser, Order, RenderedPrompt, render, render_check
from judges.stores.judge_store import JudgeStore
from labels.errors import CalibrateError, NotFoundError
from labels.item_hashes import content_hashes, text_lengths
from labels.models import Item
from labels.stores.label_store import LabelStore

if TYPE_CHECKING:
    from judges.workspace import Workspace

TYPICAL_OUTPUT_TOKENS = {
    "marker": 150, "json": 250, "label": 3, "claims": 450, "claim_split": 60,
}
"""Output tokens assumed per call before any call of the config has been stored."""
TYPICAL_CLAIMS = 3
"""Claims per answer assumed when estimating a claim-split judgement (one check call each)."""
EXACT_ESTIMATE_CALLS = 20_000
"""Up to this many calls the estimate renders every prompt; above, a sample of
:data:`ESTIMATE_SAMPLE` calls is rendered and the rest follow from each item's text length."""
ESTIMATE_SAMPLE = 2_000
CHUNK_CALLS = 1_024
"""Most calls built at a time when a plan is iterated (one item query, then one render per
prompt)."""
FIRST_CHUNK_CALLS = 64
"""Calls in the first chunk; each next chunk doubles up to :data:`CHUNK_CALLS`, so a run sends
its first calls after rendering a few prompts rather than a thousand."""


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


PRICES_HINT = "pass --prices FILE"
"""How the CLI's user gives a model's price (``calibrate judge run --prices``)."""


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

    def describe(self, *, prices_hint: str | None = PRICES_HINT) -> str:
        """One paragraph for people; ``prices_hint`` says how to give a missing price.

        A front end without a ``--prices`` option passes its own hint, or ``None``.
        """
        hint = f"; {prices_hint}" if prices_hint else ""
        cost = (
            f"cost unknown (no price for this model{hint})"
            if self.cost_typical is None or self.cost_max is None
            else f"about ${self.cost_typical:,.4f} (at most ${self.cost_max:,.4f})"
        )
        return (
            f"{self.calls_planned} calls planned, {self.calls_cached} already stored, "
            f"{self.calls_to_make} to make with {self.model}: ~{self.input_tokens:,} input "
            f"tokens, ~{self.output_tokens_typical:,} output tokens (at most "
            f"{self.output_tokens_max:,}); {cost}"
        )


class PlannedCalls(Sequence[PlannedCall]):
    """The calls to make, as columns: an item index, a repeat and an order per call.

    A million calls are three small arrays here; :class:`PlannedCall` objects (with the item
    and its rendered prompt) are built on demand, :data:`CHUNK_CALLS` at a time when iterating,
    so a run holds only the calls in flight and the chunk being dispatched.

    Args:
        store: where the items are read when calls are built.
        config: the judge (prompts are rendered with it).
        dataset: the dataset the items belong to.
        item_ids: the run's items in file order; ``item_index`` points into it.
        item_hashes: each item's cache identity (:func:`judges.stores.judge_store.item_hash`).
        item_index / repeats / order_index: one entry per call to make, in run order;
            ``order_index`` points into ``orders``.
        orders: the run's orders.
    """

    def __init__(
        self, *, store: LabelStore, config: JudgeConfig, dataset: str, item_ids: list[str],
        item_hashes: list[str], item_index: np.ndarray, repeats: np.ndarray,
        order_index: np.ndarray, orders: tuple[Order, ...],
    ) -> None:
        """Hold the columns; nothing is read or rendered yet."""
        self._store = store
        self._config = config
        self.dataset = dataset
        self._item_ids = item_ids
        self._item_hashes = item_hashes
        self.item_index = item_index
        self.repeats = repeats
        self.order_index = order_index
        self.orders = orders
        self.neutralise = Neutraliser(config)

    def __len__(self) -> int:
        """Number of calls to make."""
        return len(self.item_index)

    @overload
    def __getitem__(self, index: int) -> PlannedCall: ...

    @overload
    def __getitem__(self, index: slice) -> list[PlannedCall]: ...

    def __getitem__(self, index: int | slice) -> PlannedCall | list[PlannedCall]:
        """Call ``index`` (or a slice of calls), built now."""
        if isinstance(index, slice):
            return self.build(range(len(self))[index])
        position = range(len(self))[index]  # negative indexes and IndexError as for a list
        return self.build([position])[0]

    def __iter__(self) -> Iterator[PlannedCall]:
        """The calls in run order, built a chunk at a time (small chunks first)."""
        start, size = 0, FIRST_CHUNK_CALLS
        while start < len(self):
            yield from self.build(range(start, min(len(self), start + size)))
            start, size = start + size, min(2 * size, CHUNK_CALLS)

    def build(self, positions: Sequence[int]) -> list[PlannedCall]:
        """:class:`PlannedCall` objects for the calls at ``positions`` (one item query)."""
        wanted = {self._item_ids[self.item_index[p]] for p in positions}
        items = {i.item_id: i for i in self._store.items(self.dataset, item_ids=wanted)}
        rendered: dict[tuple[str, Order], RenderedPrompt] = {}
        calls = []
        for position in positions:
            index = int(self.item_index[position])
            item = items[self._item_ids[index]]
            order = self.orders[self.order_index[position]]
            prompt = rendered.get((item.item_id, order))
            if prompt is None:
                prompt = render(self._config, item, order, neutralise=self.neutralise)
                rendered[(item.item_id, order)] = prompt
            calls.append(PlannedCall(item, self._item_hashes[index],
                                     int(self.repeats[position]), order, prompt))
        return calls

    def positions_of(self, item_id: str) -> list[int]:
        """Positions of the calls on ``item_id``."""
        index = self._item_ids.index(item_id)
        return [int(p) for p in np.flatnonzero(self.item_index == index)]

    def item_ids_to_call(self) -> list[str]:
        """The distinct items with at least one call to make, in file order."""
        return [self._item_ids[i] for i in np.unique(self.item_index)]

    def keys(self) -> pa.Table:
        """The calls as a table: ``item_id``, ``item_hash``, ``repeat``, ``ordering``."""
        take = pa.array(self.item_index, type=pa.int64())
        return pa.table({
            "item_id": pa.array(self._item_ids, type=pa.string()).take(take),
            "item_hash": pa.array(self._item_hashes, type=pa.string()).take(take),
            "repeat": pa.array(self.repeats, type=pa.int32()),
            "ordering": pa.array(list(self.orders), type=pa.string()).take(
                pa.array(self.order_index, type=pa.int64())),
        })


@dataclass
class RunPlan:
    """The calls a run will make and what they will cost.

    ``calls`` holds the calls to make as columns (:class:`PlannedCalls`); ``item_ids`` are the
    run's items in file order, cached or not.
    """

    config: JudgeConfig
    dataset: str
    item_ids: list[str]
    repeats: int
    orders: tuple[Order, ...]
    planned: int
    cached: int
    calls: PlannedCalls
    estimate: CostEstimate


class NoLabelledRowsError(CalibrateError):
    """A run of labelled rows only, on a dataset with no row labelled for the criterion.

    The message speaks the CLI's language (``--labelled-only``); a page with its own control
    for it catches this class and names the control instead.
    """


@dataclass(frozen=True)
class _Selection:
    """The run's items as columns: ids, cache hashes and text lengths, in file order."""

    item_ids: list[str]
    hashes: list[str]
    lengths: np.ndarray


def _select(
    workspace: Workspace, dataset: str, config: JudgeConfig, *, item_ids: Iterable[str] | None,
    labelled_only: bool, limit: int | None,
) -> _Selection:
    """Choose the run's items in SQL and hash them batch by batch (see :func:`select_items`)."""
    info = workspace.labels.dataset(dataset)
    if info.kind != config.kind:
        raise CalibrateError(
            f"judge {config.name!r} is {config.kind} but dataset {dataset!r} is {info.kind}; "
            f"pick a {info.kind} judge"
        )
    if limit is not None and limit < 1:
        raise CalibrateError("limit must be at least 1")
    wanted = list(item_ids) if item_ids is not None else None
    store = workspace.labels
    if wanted is not None:
        found = store.existing_ids(dataset, wanted)
        missing = sorted(set(wanted) - found)
        if missing:
            raise NotFoundError(
                f"dataset {dataset!r} has no item {missing[0]!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
    ids: list[str] = []
    hashes: list[str] = []
    lengths: list[np.ndarray] = []
    for batch in store.content_batches(
        dataset, item_ids=wanted, labelled_for=config.criterion if labelled_only else None,
        limit=limit,
    ):
        ids.extend(cast(list[str], batch.column("item_id").to_pylist()))
        hashes.extend(content_hashes(batch))
        lengths.append(text_lengths(batch))
    if not ids and labelled_only:
        raise NoLabelledRowsError(
            f"dataset {dataset!r} has no rows labelled for criterion {config.criterion!r}; "
            "label some first or drop --labelled-only"
        )
    if not ids:
        raise CalibrateError(f"dataset {dataset!r} has no items to judge")
    return _Selection(ids, hashes, np.concatenate(lengths))


def select_items(
    workspace: Workspace, dataset: str, config: JudgeConfig, *,
    item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
) -> list[Item]:
    """The items a run covers, in file order.

    Args:
        workspace: the open database holding ``dataset``.
        dataset: the dataset name; its kind (pointwise/pairwise) must match ``config.kind``.
        config: the judge; its criterion decides what counts as labelled.
        item_ids: only these items (unknown ids raise :class:`NotFoundError`).
        labelled_only: only items with at least one human label for ``config.criterion``.
        limit: the first ``limit`` items after the other filters.
    """
    chosen = _select(workspace, dataset, config, item_ids=item_ids,
                     labelled_only=labelled_only, limit=limit)
    return workspace.labels.items(dataset, item_ids=chosen.item_ids)


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


def _check_renderable(workspace: Workspace, config: JudgeConfig, calls: PlannedCalls) -> None:
    """Raise the :class:`RenderError` of the first item a template cannot be filled for.

    For a plan too large to render up front: the items lacking a field a template uses are
    found in SQL, and the first of them is rendered (which raises, naming item and field).
    """
    used = set(template_variables(config.template))
    if config.claim_split is not None:
        used |= set(template_variables(config.claim_split.check_template))
    if config.kind == "pairwise" and len(calls.orders) == 2 and used & {"answer_a", "answer_b"}:
        used |= {"answer_a", "answer_b"}  # the swapped order shows each answer in the other slot
    first = workspace.labels.first_lacking(
        calls.dataset, calls.item_ids_to_call(), sorted(used)
    )
    if first is None:
        return
    for call in calls.build(calls.positions_of(first)):
        _input_tokens(config, call, calls.neutralise)


def _estimate_input_tokens(
    config: JudgeConfig, calls: PlannedCalls, lengths: np.ndarray
) -> int:
    """Input tokens of ``calls``: exact up to :data:`EXACT_ESTIMATE_CALLS`, else from a sample.

    The sample (evenly spread calls) fits tokens ≈ a + b × the item's text length, which covers
    the template, few-shot turns and per-passage markup; every call is then counted from its
    item's length.
    """
    neutralise = calls.neutralise
    if len(calls) <= EXACT_ESTIMATE_CALLS:
        return sum(_input_tokens(config, c, neutralise) for c in calls)
    positions = np.unique(np.linspace(0, len(calls) - 1, ESTIMATE_SAMPLE).astype(np.int64))
    sampled = calls.build([int(p) for p in positions])
    tokens = np.array([_input_tokens(config, c, neutralise) for c in sampled], dtype=float)
    x = lengths[calls.item_index[positions]].astype(float)
    design = np.column_stack([np.ones_like(x), x])
    (a, b), *_ = np.linalg.lstsq(design, tokens, rcond=None)
    return round(float(a) * len(calls) + float(b) * float(lengths[calls.item_index].sum()))


def plan_run(
    workspace: Workspace, config: JudgeConfig, dataset: str, *, repeats: int | None = None,
    swap: bool | None = None, item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
    prices: Mapping[str, Price] | None = None, judge_store: JudgeStore | None = None,
    model: str | None = None,
) -> RunPlan:
    """Plan every call of a run and estimate its cost; nothing is sent or written.

    ``repeats``/``swap`` override the config's defaults; ``model`` (``provider/model``, default
    ``config.model``) is what the prices are looked up for. Calls already stored for this config
    (same item content, repeat and order) count as cached and are not planned again. The plan is
    columns (:class:`PlannedCalls`): a 1,000,000-call run plans in seconds and little memory.

    Raises:
        RenderError: an item lacks a variable the template uses (before any call is made).
    """
    n_repeats = config.repeats if repeats is None else repeats
    if n_repeats < 1:
        raise CalibrateError("repeats must be at least 1")
    do_swap = config.swap if swap is None else swap
    orders: tuple[Order, ...] = ORDERS if do_swap else ("original",)
    chosen = _select(workspace, dataset, config, item_ids=item_ids,
                     labelled_only=labelled_only, limit=limit)
    per_item = len(orders) * n_repeats
    n_items = len(chosen.item_ids)
    # Calls in run order: item, then order, then repeat.
    item_index = np.repeat(np.arange(n_items, dtype=np.int64), per_item)
    order_index = np.tile(np.repeat(np.arange(len(orders), dtype=np.int8), n_repeats), n_items)
    repeat_col = np.tile(np.arange(n_repeats, dtype=np.int32), n_items * len(orders))
    planned = n_items * per_item
    cache_keys: pa.Array[Any] = pa.array(chosen.hashes, type=pa.string())
    if judge_store is not None:
        # An item with verdicts of its own (imported under this config) has them already;
        # the calls this run makes are keyed, and shared, by content as always.
        cache_keys = judge_store.keys_for(config.config_id, pa.table({
            "item_id": pa.array(chosen.item_ids, type=pa.string()), "item_hash": cache_keys,
        })).column("item_hash").combine_chunks()
    keys = pa.table({
        "idx": pa.array(np.arange(planned, dtype=np.int64)),
        "item_hash": cache_keys.take(item_index),
        "repeat": pa.array(repeat_col),
        "ordering": pa.array(list(orders), type=pa.string()).take(order_index),
    })
    # Without a judge store nothing counts as cached: only equal keys are called once.
    to_make = (judge_store or workspace.judges).uncached(
        config.config_id if judge_store is not None else None, keys
    )
    del keys
    calls = PlannedCalls(
        store=workspace.labels, config=config, dataset=dataset, item_ids=chosen.item_ids,
        item_hashes=chosen.hashes, item_index=item_index[to_make],
        repeats=repeat_col[to_make], order_index=order_index[to_make], orders=orders,
    )
    if len(calls) > EXACT_ESTIMATE_CALLS:
        _check_renderable(workspace, config, calls)
    input_tokens = _estimate_input_tokens(config, calls, chosen.lengths)
    typical = _typical_output_tokens(config, judge_store)
    model = model or config.model
    price = price_for(model, prices)
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
    return RunPlan(config, dataset, chosen.item_ids, n_repeats, orders, planned,
                   planned - len(calls), calls, estimate)


__all__ = [
    "CHUNK_CALLS",
    "ESTIMATE_SAMPLE",
    "EXACT_ESTIMATE_CALLS",
    "FIRST_CHUNK_CALLS",
    "PRICES_HINT",
    "TYPICAL_CLAIMS",
    "TYPICAL_OUTPUT_TOKENS",
    "CostEstimate",
    "NoLabelledRowsError",
    "PlannedCall",
    "PlannedCalls",
    "RunPlan",
    "plan_run",
    "select_items",
]
