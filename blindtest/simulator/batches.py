"""The simulator's Batch API: ``POST /v1/files`` (purpose ``batch``), ``GET
/v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET
/v1/batches``, in OpenAI's shapes, so a submit-and-collect cycle runs offline.

A batch is ``in_progress`` for ``batch_delay`` seconds after it is created, then every request
in its input file is answered at once, each as ``POST /v1/chat/completions`` would answer it
with no fault (same text and usage for the same body). ``batch_fail_every`` N: every Nth
request fails with a 500 in the error file. ``batch_expire_next`` K: the next K batches expire
with only the first half of their requests done (the rest in the error file as
``batch_expired``). ``created`` counts batches created since the last reset
(``Simulator.batches_created``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from blindtest.simulator.faults import error_body

#: Answer one chat body: (completion bytes, whether it counts as an answer) or an error
#: (status, message).
Answer = Callable[[dict[str, Any]], "tuple[int, bytes]"]


_EXPIRED = "This request could not be executed before the completion window expired."


@dataclass(slots=True)
class _Batch:
    id: str
    input_file_id: str
    created_at: float
    total: int
    metadata: dict[str, Any]
    expire: bool
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0

    def document(self, delay: float, now: float) -> dict[str, Any]:
        done = self.completed + self.failed
        if self.status == "in_progress" and delay > 0:
            done = min(self.total, int(self.total * (now - self.created_at) / delay))
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": int(self.created_at),
            "request_counts": {
                "total": self.total,
                "completed": self.completed if self.status != "in_progress" else done,
                "failed": self.failed,
            },
            "metadata": self.metadata or None,
        }


@dataclass(slots=True)
class BatchStore:
    """Files and batches held in memory by one simulator."""

    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, _Batch] = field(default_factory=dict)
    created: int = 0
    _counter: int = 0

    def _id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}-sim{self._counter:06d}"

    def reset(self) -> None:
        self.files.clear()
        self.batches.clear()
        self.created = 0

    # handlers --------------------------------------------------------------------------

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if purpose != "batch" or not isinstance(upload, web.FileField):
            return _error(400, "Upload a 'file' with purpose 'batch'.")
        data = upload.file.read()
        file_id = self._id("file")
        self.files[file_id] = data
        return _ok(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": upload.filename,
                "purpose": "batch",
            }
        )

    async def content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["file_id"])
        if data is None:
            return _error(404, f"No such File object: {request.match_info['file_id']}")
        return web.Response(body=data, content_type="application/octet-stream")

    def create(self, body: Any, expire: bool) -> web.Response:
        if not isinstance(body, dict) or body.get("input_file_id") not in self.files:
            return _error(400, "input_file_id must name an uploaded batch file.")
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return _error(400, "endpoint must be /v1/chat/completions, completion_window 24h.")
        lines = [line for line in self.files[body["input_file_id"]].splitlines() if line.strip()]
        batch = _Batch(
            self._id("batch"),
            body["input_file_id"],
            time.time(),
            len(lines),
            dict(body.get("metadata") or {}),
            expire,
        )
        self.batches[batch.id] = batch
        self.created += 1
        return _ok(batch.document(0.0, batch.created_at))

    def retrieve(
        self, batch_id: str, delay: float, fail_every: int | None, answer: Answer
    ) -> web.Response:
        batch = self.batches.get(batch_id)
        if batch is None:
            return _error(404, f"No such Batch object: {batch_id}")
        now = time.time()
        if batch.status == "in_progress" and now >= batch.created_at + delay:
            self._process(batch, fail_every, answer)
        return _ok(batch.document(delay, now))

    def recent(self, delay: float) -> web.Response:
        now = time.time()
        data = [b.document(delay, now) for b in reversed(self.batches.values())]
        return _ok({"object": "list", "data": data, "has_more": False})

    def _process(self, batch: _Batch, fail_every: int | None, answer: Answer) -> None:
        lines = [line for line in self.files[batch.input_file_id].splitlines() if line.strip()]
        keep = len(lines) // 2 if batch.expire else len(lines)
        output: list[bytes] = []
        errors: list[bytes] = []
        for index, raw in enumerate(lines):
            request = orjson.loads(raw)
            head = {"id": f"batch_req_sim{index:06d}", "custom_id": request.get("custom_id")}
            if index >= keep:
                error = {
                    "code": "batch_expired",
                    "message": _EXPIRED,
                }
                errors.append(orjson.dumps({**head, "response": None, "error": error}))
                batch.failed += 1
                continue
            if fail_every and (index + 1) % fail_every == 0:
                status, payload = (
                    500,
                    error_body(500, "The server had an error processing your request."),
                )
            else:
                status, payload = answer(request.get("body"))
            response = {
                "status_code": status,
                "request_id": f"req_sim{index:06d}",
                "body": orjson.loads(payload),
            }
            line = orjson.dumps({**head, "response": response, "error": None})
            if 200 <= status < 300:
                output.append(line)
                batch.completed += 1
            else:
                errors.append(line)
                batch.failed += 1
        if output:
            batch.output_file_id = self._id("file")
            self.files[batch.output_file_id] = b"\n".join(output) + b"\n"
        if errors:
            batch.error_file_id = self._id("file")
            self.files[batch.error_file_id] = b"\n".join(errors) + b"\n"
        batch.status = "expired" if batch.expire else "completed"


def _ok(document: dict[str, Any]) -> web.Response:
    return web.Response(body=orjson.dumps(document), content_type="application/json")


def _error(status: int, message: str) -> web.Response:
    return web.Response(
        body=error_body(status, message), status=status, content_type="application/json"
    )
