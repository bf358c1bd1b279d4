"""OpenAI's Batch API (``client.files`` + ``client.batches``) as a :class:`BatchAPI`.

The requests go up as one JSONL file (``purpose="batch"``), each line
``{custom_id, method: POST, url: /v1/chat/completions, body}`` with the body an online call
sends; ``batches.create`` starts the batch (``completion_window="24h"``) with our submission key
in its metadata, so a batch whose creation reply was lost is found by listing batches. When the
batch ends (``completed``, ``expired``, ``cancelled`` or ``failed``), the output file holds the
replies and the error file the requests that failed, expired (``batch_expired``) or were
cancelled (``batch_cancelled``). Limits: 50,000 requests and 200 MB per input file.

OpenAI-compatible servers (vLLM, Ollama, llama.cpp) mostly lack ``/v1/files`` and
``/v1/batches``; their 404 becomes a :class:`~judges.batch.api.BatchUnsupportedError`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from judges.batch.api import (
    BatchAPI,
    BatchRequest,
    BatchState,
    ItemResult,
    Outcome,
    Submitted,
    timestamp,
)
from judges.providers.base import ProviderError, status_error
from judges.providers.openai import OpenAIProvider

KEY_FIELD = "calibrate_batch"
"""The batch metadata field holding our submission key."""
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
CLOCK_SKEW = timedelta(minutes=5)
URL: Final = "/v1/chat/completions"


class OpenAIBatches(BatchAPI):
    """``client.files`` and ``client.batches`` of an :class:`OpenAIProvider`."""

    max_calls = 50_000
    max_bytes = 190_000_000
    endpoint = "/v1/files or /v1/batches"
    provider: OpenAIProvider

    def line(self, item: BatchRequest) -> dict[str, Any]:
        """One line of the input file."""
        return {"custom_id": item.custom_id, "method": "POST", "url": URL,
                "body": self.provider.request_body(item.request)}

    async def submit(self, key: str, items: Sequence[BatchRequest]) -> Submitted:
        """Upload the input file, then ``batches.create`` with ``key`` in the metadata."""
        client = self.provider.client()
        content = "".join(json.dumps(self.line(i), ensure_ascii=False) + "\n" for i in items)
        upload = await client.files.create(
            file=(f"calibrate-{key}.jsonl", content.encode(), "application/jsonl"),
            purpose="batch",
        )
        batch = await client.batches.create(
            input_file_id=upload.id, endpoint=URL, completion_window="24h",
            metadata={KEY_FIELD: key},
        )
        return Submitted(batch.id, upload.id)

    async def find(self, key: str, calls: int, since: datetime,
                   known: set[str]) -> Submitted | None:
        """The batch whose metadata carries ``key`` (listing newest first, back to ``since``)."""
        client = self.provider.client()
        async for batch in client.batches.list(limit=100):
            if (batch.metadata or {}).get(KEY_FIELD) == key:
                return Submitted(batch.id, batch.input_file_id)
            created = timestamp(batch.created_at)
            if created is not None and created < since - CLOCK_SKEW:
                break
        return None

    async def state(self, batch_id: str) -> BatchState:
        """One ``batches.retrieve``."""
        batch = await self.provider.client().batches.retrieve(batch_id)
        counts = batch.request_counts
        ended_at = (batch.completed_at or batch.expired_at or batch.cancelled_at
                    or batch.failed_at)
        error = None
        if batch.status == "failed":
            problems = [e.message or e.code or "" for e in (batch.errors.data or [])] if (
                batch.errors) else []
            error = "; ".join(p for p in problems if p) or "the batch failed"
        return BatchState(
            batch_id=batch.id, status=batch.status, ended=batch.status in ENDED,
            counts={"total": counts.total, "completed": counts.completed,
                    "failed": counts.failed} if counts else {},
            created_at=timestamp(batch.created_at), ended_at=timestamp(ended_at), error=error,
        )

    async def results(self, state: BatchState) -> list[ItemResult]:
        """The output file's replies and the error file's failures."""
        client = self.provider.client()
        batch = await client.batches.retrieve(state.batch_id)
        out: list[ItemResult] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for raw in content.content.decode().splitlines():
                if raw.strip():
                    out.append(self._item(json.loads(raw)))
        return out

    def _item(self, line: dict[str, Any]) -> ItemResult:
        custom_id = str(line.get("custom_id"))
        error = line.get("error")
        response = line.get("response")
        if error:
            code = str(error.get("code") or "error")
            message = str(error.get("message") or code)
            if code in ("batch_expired", "batch_cancelled"):
                outcome: Outcome = "expired" if code == "batch_expired" else "canceled"
                return ItemResult(custom_id, outcome, error=ProviderError(
                    message, kind=f"batch_{outcome}", retryable=True))
            return ItemResult(custom_id, "errored",
                              error=ProviderError(message, kind=code, retryable=False))
        if not isinstance(response, dict):
            return ItemResult(custom_id, "errored", error=ProviderError(
                "a result line without a response", kind="malformed_response", retryable=True))
        status = int(response.get("status_code") or 0)
        body = response.get("body")
        if status != 200:
            inner = body.get("error", body) if isinstance(body, dict) else {}
            message = str(inner.get("message") if isinstance(inner, dict) else body)
            return ItemResult(custom_id, "errored", error=status_error(status, message, None))
        try:
            return ItemResult(custom_id, "succeeded", completion=self.provider.completion(body))
        except ProviderError as problem:
            return ItemResult(custom_id, "errored", error=problem)

    async def cancel(self, batch_id: str) -> None:
        """One ``batches.cancel``."""
        await self.provider.client().batches.cancel(batch_id)
