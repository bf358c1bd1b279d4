"""Provider settings (API keys, base URLs, the local model), read from the environment and ``.env``.

Only a ``.env`` that is the user's alone is read (:mod:`labels.settings_files`): a base URL
decides where the API key goes.

The front ends (CLI and app) extend this class with their own entry-point settings (database
file, host, port, access code); the judges library never needs those.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr

from labels.settings_files import PrivateSettings


class Settings(PrivateSettings):
    """Settings of the judge providers.

    Every field reads ``CALIBRATE_<FIELD>`` from the environment or a private ``.env`` file
    (:mod:`labels.settings_files`); API keys also read the providers' usual variables
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``). Keys are :class:`~pydantic.SecretStr`, so they
    never print, and nothing in `calibrate` writes them to the database, logs or exports.
    """

    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CALIBRATE_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("CALIBRATE_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    anthropic_base_url: str | None = None
    openai_base_url: str | None = None
    local_model_path: Path | None = Field(
        default=None, description="a GGUF file for the optional local judge provider"
    )
    local_base_url: str | None = Field(
        default=None,
        description="an OpenAI-compatible llama.cpp server for local/<name> judges, used "
        "instead of starting one in-process (e.g. http://127.0.0.1:8080)",
    )
    local_threads: int | None = Field(
        default=None, ge=1, description="CPU threads of the in-process local model server"
    )
    local_context: int | None = Field(
        default=None, ge=512, description="context window (tokens) of the in-process server"
    )

    def api_key(self, provider: str) -> SecretStr | None:
        """The key for ``provider`` (``anthropic`` or ``openai``), if set."""
        return {"anthropic": self.anthropic_api_key, "openai": self.openai_api_key}.get(provider)

    @staticmethod
    def api_key_variable(provider: str) -> str:
        """The environment variable a user should set for ``provider``'s key."""
        return {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}.get(
            provider, f"CALIBRATE_{provider.upper()}_API_KEY"
        )
