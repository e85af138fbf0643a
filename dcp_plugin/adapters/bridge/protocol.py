"""The bridge's wire format: request parsing and validation, reply and event lines.

The format itself is specified in ``PROTOCOL.md`` beside this module (the one specification
both this side and the JS shim ``dcp_bridge.mjs`` follow); this module implements the Python end.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

OPS = frozenset({"startup", "transform", "command", "tools", "tool", "close", "ping"})
RESYNC = "resync"


class ProtocolError(Exception):
    """A request that cannot be served as sent; the message says what is wrong with it."""


@dataclass(slots=True)
class Delta:
    """The messages part of a transform (or command) request: the session's list from ``base`` on."""

    reset: bool
    base: int
    messages: list[Any]
    first_id: str | None
    last_id: str | None
    total: int


def dumps(value: Any) -> str:
    """Compact JSON on one line; ASCII escapes keep lone surrogates from JS strings encodable."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def parse_line(line: bytes | str) -> dict[str, Any]:
    """The request object of one line; ProtocolError if it is not a JSON object."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"request is not UTF-8: {exc}") from None
    try:
        request = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError(f"request is not valid JSON: {exc}") from None
    except ValueError:
        # Python refuses to convert integers of more than 4,300 digits (CVE-2020-10735).
        raise ProtocolError(f"request holds a number too long to read (over {sys.get_int_max_str_digits():,} digits)") from None
    if not isinstance(request, dict):
        raise ProtocolError(f"request must be a JSON object, got {type(request).__name__}")
    return request


def request_id(request: dict[str, Any]) -> int | str | None:
    """The id to echo: an int or a string, else None (the reply then cannot be matched)."""
    value = request.get("id")
    if isinstance(value, bool):
        return None
    return value if isinstance(value, (int, str)) else None


def op_of(request: dict[str, Any]) -> str:
    op = request.get("op")
    if not isinstance(op, str):
        raise ProtocolError('request has no "op" string')
    if op not in OPS:
        raise ProtocolError(f'unknown op "{op}" (expected one of: {", ".join(sorted(OPS))})')
    return op


def session_of(request: dict[str, Any]) -> str:
    sid = request.get("sessionID")
    if not isinstance(sid, str) or not sid:
        raise ProtocolError('"sessionID" must be a non-empty string')
    return sid


def has_delta(request: dict[str, Any]) -> bool:
    """Whether the request carries messages (commands do only for sessions not synced yet)."""
    return "messages" in request


def _int(request: dict[str, Any], key: str, default: int | None = None) -> int:
    value = request.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(f'"{key}" must be a non-negative integer, got {value!r}')
    return value


def _optional_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ProtocolError(f"{where} must be a string or null, got {type(value).__name__}")


def delta_of(request: dict[str, Any]) -> Delta:
    """The validated delta of a request; ProtocolError names the field that is wrong."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        raise ProtocolError(f'"messages" must be a list, got {type(messages).__name__}')
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            # Skipped like any malformed field (held as a message with no parts, so indexes stay);
            # an error here would make every later request of the session go out unpruned.
            messages[i] = {"parts": []}
        elif not isinstance(message.get("parts", []), list):
            raise ProtocolError(f'"messages"[{i}] must be an object {{info, parts}} with a "parts" list')
    reset = request.get("reset", False)
    if not isinstance(reset, bool):
        raise ProtocolError(f'"reset" must be true or false, got {reset!r}')
    base = 0 if reset else _int(request, "base", 0)
    fingerprint = request.get("fingerprint")
    fingerprint = {} if fingerprint is None else fingerprint
    if not isinstance(fingerprint, dict):
        raise ProtocolError(f'"fingerprint" must be an object, got {type(fingerprint).__name__}')
    total = _int(request, "total", base + len(messages))
    return Delta(
        reset=reset,
        base=base,
        messages=messages,
        first_id=_optional_str(fingerprint.get("firstID"), '"fingerprint.firstID"'),
        last_id=_optional_str(fingerprint.get("lastID"), '"fingerprint.lastID"'),
        total=total,
    )


def ok_line(rid: int | str | None, **fields: Any) -> str:
    return dumps({"id": rid, "ok": True, **fields})


def error_line(rid: int | str | None, error: str) -> str:
    return dumps({"id": rid, "ok": False, "error": error})


def patches_line(rid: int | str | None, fragments: list[str], incremental: bool = False, token: str | None = None) -> str:
    """A transform reply from patches already serialized one by one (they are cached per session)."""
    tail = ',"incremental":true' if incremental else ""
    if token is not None:
        tail += f',"patchToken":{dumps(token)}'
    return f'{{"id":{dumps(rid)},"ok":true,"patches":[{",".join(fragments)}]{tail}}}'


def patch_fragment(wire: dict[str, Any]) -> str:
    """One patch (as built by ``wire.to_wire``) as JSON."""
    return dumps(wire)


def event_line(event: str, **fields: Any) -> str:
    return dumps({"event": event, **fields})
