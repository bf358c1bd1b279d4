"""Which batch service a provider has: the one place that knows both adapters.

Kept apart from :mod:`judges.batch.api` (the interface the adapters implement), so that the
adapters import the interface and this module imports the adapters, with no circle between them.
"""

from __future__ import annotations

from judges.batch.api import BatchAPI, BatchUnsupportedError
from judges.providers import Provider
from judges.providers._sdk import SDKProvider

__all__ = ["batch_api"]


def batch_api(provider: Provider) -> BatchAPI:
    """The batch service of ``provider``.

    Raises:
        BatchUnsupportedError: the provider kind has no batch API (local, scripted, ...).
    """
    # By name, not isinstance: importing the other provider's SDK costs seconds.
    if provider.name == "anthropic" and isinstance(provider, SDKProvider):
        from judges.batch.anthropic import AnthropicBatches

        return AnthropicBatches(provider)
    if provider.name == "openai" and isinstance(provider, SDKProvider):
        from judges.batch.openai import OpenAIBatches

        return OpenAIBatches(provider)
    raise BatchUnsupportedError(
        f"{provider.spec} has no batch API: batch mode works with anthropic/... and openai/... "
        "models (the providers' batch services); run without --batch"
    )
