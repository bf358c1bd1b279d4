"""The private local channel between ``calibrate`` CLI processes and the app holding a database.

Threat: other local users. The database's folder may be shared and hostile, so nothing of the
channel lives there. The app listens on a Unix domain socket in a *private runtime folder*:

- ``$XDG_RUNTIME_DIR/calibrate`` when ``XDG_RUNTIME_DIR`` is set, absolute, ours and private,
  else ``<temp dir>/calibrate-<uid>`` (the temp dir must be sticky or private, so another user
  cannot swap our folder out from under us);
- created by the app with mode 0700 and then checked with ``lstat`` (a folder, not a symbolic
  link, owned by our uid, mode exactly 0700). A folder that is not like that is never adopted:
  :class:`ChannelError` says what is wrong and how to fix it.

For a database file the socket is ``<hash>.sock`` and the app's secret is ``<hash>.token``
(mode 0600), where ``<hash>`` is derived from the database's real path, so the CLI finds the
app of *its* database. Every connection is checked twice by the app: the peer's uid (the
kernel's ``SO_PEERCRED``) must be the app's, and the first frame must carry the token
(compared with :func:`hmac.compare_digest`). The CLI checks the folder, the socket's owner and
the server's uid before it sends anything.

Frames are a 4-byte big-endian length and a UTF-8 JSON object; a length over the cap is refused
before anything is read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import socket
import stat
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labels.errors import CalibrateError

PROTOCOL_VERSION = 1
MAX_REQUEST_BYTES = 64 * 1024  # a command line and a working directory, with room to spare
MAX_FRAME_BYTES = 1024 * 1024  # any frame, in either direction
HEARTBEAT_SECONDS = 1.0  # the app sends at least one frame this often while a command runs
CLIENT_READ_TIMEOUT = 6.0  # the CLI gives up on a silent app after this long
REQUEST_TIMEOUT = 5.0  # the app waits this long for a request after a connection opens
_SUN_PATH_MAX = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux
_HEADER = struct.Struct(">I")
_PEERCRED = struct.Struct("3i")


class ChannelError(CalibrateError):
    """The command channel cannot be used safely (a hostile or misconfigured folder, …)."""


class ProtocolError(Exception):
    """A frame that is not what the protocol allows (too long, not JSON, not an object)."""


class ConnectionClosed(Exception):
    """The other side closed the connection before a whole frame arrived."""


# -- the private runtime folder ---------------------------------------------------------------


def _fix_hint() -> str:
    return (
        "Remove it if it is yours, or set XDG_RUNTIME_DIR to a private folder you own "
        "(mode 0700), then start again."
    )


def _owned_private_dir(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and stat.S_IMODE(st.st_mode) & 0o077 == 0
    )


def runtime_dir() -> Path:
    """Where this user's app sockets live (not created here; see :func:`ensure_runtime_dir`)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and _owned_private_dir(Path(xdg)):
        return Path(xdg) / "calibrate"
    return Path(os.path.realpath(tempfile.gettempdir())) / f"calibrate-{os.getuid()}"


def _check_parent(folder: Path) -> None:
    """The folder holding ours must not let another user rename or replace entries in it."""
    parent = folder.parent
    try:
        st = os.stat(parent)
    except OSError as error:
        raise ChannelError(f"cannot use {parent} for the app's command channel: {error}") from None
    writable_by_others = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if st.st_uid not in (0, os.getuid()) or (writable_by_others and not st.st_mode & stat.S_ISVTX):
        raise ChannelError(
            f"{parent} can be changed by other users (owner uid {st.st_uid}, mode "
            f"{stat.S_IMODE(st.st_mode):04o}, no sticky bit), so the app's command channel "
            "cannot be kept private there. Set XDG_RUNTIME_DIR (or TMPDIR) to a private folder."
        )


def check_private_dir(path: Path) -> None:
    """Raise :class:`ChannelError` unless ``path`` is a real folder of ours with mode 0700.

    Uses ``lstat``: a symbolic link is refused even when it points at a good folder.
    """
    st = os.lstat(path)
    where = f"The app's command folder {path}"
    if stat.S_ISLNK(st.st_mode):
        raise ChannelError(f"{where} is a symbolic link; refusing to use it. {_fix_hint()}")
    if not stat.S_ISDIR(st.st_mode):
        raise ChannelError(f"{where} is not a folder; refusing to use it. {_fix_hint()}")
    if st.st_uid != os.getuid():
        raise ChannelError(
            f"{where} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}); "
            f"refusing to use it. {_fix_hint()}"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        raise ChannelError(
            f"{where} has mode {mode:04o}; it must be 0700 (only you). Refusing to use it. "
            f"{_fix_hint()}"
        )


def ensure_runtime_dir() -> Path:
    """Create the private runtime folder (0700) if missing, and verify it either way."""
    folder = runtime_dir()
    _check_parent(folder)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass  # adopted only if check_private_dir below accepts it
    else:
        # The umask may have narrowed the mode; the folder is new and ours, so set it exactly.
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    check_private_dir(folder)
    return folder


# -- the socket and token of one database -----------------------------------------------------


@dataclass(frozen=True)
class ChannelPaths:
    """The runtime folder, socket and token file that belong to one database file."""

    folder: Path
    socket: Path
    token: Path


def channel_paths(db_path: str | Path, folder: Path | None = None) -> ChannelPaths:
    """The socket and token paths for ``db_path`` (its real path decides the name)."""
    folder = runtime_dir() if folder is None else folder
    real = os.path.realpath(db_path)
    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
    paths = ChannelPaths(folder, folder / f"{name}.sock", folder / f"{name}.token")
    if len(os.fsencode(str(paths.socket))) > _SUN_PATH_MAX:
        raise ChannelError(
            f"the socket path {paths.socket} is too long for a Unix socket; set "
            "XDG_RUNTIME_DIR (or TMPDIR) to a shorter folder"
        )
    return paths


def write_token(path: Path) -> str:
    """Write a fresh secret to ``path`` (mode 0600, replaced atomically) and return it."""
    token = secrets.token_hex(32)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(tmp, flags, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def read_token(path: Path) -> str:
    """Read the app's secret; refuse a file that is not ours or that others could read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise ChannelError(f"cannot read the app's token {path}: {error.strerror}") from None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.getuid()
            or stat.S_IMODE(st.st_mode) & 0o077
        ):
            raise ChannelError(
                f"the app's token {path} is not a private file of yours; refusing to use it"
            )
        return os.read(fd, 256).decode("ascii", errors="replace").strip()
    finally:
        os.close(fd)


def check_socket_file(path: Path) -> None:
    """Raise :class:`ChannelError` unless ``path`` is a socket owned by us (``lstat``)."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        kind = "a socket" if stat.S_ISSOCK(st.st_mode) else "not a socket"
        raise ChannelError(
            f"{path} is {kind} owned by uid {st.st_uid}; refusing to send a command to it"
        )


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """``(pid, uid, gid)`` of the process at the other end of a Unix socket (the kernel's view)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover - Linux has it; elsewhere the channel is off
        raise ChannelError("the app's command channel needs SO_PEERCRED (Linux)")
    raw = sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size)
    pid, uid, gid = _PEERCRED.unpack(raw)
    return pid, uid, gid


# -- frames -----------------------------------------------------------------------------------


def encode_frame(message: dict[str, Any]) -> bytes:
    """One frame: length prefix and compact JSON (ASCII, so any text survives)."""
    body = json.dumps(message, separators=(",", ":")).encode("ascii")
    return _HEADER.pack(len(body)) + body


def send_frame(sock: socket.socket, message: dict[str, Any]) -> None:
    """Send one frame (raises :class:`OSError` when the other side has gone)."""
    sock.sendall(encode_frame(message), getattr(socket, "MSG_NOSIGNAL", 0))


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 65536))
        if not chunk:
            raise ConnectionClosed(f"connection closed after {len(chunks)} of {size} bytes")
        chunks += chunk
    return bytes(chunks)


def recv_frame(sock: socket.socket, *, limit: int = MAX_FRAME_BYTES) -> dict[str, Any]:
    """Read one frame; :class:`ProtocolError` for an oversized or malformed one."""
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > limit:
        raise ProtocolError(f"a frame of {size} bytes is over the limit of {limit} bytes")
    body = _recv_exact(sock, size)
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProtocolError(f"not a JSON frame ({error})") from None
    if not isinstance(message, dict):
        raise ProtocolError("a frame must be a JSON object")
    return message


def close_quietly(sock: socket.socket) -> None:
    """Close ``sock`` ignoring errors from a peer that has already gone."""
    with contextlib.suppress(OSError):
        sock.close()
