"""A local fake LLM server speaking the OpenAI chat-completions and Anthropic messages wire formats.

The official SDKs talk to it over real HTTP (``respx`` cannot intercept their ``httpx2``
transport), so tests exercise the same code paths as production: status codes, headers,
retry-after, timeouts, connection resets and malformed bodies.

In a test::

    with FakeLLMServer(latency=0.01) as server:
        client = openai.OpenAI(api_key="test", base_url=server.openai_base_url)
        server.script("429", "ok")           # the next two requests, in order
        server.script_for("row-7", "reset")  # the next request whose body mentions "row-7"
        ...
        assert server.duplicate_bodies() == []

From another process (the port is printed on the first line of stdout)::

    python tests/support/fake_llm_server.py --port 0 --latency 0.2 --log calls.jsonl

Actions a request can get (scripted, or drawn from a seeded random fault mix):

==============  ===========================================================================
``ok``          a normal reply (see *responder*)
``429``         rate limited, with a small ``retry-after`` (``retry_after`` seconds)
``500``         internal server error
``503``         service unavailable
``529``         overloaded (Anthropic's code; OpenAI clients see a plain 5xx)
``reset``       the TCP connection is reset before any byte of a reply
``slow``        the reply comes after ``slow_seconds`` (past the client's timeout)
``malformed``   HTTP 200 with a body that is not valid JSON
``empty``       HTTP 200 with empty content
``refusal``     HTTP 200, the model refuses (OpenAI ``message.refusal``; Anthropic
                ``stop_reason: "refusal"``)
``truncated``   HTTP 200, the reply is cut off (``finish_reason: "length"`` /
                ``stop_reason: "max_tokens"``)
``401_echo``    HTTP 401 whose message echoes the request's credentials (the
                ``Authorization`` and ``x-api-key`` headers), as a careless server may
==============  ===========================================================================

Log-probabilities: a chat completion that asks for ``logprobs`` gets them, the way llama.cpp's
server sends them (``choices[0].logprobs.content[i].top_logprobs``). A claim check (a request
with ``top_logprobs`` whose prompt has a ``<claim>`` block) is answered ``YES`` or ``NO`` with
``P(YES) = yes_probability(body)`` split over ``YES``/``Yes`` and ``NO``/``No``; by default
:func:`default_yes_probability`. A claim-extraction prompt (a system prompt about claims that
never mentions a verdict) is answered with the answer's sentences, one per line.

Batch APIs: the same port serves OpenAI's Batch API (``/v1/files``, ``/v1/batches``) and
Anthropic's Message Batches API (``/v1/messages/batches``) — see :mod:`fake_batch_api` and
``server.batches`` (item faults, expiry, cancellation, slow completion, lost replies, hooks).

The server never sends a large ``retry-after``: the Anthropic SDK would sleep that long.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import random
import re
import socket
import struct
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlsplit

from fake_batch_api import DROPPED, FakeBatches

ACTIONS = (
    "ok", "429", "500", "503", "529", "reset", "slow", "malformed", "empty", "refusal",
    "truncated", "401_echo",
)
TRANSIENT = ("429", "500", "503", "529", "reset", "slow", "malformed")
"""Faults a client should retry."""
CONTENT_FAULTS = ("empty", "refusal", "truncated")
"""Faults that are a (useless) reply: a judge should mark them unscored, not retry them."""

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"

Responder = Callable[[str, dict[str, Any]], str]
YesProbability = Callable[[dict[str, Any]], float]


@dataclass(frozen=True)
class LoggedCall:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    action: str
    at: float
    authorization: str | None = None
    """The request's ``Authorization`` header (where a key would have gone)."""

    def body_key(self) -> str:
        """The request body as canonical JSON (equal bodies mean a repeated call)."""
        return json.dumps(self.body, sort_keys=True, ensure_ascii=False)


def prompt_text(body: dict[str, Any]) -> str:
    """All the text a request sends (system prompt and every message), joined."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


_WORD = re.compile(r"[a-z0-9]+")


def _block(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, flags=re.DOTALL)
    return match.group(1) if match else ""


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(
        str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system"
    )


def is_claim_check(body: dict[str, Any]) -> bool:
    """A claim-split YES/NO question: asks for log-probabilities and shows a ``<claim>``."""
    return bool(body.get("logprobs")) and "<claim>" in _last_user_text(body)


def is_claim_extraction(body: dict[str, Any]) -> bool:
    """A claim-extraction prompt: the system prompt is about claims and names no verdict."""
    system = _system_text(body).lower()
    return "claim" in system and "verdict" not in prompt_text(body).lower()


def default_yes_probability(body: dict[str, Any]) -> float:
    """0.9 when every word of the claim (3+ letters) appears in the sources, else 0.2."""
    prompt = _last_user_text(body)
    claim = {w for w in _WORD.findall(_block(prompt, "claim").lower()) if len(w) > 2}
    sources = set(_WORD.findall(_block(prompt, "sources").lower()))
    return 0.9 if claim <= sources else 0.2


def claim_lines(body: dict[str, Any]) -> str:
    """The answer's sentences, one per line (a stand-in claim extractor), or ``NONE``."""
    answer = _block(_last_user_text(body), "answer")
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer) if s.strip()]
    return "\n".join(sentences) or "NONE"


def default_responder(path: str, body: dict[str, Any], *, mode: str = "fixed") -> str:
    """A well-formed judge reply in the format the prompt asks for.

    The format is read off the prompt: JSON when it mentions a ``"verdict"`` key (with a
    ``"claims"`` list when it asks for one), else reasoning plus a final ``VERDICT: X`` line.
    Labels are A/B/TIE when the prompt shows two answers, else PASS/FAIL/UNSURE.

    ``mode="fixed"`` always answers PASS (or A); ``mode="hash"`` picks a label from a hash of
    the last user message, so swapped orders can flip.
    """
    text = prompt_text(body)
    if is_claim_check(body):
        return "YES" if default_yes_probability(body) >= 0.5 else "NO"
    if is_claim_extraction(body):
        return claim_lines(body)
    pairwise = "<answer_a>" in text or "Answer A" in text
    labels = ["A", "B", "TIE"] if pairwise else ["PASS", "FAIL", "UNSURE"]
    if mode == "hash":
        digest = hashlib.sha256(_last_user_text(body).encode()).digest()[0]
        label = labels[0] if digest < 150 else labels[1] if digest < 240 else labels[2]
    else:
        label = labels[0]
    if '"verdict"' in text:
        reply: dict[str, Any] = {"reasoning": "Checked against the numbered sources.",
                                 "verdict": label}
        if '"claims"' in text:
            status = "SUPPORTED" if label == "PASS" else "NOT_FOUND"
            reply["claims"] = [{"claim": "The answer's main statement.", "status": status,
                                "source": 1}]
        return json.dumps(reply)
    return f"The answer was compared with the sources.\nVERDICT: {label}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive: a new TCP connection per call would be unfair
    # Headers and body go out in two writes; with Nagle on, the second waits for the client's
    # delayed ACK (40 ms on Linux) and every reply would be 40 ms late.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr log."""

    def setup(self) -> None:
        super().setup()
        self.server.owner._connected()

    def _batch_request(self, method: str) -> bool:
        """Serve a batch-API request (see :mod:`fake_batch_api`); False for other paths."""
        url = urlsplit(self.path)
        batches = self.server.owner.batches
        if not batches.handles(url.path):
            return False
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        host = self.headers.get("host") or f"{self.server.owner.host}:{self.server.owner.port}"
        reply = batches.handle(method, url.path, dict(parse_qsl(url.query)), self.headers, raw,
                               f"http://{host}")
        if reply == DROPPED:
            self._reset()
            return True
        status, data, content_type = reply
        self._send_raw(status, data, {"content-type": content_type})
        return True

    def do_GET(self) -> None:
        if not self._batch_request("GET"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self._batch_request("POST"):
            return
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        owner = self.server.owner
        action = owner._next_action(raw.decode(errors="replace"))
        owner._log(LoggedCall(self.path, body, action, time.time(),
                              self.headers.get("authorization")))
        if owner.latency and owner._stopping.wait(owner.latency):
            return
        anthropic = self.path == ANTHROPIC_PATH
        if action == "reset":
            self._reset()
            return
        if action == "slow" and owner._stopping.wait(owner.slow_seconds):
            return
        if action in ("429", "500", "503", "529"):
            self._send_error(int(action), anthropic)
            return
        if action == "401_echo":
            echoed = f"Authorization: {self.headers.get('authorization')}; " \
                     f"x-api-key: {self.headers.get('x-api-key')}"
            self._send_json(401, {"type": "error", "error": {
                "type": "authentication_error", "message": f"invalid credentials ({echoed})"}})
            return
        if action == "malformed":
            self._send_raw(200, b'{"id": "broken", "choices": [{"message": {"content": "VERD')
            return
        text = owner.responder(self.path, body) if action in ("ok", "slow") else ""
        if text and owner.responder is default_responder and is_claim_check(body):
            text = "YES" if owner.yes_probability(body) >= 0.5 else "NO"
        if action == "truncated":
            text = (owner.responder(self.path, body) or "x" * 40)[: 12]
        if anthropic:
            reply = _anthropic_reply(body, text, action)
        else:
            reply = _openai_reply(body, text, action)
            if body.get("logprobs") and action in ("ok", "slow", "truncated"):
                reply["choices"][0]["logprobs"] = _logprobs(body, text, owner.yes_probability)
        self._send_json(200, reply)

    def _reset(self) -> None:
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _send_error(self, status: int, anthropic: bool) -> None:
        kinds = {429: "rate_limit_error", 500: "api_error", 503: "api_error",
                 529: "overloaded_error"}
        message = {429: "rate limited", 500: "internal error", 503: "unavailable",
                   529: "overloaded"}[status]
        payload: dict[str, Any] = (
            {"type": "error", "error": {"type": kinds[status], "message": message}}
            if anthropic
            else {"error": {"message": message, "type": kinds[status], "code": str(status)}}
        )
        headers = {"retry-after": f"{self.server.owner.retry_after:g}"} if status == 429 else {}
        self._send_json(status, payload, headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        headers = {"content-type": "application/json", **(headers or {})}
        try:
            self.send_response(status)
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (timeout) before the reply: nothing to do.
            self.close_connection = True

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionResetError, BrokenPipeError, OSError):
            self.close_connection = True

    def finish(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError, OSError, ValueError):
            super().finish()


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _openai_reply(body: dict[str, Any], text: str, action: str) -> dict[str, Any]:
    refusal = "I can't help with grading this." if action == "refusal" else None
    finish = "length" if action == "truncated" else "stop"
    content = None if action == "refusal" else text
    return {
        "id": f"chatcmpl-{int(time.time() * 1e6)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": _tokens(prompt_text(body)),
            "completion_tokens": _tokens(text),
            "total_tokens": _tokens(prompt_text(body)) + _tokens(text),
        },
    }


def _entry(token: str, probability: float) -> dict[str, Any]:
    return {"token": token, "logprob": math.log(max(probability, 1e-12)),
            "bytes": list(token.encode())}


def _logprobs(body: dict[str, Any], text: str, yes_probability: YesProbability) -> dict[str, Any]:
    """``choices[0].logprobs`` as llama.cpp sends it: per reply token, its top alternatives."""
    top_n = int(body.get("top_logprobs") or 1)
    tokens = re.findall(r"\s*\S+", text) or [""]
    content = []
    for position, token in enumerate(tokens):
        if position == 0 and is_claim_check(body):
            p = min(max(yes_probability(body), 0.0), 1.0)
            # Most of the mass on the upper-case words, some on their capitalised twins, a
            # little on an unrelated token, as small models spread it.
            top = [_entry("YES", 0.8 * p), _entry("NO", 0.8 * (1 - p)),
                   _entry("Yes", 0.1 * p), _entry("No", 0.1 * (1 - p)), _entry("The", 0.1)]
        else:
            top = [_entry(token, 0.9), _entry(" the", 0.05), _entry(".", 0.03)]
        top = sorted(top, key=lambda e: -e["logprob"])[:top_n]
        chosen = next((e for e in top if e["token"] == token), _entry(token, 0.5))
        content.append({**chosen, "top_logprobs": top})
    return {"content": content}


def _anthropic_reply(body: dict[str, Any], text: str, action: str) -> dict[str, Any]:
    stop = {"truncated": "max_tokens", "refusal": "refusal"}.get(action, "end_turn")
    content = [] if action in ("empty", "refusal") else [{"type": "text", "text": text}]
    return {
        "id": f"msg_{int(time.time() * 1e6)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens(prompt_text(body)), "output_tokens": _tokens(text)},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default of 5 drops SYNs when 32 clients connect at once
    owner: FakeLLMServer


@dataclass
class FakeLLMServer:
    """The fake server; start it with ``with`` or :meth:`start`.

    Args:
        latency: seconds every request waits before its reply (also before faults).
        faults: a random fault mix, e.g. ``{"429": 0.1, "reset": 0.05}``: each request not
            otherwise scripted gets that action with that probability (seeded by ``seed``).
        retry_after: the ``retry-after`` header of a 429, in seconds (keep it small).
        slow_seconds: how long a ``slow`` reply takes.
        responder: ``(path, body) -> text`` for normal replies (default: :func:`default_responder`).
        yes_probability: ``body -> P(YES)`` of a claim check's log-probabilities (default:
            :func:`default_yes_probability`).
        log_file: an open text file; every request is also written there as one JSON line
            (for tests that watch a server in another process).
    """

    latency: float = 0.0
    faults: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    retry_after: float = 0.05
    slow_seconds: float = 3.0
    responder: Responder = default_responder
    yes_probability: YesProbability = default_yes_probability
    log_file: TextIO | None = None
    host: str = "127.0.0.1"
    port: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.faults) - set(ACTIONS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {ACTIONS}")
        self._lock = threading.Lock()
        self._queue: deque[str] = deque()
        self._targeted: list[tuple[str, deque[str]]] = []
        self._calls: list[LoggedCall] = []
        self._connections = 0
        self._random = random.Random(self.seed)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.batches = FakeBatches(self)
        """The batch services (:mod:`fake_batch_api`): scripting, expiry, hooks, state."""

    @property
    def connections(self) -> int:
        """TCP connections accepted so far.

        A client that keeps its connections alive opens one per request in flight, once.
        """
        with self._lock:
            return self._connections

    def _connected(self) -> None:
        with self._lock:
            self._connections += 1

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind 127.0.0.1 (port 0 = any free port) and serve in a daemon thread."""
        server = _Server((self.host, self.port), _Handler)
        server.owner = self
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name="fake-llm-server",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still sleeping are abandoned."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base_url form)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI SDK's base_url form includes /v1)."""
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no /v1: the Anthropic SDK adds it)."""
        return self.base_url

    # -- scripting ----------------------------------------------------------------------------

    def script(self, *actions: str) -> None:
        """Give the next requests these actions, in order (before any random fault)."""
        self._check(actions)
        with self._lock:
            self._queue.extend(actions)

    def script_for(self, needle: str, *actions: str) -> None:
        """Give the next requests whose raw body contains ``needle`` these actions, in order."""
        self._check(actions)
        with self._lock:
            self._targeted.append((needle, deque(actions)))

    @staticmethod
    def _check(actions: Iterable[str]) -> None:
        bad = [a for a in actions if a not in ACTIONS]
        if bad:
            raise ValueError(f"unknown actions {bad}; known: {ACTIONS}")

    def _next_action(self, raw_body: str) -> str:
        with self._lock:
            for needle, queue in self._targeted:
                if queue and needle in raw_body:
                    return queue.popleft()
            if self._queue:
                return self._queue.popleft()
            roll = self._random.random()
            for action, probability in self.faults.items():
                if roll < probability:
                    return action
                roll -= probability
            return "ok"

    # -- the call log -------------------------------------------------------------------------

    def _log(self, call: LoggedCall) -> None:
        with self._lock:
            self._calls.append(call)
            if self.log_file is not None:
                self.log_file.write(
                    json.dumps({"path": call.path, "body": call.body, "action": call.action,
                                "at": call.at}) + "\n"
                )
                self.log_file.flush()

    def _log_batch_item(self, path: str, body: dict[str, Any]) -> None:
        """Log one request submitted in a batch (action ``batch``)."""
        self._log(LoggedCall(path, body, "batch", time.time()))

    @property
    def calls(self) -> list[LoggedCall]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._calls)

    def action_counts(self) -> Counter[str]:
        """How many requests got each action."""
        return Counter(c.action for c in self.calls)

    def duplicate_bodies(self, *, successful_only: bool = True) -> list[str]:
        """Request bodies sent more than once (by default counting only ``ok`` replies)."""
        return duplicates(self.calls, successful_only=successful_only)

    def reset_log(self) -> None:
        """Forget the calls logged so far."""
        with self._lock:
            self._calls.clear()


def duplicates(calls: Iterable[LoggedCall], *, successful_only: bool = True) -> list[str]:
    """Bodies seen more than once among ``calls`` (see :meth:`FakeLLMServer.duplicate_bodies`)."""
    counts = Counter(
        c.body_key() for c in calls if not successful_only or c.action in ("ok", *CONTENT_FAULTS)
    )
    return [body for body, n in counts.items() if n > 1]


def read_log(path: str) -> list[LoggedCall]:
    """The calls a server in another process wrote to its ``--log`` file."""
    calls = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                calls.append(LoggedCall(record["path"], record["body"], record["action"],
                                        record["at"]))
    return calls


def _parse_faults(text: str) -> dict[str, float]:
    faults: dict[str, float] = {}
    for part in filter(None, re.split(r"[,\s]+", text)):
        name, _, probability = part.partition("=")
        faults[name] = float(probability or 0.1)
    return faults


def main(argv: list[str] | None = None) -> None:
    """Run the server until killed; print ``PORT <n>`` first."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--faults", default="", help='e.g. "429=0.1,reset=0.05"')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.05)
    parser.add_argument("--slow-seconds", type=float, default=3.0)
    parser.add_argument("--verdicts", choices=("fixed", "hash"), default="fixed")
    parser.add_argument("--log", default=None, help="append every request to this JSONL file")
    args = parser.parse_args(argv)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115
    mode = args.verdicts

    def responder(path: str, body: dict[str, Any]) -> str:
        return default_responder(path, body, mode=mode)

    server = FakeLLMServer(
        latency=args.latency, faults=_parse_faults(args.faults), seed=args.seed,
        retry_after=args.retry_after, slow_seconds=args.slow_seconds, responder=responder,
        log_file=log, port=args.port,
    ).start()
    print(f"PORT {server.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
