"""What the Anthropic and OpenAI adapters share: an official async SDK client per event loop.

Both SDKs have the same shape (an ``Async*`` client with ``max_retries``, and the exceptions
``APITimeoutError``, ``APIConnectionError``, ``APIStatusError``, ``APIResponseValidationError``),
so the client's life cycle and the mapping of SDK errors to :class:`ProviderError` live here
once. Each adapter names its client class and how its SDK reports a missing key, and says how to
send a request and read a reply.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, Generic, TypeVar

import httpx2

from judges.providers.base import Provider, ProviderError, status_error

ClientT = TypeVar("ClientT")

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""Bytes of one judge call's response body (or of any error body) read before the call fails.

A judge's reply is a few KB (with log-probabilities a few hundred); a server that sends more
is broken or hostile, and holding 40 MB per call in flight exhausts memory.
"""
_CAPPED_PATHS = ("/chat/completions", "/messages")


class _CappedSend:
    """An SDK HTTP client whose judge-call responses are read up to :data:`MAX_RESPONSE_BYTES`.

    The body of a judge call (``POST …/chat/completions``, ``POST …/messages``) and of every
    error response is read in chunks, decompressed, and the call fails without reading further
    once the cap is passed; other requests (a batch's result file) are left as they are.
    """

    async def send(self, request: httpx2.Request, *, stream: bool = False,
                   **kwargs: Any) -> httpx2.Response:
        response: httpx2.Response = await super().send(  # type: ignore[misc]
            request, stream=True, **kwargs)
        judge_call = request.method == "POST" and request.url.path.endswith(_CAPPED_PATHS)
        if not (judge_call or response.status_code >= 400):
            if not stream:
                await response.aread()
            return response
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise ProviderError(
                        f"the server sent more than {MAX_RESPONSE_BYTES // (1024 * 1024)} MB for "
                        "one call; not read further (a judge replies in a few KB)",
                        kind="oversized_response", retryable=False,
                    )
                chunks.append(chunk)
        finally:
            await response.aclose()
        response._content = b"".join(chunks)  # what Response.aread() sets once it has read
        return response


@functools.cache
def capped_client_class(base: type[httpx2.AsyncClient]) -> type[httpx2.AsyncClient]:
    """``base`` (an SDK's default async HTTP client) with :class:`_CappedSend`."""
    return type(f"Capped{base.__name__}", (_CappedSend, base), {})

class SDKProvider(Provider, Generic[ClientT]):
    """A provider over an official SDK's async client.

    Args:
        model: the model name the server knows.
        api_key: the key from settings (never shown in a repr, log or traceback).
        base_url: another endpoint speaking the same API.
    """

    sdk: ModuleType
    """The SDK module (``anthropic`` or ``openai``), for its exception classes."""
    client_class: Callable[..., ClientT]
    """The SDK's async client (``anthropic.AsyncAnthropic``, ``openai.AsyncOpenAI``)."""
    missing_key: tuple[type[BaseException], str]
    """How the SDK refuses to start without a key: the exception and a word of its message."""

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None) -> None:
        """Keep the settings; the SDK client is made on first use, one per event loop."""
        super().__init__(model)
        self._api_key = api_key
        self.base_url = base_url
        self._client: ClientT | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool_size = 0

    def __repr__(self) -> str:
        """Model and endpoint only: the API key never appears in a repr, log or traceback."""
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def _new_client(self, api_key: str) -> ClientT:
        """A new async SDK client with ``max_retries=0`` (the runner retries and logs)."""
        return self.client_class(api_key=api_key, base_url=self.base_url, max_retries=0,
                                 **self._pool_options())

    def expect_concurrency(self, calls: int) -> None:
        """Size the connection pool of the clients made from now on for ``calls`` in flight."""
        self._pool_size = max(self._pool_size, calls)

    def _pool_options(self) -> dict[str, Any]:
        """The SDK's own HTTP client class, its judge-call bodies capped (:class:`_CappedSend`).

        With more calls in flight than the SDK keeps alive (its ``DEFAULT_CONNECTION_LIMITS``;
        a run with more would close and reopen connections on every wave), with a pool of one
        connection per call in flight.
        """
        default: httpx2.Limits = self.sdk.DEFAULT_CONNECTION_LIMITS
        client = capped_client_class(self.sdk.DefaultAsyncHttpxClient)
        if self._pool_size <= (default.max_keepalive_connections or 0):
            return {"http_client": client()}
        limits = httpx2.Limits(
            max_connections=max(default.max_connections or 0, self._pool_size),
            max_keepalive_connections=self._pool_size, keepalive_expiry=default.keepalive_expiry)
        return {"http_client": client(limits=limits)}

    def _is_auth_error(self, error: BaseException) -> bool:
        """Whether ``error`` is the SDK refusing to start without credentials."""
        error_class, word = self.missing_key
        return isinstance(error, error_class) and word in str(error).lower()

    def client(self) -> ClientT:
        """The SDK client of the running event loop (the batch APIs use it too)."""
        return self._client_for_loop()

    def _client_for_loop(self) -> ClientT:
        # An async client's connection pool belongs to the event loop that first used it; each
        # run_judge() has its own loop (asyncio.run), so a provider reused across runs needs a
        # client per loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._new_client(self._api_key)
            self._loop = loop
        return self._client

    def classify_error(self, error: BaseException) -> ProviderError:
        """SDK exceptions → retryable or not (the SDK's own retry policy), secrets redacted.

        The message is stored (``judge_calls.error``, the attempts, exports): a server that
        echoes the credentials in an error body must not put the API key there.
        """
        return self.redacted(self._classify_sdk_error(error))

    def redacted(self, error: ProviderError) -> ProviderError:
        """``error`` with this provider's API key and anything shaped like a credential removed.

        Every provider-written error passes here before it is stored: exceptions through
        :meth:`classify_error`, and the per-request errors of a batch's result file.
        """
        message = self.redact(error.message)
        return error if message == error.message else dataclasses.replace(error, message=message)

    def redact(self, text: str) -> str:
        """``text`` without this provider's API key or anything shaped like a credential.

        For provider-written text that is not an error of one call (a whole batch's failure).
        """
        return redact_secrets(text, self._api_key)

    def _classify_sdk_error(self, error: BaseException) -> ProviderError:
        sdk = self.sdk
        # Our own refusal from inside the HTTP client (an oversized body): the Anthropic SDK
        # wraps any exception of its transport as a connection error.
        if isinstance(error, sdk.APIConnectionError) and isinstance(error.__cause__,
                                                                   ProviderError):
            return error.__cause__
        if isinstance(error, sdk.APITimeoutError):
            return ProviderError("the call timed out", kind="timeout", retryable=True)
        if isinstance(error, sdk.APIConnectionError):
            return ProviderError(f"connection error: {error}", kind="connection", retryable=True)
        if isinstance(error, sdk.APIStatusError):
            return status_error(error.status_code, sdk_error_message(error),
                                error.response.headers)
        if isinstance(error, sdk.APIResponseValidationError | json.JSONDecodeError):
            return ProviderError(
                f"the response was malformed: {error}", kind="malformed_response", retryable=True
            )
        if self._is_auth_error(error):
            return ProviderError(str(error), kind="auth", retryable=False)
        return super().classify_error(error)

    async def aclose(self) -> None:
        """Close the HTTP client of the current loop."""
        if self._client is not None:
            await self._client.close()  # type: ignore[attr-defined]
            self._client = None


_MIN_KEY_LENGTH = 8
"""Shorter keys (a local server takes ``"local"``) are no secret, and replacing them would
garble messages."""
_TOKEN_LIKE = re.compile(r"(?i)(\bbearer\s+)[^\s\"',;)]+|\bsk-[A-Za-z0-9_-]{8,}")


def redact_secrets(message: str, api_key: str | None = None) -> str:
    """``message`` without ``api_key``, ``Bearer <token>`` tokens or ``sk-…`` keys."""
    if api_key and len(api_key) >= _MIN_KEY_LENGTH:
        message = message.replace(api_key, "[redacted]")
    return _TOKEN_LIKE.sub(lambda m: (m.group(1) or "") + "[redacted]", message)


def sdk_error_message(error: Any) -> str:
    """The server's own message of an SDK ``APIStatusError`` (``error.message`` otherwise)."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(error.message)


__all__ = ["SDKProvider", "redact_secrets", "sdk_error_message"]
