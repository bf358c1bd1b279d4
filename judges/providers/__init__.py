"""Provider registry: ``get_provider("openai/gpt-4o-mini")``.

SDKs are imported only when a provider of that kind is built, so ``judges`` loads without them.
Keys and base URLs come from :class:`~judges.settings.Settings` (environment / ``.env``); a
missing key raises :class:`ProviderConfigError` naming the variable to set.
"""

from __future__ import annotations

from collections.abc import Callable

from judges.providers.base import (
    Completion,
    CompletionRequest,
    Message,
    Provider,
    ProviderConfigError,
    ProviderError,
    Usage,
)
from judges.settings import Settings

Factory = Callable[[str, Settings], Provider]

LOCAL_PLACEHOLDER_KEY = "not-needed"
"""Sent to a custom base URL when no key is set: local OpenAI-compatible servers ignore keys."""


def _key(provider: str, settings: Settings, base_url: str | None) -> str:
    secret = settings.api_key(provider)
    if secret is not None and secret.get_secret_value():
        return secret.get_secret_value()
    if base_url:
        return LOCAL_PLACEHOLDER_KEY
    variable = Settings.api_key_variable(provider)
    raise ProviderConfigError(
        f"no API key for {provider}: set {variable} (or CALIBRATE_{provider.upper()}_API_KEY) "
        "in the environment or in a .env file in the working directory"
    )


def _openai(model: str, settings: Settings) -> Provider:
    base_url = settings.openai_base_url
    key = _key("openai", settings, base_url)
    from judges.providers.openai import OpenAIProvider

    return OpenAIProvider(model, api_key=key, base_url=base_url)


def _anthropic(model: str, settings: Settings) -> Provider:
    base_url = settings.anthropic_base_url
    key = _key("anthropic", settings, base_url)
    from judges.providers.anthropic import AnthropicProvider

    return AnthropicProvider(model, api_key=key, base_url=base_url)


def _local(model: str, settings: Settings) -> Provider:
    from judges.providers.local import local_provider

    return local_provider(
        model, model_path=settings.local_model_path, base_url=settings.local_base_url,
        threads=settings.local_threads, context=settings.local_context,
    )


def _scripted(model: str, settings: Settings) -> Provider:
    from judges.providers.scripted import ScriptedProvider

    return ScriptedProvider(model)


_REGISTRY: dict[str, Factory] = {
    "anthropic": _anthropic,
    "local": _local,
    "openai": _openai,
    "scripted": _scripted,
}


STAND_IN_PROVIDERS = frozenset({"scripted"})
"""Provider kinds that are no model: their verdicts test the plumbing, never a judge."""

STAND_IN_NOTE = (
    "stand-in: the scripted provider follows a script (by default word overlap between "
    "answer and sources), not a model; its numbers test the plumbing, never a judge"
)


def is_stand_in(spec: str | None) -> bool:
    """Whether ``provider/model`` names a stand-in provider (see :data:`STAND_IN_PROVIDERS`)."""
    return bool(spec) and str(spec).partition("/")[0] in STAND_IN_PROVIDERS


def register_provider(name: str, factory: Factory) -> None:
    """Add (or replace) a provider kind: ``factory(model, settings) -> Provider``."""
    _REGISTRY[name] = factory


def provider_names() -> list[str]:
    """The registered provider kinds."""
    return sorted(_REGISTRY)


def split_spec(spec: str) -> tuple[str, str]:
    """``"openai/meta-llama/Llama-3"`` → ``("openai", "meta-llama/Llama-3")``."""
    provider, _, model = spec.partition("/")
    if not provider or not model:
        raise ProviderConfigError(f"model {spec!r}: write provider/model, e.g. openai/gpt-4o-mini")
    return provider, model


def get_provider(spec: str, *, settings: Settings | None = None) -> Provider:
    """Build the provider for ``provider/model``.

    Raises:
        ProviderConfigError: unknown provider kind (the message lists the known ones) or a
            missing API key (the message names the environment variable).
    """
    provider, model = split_spec(spec)
    factory = _REGISTRY.get(provider)
    if factory is None:
        raise ProviderConfigError(
            f"unknown provider {provider!r} in {spec!r} (known: {', '.join(provider_names())})"
        )
    return factory(model, settings if settings is not None else Settings())


__all__ = [
    "LOCAL_PLACEHOLDER_KEY",
    "STAND_IN_NOTE",
    "STAND_IN_PROVIDERS",
    "Completion",
    "CompletionRequest",
    "Factory",
    "Message",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "Usage",
    "get_provider",
    "is_stand_in",
    "provider_names",
    "register_provider",
    "split_spec",
]
