"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 that logs every request."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One scripted step: the model calls `name` with `arguments`."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Text:
    """One scripted step: the model answers with plain text and stops."""

    text: str


Step = ToolCall | Text

TITLE_REPLY = "Scripted test session"


def count_tool_results(body: dict[str, Any]) -> int:
    """How many tool results the request carries: the script position it is asking for."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "tool")


def is_title_request(body: dict[str, Any]) -> bool:
    """OpenCode's title (and other small-model) requests carry no tool definitions."""
    return not body.get("tools")


def step_for(script: list[Step], body: dict[str, Any]) -> Step:
    """The scripted reply for a request; keyed on tool results so retries and title calls don't shift it."""
    if is_title_request(body):
        return Text(TITLE_REPLY)
    index = count_tool_results(body)
    # Past the end of the script the model just keeps saying it is done, so the agent loop stops.
    return script[index] if index < len(script) else Text("Done.")


def messages_prompt_tokens(body: dict[str, Any]) -> int:
    """A rough but deterministic prompt size, so token-aware code sees numbers that grow with the history."""
    return len(json.dumps(body.get("messages", []))) // 4


def whole_prompt_tokens(body: dict[str, Any]) -> int:
    """Like a real provider, the tool definitions count too: everything the model reads, as JSON, 3.5 chars a token.

    Real tokenizers read about 3.1 characters of code or command output per token; its JSON
    (escaped newlines and quotes) is longer, about 3.5 characters per token of the same text.
    """
    return len(json.dumps({"messages": body.get("messages", []), "tools": body.get("tools", [])})) * 2 // 7


PromptTokens = Callable[[dict[str, Any]], int]
# How long a gated reply waits for its condition at most: then it is sent anyway, and the test that
# set the gate fails on what it checks (well within `opencode run`'s own 90 s).
GATE_SECONDS = 60.0


def _usage(body: dict[str, Any], prompt_tokens: PromptTokens = messages_prompt_tokens) -> dict[str, int]:
    prompt = prompt_tokens(body)
    return {"prompt_tokens": prompt, "completion_tokens": 10, "total_tokens": prompt + 10}


def _call_id(body: dict[str, Any]) -> str:
    return f"call_{count_tool_results(body) + 1}"


def completion_message(step: Step, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The assistant message and finish reason of a non-streaming reply."""
    if isinstance(step, Text):
        return {"role": "assistant", "content": step.text}, "stop"
    call = {
        "id": _call_id(body),
        "type": "function",
        "function": {"name": step.name, "arguments": json.dumps(step.arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


def stream_chunks(
    step: Step, body: dict[str, Any], model: str, prompt_tokens: PromptTokens = messages_prompt_tokens
) -> list[dict[str, Any]]:
    """The chat.completion.chunk objects of a streaming reply (without the final [DONE])."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    if isinstance(step, Text):
        chunks = [chunk({"role": "assistant", "content": ""}, None), chunk({"content": step.text}, None)]
        finish = "stop"
    else:
        call = {
            "index": 0,
            "id": _call_id(body),
            "type": "function",
            "function": {"name": step.name, "arguments": json.dumps(step.arguments)},
        }
        chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [call]}, None)]
        finish = "tool_calls"
    last = chunk({}, finish)
    last["usage"] = _usage(body, prompt_tokens)
    return [*chunks, last]


@dataclass
class FakeProvider:
    """Serves a script of replies and records every request body, in arrival order."""

    script: list[Step]
    log_path: Path | None = None
    prompt_tokens: PromptTokens = messages_prompt_tokens
    # Script position -> a condition the reply for that step waits for (e.g. a line the plugin
    # shows): a test waits on what happened, not for a while.
    gates: dict[int, Callable[[], bool]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeProvider is not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(body) + "\n")

    def wait_for_gate(self, body: dict[str, Any]) -> None:
        """Holds the reply to an agent request until its script position's gate holds (if it has one)."""
        gate = None if is_title_request(body) else self.gates.get(count_tool_results(body))
        deadline = time.monotonic() + GATE_SECONDS
        while gate is not None and not gate() and time.monotonic() < deadline:
            time.sleep(0.05)

    def agent_requests(self) -> list[dict[str, Any]]:
        """The requests of the agent loop (with tools), without title requests."""
        with self._lock:
            return [r for r in self.requests if not is_title_request(r)]

    def start(self) -> FakeProvider:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass  # keep test output clean; the request log is the record

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError as exc:
                    self._send_json(400, {"error": {"message": f"request body is not JSON: {exc}"}})
                    return
                provider.record(body)
                provider.wait_for_gate(body)
                step = step_for(provider.script, body)
                model = body.get("model", "fake-model")
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for chunk in stream_chunks(step, body, model, provider.prompt_tokens):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    self.close_connection = True
                    return
                message, finish = completion_message(step, body)
                self._send_json(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": _usage(body, provider.prompt_tokens),
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-provider", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def standard_script(project: Path) -> list[Step]:
    """The issue's scenario: read hello.txt twice, write then read a file, fail a read, then answer."""
    hello = str(project / "hello.txt")
    notes = str(project / "notes.txt")
    missing = str(project / "missing.txt")
    return [
        ToolCall("read", {"filePath": hello}),
        ToolCall("read", {"filePath": hello}),
        ToolCall("write", {"filePath": notes, "content": "notes written by the agent\nWRITTEN-CONTENT-5678\n"}),
        ToolCall("read", {"filePath": notes}),
        ToolCall("read", {"filePath": missing}),
        Text("All done: read hello.txt twice, wrote and read notes.txt, missing.txt does not exist."),
    ]
