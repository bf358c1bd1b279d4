"""A small local model as a judge (``local/<name>``): no API key, no network.

Two ways to reach it, both over the OpenAI-compatible chat API on 127.0.0.1, through the same
adapter as ``openai/`` (:class:`~judges.providers.openai.OpenAIProvider`):

* **in-process**: a GGUF file the user points to (``CALIBRATE_LOCAL_MODEL_PATH``, the
  ``local_model_path`` setting, or ``calibrate judge run --model-path FILE``) is served by
  llama.cpp's own server, started inside this process by the ``xllamacpp`` wheel
  (``pip install 'llm-judge-calibrate[local]'``). It starts on the first call, on a free
  loopback port, and is shared by every run of the process until
  :func:`shutdown_local_servers`.
* **a server the user runs** (``llama-server``, or any OpenAI-compatible one): set
  ``CALIBRATE_LOCAL_BASE_URL`` (e.g. ``http://127.0.0.1:8080``; ``/v1`` is added if missing).

``<name>`` labels the model in the judge config (and so in its id); the file decides what
answers. Nothing here downloads a model. Verdicts from a 1.5B model are no API-grade judge:
calibrate them like any other (:attr:`LocalProvider.note`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from judges.providers.base import Completion, CompletionRequest, ProviderConfigError, ProviderError
from judges.providers.openai import OpenAIProvider
from labels.distribution import DISTRIBUTION

INSTALL_HINT = f"pip install '{DISTRIBUTION}[local]'"
GGUF_MAGIC = b"GGUF"
DEFAULT_CONTEXT = 4096
IDLE_TIMEOUT = 15
"""Seconds the in-process server keeps an idle connection open (llama.cpp's read timeout)."""
LOCAL_KEY = "local"
"""llama.cpp's server ignores the key (unless started with one); the SDK needs a non-empty one."""

_SERVERS: dict[tuple[str, int, int], Any] = {}
_SERVERS_LOCK = threading.Lock()


def check_model_file(path: str | Path) -> Path:
    """The resolved GGUF file, or :class:`ProviderConfigError` saying what is wrong."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ProviderConfigError(
            f"local model file {str(file)!r} does not exist: set CALIBRATE_LOCAL_MODEL_PATH "
            "(or pass --model-path) to a GGUF file on this machine"
        )
    try:
        with file.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise ProviderConfigError(f"cannot read local model file {str(file)!r}: {error}") from None
    if magic != GGUF_MAGIC:
        raise ProviderConfigError(
            f"{str(file)!r} is not a GGUF model file (it does not start with 'GGUF'); the "
            "local provider runs GGUF files with llama.cpp"
        )
    return file.resolve()


def xllamacpp_version() -> str:
    """The installed xllamacpp version, or :class:`ProviderConfigError` with the install hint."""
    try:
        import xllamacpp
    except ImportError:
        raise ProviderConfigError(
            "the local provider needs the xllamacpp package (llama.cpp's server as a wheel): "
            f"run `{INSTALL_HINT}`, or set CALIBRATE_LOCAL_BASE_URL to a llama.cpp server you "
            "run yourself"
        ) from None
    return str(getattr(xllamacpp, "__version__", "unknown"))


def start_server(model_path: Path, *, threads: int, context: int) -> str:
    """Start (or reuse) the in-process llama.cpp server for ``model_path``; its base URL.

    One server per (file, threads, context) per process, with one slot: calls are served one at
    a time, which is what two CPU cores can do, and keeps llama.cpp's prompt cache warm for
    consecutive calls that share a prefix (repeats, the claims of one answer).
    """
    key = (str(model_path), threads, context)
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if server is None:
            import xllamacpp

            params = xllamacpp.CommonParams()
            params.model.path = str(model_path)
            params.port = 0  # a free port
            params.n_ctx = context
            params.n_parallel = 1
            params.offline = True  # never fetch anything
            params.verbosity = 0  # llama.cpp logs every request to stderr otherwise
            # Stopping the server waits for every open connection; an idle keep-alive one
            # would hold it for the default 600 s read timeout.
            params.timeout_read = IDLE_TIMEOUT
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            try:
                server = xllamacpp.Server(params)
            except RuntimeError as error:
                raise ProviderError(
                    f"llama.cpp could not load {str(model_path)!r} ({error}); is it a complete "
                    "GGUF file of a chat model, and is there enough memory?",
                    kind="error", retryable=False,
                ) from None
            _SERVERS[key] = server
        return str(server.listening_address)


def shutdown_local_servers() -> int:
    """Stop every in-process server; how many there were.

    A server stops when released, after its open connections close: at once when clients
    have closed theirs (a run closes its client at the end), else within :data:`IDLE_TIMEOUT`.
    """
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    count = len(servers)
    del servers  # released outside the lock: stopping may wait for connections to close
    return count


class LocalProvider(OpenAIProvider):
    """``local/<name>``: a GGUF model served by llama.cpp (in-process or a server you run).

    Args:
        model: the name in the judge config (sent as the model; llama.cpp ignores it).
        model_path: the GGUF file to serve in-process (checked already).
        base_url: an OpenAI-compatible server to use instead (with ``/v1``).
        threads: CPU threads for the in-process server.
        context: its context window in tokens.
    """

    name = "local"
    supports_seed = True

    def __init__(
        self, model: str, *, model_path: Path | None = None, base_url: str | None = None,
        threads: int = 2, context: int = DEFAULT_CONTEXT,
    ) -> None:
        """Check that exactly one of a model file or a server URL is given; nothing starts yet.

        Raises:
            ProviderConfigError: both or neither of ``model_path`` and ``base_url`` were given.
        """
        if (model_path is None) == (base_url is None):
            raise ProviderConfigError("the local provider needs a model file or a base URL")
        super().__init__(model, api_key=LOCAL_KEY, base_url=base_url)
        self.model_path = model_path
        self.threads = threads
        self.context = context
        self._runtime = xllamacpp_version() if model_path is not None else None
        # One slot in-process: more calls in flight would only queue and hit their timeouts.
        self.max_concurrency = 1 if model_path is not None else None
        where = f"{model_path.name}, in-process" if model_path else f"at {base_url}"
        self.note = (
            f"Verdicts come from a small local model ({model}, {where}), not from an API model "
            "such as Claude or GPT: check its agreement with human labels before trusting it."
        )

    def __repr__(self) -> str:
        """Model, file and endpoint (the local provider has no real key to hide)."""
        return (f"LocalProvider(model={self.model!r}, model_path={self.model_path!r}, "
                f"base_url={self.base_url!r})")

    async def complete(self, request: CompletionRequest) -> Completion:
        """Start the in-process server if needed, then one chat completion."""
        if self.base_url is None and self.model_path is not None:
            address = await asyncio.to_thread(
                start_server, self.model_path, threads=self.threads, context=self.context
            )
            self.base_url = address + "/v1"
        return await super().complete(request)

    def info(self) -> dict[str, Any]:
        """The file, its size and the runtime (or the server URL): stored with each run."""
        if self.model_path is None:
            return {"base_url": self.base_url}
        return {
            "model_path": str(self.model_path), "model_bytes": self.model_path.stat().st_size,
            "runtime": f"xllamacpp {self._runtime}", "threads": self.threads,
            "context": self.context,
        }


def local_provider(
    model: str, *, model_path: str | Path | None, base_url: str | None,
    threads: int | None = None, context: int | None = None,
) -> LocalProvider:
    """Build a :class:`LocalProvider`, checking the setup first (nothing is started yet).

    A ``base_url`` wins over ``model_path``.

    Raises:
        ProviderConfigError: neither is set, the file is missing or not GGUF, or xllamacpp is
            not installed (the message says what to install or set).
    """
    if base_url:
        url = base_url.rstrip("/")
        return LocalProvider(model, base_url=url if url.endswith("/v1") else url + "/v1")
    if model_path is None:
        raise ProviderConfigError(
            f"local/{model} needs a GGUF model file: set CALIBRATE_LOCAL_MODEL_PATH (or pass "
            "--model-path FILE to `calibrate judge run`), or set CALIBRATE_LOCAL_BASE_URL to "
            f"a llama.cpp server you run. The in-process server needs `{INSTALL_HINT}`."
        )
    file = check_model_file(model_path)
    return LocalProvider(
        model, model_path=file, threads=threads or min(os.cpu_count() or 2, 8),
        context=context or DEFAULT_CONTEXT,
    )


__all__ = [
    "DEFAULT_CONTEXT", "IDLE_TIMEOUT", "INSTALL_HINT", "LocalProvider", "check_model_file",
    "local_provider", "shutdown_local_servers", "start_server", "xllamacpp_version",
]
