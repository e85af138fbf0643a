"""Builders of bridge requests and an in-process bridge server that records its output lines."""

from __future__ import annotations

import json
from typing import Any

from dcp_plugin.adapters.bridge.server import BridgeServer
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.model.messages import session_id_of
from tests.support.helpers import PROJECT, make_config


def fingerprint(held: list[dict[str, Any]], base: int) -> dict[str, Any]:
    return {
        "count": base,
        "firstID": held[0]["info"]["id"] if base else None,
        "lastID": held[base - 1]["info"]["id"] if base else None,
    }


def transform_request(rid: int, session: str, messages: list[dict[str, Any]], base: int = 0, reset: bool | None = None) -> dict[str, Any]:
    """What the shim sends for ``messages`` (the full list) when the child holds ``messages[:base]``."""
    return {
        "id": rid,
        "op": "transform",
        "sessionID": session,
        "reset": base == 0 if reset is None else reset,
        "base": base,
        "messages": messages[base:],
        "fingerprint": fingerprint(messages, base),
        "total": len(messages),
        "model": None,
    }


class Harness:
    """A BridgeServer fed request dicts; replies by id, events in order."""

    def __init__(self, runtime: Runtime | None = None, config: DcpConfig | None = None, **kw: Any) -> None:
        self.lines: list[str] = []
        self.runtime = runtime if runtime is not None else Runtime(PROJECT, StaticConfig(config or make_config()))
        self.server = BridgeServer(self.lines.append, self.runtime, **kw)
        self._next_id = 1

    def send_raw(self, line: str | bytes) -> dict[str, Any]:
        start = len(self.lines)
        self.server.handle_line(line)
        out = [json.loads(line) for line in self.lines[start:]]
        replies = [o for o in out if "event" not in o]
        assert len(replies) == 1, out
        return replies[0]

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.send_raw(json.dumps(request))

    def rid(self) -> int:
        self._next_id += 1
        return self._next_id

    def transform(self, session: str, messages: list[dict[str, Any]], base: int = 0, **kw: Any) -> dict[str, Any]:
        return self.send(transform_request(self.rid(), session, messages, base, **kw))

    def events(self) -> list[dict[str, Any]]:
        return [o for o in map(json.loads, self.lines) if "event" in o]


def patched_parts(reply: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """(partID, field) -> value of a transform reply."""
    return {(p["partID"], p["field"]): p["value"] for p in reply["patches"]}


def reference_patches(messages: list[dict[str, Any]], config: DcpConfig | None = None) -> dict[tuple[str, str], Any]:
    """What a fresh runtime decides on the whole list: the from-scratch answer."""
    from dcp_plugin.adapters.bridge.wire import to_wire

    runtime = Runtime(PROJECT, StaticConfig(config or make_config()))
    outgoing = runtime.prepare(session_id_of(None, messages), messages)
    assert outgoing is not None
    return {(w["partID"], w["field"]): w["value"] for w in to_wire(messages, outgoing.patches.decisions)}
