"""The fake LLM server's batch services: OpenAI's Batch API and Anthropic's Message Batches API.

Served by :class:`fake_llm_server.FakeLLMServer` on the same port, so the official SDKs talk to
them over real HTTP:

- OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}/content``,
  ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches``,
  ``POST /v1/batches/{id}/cancel``;
- Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches``, ``POST /v1/messages/batches/{id}/cancel``,
  ``GET /v1/messages/batches/{id}/results``.

A batch ends ``complete_after`` seconds after its creation (slow completion). Its items are
answered when it ends, by the server's responder; an item whose request contains a scripted
needle (:meth:`FakeBatches.script_item`) gets that outcome instead: ``ok``, a content fault
(``empty``, ``refusal``, ``truncated``), an error (``500``, ``529``, ``invalid``;
``invalid_echo`` repeats the credentials sent) or ``expired``.
:meth:`FakeBatches.expire_next` makes whole batches expire with part of their
items done; :meth:`FakeBatches.reject_next` makes OpenAI reject whole batches' input files;
a cancelled batch ends with the items not yet run ``canceled``. With
``supported=False`` every batch path answers 404, as an OpenAI-compatible server without a
batch endpoint (vLLM, llama.cpp) does. ``hooks`` see each event (``create``, ``created``,
``retrieve``, ``results`` — also an output or error file's download) before the reply goes
out — a test kills its client there; a hook returning ``"drop"`` on ``create`` resets the
connection without creating the batch; on ``created``, after creating it (the reply is lost).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_llm_server import FakeLLMServer

ITEM_OUTCOMES = ("ok", "empty", "refusal", "truncated", "500", "529", "invalid", "invalid_echo",
                 "expired")
OPENAI_CHAT = "/v1/chat/completions"
ANTHROPIC_MESSAGES = "/v1/messages"
BATCH_PATH = re.compile(
    r"^/v1/(?:files(?:/(?P<file>[^/]+)/content)?|batches(?:/(?P<ob>[^/]+)(?P<ocancel>/cancel)?)?"
    r"|messages/batches(?:/(?P<ab>[^/]+)(?P<arest>/cancel|/results)?)?)$"
)
Hook = Callable[[str, dict[str, Any]], object]
"""``hook(event, info)``; returning ``"drop"`` on ``create``/``created`` resets the connection."""
DROPPED = (0, b"", "")
"""What :meth:`FakeBatches.handle` returns for a request to drop (the connection is reset)."""


@dataclass
class FakeBatch:
    """One batch the server holds: its requests (custom id, body) and, once ended, results."""

    batch_id: str
    api: str  # "openai" or "anthropic"
    requests: list[tuple[str, dict[str, Any]]]
    created: float
    metadata: dict[str, Any] = field(default_factory=dict)
    input_file_id: str | None = None
    expire_fraction: float | None = None
    cancel_at: float | None = None
    ended_at: float | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def ended(self) -> bool:
        """Every item has its outcome."""
        return self.ended_at is not None


@dataclass
class FakeBatches:
    """The batch services' state (see the module docstring)."""

    owner: FakeLLMServer
    complete_after: float = 0.0
    supported: bool = True
    hooks: list[Hook] = field(default_factory=list)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._scripted: list[tuple[str, list[str]]] = []
        self._expire_next: list[float] = []
        self._reject_next: list[bool] = []
        self._credentials = ""

    # -- scripting --------------------------------------------------------------------------

    def script_item(self, needle: str, *outcomes: str) -> None:
        """The next items whose request contains ``needle`` get these outcomes, in order."""
        bad = [o for o in outcomes if o not in ITEM_OUTCOMES]
        if bad:
            raise ValueError(f"unknown outcomes {bad}; known: {ITEM_OUTCOMES}")
        with self._lock:
            self._scripted.append((needle, list(outcomes)))

    def expire_next(self, batches: int = 1, *, done_fraction: float = 0.5) -> None:
        """The next ``batches`` created expire with only ``done_fraction`` of their items run."""
        with self._lock:
            self._expire_next.extend([done_fraction] * batches)

    def reject_next(self, batches: int = 1, *, echo: bool = False) -> None:
        """The next ``batches`` OpenAI creates fail as a whole, as an input file OpenAI rejects.

        With ``echo`` the batch's error repeats the credentials sent, as a careless server may.
        """
        with self._lock:
            self._reject_next.extend([echo] * batches)

    def submitted_bodies(self) -> list[str]:
        """Every request body ever submitted in a batch, as canonical JSON (one per item)."""
        with self._lock:
            return [json.dumps(body, sort_keys=True) for b in self.batches.values()
                    for _, body in b.requests]

    # -- HTTP -------------------------------------------------------------------------------

    def handles(self, path: str) -> bool:
        """Whether ``path`` (without the query) is a batch path."""
        return BATCH_PATH.match(path) is not None

    def handle(self, method: str, path: str, query: dict[str, str], headers: Any,
               raw: bytes, base_url: str) -> tuple[int, bytes, str]:
        """Answer one batch request: ``(status, body, content type)``."""
        if not self.supported:
            return _json(404, {"error": {"message": f"no route {path}"}})
        match = BATCH_PATH.match(path)
        assert match is not None
        with self._lock:
            # What "invalid_echo" items repeat, as a careless server may: the credentials sent.
            self._credentials = (f"Authorization: {headers.get('authorization')}; "
                                 f"x-api-key: {headers.get('x-api-key')}")
            if path == "/v1/files" and method == "POST":
                return self._upload(headers, raw)
            if match["file"] and method == "GET":
                self._fire("results", {"file_id": match["file"]})
                data = self.files.get(match["file"])
                if data is None:
                    return _json(404, {"error": {"message": "no such file"}})
                return 200, data, "application/octet-stream"
            if path == "/v1/batches":
                if method == "POST":
                    return self._create_openai(json.loads(raw or b"{}"))
                return self._list("openai", query)
            if path == "/v1/messages/batches":
                if method == "POST":
                    return self._create_anthropic(json.loads(raw or b"{}"), base_url)
                return self._list("anthropic", query)
            batch = self.batches.get(match["ob"] or match["ab"] or "")
            if batch is None:
                return _json(404, {"error": {"type": "not_found_error",
                                             "message": "no such batch"}})
            if (match["ocancel"] or match["arest"] == "/cancel") and method == "POST":
                if not batch.ended and batch.cancel_at is None:
                    batch.cancel_at = time.time()
                return _json(200, self._view(batch, base_url))
            if match["arest"] == "/results":
                self._fire("results", {"batch_id": batch.batch_id})
                self._advance(batch)
                if not batch.ended:
                    return _json(400, {"error": {"type": "invalid_request_error",
                                                 "message": "the batch has not ended"}})
                lines = "".join(json.dumps(r) + "\n" for r in batch.results)
                return 200, lines.encode(), "application/binary"
            self._fire("retrieve", {"batch_id": batch.batch_id})
            self._advance(batch)
            return _json(200, self._view(batch, base_url))

    def _fire(self, event: str, info: dict[str, Any]) -> bool:
        """Run the hooks; True when one returns ``"drop"`` (the request is then lost)."""
        return any([hook(event, info) == "drop" for hook in list(self.hooks)])

    def _upload(self, headers: Any, raw: bytes) -> tuple[int, bytes, str]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"content-type: " + str(headers.get("content-type", "")).encode() + b"\r\n\r\n" + raw)
        fields: dict[str, bytes] = {}
        filename = "upload.jsonl"
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = part.get_payload(decode=True) or b""
            if name == "file":
                filename = str(part.get_filename() or filename)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return _json(400, {"error": {"message": "expected purpose=batch and a file"}})
        file_id = "file-" + uuid.uuid4().hex[:20]
        self.files[file_id] = fields["file"]
        return _json(200, {"id": file_id, "object": "file", "bytes": len(fields["file"]),
                           "created_at": int(time.time()), "filename": filename,
                           "purpose": "batch", "status": "processed"})

    def _create_openai(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        if self._fire("create", {"api": "openai", "body": body}):
            return DROPPED
        data = self.files.get(str(body.get("input_file_id")))
        if data is None:
            return _json(400, {"error": {"message": "input_file_id not found"}})
        requests: list[tuple[str, dict[str, Any]]] = []
        error = None
        for number, line in enumerate(data.decode().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                requests.append((str(entry["custom_id"]), dict(entry["body"])))
                if entry.get("url") != body.get("endpoint"):
                    error = f"line {number}: url does not match the batch endpoint"
            except (ValueError, KeyError, TypeError):
                error = f"line {number}: not a valid batch request line"
        batch = self._new("batch_", "openai", requests, body.get("metadata") or {})
        batch.input_file_id = str(body["input_file_id"])
        if error is None and self._reject_next:
            error = self._message("the input file was rejected",
                                  "invalid_echo" if self._reject_next.pop(0) else "invalid")
        if error is not None:
            batch.error, batch.ended_at = error, batch.created
        if self._fire("created", {"api": "openai", "batch_id": batch.batch_id}):
            return DROPPED  # created, but the reply is lost
        return _json(200, self._view(batch, ""))

    def _create_anthropic(self, body: dict[str, Any], base_url: str) -> tuple[int, bytes, str]:
        if self._fire("create", {"api": "anthropic", "body": body}):
            return DROPPED
        requests = [(str(r["custom_id"]), dict(r["params"])) for r in body.get("requests", [])]
        if not requests or len({c for c, _ in requests}) != len(requests):
            return _json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "custom_id values must be unique"}})
        batch = self._new("msgbatch_", "anthropic", requests, {})
        if self._fire("created", {"api": "anthropic", "batch_id": batch.batch_id}):
            return DROPPED  # created, but the reply is lost
        return _json(200, self._view(batch, base_url))

    def _new(self, prefix: str, api: str, requests: list[tuple[str, dict[str, Any]]],
             metadata: dict[str, Any]) -> FakeBatch:
        batch = FakeBatch(prefix + uuid.uuid4().hex[:20], api, requests, time.time(), metadata)
        if self._expire_next:
            batch.expire_fraction = self._expire_next.pop(0)
        self.batches[batch.batch_id] = batch
        path = OPENAI_CHAT if api == "openai" else ANTHROPIC_MESSAGES
        for _, request in requests:
            self.owner._log_batch_item(path, request)
        return batch

    def _list(self, api: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        newest = sorted((b for b in self.batches.values() if b.api == api),
                        key=lambda b: b.created, reverse=True)
        data = [self._view(b, "") for b in newest]
        return _json(200, {"object": "list", "data": data, "has_more": False,
                           "first_id": data[0]["id"] if data else None,
                           "last_id": data[-1]["id"] if data else None})

    # -- processing -------------------------------------------------------------------------

    def _advance(self, batch: FakeBatch) -> None:
        """End ``batch`` when its time has come (or it was cancelled), computing its results."""
        if batch.ended:
            return
        now = time.time()
        due = batch.created + self.complete_after
        if batch.cancel_at is not None:
            done = min(1.0, (batch.cancel_at - batch.created) / self.complete_after) if (
                self.complete_after) else 1.0
            self._finish(batch, done, "canceled")
        elif now >= due:
            fraction = batch.expire_fraction
            self._finish(batch, 1.0 if fraction is None else fraction,
                         "expired" if fraction is not None else "")

    def _finish(self, batch: FakeBatch, done_fraction: float, rest: str) -> None:
        run = round(len(batch.requests) * done_fraction)
        for index, (custom_id, body) in enumerate(batch.requests):
            outcome = self._outcome(body) if index < run else rest
            batch.results.append(self._result(batch.api, custom_id, body, outcome))
        batch.ended_at = time.time()

    def _outcome(self, body: dict[str, Any]) -> str:
        raw = json.dumps(body, ensure_ascii=False)
        for needle, outcomes in self._scripted:
            if outcomes and needle in raw:
                return outcomes.pop(0)
        return "ok"

    def _message(self, message: str, outcome: str) -> str:
        return f"{message} ({self._credentials})" if outcome == "invalid_echo" else message

    def _result(self, api: str, custom_id: str, body: dict[str, Any],
                outcome: str) -> dict[str, Any]:
        from fake_llm_server import _anthropic_reply, _openai_reply

        owner = self.owner
        if api == "anthropic":
            if outcome in ("expired", "canceled"):
                return {"custom_id": custom_id, "result": {"type": outcome}}
            if outcome in ("500", "529", "invalid", "invalid_echo"):
                kind = {"500": "api_error", "529": "overloaded_error",
                        "invalid": "invalid_request_error",
                        "invalid_echo": "invalid_request_error"}[outcome]
                return {"custom_id": custom_id, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": kind, "message": self._message(
                        f"fake {kind}", outcome)}}}}
            text = owner.responder(ANTHROPIC_MESSAGES, body) if outcome == "ok" else ""
            if outcome == "truncated":
                text = owner.responder(ANTHROPIC_MESSAGES, body)[:12]
            return {"custom_id": custom_id, "result": {
                "type": "succeeded", "message": _anthropic_reply(body, text, outcome)}}
        line: dict[str, Any] = {"id": "batch_req_" + uuid.uuid4().hex[:16],
                                "custom_id": custom_id, "response": None, "error": None}
        if outcome in ("expired", "canceled"):
            code = "batch_expired" if outcome == "expired" else "batch_cancelled"
            line["error"] = {"code": code, "message": f"the request was not run ({code})"}
        elif outcome in ("500", "529", "invalid", "invalid_echo"):
            status = {"500": 500, "529": 503, "invalid": 400, "invalid_echo": 400}[outcome]
            line["response"] = {"status_code": status, "request_id": uuid.uuid4().hex,
                                "body": {"error": {"message": self._message(
                                    f"fake {status}", outcome)}}}
        else:
            text = owner.responder(OPENAI_CHAT, body) if outcome == "ok" else ""
            if outcome == "truncated":
                text = owner.responder(OPENAI_CHAT, body)[:12]
            line["response"] = {"status_code": 200, "request_id": uuid.uuid4().hex,
                                "body": _openai_reply(body, text, outcome)}
        return line

    # -- views ------------------------------------------------------------------------------

    def _view(self, batch: FakeBatch, base_url: str) -> dict[str, Any]:
        if batch.api == "anthropic":
            return self._anthropic_view(batch, base_url)
        return self._openai_view(batch)

    def _anthropic_view(self, batch: FakeBatch, base_url: str) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.ended:
            for result in batch.results:
                counts[result["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch.requests)
        status = "ended" if batch.ended else (
            "canceling" if batch.cancel_at is not None else "in_progress")
        return {
            "id": batch.batch_id, "type": "message_batch", "processing_status": status,
            "request_counts": counts, "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + 86400), "ended_at": _iso(batch.ended_at),
            "cancel_initiated_at": _iso(batch.cancel_at), "archived_at": None,
            "results_url": (f"{base_url}/v1/messages/batches/{batch.batch_id}/results"
                            if batch.ended else None),
        }

    def _openai_view(self, batch: FakeBatch) -> dict[str, Any]:
        ok = [r for r in batch.results if r["response"] and r["response"]["status_code"] == 200]
        failed = [r for r in batch.results if r not in ok]
        if batch.ended and not batch.error:
            output_id = self._file_for(batch, "output", ok)
            error_id = self._file_for(batch, "error", failed)
        else:
            output_id = error_id = None
        expired = any(r["error"] and r["error"]["code"] == "batch_expired"
                      for r in batch.results)
        status = (
            "failed" if batch.error else
            "cancelled" if batch.ended and batch.cancel_at is not None else
            "expired" if expired else "completed" if batch.ended else
            "cancelling" if batch.cancel_at is not None else "in_progress"
        )
        ended = int(batch.ended_at) if batch.ended_at else None
        return {
            "id": batch.batch_id, "object": "batch", "endpoint": OPENAI_CHAT,
            "input_file_id": batch.input_file_id, "completion_window": "24h",
            "status": status, "created_at": int(batch.created),
            "metadata": {k: v for k, v in batch.metadata.items() if not k.startswith("_")},
            "output_file_id": output_id, "error_file_id": error_id,
            "errors": {"object": "list", "data": [
                {"code": "invalid_request", "message": batch.error}]} if batch.error else None,
            "request_counts": {"total": len(batch.requests), "completed": len(ok),
                               "failed": len(failed) if batch.ended else 0},
            "completed_at": ended if status == "completed" else None,
            "expired_at": ended if status == "expired" else None,
            "cancelled_at": ended if status == "cancelled" else None,
            "failed_at": ended if status == "failed" else None,
        }

    def _file_for(self, batch: FakeBatch, kind: str, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        files = batch.metadata.setdefault("_files", {})
        if kind not in files:
            file_id = "file-" + uuid.uuid4().hex[:20]
            self.files[file_id] = "".join(json.dumps(r) + "\n" for r in lines).encode()
            files[kind] = file_id
        return str(files[kind])


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=epoch)).isoformat()


def _json(status: int, payload: Any) -> tuple[int, bytes, str]:
    return status, json.dumps(payload).encode(), "application/json"
