"""Reading recorded sessions (an `opencode export` JSON, a bare messages array, or another agent's session), with clear errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dcp_plugin.model.jsontext import NumberTooLong, loads
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.importers import load_foreign

STDIN = "-"


def load_session(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(session info, messages) from a file, or standard input for `-`; raises SessionFileError saying what is wrong."""
    if str(path) == STDIN:
        return _load_stdin()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SessionFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SessionFileError(f"{path}: is a directory, expected a session JSON file") from None
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_session_text(text, str(path))


def _load_stdin() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    where = "standard input"
    if sys.stdin is None or sys.stdin.isatty():
        raise SessionFileError(f"{where}: nothing piped in (e.g. `dcp replay - < session.json`)")
    raw = sys.stdin.buffer.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise SessionFileError(f"{where}: empty; expected a session JSON document")
    try:
        return parse_session_text(text, where)
    except SessionFileError as exc:
        if _ends_mid_document(text):
            raise SessionFileError(f"{exc}; {CUT_SHORT_HINT}") from None
        raise


# OpenCode 1.18's `export` stops early when its stdout is a pipe, which looks exactly like this.
CUT_SHORT_HINT = (
    "the input ends mid-document, as `opencode export` leaves it when piped: write it to a file "
    "(`opencode export SESSION_ID > session.json`) and pass the file, or run `dcp opencode context SESSION_ID`"
)


def _ends_mid_document(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        # A cut inside a string is reported where the string starts, any other cut at the very end.
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
    except RecursionError:
        return False
    return False


def parse_session_text(text: str, where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(info, messages) from a session's text in any supported format; SessionFileError names the line."""
    try:
        data = loads(text)
    except NumberTooLong as exc:
        raise SessionFileError(f"{where}:{exc.line}:{exc.column}: {exc}; no session holds one") from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # one JSON value per line: Claude Code, Codex, request logs
            return load_foreign(text, None, where)
        raise SessionFileError(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise SessionFileError(f"{where}: JSON nested too deeply") from None
    if not is_opencode(data):
        return load_foreign(text, data, where)
    return parse_session(data, where)


def is_opencode(data: Any) -> bool:
    """Whether parsed JSON claims to be OpenCode's (an export, or messages with ``info``/``parts``), rather than another format's."""
    if isinstance(data, dict):
        messages = data.get("messages")
        if "info" in data or (isinstance(messages, list) and (not messages or _opencode_item(messages[0]))):
            return True
        return not (isinstance(messages, list) or isinstance(data.get("input"), list) or isinstance(data.get("type"), str))
    if isinstance(data, list):
        return not data or _opencode_item(data[0])
    return True  # anything else gets parse_session's own message


def _opencode_item(message: Any) -> bool:
    return not isinstance(message, dict) or "info" in message or "parts" in message


def parse_session(data: Any, where: str = "session") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(info, messages) from already-parsed JSON; raises SessionFileError on a wrong shape."""
    info: dict[str, Any] = {}
    if isinstance(data, dict):
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise SessionFileError(
                f"{where}: expected an `opencode export` object with a `messages` array, or a bare array of messages"
            )
        raw_info = data.get("info")
        info = raw_info if isinstance(raw_info, dict) else {}
    elif isinstance(data, list):
        messages = data
    else:
        raise SessionFileError(f"{where}: top level is {type(data).__name__}, expected an object or an array")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise SessionFileError(f"{where}: messages[{index}] is {type(message).__name__}, expected an object")
        if not isinstance(message.get("info"), dict):
            raise SessionFileError(f"{where}: messages[{index}] has no `info` object")
        if not isinstance(message.get("parts"), list):
            raise SessionFileError(f"{where}: messages[{index}] has no `parts` array")
        for pindex, part in enumerate(message["parts"]):
            if not isinstance(part, dict):
                raise SessionFileError(f"{where}: messages[{index}].parts[{pindex}] is not an object")
    return info, messages


def example_session_path() -> Path:
    """The example session shipped inside the package."""
    from importlib.resources import files

    return Path(str(files("dcp_plugin") / "data" / "example_session.json"))
