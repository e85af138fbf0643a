"""Other agents' sessions for `dcp replay`: Claude Code, Codex CLI, and plain provider requests.

:func:`load_foreign` is called by :func:`~dcp_plugin.replay.sessionfile.load_session` for any
file that is not an OpenCode export; it detects the format from the content (never from the
file name) and returns OpenCode-shaped messages carrying timestamps, model ids and the
provider-reported usage, or raises :class:`~dcp_plugin.replay.file_error.SessionFileError`
naming the line that is none of the formats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.importers import claude_code, codex, requests
from dcp_plugin.replay.importers.records import Record, json_lines

KNOWN = (
    "an `opencode export` JSON, a bare OpenCode messages array, a Claude Code session (.jsonl), a Codex rollout"
    " (.jsonl), or OpenAI Chat, OpenAI Responses or Anthropic messages or requests (JSON, or one request per line)"
)
Loaded = tuple[dict[str, Any], list[dict[str, Any]]]


def load_foreign(text: str, data: Any, where: str) -> Loaded:
    """(info, messages) of a file that is not an OpenCode export; ``data`` is its JSON, or None for JSON lines."""
    if data is None:
        loaded = _from_lines(json_lines(text, where), where)
    elif isinstance(data, dict) and not requests.is_request(data):
        loaded = _from_lines([(1, data)], where)
    else:
        try:
            loaded = requests.build(data, where, Path(where).stem)
        except requests.UnknownItem as exc:
            if not isinstance(data, list) or requests.is_request(data[0]):
                raise
            line = element_line(text, exc.index)
            raise SessionFileError(f"{where}:{line or '?'}: item {exc.index} is {requests.NOT_A_MESSAGE}") from None
    if not loaded[1]:
        raise SessionFileError(f"{where}: the session has no messages")
    return loaded


def _from_lines(records: list[Record], where: str) -> Loaded:
    if not records:
        raise SessionFileError(f"{where}: the file is empty; expected {KNOWN}")
    number, first = records[0]
    for recognizes, accepts, what, build in (
        (codex.recognizes, codex.accepts, codex.WHAT, codex.build),
        (claude_code.recognizes, claude_code.accepts, claude_code.WHAT, claude_code.build),
    ):
        if recognizes(first):
            for line, record in records:
                if not accepts(record):
                    raise SessionFileError(f"{where}:{line}: expected {what}")
            return build(records, where)
    if requests.is_request(first):
        for line, record in records:
            if not requests.is_request(record):
                raise SessionFileError(f"{where}:{line}: expected a request with `messages` or `input`, like line {number}")
        return requests.build([r for _, r in records], where, Path(where).stem)
    raise SessionFileError(f"{where}:{number}: not a session format dcp knows; expected {KNOWN}")


def element_line(text: str, index: int) -> int | None:
    """The line a top-level JSON array's element starts on (for error messages); None when not found."""
    decoder = json.JSONDecoder()
    position = text.find("[")
    if position < 0:
        return None
    position += 1
    for current in range(index + 1):
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if current == index:
            return text.count("\n", 0, position) + 1
        try:
            _, position = decoder.raw_decode(text, position)
        except ValueError:
            return None
    return None
