"""The app's command channel under attack: real processes, real sockets, another real uid.

A stand-in app process holds the database and serves CLI commands exactly as the Streamlit app
does (:class:`~calibrate_app.command_server.CommandServer`); the CLI runs as
``python -m calibrate_app.cli``. Hostile cases: another uid, folders pre-created with the
wrong owner or mode or as symbolic links, malformed and oversized requests, forbidden commands
and options, a killed or frozen app, Ctrl+C.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fake_server_process import start_fake_server
from judge_helpers import DUMMY_KEY, faithfulness_rows

from calibrate_app.channel.wire import (
    PROTOCOL_VERSION,
    channel_paths,
    encode_frame,
    read_token,
    recv_frame,
)

# The console script, as a user runs it: `python -m` would put the working directory first on
# sys.path, and a folder holding `labels/` would shadow the package.
CALIBRATE = str(Path(sys.executable).parent / "calibrate")
NOBODY = 65534
APP_STANDIN = """
import sys, time
from labels import open_store
from calibrate_app.channel.wire import ChannelError
from calibrate_app.command_server import CommandServer
store = open_store(sys.argv[1])
try:
    server = CommandServer(sys.argv[1]).start()
except ChannelError as error:
    print("refused:", error, flush=True)
else:
    print("ready", server.paths.socket, flush=True)
time.sleep(600)
"""


def _env(**extra: str) -> dict[str, str]:
    """The environment without keys, settings or a runtime folder from the developer's shell."""
    env = {
        k: v for k, v in os.environ.items()
        if k != "XDG_RUNTIME_DIR" and not k.startswith(("CALIBRATE_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(extra)
    return env


class App:
    """A stand-in app process holding ``db`` and serving its command channel."""

    def __init__(self, db: Path, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.proc = subprocess.Popen(
            [sys.executable, "-c", APP_STANDIN, str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or _env(),
        )
        assert self.proc.stdout is not None
        self.status = self.proc.stdout.readline().strip()

    @property
    def socket(self) -> Path:
        assert self.status.startswith("ready"), self.status
        return Path(self.status.split(" ", 1)[1])

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """One app for the tests that only send requests (each process start costs seconds)."""
    app = App(tmp_path_factory.mktemp("shared") / "app.duckdb")
    yield app
    app.stop()


@pytest.fixture
def make_app() -> Iterator[Any]:
    """Start apps for one test; each is stopped when the test ends."""
    with ExitStack() as running:

        def make(db: Path, env: dict[str, str] | None = None) -> App:
            app = App(db, env)
            running.callback(app.stop)
            return app

        yield make


def calibrate(*args: str, cwd: Path, env: dict[str, str] | None = None,
              user: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    prefix = [] if user is None else [
        "setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
    ]
    return subprocess.run(
        [*prefix, CALIBRATE, *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or _env(),
    )


def request(sock_path: Path, payload: bytes, *, timeout: float = 30) -> list[dict[str, Any]]:
    """Send raw bytes to the app's socket; every frame it answers with, until it closes."""
    frames: list[dict[str, Any]] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(sock_path))
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the app may stop reading an oversized request early
        while True:
            try:
                frames.append(recv_frame(sock))
            except Exception:
                return frames


def owner_request(app: App, argv: list[str], cwd: Path, **extra: Any) -> list[dict[str, Any]]:
    token = read_token(channel_paths(app.db, app.socket.parent).token)
    message = {"version": PROTOCOL_VERSION, "token": token, "argv": argv, "cwd": str(cwd),
               **extra}
    return [f for f in request(app.socket, encode_frame(message)) if f["type"] != "heartbeat"]


def datasets(app: App, cwd: Path) -> list[str]:
    done = calibrate("--db", str(app.db), "datasets", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert "running this command inside it" in done.stderr
    return sorted(d["name"] for d in json.loads(done.stdout))


def write_rows(path: Path, n: int = 3) -> Path:
    path.write_text("".join(
        json.dumps({"id": f"r{i}", "question": f"q{i}", "answer": "a"}) + "\n" for i in range(n)
    ))
    return path


# -- the owner's commands ---------------------------------------------------------------------


def test_delegated_commands_work_from_a_folder_holding_labels_and_docs(
    make_app: Any, tmp_path: Path
) -> None:
    app = make_app(tmp_path / "app.duckdb")
    work = tmp_path / "work"
    for name in ("labels", "docs"):
        (work / name).mkdir(parents=True)
    write_rows(work / "rows.jsonl")
    (work / "sheet.csv").write_text("id,label\nr0,pass\nr1,fail\n")
    db = str(app.db)

    done = calibrate("--db", db, "import", "rows.jsonl", "--dataset", "docs", cwd=work)
    assert done.returncode == 0, done.stderr
    assert "3 rows read, 3 added" in done.stdout
    assert datasets(app, work) == ["docs"], "a dataset named like a folder keeps its name"
    done = calibrate("--db", db, "labels", "import", "sheet.csv", "--dataset", "docs",
                     "--annotator", "dana", cwd=work)
    assert done.returncode == 0 and "2 added" in done.stdout, done.stderr
    done = calibrate("--db", db, "labels", "export", "--dataset", "docs", "-o", "out.csv",
                     cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "out.csv").read_text().count("\n") == 3, "written in the CLI's folder"
    done = calibrate("--db", db, "labels", "import", "missing.csv", "--dataset", "docs",
                     cwd=work)
    assert done.returncode == 2 and "no such file" in done.stderr
    done = calibrate("--db", db, "report", "--dataset", "docs", "--judge", "nobody",
                     cwd=work)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # Nothing of the channel lives beside the database (no request folder to replay).
    assert not (tmp_path / "app.duckdb.commands").exists()


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["app"], "not run by the app"),
        (["app", "--host", "0.0.0.0"], "--host is not accepted"),
        (["demo"], "not run by the app"),
        (["--db", "{other}", "datasets"], "--db is not accepted"),
        (["datasets", "--db={other}"], "--db is not accepted"),
        (["judge", "run", "faithfulness", "--dataset", "d", "--port", "1"], "--port"),
        (["labels"], "where a command name belongs"),
        (["no-such-command"], "no such command"),
        (["datasets", "--no-such-option"], "No such option"),
    ],
)
def test_forbidden_commands_and_options_are_refused(
    shared_app: App, tmp_path: Path, argv: list[str], says: str
) -> None:
    app = shared_app
    other = tmp_path / "other.duckdb"
    argv = [a.replace("{other}", str(other)) for a in argv]
    frames = owner_request(app, argv, tmp_path)
    assert [f["type"] for f in frames] == ["error"], frames
    assert says in frames[0]["message"] and frames[0]["exit_code"] == 2
    assert not other.exists(), "no other database was opened"
    assert app.proc.poll() is None


def test_the_cli_cannot_pass_db_through_the_app(shared_app: App, tmp_path: Path) -> None:
    app = shared_app
    other = tmp_path / "other.duckdb"
    done = calibrate("--db", str(app.db), "datasets", "--db", str(other), cwd=tmp_path)
    assert done.returncode == 2 and "--db is not accepted" in done.stderr
    assert not other.exists()


def test_malformed_and_oversized_requests_are_answered_and_the_server_keeps_serving(
    shared_app: App, tmp_path: Path
) -> None:
    app = shared_app
    token = read_token(channel_paths(app.db, app.socket.parent).token)

    def body(message: Any) -> bytes:
        raw = json.dumps(message).encode()
        return struct.pack(">I", len(raw)) + raw

    good = {"version": PROTOCOL_VERSION, "token": token, "argv": ["datasets"],
            "cwd": str(tmp_path)}
    cases: list[tuple[bytes, str]] = [
        (struct.pack(">I", 50_000_000) + b"x" * 70_000, "over the limit"),
        (struct.pack(">I", 5) + b"\xff\xfe{}}", "not a JSON frame"),
        (struct.pack(">I", 9) + b"not json!", "not a JSON frame"),
        (body([1, 2, 3]), "must be a JSON object"),
        (body({**good, "token": None}), "token"),
        (body({**good, "token": "0" * 64}), "token"),
        (body({**good, "version": 99}), "protocol version"),
        (body({**good, "argv": "datasets"}), "argv must be"),
        (body({**good, "argv": []}), "argv must be"),
        (body({**good, "argv": ["datasets", "x" * 5000]}), "argv must be"),
        (body({**good, "cwd": "relative/dir"}), "cwd must be an absolute path"),
    ]
    for payload, says in cases:
        frames = request(app.socket, payload)
        errors = [f for f in frames if f["type"] == "error"]
        assert len(errors) == 1 and says in errors[0]["message"], (says, frames)
    for cut in (b"", b"\x00\x00", struct.pack(">I", 100) + b"{"):
        assert request(app.socket, cut) == []  # cut off: closed without running anything
    assert app.proc.poll() is None
    datasets(app, tmp_path)  # a good request works afterwards (exit 0, run inside the app)


def _nobody_can_run_python() -> str | None:
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    if os.getuid() != 0:
        return "changing uid needs root (CI runs as root)"
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c", "import calibrate_app.channel.wire"],
        capture_output=True, text=True, timeout=60, cwd="/",
    )
    return None if done.returncode == 0 else f"uid {NOBODY} cannot run {sys.executable}"


NO_OTHER_UID = _nobody_can_run_python()
IMPOSTOR = """
import json, socket, sys
from calibrate_app.channel.wire import PROTOCOL_VERSION, encode_frame, recv_frame
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(30)
sock.connect(sys.argv[1])
token = sys.stdin.read()
try:
    sock.sendall(encode_frame({"version": PROTOCOL_VERSION, "token": token,
        "argv": ["import", sys.argv[2], "--dataset", "evil"], "cwd": "/"}))
except BrokenPipeError:
    pass  # the app refused on connect and closed first; its refusal is still to be read
print(json.dumps(recv_frame(sock)))
"""


@pytest.mark.skipif(NO_OTHER_UID is not None, reason=str(NO_OTHER_UID))
def test_another_uid_is_refused_even_with_the_socket_open_and_the_token(
    make_app: Any, tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl")
    app = make_app(tmp_path / "app.duckdb")
    folder = app.socket.parent
    token = read_token(channel_paths(app.db, folder).token)
    # Simulate the folder and socket permissions failing open and the token leaking: only
    # the kernel's peer-uid check is left between the other user and the app.
    folder.chmod(0o711)
    app.socket.chmod(0o777)
    try:
        done = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             sys.executable, "-c", IMPOSTOR, str(app.socket), str(rows)],
            input=token, capture_output=True, text=True, timeout=60, cwd="/",
        )
    finally:
        folder.chmod(0o700)
        app.socket.chmod(0o600)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["type"] == "error" and "only for its own user" in reply["message"]
    assert datasets(app, tmp_path) == [], "nothing was executed"
    assert app.proc.poll() is None
    assert f"refused a connection from uid {NOBODY}" in app.stop()


@pytest.mark.skipif(NO_OTHER_UID is not None, reason=str(NO_OTHER_UID))
def test_the_cli_of_another_uid_gets_a_plain_message(make_app: Any, public_dir: Path) -> None:
    app = make_app(public_dir / "app.duckdb")
    (public_dir / "app.duckdb").chmod(0o644)
    done = calibrate("--db", str(app.db), "datasets", cwd=Path("/"), user=NOBODY)
    # Refused before DuckDB opens it (another uid's database), as bad input: exit 2.
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (f"Refusing to open the database {app.db}: it is owned by uid 0, not by you "
            f"(uid {NOBODY})") in done.stderr
    assert datasets(app, public_dir) == []


# -- hostile runtime folders ------------------------------------------------------------------


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: a Unix socket path must fit in 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="cc-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _shared_tmp(root: Path, mode: int = 0o1777) -> Path:
    shared = root / "tmp"
    shared.mkdir()
    shared.chmod(mode)
    return shared


def _pre_create(folder: Path, how: str) -> None:
    """What another local user (or an accident) left where our runtime folder belongs."""
    if how == "file":
        folder.write_text("x")
        return
    if how == "symlink":
        target = folder.with_name("elsewhere")
        target.mkdir(0o700)
        folder.symlink_to(target)
        return
    folder.mkdir()
    if how == "other-owner":
        folder.chmod(0o700)
        os.chown(folder, NOBODY, NOBODY)
    else:
        folder.chmod(int(how, 8))


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("0777", "has mode 0777; it must be 0700"),
        ("0755", "has mode 0755; it must be 0700"),
        ("0701", "has mode 0701; it must be 0700"),
        ("other-owner", f"belongs to uid {NOBODY}"),
        ("symlink", "is a symbolic link"),
        ("file", "is not a folder"),
    ],
)
def test_a_pre_created_runtime_folder_is_never_adopted(
    make_app: Any, tmp_path: Path, short_dir: Path, how: str, says: str
) -> None:
    if how == "other-owner" and os.getuid() != 0:
        pytest.skip("giving a folder to another uid needs root (CI runs as root)")
    shared = _shared_tmp(short_dir)
    folder = shared / f"calibrate-{os.getuid()}"
    _pre_create(folder, how)
    env = _env(TMPDIR=str(shared))
    app = make_app(tmp_path / "app.duckdb", env)
    assert app.status.startswith("refused:") and says in app.status, app.status
    if folder.is_dir() and not folder.is_symlink():
        assert list(folder.iterdir()) == [], "no socket or token was put there"
    # The CLI refuses too, saying why, while the app holds the database.
    done = calibrate("--db", str(app.db), "datasets", cwd=tmp_path, env=env)
    assert done.returncode == 1 and says in done.stderr, done.stderr


def test_a_temp_folder_others_can_change_is_refused(
    make_app: Any, tmp_path: Path, short_dir: Path
) -> None:
    shared = _shared_tmp(short_dir, 0o777)  # world-writable without the sticky bit
    app = make_app(tmp_path / "app.duckdb", _env(TMPDIR=str(shared)))
    assert app.status.startswith("refused:") and "can be changed by other users" in app.status
    assert list(shared.iterdir()) == []


def test_the_runtime_folder_is_private_and_follows_xdg_runtime_dir(
    make_app: Any, tmp_path: Path, short_dir: Path
) -> None:
    xdg = short_dir / "xdg"
    xdg.mkdir(0o700)
    env = _env(XDG_RUNTIME_DIR=str(xdg), TMPDIR=str(_shared_tmp(short_dir)))
    app = make_app(tmp_path / "app.duckdb", env)
    assert app.socket.parent == xdg / "calibrate"
    modes = {p.suffix: stat.S_IMODE(p.lstat().st_mode) for p in app.socket.parent.iterdir()}
    assert stat.S_IMODE((xdg / "calibrate").lstat().st_mode) == 0o700
    assert modes == {".sock": 0o600, ".token": 0o600}
    done = calibrate("--db", str(app.db), "datasets", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "running this command inside it" in done.stderr
    app.stop()

    loose = short_dir / "loose-xdg"
    loose.mkdir()
    loose.chmod(0o755)  # not private: ignored, the per-uid temp folder is used instead
    env = _env(XDG_RUNTIME_DIR=str(loose), TMPDIR=str(short_dir / "tmp"))
    app = make_app(tmp_path / "app2.duckdb", env)
    assert app.socket.parent == short_dir / "tmp" / f"calibrate-{os.getuid()}"
    assert list(loose.iterdir()) == []


def test_a_symlink_at_the_socket_path_is_not_followed(
    make_app: Any, tmp_path: Path, short_dir: Path
) -> None:
    env = _env(TMPDIR=str(_shared_tmp(short_dir)))
    app = make_app(tmp_path / "app.duckdb", env)
    real = app.socket
    moved = real.with_name("moved.sock")
    real.rename(moved)
    real.symlink_to(moved)
    done = calibrate("--db", str(app.db), "datasets", cwd=tmp_path, env=env)
    assert done.returncode == 1 and "not a socket" in done.stderr, done.stderr


# -- a dying app, Ctrl+C ----------------------------------------------------------------------


@pytest.fixture
def judge_app(make_app: Any, tmp_path: Path) -> Iterator[tuple[App, Path]]:
    """An app with 12 rows to judge and a fake provider answering in 0.4 s."""
    fake, port = start_fake_server("--latency", "0.4", "--verdicts", "hash")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in faithfulness_rows(12)))
    app = make_app(tmp_path / "app.duckdb", _env(
        CALIBRATE_ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY=DUMMY_KEY,
    ))
    done = calibrate("--db", str(app.db), "import", "rows.jsonl", "--dataset", "d",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    try:
        yield app, tmp_path
    finally:
        fake.send_signal(signal.SIGTERM)
        fake.wait(timeout=10)


def _start_run(app: App, cwd: Path) -> subprocess.Popen[str]:
    run = subprocess.Popen(
        [CALIBRATE, "--db", str(app.db), "judge", "run",
         "faithfulness", "--dataset", "d", "--concurrency", "1"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )
    assert run.stderr is not None
    seen = ""
    while "judging" not in seen and "on 'd'" not in seen:
        line = run.stderr.readline()
        assert line, f"the run ended early: {seen}"
        seen += line
    return run


def _latest_run(app: App, cwd: Path) -> dict[str, Any]:
    done = calibrate("--db", str(app.db), "judge", "runs", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    latest: dict[str, Any] = json.loads(done.stdout)[0]
    return latest


def test_ctrl_c_cancels_the_run_inside_the_app(judge_app: tuple[App, Path]) -> None:
    app, cwd = judge_app
    run = _start_run(app, cwd)
    time.sleep(1.0)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, out + err
    assert "Cancelling inside the app" in err and "Run the same command again" in err
    first = _latest_run(app, cwd)
    called = sum(first["summary"][k] for k in ("scored", "unscored", "failed"))
    assert first["status"] == "cancelled" and 0 < called < 12, first
    done = calibrate("--db", str(app.db), "judge", "run", "faithfulness", "--dataset", "d",
                     cwd=cwd)
    assert done.returncode == 0, done.stderr
    second = _latest_run(app, cwd)["summary"]
    assert second["cached"] == called and second["scored"] == 12 - called, second


@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_a_dead_or_frozen_app_is_reported_within_seconds(
    judge_app: tuple[App, Path], how: str
) -> None:
    app, cwd = judge_app
    run = _start_run(app, cwd)
    os.kill(app.proc.pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    try:
        out, err = run.communicate(timeout=30)  # the client gives up after 6 s of silence
    finally:
        if how == "frozen":
            os.kill(app.proc.pid, signal.SIGCONT)
    assert run.returncode == 1, out + err
    says = "closed the connection" if how == "killed" else "stopped answering"
    assert says in err and "Traceback" not in err, err


def test_the_allow_list_names_every_command_but_app_and_demo_with_its_options() -> None:
    """A new command or option is refused through the app until someone adds it here."""
    import click

    from calibrate_app.cli import cli, command_paths
    from calibrate_app.command_server import ALLOWED_COMMANDS

    found = {
        path: frozenset(p.name for p in command.params if isinstance(p, click.Option) and p.name)
        for path, command in command_paths(cli) if not isinstance(command, click.Group)
    }
    assert set(found) - set(ALLOWED_COMMANDS) == {("app",), ("demo",)}
    assert {k: found[k] for k in ALLOWED_COMMANDS} == ALLOWED_COMMANDS
    # The deprecated `judges` alias is let through exactly as the `judge` commands it runs.
    for path in [p for p in ALLOWED_COMMANDS if p[0] == "judges"]:
        assert ALLOWED_COMMANDS[path] == ALLOWED_COMMANDS[("judge", *path[1:])]
