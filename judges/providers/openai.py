"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama, llama.cpp) via base_url.

The base URL includes ``/v1`` (``http://127.0.0.1:8000/v1``). The SDK is created with
``max_retries=0``: the runner retries, so every attempt is counted and logged.
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx2
import openai

from judges.providers._sdk import SDKProvider
from judges.providers.base import (
    Completion,
    CompletionRequest,
    ProviderError,
    Usage,
    token_count,
)

# Reasoning models take max_completion_tokens and reject max_tokens.
_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")


class OpenAIProvider(SDKProvider[openai.AsyncOpenAI]):
    """``openai/<model>``.

    Args:
        model: the model name the server knows.
        api_key: the key (from settings; a local server accepts any non-empty string).
        base_url: an OpenAI-compatible endpoint including ``/v1``; ``None`` = api.openai.com.
    """

    name = "openai"
    supports_seed = True

    sdk = openai
    client_class = openai.AsyncOpenAI
    missing_key = (openai.OpenAIError, "credentials")

    def request_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` parameters of ``request`` (also a batch line's body)."""
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": m.role, "content": m.content} for m in request.messages)
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.model.startswith(_COMPLETION_TOKENS_PREFIXES):
            body["max_completion_tokens"] = request.max_tokens
        else:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.seed is not None:
            body["seed"] = request.seed
        if request.json_mode:
            body["response_format"] = {"type": "json_object"}
        if request.top_logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        """One ``POST /chat/completions`` through the SDK client (its retries, errors, auth)."""
        client = self._client_for_loop()
        # The SDK's generic ``post`` (its documented way to any endpoint) rather than
        # ``chat.completions.create``: create() walks the body against its TypedDicts, about
        # 0.6 ms of CPU per call (a quarter of the runner's); our body is plain JSON already.
        # The raw body is parsed here rather than into the SDK's models: the stored raw
        # response is then exactly what the server sent, and a malformed body is one error.
        response = await client.post(
            "/chat/completions", body=self.request_body(request), cast_to=httpx2.Response,
            # create()'s own auth: the API key as a bearer token, no other credential.
            options={"timeout": request.timeout, "security": {"bearer_auth": True}})
        return self.completion(json.loads(response.content))

    @staticmethod
    def completion(data: Any) -> Completion:
        """A chat completion (online, or one batch output line's body) as a :class:`Completion`."""
        try:
            choice = data["choices"][0]
            message = choice["message"]
            usage = data.get("usage") or {}
            return Completion(
                text=message.get("content") or "",
                usage=Usage(token_count(usage.get("prompt_tokens")),
                            token_count(usage.get("completion_tokens"))),
                raw=data,
                finish_reason=choice.get("finish_reason"),
                refusal=message.get("refusal"),
                model=data.get("model"),
                response_id=data.get("id"),
                top_logprobs=_top_logprobs(choice.get("logprobs")),
            )
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise ProviderError(
                f"the response lacks {error} (not a chat completion)",
                kind="malformed_response", retryable=True,
            ) from None


def _top_logprobs(logprobs: Any) -> tuple[dict[str, float], ...] | None:
    """``choice.logprobs.content[i].top_logprobs`` as one ``{token: logprob}`` per position."""
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("content"), list):
        return None
    positions = []
    for entry in logprobs["content"]:
        found: dict[str, float] = {}
        for t in entry.get("top_logprobs") or [entry]:
            if not isinstance(t, dict) or "token" not in t or t.get("logprob") is None:
                continue
            token, value = str(t["token"]), float(t["logprob"])
            # Two token ids can decode to the same text: their probabilities add up.
            found[token] = math.log(math.exp(found[token]) + math.exp(value)) if (
                token in found) else value
        positions.append(found)
    return tuple(positions)
