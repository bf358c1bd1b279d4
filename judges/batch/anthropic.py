"""Anthropic's Message Batches API (``client.messages.batches``) as a :class:`BatchAPI`.

A batch is created from a list of ``{custom_id, params}`` (the ``messages.create`` parameters
an online call sends), polled until ``processing_status == "ended"``, and its results are read
as a JSONL stream, one line per request: ``succeeded`` (a message), ``errored``, ``canceled``
or ``expired``. Limits: 100,000 requests or 256 MB per batch.

Message batches carry no metadata, so a batch whose creation reply was lost is found by listing
the batches created since the submission started with the same number of requests that no
stored submission owns; the custom ids (``<key>_<n>``) confirm it when its results are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from judges.batch.api import (
    BatchAPI,
    BatchRequest,
    BatchState,
    ItemResult,
    Submitted,
    timestamp,
)
from judges.providers.anthropic import AnthropicProvider
from judges.providers.base import ProviderError, status_error

CLOCK_SKEW = timedelta(minutes=5)
"""How far the provider's clock may lag ours when looking for a lost submission."""

_ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}


class AnthropicBatches(BatchAPI):
    """``client.messages.batches`` of an :class:`AnthropicProvider`."""

    max_calls = 100_000
    max_bytes = 240_000_000
    endpoint = "POST /v1/messages/batches"
    provider: AnthropicProvider

    def line(self, item: BatchRequest) -> dict[str, Any]:
        """``{custom_id, params}``; ``params`` is what ``messages.create`` would send."""
        return {"custom_id": item.custom_id, "params": self.provider.request_body(item.request)}

    async def submit(self, key: str, items: Sequence[BatchRequest]) -> Submitted:
        """One ``messages.batches.create``."""
        client = self.provider.client()
        batch = await client.messages.batches.create(
            requests=[self.line(i) for i in items],  # type: ignore[misc]
        )
        return Submitted(batch.id)

    async def find(self, key: str, calls: int, since: datetime,
                   known: set[str]) -> Submitted | None:
        """The one unclaimed batch of ``calls`` requests created since ``since`` (newest first)."""
        client = self.provider.client()
        found: list[str] = []
        async for batch in client.messages.batches.list(limit=100):
            created = timestamp(batch.created_at)
            if created is not None and created < since - CLOCK_SKEW:
                break  # the list is newest first: everything further is older
            counts = batch.request_counts
            total = (counts.processing + counts.succeeded + counts.errored + counts.canceled
                     + counts.expired)
            if batch.id not in known and total == calls:
                found.append(batch.id)
        if len(found) > 1:
            raise ProviderError(
                f"submission {key}: its reply was lost and {len(found)} unclaimed batches of "
                f"{calls} requests were created since ({', '.join(found)}); cannot tell which "
                "is ours", kind="ambiguous", retryable=False,
            )
        return Submitted(found[0]) if found else None

    async def state(self, batch_id: str) -> BatchState:
        """One ``messages.batches.retrieve``."""
        client = self.provider.client()
        batch = await client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchState(
            batch_id=batch.id, status=batch.processing_status,
            ended=batch.processing_status == "ended",
            counts={"processing": counts.processing, "succeeded": counts.succeeded,
                    "errored": counts.errored, "canceled": counts.canceled,
                    "expired": counts.expired},
            created_at=timestamp(batch.created_at), ended_at=timestamp(batch.ended_at),
        )

    async def results(self, state: BatchState) -> list[ItemResult]:
        """The results stream, one :class:`ItemResult` per line."""
        client = self.provider.client()
        stream = await client.messages.batches.results(state.batch_id)
        out = []
        async for entry in stream:
            out.append(self._item(entry.to_dict()))
        return out

    def _item(self, line: dict[str, Any]) -> ItemResult:
        custom_id = str(line.get("custom_id"))
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded":
            try:
                completion = self.provider.completion(result["message"])
            except (KeyError, ProviderError) as error:
                problem = error if isinstance(error, ProviderError) else ProviderError(
                    "a succeeded result without a message", kind="malformed_response",
                    retryable=True)
                return ItemResult(custom_id, "errored", error=problem)
            return ItemResult(custom_id, "succeeded", completion=completion)
        if kind in ("expired", "canceled"):
            return ItemResult(custom_id, kind, error=ProviderError(
                f"the batch {kind} the request before running it", kind=f"batch_{kind}",
                retryable=True))
        # errored: {"type": "errored", "error": {"type": "error", "error": {type, message}}}
        outer = result.get("error") or {}
        inner = outer.get("error", outer) if isinstance(outer, dict) else {}
        error_type = str(inner.get("type") or "api_error")
        message = str(inner.get("message") or error_type)
        return ItemResult(custom_id, "errored",
                          error=status_error(_ERROR_STATUS.get(error_type, 500), message, None))

    async def cancel(self, batch_id: str) -> None:
        """One ``messages.batches.cancel``."""
        await self.provider.client().messages.batches.cancel(batch_id)
