"""A CLI judge run against the fake LLM server in its own process (the kill -9 tests' setup)."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CliJudgeRun:
    """A dataset ``docs`` of faithfulness rows, a fake server logging every call, the command."""

    db: Path
    log: Path
    server: subprocess.Popen[str]
    command: list[str]
    env: dict[str, str]

    def stop_server(self) -> None:
        """Stop the fake server (idempotent)."""
        if self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            self.server.wait(timeout=10)


CliJudgeRunFactory = Callable[..., CliJudgeRun]
