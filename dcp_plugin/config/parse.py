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

from dcp_plugin.config.duplicates import DuplicateKeys
from dcp_plugin.config.problems import UNUSABLE, Problem
from dcp_plugin.config.syntaxhint import explain_syntax_error

MAX_FILE_BYTES = 1024 * 1024
EMPTY = "is empty or holds only comments (a save in progress?); write `{}` in it to set nothing on purpose"
# json5 is pure Python: about 0.3 ms per value (a 16 KB list of numbers took 4.7 s) and 12 µs
# per byte of comment. Beyond these sizes only comments and trailing commas are accepted, through
# the fast stdlib parser, so no file stalls a request for long: at worst about 0.2 s of comments
# plus 0.3 s of values. The generated global file has 16.6 KB, all of it comments but its `$schema`
# line: values uncommented in it may use comments and trailing commas, not other JSON5 syntax.
MAX_JSON5_BYTES = 16 * 1024
MAX_JSON5_CHARS = 2048
# Python refuses to turn longer digit strings into an int (CVE-2020-10735); such a number is
# kept as a marker, so only its key is dropped and the rest of the file still applies.
MAX_INT_DIGITS = 4300

# Possessive (`*+`) so that an unterminated string or comment is consumed once to the end of the
# file, not rescanned from every later quote or `/*` (that was quadratic: 20,000 `/*` took 18 s).
# JSON5's single-quoted strings are strings too: `'secrets/**'` holds no comment.
# A `//` comment ends at any JSON5 line terminator (LF, CR, U+2028, U+2029): a file saved with CR
# line ends was one comment to its end before. U+2028/U+2029 outside strings are JSON5 white
# space, blanked here too, so the fast stdlib parser reads such a file.
_COMMENT_OR_STRING = re.compile(
    r'"(?:[^"\\]++|\\.)*+"?|\'(?:[^\'\\]++|\\.)*+\'?|//[^\n\r\u2028\u2029]*+|/\*(?:[^*]++|\*(?!/))*+(?:\*/)?'
    r"|[\u2028\u2029]",
    re.DOTALL,
)
_COMMA_OR_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?|\'(?:[^\'\\]++|\\.)*+\'?|,(?=\s*+[\]}])', re.DOTALL)
_NOT_NEWLINE = re.compile(r"[^\n]")
_SPACES = re.compile(r"\s+")
_CONTROL_CHAR = re.compile('"([\x00-\x1f\x7f])"')
_JSON5_POSITION = re.compile(r"^<string>:(\d+) (.*?)(?: at column (\d+))?$", re.DOTALL)


@dataclass
class Parsed:
    """A file's parsed top-level object, or None when the file must be skipped whole."""

    data: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)


def read_text(path: Path, st: os.stat_result | None = None) -> tuple[str | None, Problem | None]:
    """The file's text, or a problem saying why it cannot be used (never raises OSError, never blocks).

    Only a regular file is read, through a descriptor opened without blocking and checked with
    fstat, so a FIFO or device (or a symlink to one, swapped in after the first stat) is refused
    instead of hanging the host. A file that reports no size is not read at all: an empty file
    holds nothing, and special files such as /proc/kmsg look empty and block when read.
    """
    name = str(path)
    try:
        st = os.stat(path) if st is None else st
        problem = _not_readable(name, st)
        if problem is not None:
            return None, problem
        fd = open_file(path)
        try:
            st = os.fstat(fd)
            problem = _not_readable(name, st)
            if problem is not None:
                return None, problem
            raw = _read_bounded(fd) if st.st_size else b""
        finally:
            os.close(fd)
    except OSError as exc:
        return None, Problem("error", name, f"{_unreadable(path, exc)}; {UNUSABLE}")
    if len(raw) > MAX_FILE_BYTES:
        return None, _too_big(name, len(raw))
    return decode(raw, name)


def _unreadable(path: Path, exc: OSError) -> str:
    """Why a file cannot be read, naming a symlink's missing target (the usual way to get ENOENT here)."""
    if isinstance(exc, FileNotFoundError) and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"is a symbolic link to {target}, which does not exist"
    return f"cannot be read ({exc.strerror or exc})"


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)


def open_file(path: Path) -> int:
    """A read-only descriptor; opening a FIFO or a terminal this way never waits."""
    return os.open(path, os.O_RDONLY | _NONBLOCK | _NOCTTY)


def _not_readable(name: str, st: os.stat_result) -> Problem | None:
    if stat.S_ISDIR(st.st_mode):
        return Problem("error", name, f"is a directory, not a file; {UNUSABLE}")
    if not stat.S_ISREG(st.st_mode):
        # reading a FIFO or device could block the host forever
        return Problem("error", name, f"is not a regular file; {UNUSABLE}")
    if st.st_size > MAX_FILE_BYTES:
        return _too_big(name, st.st_size)
    return None


def _read_bounded(fd: int) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes (one more tells a file that grew past the limit)."""
    chunks: list[bytes] = []
    left = MAX_FILE_BYTES + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_big(name: str, size: int) -> Problem:
    return Problem(
        "error",
        name,
        f"is {size:,} bytes, more than the {MAX_FILE_BYTES:,}-byte (1 MiB) limit for config files; {UNUSABLE}",
    )


def decode(raw: bytes, name: str) -> tuple[str | None, Problem | None]:
    """UTF-8 text without its byte-order mark (UTF-16 with a BOM is accepted too)."""
    encoding = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    if encoding != "utf-16" and b"\x00" in raw:
        return None, _nul_problem(raw, name)
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if encoding == "utf-8-sig" and raw.startswith(b"\xef\xbb\xbf") else 0)
        line, column = _line_column_bytes(raw, start)
        bad = raw[start : start + 1].hex()
        return None, Problem(
            "error",
            name,
            f"is not valid UTF-8 (byte 0x{bad} here); save it as UTF-8; {UNUSABLE}",
            line=line,
            column=column,
        )


def _nul_problem(raw: bytes, name: str) -> Problem:
    """NUL bytes: almost always UTF-16 or UTF-32 saved without a byte-order mark."""
    offset = raw.index(b"\x00")
    line, column = _line_column_bytes(raw, offset)
    if raw.count(b"\x00") * 3 >= len(raw):
        text = "contains NUL bytes: it looks like UTF-16 saved without a byte-order mark; save it as UTF-8"
    else:
        text = "contains a NUL byte (a config file is text); remove it, or save the file as UTF-8 if it is UTF-16"
    return Problem("error", name, f"{text}; {UNUSABLE}", line=line, column=column)


def _line_column_bytes(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    return line, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def blank_comments(text: str) -> str:
    """Comments and trailing commas replaced by spaces, so positions in the result are the source's.

    One pass each, linear in the text's length, however many comments or quotes are unterminated.
    """
    def comment(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token[0] in "\"'" else _NOT_NEWLINE.sub(" ", token)

    def comma(match: re.Match[str]) -> str:
        token = match.group(0)
        if token != ",":
            return token
        source, i = match.string, match.start() - 1
        while i >= 0 and source[i].isspace():  # each run of spaces is walked for one comma only
            i -= 1
        # `[,]` and `{,}` stay invalid, as in JSON5
        return token if i >= 0 and source[i] in "[{," else " "

    return _COMMA_OR_STRING.sub(comma, _COMMENT_OR_STRING.sub(comment, text))


def unclosed_comment(text: str) -> int | None:
    """Offset of a `/*` comment that is never closed, if any (strings are skipped)."""
    for match in _COMMENT_OR_STRING.finditer(text):
        token = match.group(0)
        if token.startswith("/*") and (len(token) < 4 or not token.endswith("*/")):
            return match.start()
    return None


class HugeNumber:
    """A whole number too long to convert (over MAX_INT_DIGITS digits); the schema rejects it."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<a number with {len(self.digits.lstrip('-')):,} digits>"


def _parse_int(digits: str) -> int | HugeNumber:
    # json5 never sees such a number: it only reads files with few characters (MAX_JSON5_CHARS)
    return int(digits) if len(digits) <= MAX_INT_DIGITS else HugeNumber(digits)


def parse_text(text: str, name: str) -> Parsed:
    """Parse dcp.jsonc text; syntax errors carry line:column and skip the whole file."""
    repeats = DuplicateKeys()
    strict = _strict_json(text, repeats)
    if isinstance(strict, dict):
        return Parsed(strict, repeats.problems(name))  # plain JSON needs no blanking (a Python call per string)
    repeats.keys.clear()
    plain = blank_comments(text)
    if not plain.strip():
        # Most often a save in progress (an editor that truncates, then writes): using it as "sets
        # nothing" would unprotect every protected file for a request. `{}` sets nothing on purpose.
        return Parsed(None, [Problem("warning", name, f"{EMPTY}; {UNUSABLE}")])
    try:
        data = json.loads(plain, parse_int=_parse_int, object_pairs_hook=repeats)
    except RecursionError:
        return Parsed(None, [_too_deep(name)])
    except ValueError as exc:
        repeats.keys.clear()
        data = _parse_json5(text, plain, name, exc, repeats)
        if isinstance(data, Problem):
            return Parsed(None, [data])
    if not isinstance(data, dict):
        kind = _json_kind(data)
        return Parsed(None, [Problem("error", name, f"must hold an object {{ ... }} at the top level, found {kind}; {UNUSABLE}")])
    return Parsed(data, repeats.problems(name))


def _strict_json(text: str, repeats: DuplicateKeys) -> Any:
    """The text as strict JSON, or None when it is not (or is nested too deeply)."""
    try:
        return json.loads(text, parse_int=_parse_int, object_pairs_hook=repeats)
    except (ValueError, RecursionError):
        return None


def _parse_json5(text: str, plain: str, name: str, strict_error: ValueError, repeats: DuplicateKeys) -> Any:
    if len(text) > MAX_JSON5_BYTES or len(_SPACES.sub("", plain)) > MAX_JSON5_CHARS:
        unclosed = unclosed_comment(text)
        if unclosed is not None:
            at_line, at_column = line_column(text, unclosed)
            text_ = f"syntax error: this `/*` comment is never closed (add `*/`); {UNUSABLE}"
            return Problem("error", name, text_, line=at_line, column=at_column)
        line = getattr(strict_error, "lineno", None)
        column = getattr(strict_error, "colno", None)
        message = getattr(strict_error, "msg", str(strict_error))
        return Problem(
            "error",
            name,
            f"syntax error: {message} (a file over {MAX_JSON5_BYTES // 1024} KiB, or with more than {MAX_JSON5_CHARS:,} "
            f"characters outside comments, may use comments and trailing commas but no other JSON5 syntax); {UNUSABLE}",
            line=line,
            column=column,
        )
    try:
        return json5.loads(text, object_pairs_hook=repeats)
    except RecursionError:
        return _too_deep(name)
    except Exception as exc:  # noqa: BLE001 - json5 raises ValueError, but a parser bug must not escape either
        line, column, message = _json5_position(str(exc))
        message = explain_syntax_error(message, blank_comments(text), line, column)
        return Problem("error", name, f"syntax error: {message}; {UNUSABLE}", line=line, column=column)


def _json5_position(message: str) -> tuple[int | None, int | None, str]:
    match = _JSON5_POSITION.match(message)
    if not match:
        return None, None, message
    text = _CONTROL_CHAR.sub(_name_control, match.group(2))
    if text == "Unexpected end of input":
        text = "unexpected end of file (a missing `}`, `]` or quote?)"
    else:
        text = text[0].lower() + text[1:]
    return int(match.group(1)), int(match.group(3)) if match.group(3) else None, text


def _name_control(match: re.Match[str]) -> str:
    # json5 quotes the offending character raw: a tab or an escape would print as blank or worse
    if match.group(1) == "\n":
        return "line break"
    return f"control character U+{ord(match.group(1)):04X} (invisible; delete it)"


def _too_deep(name: str) -> Problem:
    return Problem("error", name, f"is nested too deeply to read; {UNUSABLE}")


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
