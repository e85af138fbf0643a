"""Read a dcp.jsonc file safely and parse it as JSON with comments (json5)."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from dcp_plugin.config.problems import SKIPPED, Problem
from dcp_plugin.config.syntaxhint import explain_syntax_error

MAX_FILE_BYTES = 1024 * 1024
# json5 is pure Python (about 60 KB/s); above this size only comments and trailing commas
# are accepted, through the fast stdlib parser, so a big file cannot stall a request.
MAX_JSON5_BYTES = 64 * 1024

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_COMMA_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[\]}])', re.DOTALL)
_JSON5_POSITION = re.compile(r"^<string>:(\d+) (.*?)(?: at column (\d+))?$", re.DOTALL)


@dataclass
class Parsed:
    """A file's parsed top-level object, or None when the file must be skipped whole."""

    data: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)


def read_text(path: Path, st: os.stat_result | None = None) -> tuple[str | None, Problem | None]:
    """The file's text, or a problem saying why it cannot be used (never raises OSError)."""
    name = str(path)
    try:
        st = os.stat(path) if st is None else st
        if stat.S_ISDIR(st.st_mode):
            return None, Problem("error", name, f"is a directory, not a file; {SKIPPED}")
        if not stat.S_ISREG(st.st_mode):
            # reading a FIFO or device could block the host forever
            return None, Problem("error", name, f"is not a regular file; {SKIPPED}")
        if st.st_size > MAX_FILE_BYTES:
            return None, _too_big(name, st.st_size)
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, Problem("error", name, f"cannot be read ({exc.strerror or exc}); {SKIPPED}")
    if len(raw) > MAX_FILE_BYTES:
        return None, _too_big(name, len(raw))
    return decode(raw, name)


def _too_big(name: str, size: int) -> Problem:
    return Problem(
        "error",
        name,
        f"is {size:,} bytes, more than the {MAX_FILE_BYTES:,}-byte (1 MiB) limit for config files; {SKIPPED}",
    )


def decode(raw: bytes, name: str) -> tuple[str | None, Problem | None]:
    """UTF-8 text without its byte-order mark (UTF-16 with a BOM is accepted too)."""
    encoding = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if encoding == "utf-8-sig" and raw.startswith(b"\xef\xbb\xbf") else 0)
        line, column = _line_column_bytes(raw, start)
        bad = raw[start : start + 1].hex()
        return None, Problem(
            "error",
            name,
            f"is not valid UTF-8 (byte 0x{bad} here); save it as UTF-8; {SKIPPED}",
            line=line,
            column=column,
        )


def _line_column_bytes(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    return line, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def blank_comments(text: str) -> str:
    """Comments and trailing commas replaced by spaces, so positions in the result are the source's."""
    def comment(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token[0] == '"' else re.sub(r"[^\n]", " ", token)

    def comma(match: re.Match[str]) -> str:
        token = match.group(0)
        if token != ",":
            return token
        before = match.string[: match.start()].rstrip()
        # `[,]` and `{,}` stay invalid, as in JSON5
        return token if before.endswith(("[", "{", ",")) else " "

    return _COMMA_OR_STRING.sub(comma, _COMMENT_OR_STRING.sub(comment, text))


def parse_text(text: str, name: str) -> Parsed:
    """Parse dcp.jsonc text; syntax errors carry line:column and skip the whole file."""
    plain = blank_comments(text)
    if not plain.strip():
        return Parsed(
            {},
            [Problem("warning", name, "is empty or holds only comments; it sets nothing, so other files and the defaults apply")],
        )
    try:
        data = json.loads(plain)
    except RecursionError:
        return Parsed(None, [_too_deep(name)])
    except ValueError as exc:
        data = _parse_json5(text, name, exc)
        if isinstance(data, Problem):
            return Parsed(None, [data])
    if not isinstance(data, dict):
        kind = _json_kind(data)
        return Parsed(None, [Problem("error", name, f"must hold an object {{ ... }} at the top level, found {kind}; {SKIPPED}")])
    return Parsed(data)


def _parse_json5(text: str, name: str, strict_error: ValueError) -> Any:
    if len(text.encode("utf-8")) > MAX_JSON5_BYTES:
        line = getattr(strict_error, "lineno", None)
        column = getattr(strict_error, "colno", None)
        message = getattr(strict_error, "msg", str(strict_error))
        return Problem(
            "error",
            name,
            f"syntax error: {message} (files over 64 KiB may use comments and trailing commas but no other JSON5 syntax); {SKIPPED}",
            line=line,
            column=column,
        )
    try:
        return json5.loads(text)
    except RecursionError:
        return _too_deep(name)
    except Exception as exc:  # json5 raises ValueError, but a parser bug must not escape either
        line, column, message = _json5_position(str(exc))
        message = explain_syntax_error(message, blank_comments(text), line, column)
        return Problem("error", name, f"syntax error: {message}; {SKIPPED}", line=line, column=column)


def _json5_position(message: str) -> tuple[int | None, int | None, str]:
    match = _JSON5_POSITION.match(message)
    if not match:
        return None, None, message
    text = match.group(2).replace('"\n"', '"\\n"')
    if text == "Unexpected end of input":
        text = "unexpected end of file (a missing `}`, `]` or quote?)"
    else:
        text = text[0].lower() + text[1:]
    return int(match.group(1)), int(match.group(3)) if match.group(3) else None, text


def _too_deep(name: str) -> Problem:
    return Problem("error", name, f"is nested too deeply to read; {SKIPPED}")


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
