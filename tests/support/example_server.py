"""A scripted stand-in for the OpenAI Chat Completions and Anthropic Messages APIs on 127.0.0.1, for the examples."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_ANSWER = "The file has some lines."


def tool_results(path: str, body: dict[str, Any]) -> int:
    """How many tool results a request carries: the step of the script it asks for."""
    messages = body.get("messages", [])
    if path.endswith("/chat/completions"):
        return sum(1 for m in messages if m.get("role") == "tool")
    return sum(
        1
        for m in messages
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )


def reply(path: str, step: int, target: str) -> dict[str, Any]:
    """Read ``target``, read it again, then answer: in the API's own response shape."""
    call_id = f"call_{step + 1}"
    arguments = {"filePath": target}
    if path.endswith("/chat/completions"):
        if step < 2:
            call = {"id": call_id, "type": "function", "function": {"name": "read", "arguments": json.dumps(arguments)}}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        else:
            message = {"role": "assistant", "content": FINAL_ANSWER}
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        return {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": message}], "usage": usage}
    if step < 2:
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": call_id, "name": "read", "input": arguments}]
    else:
        content = [{"type": "text", "text": FINAL_ANSWER}]
    return {"id": "msg_1", "type": "message", "role": "assistant", "content": content,
            "stop_reason": "tool_use" if step < 2 else "end_turn", "usage": {"input_tokens": 100, "output_tokens": 10}}


@contextmanager
def serving(target: str) -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """(base URL, the (path, body) of every request received) while the server runs."""
    received: list[tuple[str, dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            received.append((self.path, body))
            if not self.path.endswith(("/chat/completions", "/v1/messages")):
                self.send_error(404)
                return
            data = json.dumps(reply(self.path, tool_results(self.path, body), target)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
