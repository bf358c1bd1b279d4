"""The providers' batch services behind one small interface: submit, find, poll, fetch results.

Anthropic's Message Batches API and OpenAI's Batch API both take many requests at once, run
them within 24 hours at half the online price, and return one result per request, matched by a
``custom_id`` of ours. :class:`BatchAPI` hides their differences (a JSONL file upload and an
output/error file on OpenAI; a JSON list and a results stream on Anthropic) behind:

- :meth:`BatchAPI.submit` — send one batch, return its id;
- :meth:`BatchAPI.find` — find a batch whose creation reply was lost (a kill -9 between the
  request and the reply), so that a resumed run never sends the same calls again;
- :meth:`BatchAPI.state` / :meth:`BatchAPI.results` — poll, then read every item's outcome.

Every custom id starts with the submission's own key (``<key>_<n>``), so a result that is not
ours is never taken for one of ours. The SDK clients come from the online providers
(:meth:`judges.providers._sdk.SDKProvider.client`): same keys, base URLs and error mapping.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from judges.providers._sdk import SDKProvider
from judges.providers.base import Completion, CompletionRequest, ProviderError
from labels.errors import CalibrateError

BATCH_DISCOUNT = 0.5
"""Both providers bill batch calls at half the online price."""
BATCH_PROVIDERS = ("anthropic", "openai")
"""Provider kinds with a batch API (an OpenAI-compatible server behind a base URL may lack it)."""

Outcome = Literal["succeeded", "errored", "expired", "canceled"]


class BatchUnsupportedError(CalibrateError):
    """The provider (or the server behind its base URL) has no batch API."""


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: our custom id and the request an online call would send."""

    custom_id: str
    request: CompletionRequest


@dataclass(frozen=True)
class Submitted:
    """A batch the provider accepted: its id (and the uploaded input file, on OpenAI)."""

    batch_id: str
    input_file_id: str | None = None


@dataclass(frozen=True)
class BatchState:
    """What a poll says about one batch.

    Attributes:
        status: the provider's own word (``in_progress``, ``finalizing``, ``ended``, ...).
        ended: no request of the batch is still being processed.
        counts: requests per state as the provider counts them.
        created_at / ended_at: the provider's timestamps (the time an item spent in the batch).
        error: why the whole batch failed (OpenAI rejects an input file as a whole).
    """

    batch_id: str
    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    created_at: datetime | None = None
    ended_at: datetime | None = None
    error: str | None = None


@dataclass(frozen=True)
class ItemResult:
    """One request's outcome: a completion, or an error (retryable or not)."""

    custom_id: str
    outcome: Outcome
    completion: Completion | None = None
    error: ProviderError | None = None


class BatchAPI(ABC):
    """One provider's batch service.

    Args:
        provider: the online provider whose SDK client, model and error mapping are used.
    """

    max_calls: int = 50_000
    """Most requests one batch may carry (the provider's limit)."""
    max_bytes: int = 190_000_000
    """Most bytes one batch's requests may take (below the provider's limit)."""
    endpoint: str = ""
    """The path the batch service lives under (for a 'no batch endpoint' message)."""

    def __init__(self, provider: SDKProvider[Any]) -> None:
        """Use ``provider``'s client, model and error classification."""
        self.provider = provider

    @abstractmethod
    def line(self, item: BatchRequest) -> dict[str, Any]:
        """The JSON one request takes in the batch (used for sizing, then sending)."""

    def line_bytes(self, item: BatchRequest) -> int:
        """Bytes the request takes in the batch body."""
        return len(json.dumps(self.line(item), ensure_ascii=False).encode()) + 1

    @abstractmethod
    async def submit(self, key: str, items: Sequence[BatchRequest]) -> Submitted:
        """Create a batch carrying ``items``; ``key`` is recorded with it where the API allows."""

    @abstractmethod
    async def find(self, key: str, calls: int, since: datetime,
                   known: set[str]) -> Submitted | None:
        """The batch created for submission ``key`` at or after ``since``, if it exists.

        ``calls`` is how many requests it carries; ``known`` are batch ids already recorded
        (never another submission's).
        """

    @abstractmethod
    async def state(self, batch_id: str) -> BatchState:
        """Poll one batch."""

    @abstractmethod
    async def results(self, state: BatchState) -> list[ItemResult]:
        """Every item's outcome of an ended batch."""

    @abstractmethod
    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop a batch (items not yet run come back ``canceled``)."""

    def unsupported(self, error: ProviderError) -> BatchUnsupportedError | None:
        """A plain message when ``error`` says the server has no batch endpoint."""
        if error.kind != "not_found" and error.status not in (404, 405, 501):
            return None
        where = getattr(self.provider, "base_url", None) or "the provider's default endpoint"
        return BatchUnsupportedError(
            f"the server at {where} has no batch API ({self.endpoint} answered "
            f"{error.status or 'not found'}): it serves online calls only, as OpenAI-compatible "
            "servers such as vLLM, Ollama or llama.cpp usually do. Run without --batch, or "
            "point the base URL at a server with a batch endpoint."
        )


def has_batch_api(model: str) -> bool:
    """Whether the provider of ``provider/model`` offers a batch API."""
    return model.partition("/")[0] in BATCH_PROVIDERS


def timestamp(value: Any) -> datetime | None:
    """A provider timestamp (epoch seconds or an ISO string or datetime) as an aware datetime."""
    from datetime import UTC

    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


__all__ = [
    "BATCH_DISCOUNT", "BATCH_PROVIDERS", "BatchAPI", "BatchRequest", "BatchState",
    "BatchUnsupportedError", "ItemResult", "Outcome", "Submitted", "has_batch_api",
    "timestamp",
]
