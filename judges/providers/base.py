"""The one small interface every judge provider implements.

A provider turns a :class:`CompletionRequest` into a :class:`Completion` (text, usage, the raw
response) and says whether an error is worth retrying (:meth:`Provider.classify_error`). The
runner owns retries, backoff, timeouts and logging; providers only translate. Adapters create
their SDK client with ``max_retries=0`` so that every attempt is visible to the runner, which
records each one and honours ``retry-after`` itself.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal

from labels.errors import CalibrateError

Role = Literal["user", "assistant"]

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Plus every status >= 500 (the SDKs' own retry policy)."""


@dataclass(frozen=True)
class Message:
    """One chat turn."""

    role: Role
    content: str


@dataclass(frozen=True)
class CompletionRequest:
    """Everything one call sends. Holds no key or header, so :meth:`record` is safe to store."""

    model: str
    system: str
    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float | None = 0.0
    seed: int | None = None
    json_mode: bool = False
    timeout: float = 60.0
    top_logprobs: int | None = None
    """Ask for the ``top_logprobs`` most likely tokens at each reply position (``None``: don't).

    Only OpenAI-compatible servers return them; other providers ignore the request, and
    :attr:`Completion.top_logprobs` stays ``None``."""

    def record(self) -> dict[str, Any]:
        """The request as stored in the call log (model, prompts, parameters; no secrets)."""
        record: dict[str, Any] = {
            "model": self.model, "system": self.system,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed,
            "json_mode": self.json_mode, "timeout": self.timeout,
        }
        if self.top_logprobs is not None:
            record["top_logprobs"] = self.top_logprobs
        return record


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reported them (``None`` when it did not)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


def token_count(value: Any) -> int | None:
    """A usage figure as the server sent it, as an ``int`` (``None`` when it is no count).

    An OpenAI-compatible server may send ``"12"`` or ``12.0``; the stored column is an integer.
    """
    if isinstance(value, bool) or value is None:
        return None
    try:
        count = float(value)
    except (TypeError, ValueError):
        return None
    return int(count) if count.is_integer() else None


FinishReason = str
"""Normalised: ``stop``, ``length`` (truncated), ``refusal``, ``content_filter`` or another."""


@dataclass(frozen=True)
class Completion:
    """A provider's reply: the text, the usage, and the raw response as JSON-able data."""

    text: str
    usage: Usage = field(default_factory=Usage)
    raw: Mapping[str, Any] = field(default_factory=dict)
    finish_reason: FinishReason | None = "stop"
    refusal: str | None = None
    model: str | None = None
    response_id: str | None = None
    top_logprobs: tuple[Mapping[str, float], ...] | None = None
    """Per reply token, the most likely tokens and their natural-log probabilities (when the
    request asked for them and the provider returned them)."""


@dataclass(eq=False, repr=False)  # compared and shown as an exception: by identity, by message
class ProviderError(CalibrateError):
    """A failed call, classified: ``ProviderError(message, *, kind=..., retryable=..., ...)``.

    Attributes:
        message: what went wrong (also ``str(error)``).
        kind: ``rate_limit``, ``server_error``, ``overloaded``, ``timeout``, ``connection``,
            ``malformed_response``, ``auth``, ``bad_request``, ``not_found``, or ``error``.
        retryable: whether trying again may succeed.
        retry_after: seconds the server asked to wait (``retry-after`` / ``retry-after-ms``).
        status: the HTTP status, when there was a response.
    """

    message: str
    _: KW_ONLY
    kind: str = "error"
    retryable: bool = False
    retry_after: float | None = None
    status: int | None = None

    def __post_init__(self) -> None:
        """Give the exception its message (``args``, ``str(error)``)."""
        super().__init__(self.message)


class ProviderConfigError(CalibrateError):
    """A provider cannot be set up (unknown name, missing key, missing SDK)."""


class Provider(ABC):
    """A judge model behind an API.

    Subclasses set :attr:`name`, implement :meth:`complete`, and usually extend
    :meth:`classify_error` for their SDK's exceptions.
    """

    name: ClassVar[str] = "provider"
    supports_seed: ClassVar[bool] = False
    max_concurrency: int | None = None
    """Most calls worth having in flight at once (``None``: no limit); the runner caps its
    concurrency to it. A local server with one slot sets 1: more would only queue and time out."""
    note: str = ""
    """Shown wherever this provider's verdicts are run (e.g. that it is a small local model)."""

    def __init__(self, model: str) -> None:
        """Address ``model`` (the part after ``provider/`` in a judge config's ``model``)."""
        self.model = model

    @property
    def spec(self) -> str:
        """``provider/model``."""
        return f"{self.name}/{self.model}"

    @abstractmethod
    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one request and return the reply; raise on any failure."""

    def classify_error(self, error: BaseException) -> ProviderError:
        """Map any exception from :meth:`complete` to a :class:`ProviderError`."""
        if isinstance(error, ProviderError):
            return error
        if isinstance(error, TimeoutError | asyncio.TimeoutError):
            return ProviderError("the call timed out", kind="timeout", retryable=True)
        if isinstance(error, json.JSONDecodeError):
            return ProviderError(
                f"the response was not valid JSON ({error.msg})", kind="malformed_response",
                retryable=True,
            )
        if isinstance(error, ConnectionError):
            return ProviderError(f"connection failed: {error}", kind="connection", retryable=True)
        return ProviderError(f"{type(error).__name__}: {error}", kind="error", retryable=False)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release clients and connections (called once at the end of a run)."""

    def expect_concurrency(self, calls: int) -> None:  # noqa: B027 - optional hook
        """Prepare for up to ``calls`` requests in flight at once; a no-op by default.

        The runner says so before a run; a provider with a connection pool sizes it.
        """

    def info(self) -> dict[str, Any]:
        """What a run records about the provider beyond its spec (no secrets); default none."""
        return {}


def status_error(status: int, message: str, headers: Mapping[str, str] | None) -> ProviderError:
    """Classify an HTTP error status the way the official SDKs' retry policy does."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    should = headers.get("x-should-retry")
    retryable = status in RETRYABLE_STATUS or status >= 500
    if should in ("true", "false"):
        retryable = should == "true"
    kind = {
        401: "auth", 403: "auth", 404: "not_found", 429: "rate_limit", 529: "overloaded",
    }.get(status, "server_error" if status >= 500 else "bad_request")
    return ProviderError(
        f"HTTP {status}: {message}", kind=kind, retryable=retryable,
        retry_after=parse_retry_after(headers), status=status,
    )


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - time.time())


__all__ = [
    "RETRYABLE_STATUS",
    "Completion",
    "CompletionRequest",
    "FinishReason",
    "Message",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "Usage",
    "parse_retry_after",
    "status_error",
    "token_count",
]
