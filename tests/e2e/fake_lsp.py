"""A tiny language server for the e2e tests: every line holding `ERROR-HERE` is an error.

JSON-RPC over stdio with `Content-Length` framing, as the Language Server Protocol has it.
It answers `initialize` (full document sync, push diagnostics only) and `shutdown`, and after
each `didOpen`, `didChange` or `didSave` publishes the document's diagnostics, an empty list
when it has none, so the client knows the file is clean. OpenCode starts it as a custom server
configured in opencode.json (`"lsp": {"fake": {"command": [...], "extensions": [".py"]}}`).
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

MARKER = "ERROR-HERE"


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message, or None at the end of the input."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    message: dict[str, Any] = json.loads(stream.read(length).decode("utf-8"))
    return message


def send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def diagnostics(text: str) -> list[dict[str, Any]]:
    """One error per marked line, where the marker starts."""
    found = []
    for number, line in enumerate(text.split("\n")):
        column = line.find(MARKER)
        if column >= 0:
            where = {"line": number, "character": column}
            found.append(
                {
                    "range": {"start": where, "end": {"line": number, "character": column + len(MARKER)}},
                    "severity": 1,
                    "source": "fake-lsp",
                    "message": f"marked line {number + 1} is an error",
                }
            )
    return found


def main() -> int:
    documents: dict[str, str] = {}
    while True:
        message = read_message(sys.stdin.buffer)
        if message is None:
            return 0
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            send(
                {
                    "id": message["id"],
                    "result": {"capabilities": {"textDocumentSync": 1}, "serverInfo": {"name": "fake-lsp"}},
                }
            )
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return 0
        elif method in ("textDocument/didOpen", "textDocument/didChange", "textDocument/didSave"):
            document = params.get("textDocument") or {}
            uri = document.get("uri", "")
            if method == "textDocument/didOpen":
                documents[uri] = document.get("text", "")
            elif method == "textDocument/didChange":
                for change in params.get("contentChanges") or []:
                    documents[uri] = change.get("text", documents.get(uri, ""))
            elif isinstance(params.get("text"), str):
                documents[uri] = params["text"]
            send(
                {
                    "method": "textDocument/publishDiagnostics",
                    "params": {"uri": uri, "diagnostics": diagnostics(documents.get(uri, ""))},
                }
            )
        elif "id" in message and method is not None:
            send({"id": message["id"], "result": None})  # any other request: an empty answer


if __name__ == "__main__":
    raise SystemExit(main())
