"""The fake LLM server (``fake_llm_server.py``) in a process of its own.

For tests whose judge runs in another process (the CLI, the app): they cannot share an
in-process :class:`~fake_llm_server.FakeLLMServer`, so the server runs as a script on a free port.
"""

from __future__ import annotations

import subprocess
import sys

from repo_paths import FAKE_SERVER_SCRIPT


def start_fake_server(*options: str) -> tuple[subprocess.Popen[str], int]:
    """Start the fake server with ``options`` (e.g. ``"--latency", "0.05"``) on a free port.

    Returns:
        The server process (the caller stops it) and the port it listens on.
    """
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER_SCRIPT), "--port", "0", *options],
        stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    # The script's first line is "PORT <number>".
    port = int(process.stdout.readline().split()[1])
    return process, port
