"""Which models a judge can use here: the providers with a key, local servers, the stand-in.

:func:`model_choices` lists ``provider/model`` specs for a picker (the Judges page): the models of
the price table for each provider whose API key (or base URL) is set, the ``local/`` models the
built-in configs name when a local model file or server is configured, and the scripted stand-in,
which is no model. :func:`missing_setting` says why a spec cannot run here. Only the presence of
a key is read, never its value; no network request is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from judges.pricing import DEFAULT_PRICES
from judges.providers import STAND_IN_PROVIDERS, provider_names
from judges.settings import Settings

STAND_IN_SPEC = "scripted/demo"
"""The scripted stand-in a picker offers (word overlap between answer and sources)."""

LOCAL_NAMES = ("local/qwen2.5-coder-1.5b-instruct-q4_k_m",)
"""``local/`` names offered when a local model is configured (the built-in local judge's)."""


@dataclass(frozen=True)
class ModelChoice:
    """One entry of a model picker.

    Attributes:
        spec: ``provider/model``, what the judge config's ``model`` field holds.
        label: What the picker shows: the spec and where it runs (never a key).
        stand_in: The scripted provider: its verdicts test the plumbing, never a judge.
        ready: Whether this machine's settings let it run (a key or server is configured).
    """

    spec: str
    label: str
    stand_in: bool
    ready: bool


def _has_key(settings: Settings, provider: str) -> bool:
    secret = settings.api_key(provider)
    return secret is not None and bool(secret.get_secret_value())


def missing_setting(spec: str, settings: Settings) -> str | None:
    """Why ``spec`` cannot run with ``settings`` (the variable to set), or ``None`` if it can.

    Only whether a key or base URL is set is checked; whether the key works shows on the
    first call.
    """
    provider = spec.partition("/")[0]
    if provider in STAND_IN_PROVIDERS:
        return None
    if provider in ("anthropic", "openai"):
        base_url = settings.anthropic_base_url if provider == "anthropic" \
            else settings.openai_base_url
        if _has_key(settings, provider) or base_url:
            return None
        return f"no API key: set {Settings.api_key_variable(provider)}"
    if provider == "local":
        if settings.local_model_path is not None or settings.local_base_url:
            return None
        return "no local model: set CALIBRATE_LOCAL_MODEL_PATH or CALIBRATE_LOCAL_BASE_URL"
    if provider not in provider_names():
        return f"unknown provider {provider!r} (known: {', '.join(provider_names())})"
    return None


def _label(spec: str, settings: Settings) -> str:
    provider = spec.partition("/")[0]
    if provider in STAND_IN_PROVIDERS:
        return f"{spec} — stand-in, not a model (word overlap; tests the plumbing)"
    missing = missing_setting(spec, settings)
    if missing is not None:
        return f"{spec} — cannot run here: {missing}"
    if provider == "local":
        where = "local model file" if settings.local_model_path is not None \
            else "local server (CALIBRATE_LOCAL_BASE_URL)"
        return f"{spec} — {where}"
    base_url = settings.anthropic_base_url if provider == "anthropic" \
        else settings.openai_base_url
    if base_url:
        variable = f"CALIBRATE_{provider.upper()}_BASE_URL"
        return f"{spec} — {provider}-compatible server ({variable})"
    return f"{spec} — {provider} API key set"


def model_choices(settings: Settings, *, current: str | None = None) -> list[ModelChoice]:
    """The models a picker offers with ``settings``, ``current`` first.

    Args:
        settings: Keys, base URLs and the local model (only their presence is read).
        current: The config's own model, always listed first (marked when it cannot run).

    Returns:
        ``current``, then the priced models of each provider with a key or base URL, then the
        configured local models, then the scripted stand-in (:data:`STAND_IN_SPEC`); no spec
        twice.

    Examples:
        >>> model_choices(Settings())[-1].spec
        'scripted/demo'
    """
    specs: list[str] = [current] if current else []
    for provider in ("anthropic", "openai"):
        if missing_setting(f"{provider}/x", settings) is None:
            specs.extend(s for s in DEFAULT_PRICES if s.startswith(f"{provider}/"))
    if missing_setting("local/x", settings) is None:
        specs.extend(LOCAL_NAMES)
        if settings.local_model_path is not None:
            specs.append(f"local/{settings.local_model_path.stem.lower()}")
    specs.append(STAND_IN_SPEC)
    unique = list(dict.fromkeys(specs))
    return [
        ModelChoice(spec=s, label=_label(s, settings),
                    stand_in=s.partition("/")[0] in STAND_IN_PROVIDERS,
                    ready=missing_setting(s, settings) is None)
        for s in unique
    ]


__all__ = ["LOCAL_NAMES", "STAND_IN_SPEC", "ModelChoice", "missing_setting", "model_choices"]
