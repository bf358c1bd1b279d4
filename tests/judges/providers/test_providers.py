"""Providers: the official SDKs over real HTTP against the local fake server, and the registry."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx2
import openai
import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY

from judges.providers import (
    LOCAL_PLACEHOLDER_KEY,
    ProviderConfigError,
    get_provider,
    provider_names,
    register_provider,
)
from judges.providers.anthropic import AnthropicProvider
from judges.providers.base import (
    CompletionRequest,
    Message,
    Provider,
    ProviderError,
    parse_retry_after,
    status_error,
)
from judges.providers.openai import OpenAIProvider
from judges.providers.scripted import ScriptedProvider, demo_reply
from judges.settings import Settings


def request(**overrides: object) -> CompletionRequest:
    values: dict[str, object] = {
        "model": "m", "system": "You judge.", "messages": (Message("user", "Is it ok?"),),
        "max_tokens": 50, "temperature": 0.0, "seed": 7, "timeout": 0.5,
    }
    values.update(overrides)
    return CompletionRequest(**values)  # type: ignore[arg-type]


async def outcome(provider: Provider, req: CompletionRequest) -> object:
    try:
        return await provider.complete(req)
    except Exception as error:
        return provider.classify_error(error)
    finally:
        await provider.aclose()


PROVIDERS = ["openai", "anthropic"]


def make(kind: str, server: FakeLLMServer) -> Provider:
    if kind == "openai":
        return OpenAIProvider("fake-judge", api_key=DUMMY_KEY, base_url=server.openai_base_url)
    return AnthropicProvider("fake-claude", api_key=DUMMY_KEY, base_url=server.anthropic_base_url)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_normal_reply(kind: str, fake_server: FakeLLMServer) -> None:
    completion = asyncio.run(make(kind, fake_server).complete(request()))
    assert completion.text.endswith("VERDICT: PASS")
    assert completion.finish_reason == "stop"
    assert completion.usage.input_tokens and completion.usage.output_tokens
    assert completion.raw and completion.response_id
    (call,) = fake_server.calls
    body = call.body
    if kind == "openai":
        assert call.path == "/v1/chat/completions"
        assert body["messages"][0] == {"role": "system", "content": "You judge."}
        assert body["temperature"] == 0.0 and body["seed"] == 7 and body["max_tokens"] == 50
    else:
        assert call.path == "/v1/messages"
        assert body["system"] == "You judge."
        # anthropic 2.x has no temperature kwarg: it travels in extra_body; no seed exists.
        assert body["temperature"] == 0.0 and "seed" not in body


def test_temperature_none_is_not_sent(fake_server: FakeLLMServer) -> None:
    for kind in PROVIDERS:
        asyncio.run(make(kind, fake_server).complete(request(temperature=None, seed=None)))
    for call in fake_server.calls:
        assert "temperature" not in call.body and "seed" not in call.body


def test_json_mode_asks_for_a_json_object(fake_server: FakeLLMServer) -> None:
    asyncio.run(make("openai", fake_server).complete(request(json_mode=True)))
    assert fake_server.calls[0].body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize(
    ("action", "error_kind"),
    [
        ("429", "rate_limit"), ("500", "server_error"), ("503", "server_error"),
        ("reset", "connection"), ("slow", "timeout"), ("malformed", "malformed_response"),
    ],
)
def test_transient_faults_are_retryable(
    kind: str, action: str, error_kind: str, fake_server: FakeLLMServer
) -> None:
    fake_server.script(action)
    result = asyncio.run(outcome(make(kind, fake_server), request(timeout=0.3)))
    assert isinstance(result, ProviderError), result
    assert result.retryable and result.kind == error_kind
    if action == "429":
        assert result.retry_after == pytest.approx(0.05) and result.status == 429


@pytest.mark.parametrize("kind", PROVIDERS)
def test_529_is_overloaded_and_retryable(kind: str, fake_server: FakeLLMServer) -> None:
    fake_server.script("529")
    result = asyncio.run(outcome(make(kind, fake_server), request()))
    assert isinstance(result, ProviderError) and result.retryable
    assert result.kind == "overloaded" and result.status == 529


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize(
    ("action", "finish", "refusal"),
    [("empty", "stop", False), ("refusal", None, True), ("truncated", "length", False)],
)
def test_content_faults_are_replies(
    kind: str, action: str, finish: str | None, refusal: bool, fake_server: FakeLLMServer
) -> None:
    fake_server.script(action)
    completion = asyncio.run(make(kind, fake_server).complete(request()))
    if action == "empty":
        assert completion.text == ""
    if refusal:
        assert completion.refusal
    else:
        assert completion.finish_reason == finish


def test_http_errors_follow_the_sdk_retry_policy() -> None:
    assert not status_error(400, "bad", {}).retryable
    assert status_error(401, "no", {}).kind == "auth"
    assert not status_error(401, "no", {}).retryable
    assert status_error(408, "slow", {}).retryable
    assert status_error(409, "lock", {}).retryable
    assert not status_error(500, "x", {"x-should-retry": "false"}).retryable
    assert status_error(400, "x", {"X-Should-Retry": "true"}).retryable
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_registry_builds_providers_from_settings(fake_server: FakeLLMServer) -> None:
    settings = Settings(openai_api_key=DUMMY_KEY, openai_base_url=fake_server.openai_base_url)
    provider = get_provider("openai/meta-llama/Llama-3-8B", settings=settings)
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "meta-llama/Llama-3-8B" and provider.spec.startswith("openai/")
    assert DUMMY_KEY not in repr(provider)
    assert asyncio.run(provider.complete(request())).text
    assert fake_server.calls[-1].body["model"] == "meta-llama/Llama-3-8B"
    assert isinstance(get_provider("scripted/demo"), ScriptedProvider)


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        get_provider("anthropic/claude-sonnet-4-5", settings=Settings())
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        get_provider("openai/gpt-4o-mini", settings=Settings())


def test_key_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    assert isinstance(get_provider("anthropic/x"), AnthropicProvider)


def test_local_server_without_key_gets_a_placeholder(fake_server: FakeLLMServer) -> None:
    settings = Settings(openai_base_url=fake_server.openai_base_url)
    provider = get_provider("openai/local", settings=settings)
    assert asyncio.run(provider.complete(request())).text
    assert provider._api_key == LOCAL_PLACEHOLDER_KEY  # type: ignore[attr-defined]


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ProviderConfigError, match="known: anthropic, local, openai, scripted"):
        get_provider("bedrock/claude")
    with pytest.raises(ProviderConfigError, match="provider/model"):
        get_provider("gpt-4o")


def test_register_a_provider_kind() -> None:
    register_provider("echo", lambda model, settings: ScriptedProvider(model))
    try:
        assert get_provider("echo/x").model == "x"
        assert "echo" in provider_names()
    finally:
        from judges.providers import _REGISTRY

        _REGISTRY.pop("echo")


def test_sdks_are_imported_lazily() -> None:
    code = (
        "import sys, judges.providers, judges.runner, judges.verdicts, calibrate_app.cli; "
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_scripted_steps_then_demo_judge() -> None:
    provider = ScriptedProvider("t", ["VERDICT: FAIL", ProviderError("x", kind="rate_limit",
                                                                     retryable=True)])
    assert asyncio.run(provider.complete(request())).text == "VERDICT: FAIL"
    with pytest.raises(ProviderError):
        asyncio.run(provider.complete(request()))
    assert asyncio.run(provider.complete(request())).text.startswith("100%")
    provider.script_for("needle", "VERDICT: UNSURE")
    assert asyncio.run(provider.complete(request(messages=(Message("user", "a needle"),)))
                       ).text == "VERDICT: UNSURE"
    assert len(provider.requests) == 4


def test_demo_judge_follows_the_prompt_format() -> None:
    json_prompt = 'Reply with {"claims": [...], "verdict": "PASS"}\n<sources>cats sleep</sources>'
    prompt = json_prompt + "<answer>cats sleep</answer>"
    reply = demo_reply(request(messages=(Message("user", prompt),)))
    assert '"verdict": "PASS"' in reply and '"claims"' in reply
    pair = "<sources>a b c</sources><answer_a>a b c</answer_a><answer_b>zzz yyy</answer_b>"
    assert demo_reply(request(messages=(Message("user", pair),))).endswith("VERDICT: A")


@pytest.mark.parametrize("expect", [None, 150])
def test_the_pool_keeps_a_connection_per_call_in_flight(expect: int | None) -> None:
    """Two waves of 150 concurrent calls, and the TCP connections they open.

    Told the concurrency, the client keeps all 150 connections alive and opens no new one for
    the second wave; left at the SDK's default pool (100 kept alive), it reopens the 50 it
    closed.
    """

    async def waves(provider: Provider) -> None:
        try:
            for _ in range(2):
                await asyncio.gather(*(provider.complete(request(timeout=10))
                                       for _ in range(150)))
        finally:
            await provider.aclose()

    # Half a second per reply: all 150 requests of a wave are sent before the first returns.
    with FakeLLMServer(latency=0.5) as server:
        provider = make("openai", server)
        if expect is not None:
            provider.expect_concurrency(expect)
        asyncio.run(waves(provider))
        assert len(server.calls) == 300
        assert server.connections == (150 if expect else 200)


def test_openai_sends_what_chat_completions_create_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter posts through the SDK's generic ``post``, which is cheaper than ``create()``.

    Same URL, body, bearer key and headers as ``chat.completions.create``; no admin key even
    when one is in the environment.
    """
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "admin-secret")
    seen: list[httpx2.Request] = []
    reply = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "VERDICT: PASS"}}],
             "usage": {"prompt_tokens": 3, "completion_tokens": 2}}

    def handler(sent: httpx2.Request) -> httpx2.Response:
        seen.append(sent)
        return httpx2.Response(200, json=reply)

    provider = OpenAIProvider("m", api_key=DUMMY_KEY, base_url="http://judge.test/v1")
    body = provider.request_body(request())

    async def both() -> None:
        client = openai.AsyncOpenAI(
            api_key=DUMMY_KEY, base_url="http://judge.test/v1", max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
        provider._client, provider._loop = client, asyncio.get_running_loop()
        assert (await provider.complete(request())).text == "VERDICT: PASS"
        await client.chat.completions.create(**body, timeout=0.5)
        await client.close()

    asyncio.run(both())
    ours, sdk = seen
    assert ours.url == sdk.url and json.loads(ours.content) == json.loads(sdk.content)
    assert ours.headers["authorization"] == f"Bearer {DUMMY_KEY}"
    varying = {"content-length", "idempotency-key", "x-stainless-retry-count"}
    assert {k: v for k, v in ours.headers.items() if k not in varying} == {
        k: v for k, v in sdk.headers.items() if k not in varying}
    assert "admin-secret" not in str(ours.headers)
