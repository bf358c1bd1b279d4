"""The CLI's side of the hand-off: send the command to the app that holds the database.

When the app serves the database named by ``--db`` (see :mod:`calibrate_app.command_server`),
the CLI connects to the app's socket in the private runtime folder, after checking that folder,
the socket's owner and the server's uid (:mod:`calibrate_app.channel.wire`), sends its argv
unchanged with its working directory and the app's token, and prints the output as it streams
back. Ctrl+C once closes the CLI's side of the connection, which cancels the command inside the
app (a judge run stores the calls in flight and stops); Ctrl+C again stops waiting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from calibrate_app.channel.wire import (
    CLIENT_READ_TIMEOUT,
    PROTOCOL_VERSION,
    ChannelError,
    ChannelPaths,
    ConnectionClosed,
    ProtocolError,
    channel_paths,
    check_private_dir,
    check_socket_file,
    close_quietly,
    peer_credentials,
    read_token,
    recv_frame,
    runtime_dir,
    send_frame,
)
from judges.workspace import Workspace

LOCAL_ONLY = {"app", "demo"}  # they start a server of their own; never handed over
EXIT_INTERRUPTED = 130


def env_file_option(argv: Sequence[str]) -> str | None:
    """The ``--env-file`` value given before the command, if any (click checks the rest)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        token = argv[i]
        if token == "--env-file" and i + 1 < len(argv):
            return argv[i + 1]
        if token.startswith("--env-file="):
            return token.split("=", 1)[1]
        i += 2 if token in ("--db", "--env-file") else 1
    return None


def split_invocation(argv: Sequence[str]) -> tuple[str | None, list[str]] | None:
    """``(--db value or None, the command and its arguments)``; ``None`` to run here.

    Only ``--db`` and ``--env-file`` may come before the command (the app uses its own
    settings: ``--env-file`` only picks the database the command is for); help, version and
    anything unusual run locally so click explains them.
    """
    db: str | None = None
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--db" and i + 1 < len(argv):
            db, i = argv[i + 1], i + 2
        elif token.startswith("--db="):
            db, i = token.split("=", 1)[1], i + 1
        elif token == "--env-file" and i + 1 < len(argv):
            i += 2
        elif token.startswith("--env-file="):
            i += 1
        elif token.startswith("-"):
            return None
        else:
            break
    rest = list(argv[i:])
    if not rest or rest[0] in LOCAL_ONLY or {"--help", "-h", "--version"} & set(rest):
        return None
    return db, rest


def _fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr, flush=True)
    return code


def delegate_if_app_serves(argv: Sequence[str], default_db: str | Path) -> int | None:
    """Run the command inside the app that serves its database; ``None`` to run it here.

    Returns the exit code of the command (or of a refusal).
    """
    split = split_invocation(argv)
    if split is None:
        return None
    db, rest = split
    db_path = Path(db or default_db)
    try:
        folder = runtime_dir()
        check_private_dir(folder)
        paths = channel_paths(db_path, folder)
        if not os.path.lexists(paths.socket):
            return None
        check_socket_file(paths.socket)
    except FileNotFoundError:
        return None  # no app has ever served a database for this user
    except (ChannelError, OSError) as error:
        # A folder that is not private is never used; that matters only if an app holds
        # the file (otherwise the command runs here and needs no channel).
        if os.path.exists(db_path) and Workspace.held_by_another_process(db_path):
            return _fail(f"Cannot hand this command to the app: {error}")
        return None
    try:
        sock = _connect(paths)
    except OSError as error:
        return _fail(f"Cannot reach the app that holds the database: {error}")
    if sock is None:
        return None  # the app that made this socket is gone; run here
    try:
        return _send(sock, paths, rest)
    finally:
        close_quietly(sock)


def _connect(paths: ChannelPaths) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CLIENT_READ_TIMEOUT)
    try:
        sock.connect(str(paths.socket))
    except (ConnectionRefusedError, FileNotFoundError):
        close_quietly(sock)
        return None
    except BaseException:
        close_quietly(sock)
        raise
    return sock


def _send(sock: socket.socket, paths: ChannelPaths, rest: list[str]) -> int:
    pid = 0
    try:
        pid, uid, _ = peer_credentials(sock)
        if uid != os.getuid():
            return _fail(
                f"Refusing to send the command: the socket {paths.socket} is served by uid "
                f"{uid}, not by you (uid {os.getuid()})."
            )
        token = read_token(paths.token)
        send_frame(sock, {
            "version": PROTOCOL_VERSION, "token": token, "argv": rest, "cwd": os.getcwd(),
        })
    except ChannelError as error:
        return _fail(f"Cannot hand this command to the app: {error}")
    except OSError as error:
        return _fail(f"The app (process {pid}) did not take the command: {error}")
    return _follow(sock, pid)


class _Interrupts:
    """Ctrl+C while waiting: the first closes our side (the app cancels), the second stops."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.count = 0
        self.previous: Any = None

    def __enter__(self) -> _Interrupts:
        try:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread: no handler, Ctrl+C is not ours to catch
            self.previous = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        print("\nCancelling inside the app (Ctrl+C again to stop waiting)...", file=sys.stderr,
              flush=True)


def _follow(sock: socket.socket, pid: int) -> int:
    """Print the streamed output; return the command's exit code."""
    with _Interrupts(sock):
        try:
            while True:
                code = _handle_frame(sock, pid)
                if code is not None:
                    return code
        except KeyboardInterrupt:
            return _fail("Stopped waiting; the app is cancelling the command.",
                         EXIT_INTERRUPTED)


def _handle_frame(sock: socket.socket, pid: int) -> int | None:
    """Read and act on one frame; the exit code once the command has ended."""
    try:
        frame = recv_frame(sock)
    except TimeoutError:
        return _fail(
            f"The app (process {pid}) stopped answering (nothing for "
            f"{CLIENT_READ_TIMEOUT:.0f} s); the command's outcome is unknown. "
            "Check the app, then run the command again."
        )
    except (ConnectionClosed, OSError):
        return _fail(
            f"The app (process {pid}) closed the connection before the command finished "
            "(did it stop?). Run the command again; a judge run resumes from its stored calls."
        )
    except ProtocolError as error:
        return _fail(f"The app (process {pid}) sent a malformed reply: {error}")
    kind = frame.get("type")
    if kind == "accepted":
        print(
            f"The app (process {pid}) has the database open; running this command inside it.",
            file=sys.stderr, flush=True,
        )
    elif kind in ("stdout", "stderr"):
        stream = sys.stdout if kind == "stdout" else sys.stderr
        stream.write(str(frame.get("data", "")))
        stream.flush()
    elif kind == "exit":
        return _exit_code(frame)
    elif kind == "error":
        return _fail(f"The app refused the command: {frame.get('message')}", _exit_code(frame))
    return None


def _exit_code(frame: dict[str, Any]) -> int:
    code = frame.get("exit_code")
    return code if isinstance(code, int) and 0 <= code <= 255 else 1
