"""Run CLI commands inside the app process while the app holds the database file.

DuckDB lets one process open a file. While experts label in the app, the app's server process
owns the database, so a CLI command in another process cannot even read it. Instead of failing,
the CLI hands its command line to the app: it writes a request file into ``<db>.commands/``; the
app's :class:`CommandServer` thread runs the very same click command in the app process (sharing
the app's open database), streams the output into ``<id>.out``, and writes the exit code into
``<id>.result.json``. The CLI prints the output as it arrives and exits with that code. Ctrl+C in
the CLI writes ``<id>.cancel``, which long commands (judge runs) see through
:func:`current_cancel_event`.

Only the app holds the file, so every write (labels from the browser, verdicts from a judge run
the CLI asked for) goes through one process, in short transactions.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from labels.db import held_by_another_process

POLL_SECONDS = 0.1
SERVER_FILE = "server.json"
_NOT_DELEGATED = {"app", "demo"}
_PATH_OPTIONS = {"-o", "--output", "--card", "--target-file"}


def commands_dir(db_path: str | Path) -> Path:
    """The folder through which CLI processes hand commands to the app for ``db_path``."""
    return Path(str(Path(db_path).resolve()) + ".commands")


# -- output routing inside the app process ----------------------------------------------------


class _ThreadRoutedStream(io.TextIOBase):
    """A stand-in for sys.stdout/sys.stderr that sends a worker thread's writes to its own sink.

    Click writes to whatever ``sys.stdout`` is at call time; Streamlit's own threads keep
    writing to the real stream.
    """

    def __init__(self, real: TextIO) -> None:
        self.real = real
        self.sinks: dict[int, TextIO] = {}

    def write(self, text: str) -> int:
        sink = self.sinks.get(threading.get_ident())
        (sink or self.real).write(text)
        if sink is not None:
            sink.flush()
        return len(text)

    def flush(self) -> None:
        sink = self.sinks.get(threading.get_ident())
        (sink or self.real).flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


_route_lock = threading.Lock()
_cancel_events: dict[int, threading.Event] = {}


def current_cancel_event() -> threading.Event | None:
    """The cancel event of the delegated command running on this thread, if any."""
    return _cancel_events.get(threading.get_ident())


@contextlib.contextmanager
def _routed_output(sink: TextIO) -> Iterator[None]:
    with _route_lock:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, _ThreadRoutedStream):
                setattr(sys, name, _ThreadRoutedStream(stream))
    streams = [s for s in (sys.stdout, sys.stderr) if isinstance(s, _ThreadRoutedStream)]
    for stream in streams:
        stream.sinks[threading.get_ident()] = sink
    try:
        yield
    finally:
        for stream in streams:
            stream.sinks.pop(threading.get_ident(), None)


# -- the server, in the app process -----------------------------------------------------------


class CommandServer:
    """Runs commands that CLI processes hand over, one at a time, in a daemon thread.

    Args:
        db_path: the database file this app process holds.
    """

    def __init__(self, db_path: str | Path) -> None:
        """Prepare a server for ``db_path``; nothing runs until :meth:`start`."""
        self.db_path = Path(db_path).resolve()
        self.folder = commands_dir(self.db_path)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> CommandServer:
        """Announce this server and start polling (idempotent)."""
        if self._thread is not None:
            return self
        self.folder.mkdir(parents=True, exist_ok=True)
        info = {"pid": os.getpid(), "db_path": str(self.db_path), "started": time.time()}
        _atomic_write(self.folder / SERVER_FILE, json.dumps(info))
        # A command claimed by an app that was killed is run again: judge runs resume from
        # their stored calls, so nothing is paid twice.
        for running in self.folder.glob("*.running.json"):
            running.rename(running.with_name(running.name.replace(".running.", ".request.")))
        self._thread = threading.Thread(target=self._loop, name="calibrate-commands", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop polling (the current command finishes first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            requests = sorted(self.folder.glob("*.request.json"))
            for request in requests:
                claimed = request.with_name(request.name.replace(".request.", ".running."))
                try:
                    request.rename(claimed)
                except FileNotFoundError:
                    continue
                self._run(claimed)
            self._stop.wait(POLL_SECONDS)

    def _run(self, claimed: Path) -> None:
        job_id = claimed.name.split(".")[0]
        out_path = self.folder / f"{job_id}.out"
        cancel = threading.Event()
        watcher_stop = threading.Event()

        def watch_cancel() -> None:
            while not watcher_stop.wait(POLL_SECONDS):
                if (self.folder / f"{job_id}.cancel").exists():
                    cancel.set()
                    return

        threading.Thread(target=watch_cancel, daemon=True).start()
        try:
            request = json.loads(claimed.read_text())
            args = [*request["args"]]
            with out_path.open("a", encoding="utf-8") as sink, _routed_output(sink):
                _cancel_events[threading.get_ident()] = cancel
                try:
                    code = run_in_process(args, self.db_path)
                finally:
                    _cancel_events.pop(threading.get_ident(), None)
        except Exception:  # reported to the waiting CLI, never lost
            with out_path.open("a", encoding="utf-8") as sink:
                sink.write(traceback.format_exc())
            code = 1
        finally:
            watcher_stop.set()
        _atomic_write(self.folder / f"{job_id}.result.json", json.dumps({"exit_code": code}))
        claimed.unlink(missing_ok=True)


def run_in_process(args: Sequence[str], db_path: Path) -> int:
    """Run one ``calibrate`` command line in this process against ``db_path``; its exit code."""
    import click

    from calibrate_app.cli import cli

    try:
        result = cli.main(
            args=["--db", str(db_path), *args], prog_name="calibrate", standalone_mode=False
        )
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return result if isinstance(result, int) else 0


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# -- the client, in the CLI process -----------------------------------------------------------


def _split_db(args: list[str]) -> tuple[str | None, list[str]]:
    """Take ``--db PATH`` (before the command) out of ``args``."""
    rest: list[str] = []
    db: str | None = None
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--db" and i + 1 < len(args):
            db = args[i + 1]
            i += 2
            continue
        if token.startswith("--db="):
            db = token.split("=", 1)[1]
        else:
            rest.append(token)
        i += 1
    return db, rest


def _absolute_paths(args: list[str]) -> list[str]:
    """Make file arguments absolute: the app process has another working directory."""
    out: list[str] = []
    after_path_option = False
    for token in args:
        if after_path_option:
            out.append(str(Path(token).resolve()))
            after_path_option = False
            continue
        if token in _PATH_OPTIONS:
            after_path_option = True
            out.append(token)
            continue
        if "=" in token and token.split("=", 1)[0] in _PATH_OPTIONS:
            key, value = token.split("=", 1)
            out.append(f"{key}={Path(value).resolve()}")
            continue
        if not token.startswith("-") and os.path.exists(token):
            out.append(str(Path(token).resolve()))
            continue
        out.append(token)
    return out


def _app_server(db_path: Path) -> dict[str, Any] | None:
    info_path = commands_dir(db_path) / SERVER_FILE
    try:
        info: dict[str, Any] = json.loads(info_path.read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    return info


def delegate_if_app_holds_db(argv: Sequence[str], default_db: str | Path) -> int | None:
    """Hand the command to the app when the app holds the database; ``None`` to run here.

    Returns the delegated command's exit code.
    """
    db, rest = _split_db(list(argv))
    command = next((t for t in rest if not t.startswith("-")), None)
    if command is None or command in _NOT_DELEGATED or {"--help", "-h", "--version"} & set(rest):
        return None
    db_path = Path(db or default_db).resolve()
    if not db_path.exists() or not held_by_another_process(db_path):
        return None
    server = _app_server(db_path)
    if server is None:
        return None
    folder = commands_dir(db_path)
    job_id = f"{time.time_ns()}-{uuid.uuid4().hex[:8]}"
    print(
        f"The app (process {server['pid']}) has the database open; running this command inside it.",
        file=sys.stderr,
    )
    _atomic_write(
        folder / f"{job_id}.request.json",
        json.dumps(
            {"args": _absolute_paths(rest), "cwd": os.getcwd(), "command": shlex.join(rest)}
        ),
    )
    return _follow(folder, job_id)


def _follow(folder: Path, job_id: str) -> int:
    out_path = folder / f"{job_id}.out"
    result_path = folder / f"{job_id}.result.json"
    position = 0
    cancelled = False
    while True:
        try:
            done = result_path.exists()
            if out_path.exists():
                with out_path.open(encoding="utf-8") as f:
                    f.seek(position)
                    chunk = f.read()
                    position = f.tell()
                if chunk:
                    sys.stdout.write(chunk)
                    sys.stdout.flush()
            if done:
                code = int(json.loads(result_path.read_text())["exit_code"])
                for suffix in (".out", ".result.json", ".cancel"):
                    (folder / f"{job_id}{suffix}").unlink(missing_ok=True)
                return code
            time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            if cancelled:
                raise
            cancelled = True
            (folder / f"{job_id}.cancel").write_text("cancel")
            print("\nCancelling inside the app (Ctrl+C again to stop waiting)...", file=sys.stderr)
