"""Anthropic messages API (also llama.cpp's Anthropic-compatible endpoint via base_url).

The base URL has **no** ``/v1`` (``http://127.0.0.1:8080``): the SDK adds ``/v1/messages``.
anthropic 2.x has no ``temperature`` argument on ``messages.create``, so the temperature goes
in ``extra_body``; a config with ``temperature: null`` sends none (newer models may reject
non-default sampling). Anthropic has no seed parameter; a config's seed is not sent.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from judges.providers._sdk import SDKProvider
from judges.providers.base import (
    Completion,
    CompletionRequest,
    ProviderError,
    Usage,
    token_count,
)

_FINISH = {
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "refusal": "refusal",
}


class AnthropicProvider(SDKProvider[anthropic.AsyncAnthropic]):
    """``anthropic/<model>``.

    Args:
        model: e.g. ``claude-sonnet-4-6``.
        api_key: the key from settings.
        base_url: another endpoint speaking the messages API, without ``/v1``.
    """

    name = "anthropic"
    supports_seed = False

    sdk = anthropic
    client_class = anthropic.AsyncAnthropic
    missing_key = (TypeError, "authentication")

    def request_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The ``messages.create`` parameters of ``request`` (also one line of a batch)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.system:
            body["system"] = request.system
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        """One ``messages.create`` call."""
        client = self._client_for_loop()
        kwargs = self.request_body(request)
        # anthropic 2.x takes no temperature argument: it travels in the body.
        if "temperature" in kwargs:
            kwargs["extra_body"] = {"temperature": kwargs.pop("temperature")}
        # Parsed from the raw body (see OpenAIProvider.complete): stored exactly as sent.
        response = await client.messages.with_raw_response.create(
            **kwargs, timeout=request.timeout)
        return self.completion(json.loads(response.http_response.content))

    @staticmethod
    def completion(data: Any) -> Completion:
        """A messages reply (online, or one batch result's ``message``) as a :class:`Completion`."""
        try:
            text = "".join(
                block["text"] for block in data["content"] if block.get("type") == "text"
            )
            stop = data.get("stop_reason")
            usage = data.get("usage") or {}
            return Completion(
                text=text,
                usage=Usage(token_count(usage.get("input_tokens")),
                            token_count(usage.get("output_tokens"))),
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
