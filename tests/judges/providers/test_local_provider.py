"""The ``local/<name>`` provider: setup errors, a server the user runs, the in-process server.

The in-process path is tested with a stand-in ``xllamacpp`` module whose ``Server`` starts the
fake LLM server, so the plumbing (parameters, the shared server, the OpenAI adapter over HTTP)
runs in the normal suite. The real model runs only in the slow, opt-in test at the end:
``CALIBRATE_RUN_LOCAL_MODEL=1`` and a GGUF file at ``CALIBRATE_LOCAL_MODEL_PATH`` (default
``~/.cache/calibrate/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``); nothing downloads a model.
Both variables are read at collection time, before the suite's fixtures clear ``CALIBRATE_*``.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_llm_server import FakeLLMServer
from judge_helpers import faithfulness_rows

from calibrate_app.cli import cli
from judges.calls import CallPolicy
from judges.config import load_builtin
from judges.providers import ProviderConfigError, get_provider
from judges.providers.local import IDLE_TIMEOUT, LocalProvider, shutdown_local_servers
from judges.runner import run_judge
from judges.settings import Settings
from judges.stores.judge_store import JudgeStore
from judges.verdicts import judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore

RUN_REAL = os.environ.get("CALIBRATE_RUN_LOCAL_MODEL") == "1"
REAL_MODEL = Path(os.environ.get(
    "CALIBRATE_LOCAL_MODEL_PATH",
    "~/.cache/calibrate/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)).expanduser()
SSO_SOURCE = "The Pro plan includes single sign-on. Teams under 50 seats need the Security add-on."


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    """A file that starts like a GGUF model (the stand-in server never reads the rest)."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


class _Params:
    """Mimics ``xllamacpp.CommonParams``: nested attribute holders."""

    def __init__(self) -> None:
        self.model = types.SimpleNamespace(path="")
        self.cpuparams = types.SimpleNamespace(n_threads=-1)
        self.cpuparams_batch = types.SimpleNamespace(n_threads=-1)


@pytest.fixture
def fake_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """A stand-in ``xllamacpp`` whose ``Server(params)`` serves the fake LLM server."""
    started: list[Any] = []
    servers: list[FakeLLMServer] = []

    class Server:
        def __init__(self, params: _Params) -> None:
            if not Path(params.model.path).read_bytes().startswith(b"GGUF"):
                raise RuntimeError("Failed to init server, please check the input params.")
            fake = FakeLLMServer().start()
            servers.append(fake)
            started.append(params)
            self.listening_address = fake.base_url

    module = types.ModuleType("xllamacpp")
    module.__version__ = "0.0-test"  # type: ignore[attr-defined]
    module.CommonParams = _Params  # type: ignore[attr-defined]
    module.Server = Server  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "xllamacpp", module)
    shutdown_local_servers()
    yield started
    shutdown_local_servers()
    for fake in servers:
        fake.stop()


def test_missing_model_setting_names_the_variable_and_the_extra() -> None:
    with pytest.raises(ProviderConfigError) as error:
        get_provider("local/qwen", settings=Settings())
    message = str(error.value)
    assert "CALIBRATE_LOCAL_MODEL_PATH" in message and "--model-path" in message
    assert "pip install 'llm-judge-calibrate[local]'" in message
    assert "CALIBRATE_LOCAL_BASE_URL" in message


def test_missing_or_wrong_model_file(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="does not exist: set CALIBRATE_LOCAL_MODEL"):
        get_provider("local/qwen", settings=Settings(local_model_path=tmp_path / "no.gguf"))
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(ProviderConfigError, match="not a GGUF model file"):
        get_provider("local/qwen", settings=Settings(local_model_path=text))


def test_missing_xllamacpp_says_what_to_install(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import raises ImportError
    with pytest.raises(ProviderConfigError,
                       match=r"xllamacpp.*pip install 'llm-judge-calibrate\[local\]'"):
        get_provider("local/qwen", settings=Settings(local_model_path=gguf))


def test_a_server_the_user_runs(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, fast_policy: CallPolicy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CALIBRATE_LOCAL_BASE_URL", fake_server.base_url)
    provider = get_provider("local/qwen", settings=Settings())
    assert isinstance(provider, LocalProvider)
    assert provider.base_url == fake_server.openai_base_url and provider.max_concurrency is None
    assert "small local model" in provider.note and provider.info() == {
        "base_url": fake_server.openai_base_url}
    make_dataset("rows", faithfulness_rows(2))
    config = load_builtin("faithfulness-local")
    summary = run_judge(config, "rows", workspace=Workspace.of(store), provider=provider,
                        policy=fast_policy)
    assert summary.scored == 2 and summary.model == "local/qwen"
    assert {c.body["model"] for c in fake_server.calls} == {"qwen"}
    (run,) = JudgeStore(store.db).runs()
    assert run.options["provider"] == "local/qwen"
    assert run.options["provider_info"] == {"base_url": fake_server.openai_base_url}


def test_in_process_server_is_started_once_and_shared(
    store: LabelStore, make_dataset: Any, gguf: Path, fake_xllamacpp: list[Any],
    fast_policy: CallPolicy,
) -> None:
    settings = Settings(local_model_path=gguf, local_threads=1)
    provider = get_provider("local/qwen", settings=settings)
    assert fake_xllamacpp == []  # building the provider starts nothing
    assert provider.max_concurrency == 1
    make_dataset("rows", faithfulness_rows(3))
    config = load_builtin("faithfulness-local")
    summary = run_judge(config, "rows", workspace=Workspace.of(store), provider=provider,
                        concurrency=8,
                        policy=fast_policy, swap=True)
    assert summary.scored == 6
    (params,) = fake_xllamacpp
    assert params.model.path == str(gguf.resolve()) and params.port == 0
    assert params.n_parallel == 1 and params.offline is True and params.verbosity == 0
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 1
    assert params.timeout_read == IDLE_TIMEOUT  # an idle connection cannot hold a shutdown
    # Another provider (another run) in the same process reuses the loaded model.
    again = get_provider("local/qwen", settings=settings)
    make_dataset("more", faithfulness_rows(1))
    run_judge(config, "more", workspace=Workspace.of(store), provider=again, policy=fast_policy)
    assert len(fake_xllamacpp) == 1
    (run, *_) = JudgeStore(store.db).runs()
    info = run.options["provider_info"]
    assert info["model_path"] == str(gguf.resolve()) and info["runtime"] == "xllamacpp 0.0-test"
    assert info["threads"] == 1 and info["model_bytes"] == 64
    assert shutdown_local_servers() == 1 and shutdown_local_servers() == 0


def test_a_model_llama_cpp_cannot_load_fails_the_calls_clearly(
    store: LabelStore, make_dataset: Any, gguf: Path, fake_xllamacpp: list[Any],
    fast_policy: CallPolicy,
) -> None:
    gguf.write_bytes(b"GGUF")  # a header only
    provider = get_provider("local/qwen", settings=Settings(local_model_path=gguf))
    broken = gguf.with_name("broken.gguf")
    broken.write_bytes(b"XXXX")
    provider.model_path = broken  # type: ignore[attr-defined]  # the file changed under us
    make_dataset("rows", faithfulness_rows(1))
    summary = run_judge(load_builtin("faithfulness-local"), "rows", workspace=Workspace.of(store),
                        provider=provider, policy=fast_policy)
    assert summary.failed == 1 and summary.retries == 0
    error = JudgeStore(store.db).calls_frame().iloc[0]["error"]
    assert "llama.cpp could not load" in error and "broken.gguf" in error


def test_cli_model_path_option_and_the_local_model_note(
    store: LabelStore, make_dataset: Any, db_path: Path, gguf: Path,
    fake_xllamacpp: list[Any],
) -> None:
    make_dataset("rows", faithfulness_rows(2))
    store.db.close()
    runner = CliRunner()
    missing = runner.invoke(cli, ["--db", str(db_path), "judge", "run", "faithfulness-local",
                                  "--dataset", "rows", "--model-path", "nowhere.gguf"])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    result = runner.invoke(cli, ["--db", str(db_path), "judge", "run", "faithfulness-local",
                                 "--dataset", "rows", "--model-path", str(gguf)])
    assert result.exit_code == 0, result.output
    assert "Verdicts come from a small local model" in result.output
    assert "2 scored" in result.output


@pytest.mark.slow
@pytest.mark.skipif(not RUN_REAL, reason="set CALIBRATE_RUN_LOCAL_MODEL=1 to run the real model")
@pytest.mark.skipif(not REAL_MODEL.is_file(), reason=f"no GGUF model at {REAL_MODEL}")
@pytest.mark.timeout(900)
def test_real_model_finds_the_unsupported_sso_claim(
    store: LabelStore, make_dataset: Any
) -> None:
    pytest.importorskip("xllamacpp")
    make_dataset("sso", [
        {"id": "sso", "question": "Is SSO included on Pro?",
         "answer": "SSO is included on Pro at no extra cost.", "sources": [SSO_SOURCE]},
    ])
    config = load_builtin("faithfulness-local")
    summary = run_judge(config, "sso", workspace=Workspace.of(store),
                        settings=Settings(local_model_path=REAL_MODEL),
                        policy=CallPolicy(timeout=600, max_retries=1))
    assert summary.scored == 1, summary.describe()
    (row,) = judge_verdicts(Workspace.of(store), "sso", config.config_id).itertuples()
    assert row.verdict == "fail"
    detail = JudgeStore(store.db).calls_frame().iloc[0]["detail"]
    unsupported = [line for line in detail.splitlines() if "UNSUPPORTED" in line]
    assert any("cost" in line or "free" in line for line in unsupported), detail
