"""Run CLI commands inside the app process while the app holds the database file.

DuckDB lets one process open a file. While experts label in the app, the app's server process
owns the database, so a CLI command in another process cannot even read it. Instead of failing,
the CLI hands its command line to the app over the private local channel of
:mod:`calibrate_app.channel.wire`: a :class:`CommandServer` thread in the app accepts the
connection,
checks the peer's uid and the token, checks the command against :data:`ALLOWED_COMMANDS`, runs
the very same click command in the app process (sharing the app's open database) and streams
its output and exit code back. Closing the connection cancels the command (long commands, i.e.
judge runs, see it through :func:`calibrate_app.cancel.current_cancel_event`). Nothing is
queued on disk, so nothing is replayed after a restart.

Only the app holds the file, so every write (labels from the browser, verdicts from a judge run
the CLI asked for) goes through one process, in short transactions.
"""

from __future__ import annotations

import atexit
import contextlib
import hmac
import io
import os
import queue
import select
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import click

from calibrate_app.cancel import cancellable
from calibrate_app.cancel import current_cancel_event as current_cancel_event
from calibrate_app.channel.wire import (
    HEARTBEAT_SECONDS,
    MAX_REQUEST_BYTES,
    PROTOCOL_VERSION,
    REQUEST_TIMEOUT,
    ChannelError,
    ChannelPaths,
    ConnectionClosed,
    ProtocolError,
    channel_paths,
    close_quietly,
    ensure_runtime_dir,
    peer_credentials,
    recv_frame,
    send_frame,
    write_token,
)

# The commands the app runs for a CLI, each with the options it accepts (click parameter
# names). Never `app` or `demo` (they start servers), never an option that picks another
# database or exposes anything on the network: the app's own `--db` is the only database.
ALLOWED_COMMANDS: dict[tuple[str, ...], frozenset[str]] = {
    ("import",): frozenset(
        {"dataset", "mapping", "records", "file_format", "encoding", "on_changed", "as_json"}
    ),
    ("datasets",): frozenset({"as_json"}),
    ("labels", "import"): frozenset(
        {"dataset", "annotator", "criterion", "selection", "mapping", "records", "file_format",
         "metric", "as_json"}
    ),
    ("labels", "export"): frozenset({"dataset", "criterion", "history", "output"}),
    ("judge", "list"): frozenset({"as_json"}),
    ("judge", "show"): frozenset({"as_json"}),
    ("judge", "validate"): frozenset(),
    # The hidden, deprecated `judges` alias runs the same command objects as `judge`, so old
    # scripts keep working while the app holds the database.
    ("judges", "list"): frozenset({"as_json"}),
    ("judges", "show"): frozenset({"as_json"}),
    ("judges", "validate"): frozenset(),
    ("judge", "run"): frozenset(
        {
            "dataset", "repeats", "swap", "concurrency", "limit", "labelled_only", "dry_run",
            "model", "timeout", "max_retries", "prices_file", "model_path", "as_json",
            "batch", "poll_interval", "calls_per_batch",
        }
    ),
    ("judge", "runs"): frozenset({"dataset", "judge", "as_json"}),
    ("judge", "batches"): frozenset({"open_only", "as_json"}),
    ("judge", "split"): frozenset({"dataset", "criterion", "seed", "test_share", "as_json"}),
    ("judge", "align"): frozenset(
        {"dataset", "model", "proposer", "min_sensitivity", "min_specificity", "concurrency",
         "as_json"}
    ),
    ("judge", "adopt"): frozenset(),
    ("judge", "stress"): frozenset({"dataset", "model", "tests", "limit", "concurrency",
                                    "as_json"}),
    ("verdicts", "import"): frozenset(
        {"dataset", "judge", "criterion", "config_file", "file_format", "mapping", "records",
         "metric", "pass_if", "unsure_if", "as_json"}
    ),
    ("verdicts", "export"): frozenset({"dataset", "judge", "output"}),
    # --otlp writes a file, as -o and --accepted-out do: allowed, because the channel serves
    # only the app's own user (peer uid checked) and the path resolves against that user's
    # working directory (ClientPath), exactly where the command run alone would write it.
    ("report",): frozenset(
        {"dataset", "judges", "criterion", "target", "design", "aggregation", "half_width",
         "otlp_file", "as_json"}
    ),
    ("judge", "select"): frozenset(
        {"dataset", "judge", "target", "alpha", "delta", "p_value", "signals", "with_judges",
         "one_threshold", "aggregation", "escalate", "output", "as_json"}
    ),
    ("judge", "cascade"): frozenset(
        {"dataset", "judges", "target", "alpha", "delta", "p_value", "signals", "one_threshold",
         "aggregation", "escalate", "prices_file", "output", "as_json"}
    ),
    ("card", "export"): frozenset(
        {"dataset", "judge", "criterion", "design", "aggregation", "output", "force", "preview",
         "alpha", "delta"}
    ),
    ("card", "show"): frozenset({"as_json"}),
    ("score",): frozenset({"card_file", "allow_unverified", "accepted_out", "otlp_file",
                           "as_json"}),
    ("gate",): frozenset(
        {"card_file", "min_pass_rate", "on", "side", "baseline_file", "max_drop",
         "min_accepted_share", "allow_unverified", "otlp_file", "as_json"}
    ),
    ("drift",): frozenset(
        {"card_file", "anchor_file", "labels_file", "baseline_file", "alpha", "tolerance",
         "in_file_order", "allow_unverified", "as_json"}
    ),
    ("compare",): frozenset({"card_file", "allow_unverified", "as_json"}),
    # Team mode's roles and audit trail: the same local user as the app (the channel checks
    # the peer's uid), who owns the database file and so may give roles.
    ("users", "add"): frozenset({"role"}),
    ("users", "remove"): frozenset(),
    ("users", "release"): frozenset(),
    ("users", "list"): frozenset({"as_json"}),
    ("audit",): frozenset({"limit", "as_json"}),
    ("assignments", "add"): frozenset({"annotators", "batch", "overlap", "criterion"}),
    ("assignments", "list"): frozenset({"criterion", "as_json"}),
    ("assignments", "withdraw"): frozenset({"criterion"}),
}
# Refused wherever they appear in a request, even as a value: cheap defence in depth.
FORBIDDEN_TOKENS = ("--db", "--host", "--port", "--env-file")
MAX_ARGS = 256
MAX_ARG_CHARS = 4096
MAX_CLIENTS = 8
OUTPUT_CHUNK_CHARS = 32 * 1024


class RequestRefused(Exception):
    """A request the app will not run; the message goes back to the CLI."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        """Keep the message for the CLI and the exit code it should end with."""
        super().__init__(message)
        self.exit_code = exit_code


# -- output routing inside the app process ----------------------------------------------------

_Sink = TextIO | io.TextIOBase


class _ThreadRoutedStream(io.TextIOBase):
    """A stand-in for sys.stdout/sys.stderr that sends a worker thread's writes to its own sink.

    Click writes to whatever ``sys.stdout`` is at call time; Streamlit's own threads keep
    writing to the real stream.
    """

    def __init__(self, real: TextIO) -> None:
        self.real = real
        self.sinks: dict[int, _Sink] = {}

    def write(self, text: str) -> int:
        sink = self.sinks.get(threading.get_ident())
        (sink or self.real).write(text)
        return len(text)

    def flush(self) -> None:
        sink = self.sinks.get(threading.get_ident())
        (sink or self.real).flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


class _QueueSink(io.TextIOBase):
    """Collects one stream of a delegated command as ``(stream, text)`` items on a queue."""

    def __init__(self, stream: str, out: queue.Queue[tuple[str, str] | None]) -> None:
        self.stream = stream
        self.out = out

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            # Click probes streams with write(b""); a text stream must refuse bytes, or click
            # wraps it as a binary one.
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self.out.put((self.stream, text))
        return len(text)

    def flush(self) -> None:
        pass


_route_lock = threading.Lock()
@contextlib.contextmanager
def _routed_output(stdout: _Sink, stderr: _Sink) -> Iterator[None]:
    with _route_lock:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, _ThreadRoutedStream):
                setattr(sys, name, _ThreadRoutedStream(stream))
    me = threading.get_ident()
    routed = [(sys.stdout, stdout), (sys.stderr, stderr)]
    for stream, sink in routed:
        if isinstance(stream, _ThreadRoutedStream):
            stream.sinks[me] = sink
    try:
        yield
    finally:
        for stream, _ in routed:
            if isinstance(stream, _ThreadRoutedStream):
                stream.sinks.pop(me, None)


# -- checking a request -----------------------------------------------------------------------


def _root_group() -> click.Group:
    from calibrate_app.cli import cli

    return cli


def check_command(argv: Sequence[str]) -> tuple[str, ...]:
    """The command path of ``argv`` if the app may run it; :class:`RequestRefused` if not.

    ``argv`` is what follows ``calibrate --db …``: a command name, maybe a subcommand, then
    that command's arguments. Only commands in :data:`ALLOWED_COMMANDS`, with the options listed
    there, pass; the arguments are parsed by click exactly as the command will parse them.
    """
    for token in argv:
        name = token.split("=", 1)[0]
        if name in FORBIDDEN_TOKENS:
            raise RequestRefused(
                f"{name} is not accepted through the app: the app serves only its own "
                "database and address."
            )
    group: click.Command = _root_group()
    path: list[str] = []
    rest = list(argv)
    while isinstance(group, click.Group):
        if not rest or rest[0].startswith("-"):
            shown = rest[0] if rest else "nothing"
            raise RequestRefused(
                f"the app runs commands only (got {shown} where a command name belongs)"
            )
        name = rest.pop(0)
        sub = group.get_command(click.Context(group), name)
        path.append(name)
        if sub is None:
            raise RequestRefused(f"no such command: calibrate {' '.join(path)}")
        group = sub
    key = tuple(path)
    allowed = ALLOWED_COMMANDS.get(key)
    if allowed is None:
        raise RequestRefused(
            f"`calibrate {' '.join(path)}` is not run by the app for the CLI; stop the app "
            "first to run it."
        )
    ctx = click.Context(group, info_name=path[-1])
    parser = group.make_parser(ctx)
    try:
        _, _, order = parser.parse_args(list(rest))
    except click.UsageError as error:
        raise RequestRefused(error.format_message()) from None
    for param in order:
        if isinstance(param, click.Option) and param.name not in allowed | {"help"}:
            raise RequestRefused(
                f"option {param.opts[0]} of `calibrate {' '.join(path)}` is not accepted "
                "through the app."
            )
    return key


def _validate_request(request: dict[str, Any]) -> tuple[list[str], str]:
    if request.get("version") != PROTOCOL_VERSION:
        raise RequestRefused(
            f"protocol version {request.get('version')!r} is not {PROTOCOL_VERSION}; "
            "the CLI and the app come from different versions of calibrate"
        )
    argv, cwd = request.get("argv"), request.get("cwd")
    if (
        not isinstance(argv, list)
        or not 0 < len(argv) <= MAX_ARGS
        or not all(isinstance(a, str) and len(a) <= MAX_ARG_CHARS and "\0" not in a for a in argv)
    ):
        raise RequestRefused(
            f"malformed request: argv must be 1 to {MAX_ARGS} strings of at most "
            f"{MAX_ARG_CHARS} characters"
        )
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or "\0" in cwd:
        raise RequestRefused("malformed request: cwd must be an absolute path")
    return argv, cwd


# -- running a command ------------------------------------------------------------------------


def run_in_process(args: Sequence[str], db_path: Path) -> int:
    """Run one ``calibrate`` command line in this process against ``db_path``; its exit code."""
    try:
        result = _root_group().main(
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


class CommandServer:
    """Serves CLI commands for one database file over the private local channel.

    Args:
        db_path: the database file this app process holds.
        request_timeout: seconds a connection may take to send its request.
    """

    def __init__(self, db_path: str | Path, *, request_timeout: float = REQUEST_TIMEOUT) -> None:
        """Prepare a server for ``db_path``; nothing is created until :meth:`start`."""
        self.db_path = Path(db_path).resolve()
        self.request_timeout = request_timeout
        self.paths: ChannelPaths | None = None
        self._token = ""
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)
        self._socket_inode: int | None = None
        self._running: set[threading.Event] = set()

    def start(self) -> CommandServer:
        """Create the private folder, the token and the socket, and start accepting.

        Raises:
            ChannelError: the runtime folder is not private (another owner, another mode, a
                symbolic link), or another app already serves this database.
        """
        if self._thread is not None:
            return self
        paths = channel_paths(self.db_path, ensure_runtime_dir())
        if os.path.lexists(paths.socket):
            self._clear_stale_socket(paths.socket)
        self._token = write_token(paths.token)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(paths.socket))
            os.chmod(paths.socket, 0o600)
            listener.listen(16)
        except OSError:
            listener.close()
            raise
        listener.settimeout(0.5)
        self._socket_inode = os.lstat(paths.socket).st_ino
        self.paths, self._listener = paths, listener
        # Streamlit stops on SIGTERM/SIGINT and the interpreter exits normally: remove the
        # socket and token then, not at the next start.
        atexit.register(self.stop)
        self._thread = threading.Thread(target=self._accept_loop, name="calibrate-commands",
                                        daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def _clear_stale_socket(path: Path) -> None:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            os.unlink(path)  # left behind by an app that was killed
            return
        finally:
            close_quietly(probe)
        raise ChannelError(f"another app already serves this database on {path}")

    def stop(self) -> None:
        """Stop accepting and remove the socket and token (running commands are cancelled).

        Also run at interpreter exit (Streamlit's SIGTERM handling ends in one); a second call
        does nothing more.
        """
        atexit.unregister(self.stop)
        self._stop.set()
        for cancel in list(self._running):
            cancel.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._listener is not None:
            close_quietly(self._listener)
        if self.paths is not None:
            with contextlib.suppress(OSError):
                if os.lstat(self.paths.socket).st_ino == self._socket_inode:
                    os.unlink(self.paths.socket)
            with contextlib.suppress(OSError):
                os.unlink(self.paths.token)

    def _accept_loop(self) -> None:
        assert self._listener is not None  # set by start() before the thread starts
        try:
            _root_group()  # import the CLI now, not while the first command waits
        except Exception:
            self._log(f"cannot load the CLI:\n{traceback.format_exc()}")
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.1)  # e.g. out of file descriptors: keep serving
                continue
            if not self._slots.acquire(blocking=False):
                self._refuse(conn, f"the app is already running {MAX_CLIENTS} CLI commands", 1)
                continue
            threading.Thread(target=self._serve, args=(conn,), name="calibrate-command",
                             daemon=True).start()

    @staticmethod
    def _refuse(conn: socket.socket, message: str, exit_code: int) -> None:
        with contextlib.suppress(OSError):
            send_frame(conn, {"type": "error", "message": message, "exit_code": exit_code})
        close_quietly(conn)

    def _log(self, message: str) -> None:
        print(f"calibrate command channel: {message}", file=sys.__stderr__, flush=True)

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._serve_checked(conn)
        except Exception:  # one bad connection never stops the server
            self._log(f"error while serving a command:\n{traceback.format_exc()}")
            self._refuse(conn, "the app failed to run the command (see the app's log)", 1)
        finally:
            close_quietly(conn)
            self._slots.release()

    def _serve_checked(self, conn: socket.socket) -> None:
        pid, uid, _ = peer_credentials(conn)
        if uid != os.getuid():
            self._log(f"refused a connection from uid {uid} (process {pid}): not the app's user")
            self._refuse(conn, "refused: this app runs commands only for its own user", 1)
            return
        conn.settimeout(self.request_timeout)
        try:
            request = recv_frame(conn, limit=MAX_REQUEST_BYTES)
        except ProtocolError as error:
            self._refuse(conn, f"malformed request: {error}", 2)
            return
        except (ConnectionClosed, OSError):
            return  # gone, or silent past the timeout
        token = request.get("token")
        if not isinstance(token, str) or not hmac.compare_digest(
            token.encode("utf-8", "surrogateescape"), self._token.encode("ascii")
        ):
            self._log(f"refused a request with a wrong token from process {pid}")
            self._refuse(conn, "refused: the request does not carry the app's token", 1)
            return
        conn.settimeout(None)  # from here on the CLI reads at its own pace (e.g. into a pager)
        try:
            argv, cwd = _validate_request(request)
            with _heartbeats(conn):  # the first check may import the whole CLI: keep talking
                check_command(argv)
        except RequestRefused as error:
            self._refuse(conn, str(error), error.exit_code)
            return
        send_frame(conn, {"type": "accepted", "pid": os.getpid()})
        self._run_streaming(conn, argv, cwd)

    def _run_streaming(self, conn: socket.socket, argv: list[str], cwd: str) -> None:
        from calibrate_app.cli._paths import client_cwd

        output: queue.Queue[tuple[str, str] | None] = queue.Queue()
        cancel = threading.Event()
        code = [1]

        def work() -> None:
            try:
                with client_cwd(cwd), _routed_output(
                    _QueueSink("stdout", output), _QueueSink("stderr", output)
                ), cancellable(cancel):
                    try:
                        code[0] = run_in_process(argv, self.db_path)
                    except Exception:  # reported to the waiting CLI, never lost
                        output.put(("stderr", traceback.format_exc()))
            finally:
                output.put(None)

        worker = threading.Thread(target=work, name="calibrate-command-run", daemon=True)
        self._running.add(cancel)
        worker.start()
        connected, listening = True, True
        last_sent = time.monotonic()
        finished = False
        while not finished:
            if listening and connected:
                # Anything readable is the CLI closing its side: that cancels the command.
                readable, _, _ = select.select([conn], [], [], 0.1)
                if readable and not _recv_or_empty(conn):
                    cancel.set()
                    listening = False
            batch: list[tuple[str, str]] = []
            try:
                item = output.get(timeout=0 if listening and connected else 0.1)
                while True:
                    if item is None:
                        finished = True
                        break
                    batch.append(item)
                    item = output.get_nowait()
            except queue.Empty:
                pass
            frames = [{"type": stream, "data": text} for stream, text in _merge(batch)]
            if not frames and time.monotonic() - last_sent >= HEARTBEAT_SECONDS:
                frames = [{"type": "heartbeat"}]
            if connected and frames:
                try:
                    for frame in frames:
                        send_frame(conn, frame)
                    last_sent = time.monotonic()
                except OSError:
                    connected = False  # the CLI has gone: stop the command, drop its output
                    cancel.set()
        worker.join()
        self._running.discard(cancel)
        if connected:
            with contextlib.suppress(OSError):
                send_frame(conn, {"type": "exit", "exit_code": code[0]})


@contextlib.contextmanager
def _heartbeats(conn: socket.socket) -> Iterator[None]:
    """Send heartbeat frames from a helper thread while the block runs."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(HEARTBEAT_SECONDS):
            try:
                send_frame(conn, {"type": "heartbeat"})
            except OSError:
                return

    thread = threading.Thread(target=beat, name="calibrate-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _recv_or_empty(conn: socket.socket) -> bytes:
    try:
        return conn.recv(4096)
    except OSError:
        return b""


def _merge(batch: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Join neighbouring chunks of one stream, cut into frames of bounded size."""
    merged: list[tuple[str, str]] = []
    for stream, text in batch:
        if merged and merged[-1][0] == stream:
            merged[-1] = (stream, merged[-1][1] + text)
        else:
            merged.append((stream, text))
    for stream, text in merged:
        for start in range(0, len(text), OUTPUT_CHUNK_CHARS):
            yield stream, text[start:start + OUTPUT_CHUNK_CHARS]
