"""Anthropic messages API (also llama.cpp's Anthropic-compatible endpoint via base_url).

The base URL has **no** ``/v1`` (``http://127.0.0.1:8080``): the SDK adds ``/v1/messages``.
anthropic 2.x has no ``temperature`` argument on ``messages.create``, so the temperature goes
in ``extra_body``; a config with ``temperature: null`` sends none (newer models may reject
non-default sampling). Anthropic has no seed parameter; a config's seed is not sent.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic

from judges.providers.base import (
    Completion,
    CompletionRequest,
    Provider,
    ProviderError,
    Usage,
    status_error,
)

_FINISH = {
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "refusal": "refusal",
}


class AnthropicProvider(Provider):
    """``anthropic/<model>``.

    Args:
        model: e.g. ``claude-sonnet-4-6``.
        api_key: the key from settings.
        base_url: another endpoint speaking the messages API, without ``/v1``.
    """

    name = "anthropic"
    supports_seed = False

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None) -> None:
        """Keep the settings; the SDK client is made on first use, one per event loop."""
        super().__init__(model)
        self._api_key = api_key
        self.base_url = base_url
        self._client: anthropic.AsyncAnthropic | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        """Model and endpoint only: the API key never appears in a repr, log or traceback."""
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def _client_for_loop(self) -> anthropic.AsyncAnthropic:
        # See OpenAIProvider._client_for_loop: one client per event loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, max_retries=0
            )
            self._loop = loop
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        """One ``messages.create`` call."""
        client = self._client_for_loop()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "timeout": request.timeout,
        }
        if request.system:
            kwargs["system"] = request.system
        if request.temperature is not None:
            kwargs["extra_body"] = {"temperature": request.temperature}
        # Parsed from the raw body (see OpenAIProvider.complete): stored exactly as sent.
        response = await client.messages.with_raw_response.create(**kwargs)
        data = json.loads(response.http_response.content)
        try:
            text = "".join(
                block["text"] for block in data["content"] if block.get("type") == "text"
            )
            stop = data.get("stop_reason")
            usage = data.get("usage") or {}
            return Completion(
                text=text,
                usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
                raw=data,
                finish_reason=_FINISH.get(stop, stop) if stop is not None else None,
                refusal="the model refused (stop_reason: refusal)" if stop == "refusal" else None,
                model=data.get("model"),
                response_id=data.get("id"),
            )
        except (KeyError, TypeError, AttributeError) as error:
            raise ProviderError(
                f"the response lacks {error} (not a messages reply)",
                kind="malformed_response", retryable=True,
            ) from None

    def classify_error(self, error: BaseException) -> ProviderError:
        """SDK exceptions → retryable or not (the SDK's own retry policy)."""
        if isinstance(error, anthropic.APITimeoutError):
            return ProviderError("the call timed out", kind="timeout", retryable=True)
        if isinstance(error, anthropic.APIConnectionError):
            return ProviderError(f"connection error: {error}", kind="connection", retryable=True)
        if isinstance(error, anthropic.APIStatusError):
            return status_error(error.status_code, _message(error), error.response.headers)
        if isinstance(error, anthropic.APIResponseValidationError | json.JSONDecodeError):
            return ProviderError(
                f"the response was malformed: {error}", kind="malformed_response", retryable=True
            )
        if isinstance(error, TypeError) and "authentication" in str(error).lower():
            return ProviderError(str(error), kind="auth", retryable=False)
        return super().classify_error(error)

    async def aclose(self) -> None:
        """Close the HTTP client of the current loop."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def _message(error: anthropic.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(error.message)
