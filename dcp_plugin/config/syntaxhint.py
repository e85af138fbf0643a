"""Turn a parser's terse syntax message into one that says what is probably missing."""

from __future__ import annotations

import re

_UNEXPECTED = re.compile(r'^unexpected "(.)"$', re.DOTALL)
_VALUE_STARTS = frozenset('"\'-0123456789tfnNI{[')
_VALUE_ENDS = frozenset("\"'0123456789el}]yN")  # strings, numbers, true/false/null, Infinity/NaN, objects, lists
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[{}\[\]]', re.DOTALL)


def explain_syntax_error(message: str, text: str, line: int | None, column: int | None) -> str:
    """``message`` with a hint when a value starts right after another value (a missing `,` or `:`).

    ``text`` is the source with comments already blanked out (positions unchanged).
    """
    match = _UNEXPECTED.match(message)
    if match is None or line is None or column is None:
        return message
    found = match.group(1)
    shown = "`" + found + "`" if found.strip() else "whitespace"
    if found not in _VALUE_STARTS:
        return f"unexpected {shown}"
    offset = _offset(text, line, column)
    before = text[:offset].rstrip()
    if not before or before[-1] not in _VALUE_ENDS:
        return f"unexpected {shown}"
    if _after_a_key(before):
        return f"unexpected {shown} after a key: missing `:` between the key and its value?"
    return f"unexpected {shown} right after a value: missing comma between values?"


def _offset(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return len(text)
    return min(len(text), start + column - 1)


def _after_a_key(before: str) -> bool:
    """Whether ``before`` ends with a string that stands where an object key goes."""
    if before[-1] not in "\"'":
        return False
    stack: list[str] = []
    last_string_end = -1
    last_string_start = -1
    for token in _TOKENS.finditer(before):
        value = token.group(0)
        if value in "{[":
            stack.append(value)
        elif value in "}]":
            if stack:
                stack.pop()
        else:
            last_string_start, last_string_end = token.start(), token.end()
    if last_string_end != len(before) or not stack or stack[-1] != "{":
        return False
    previous = before[:last_string_start].rstrip()
    return previous.endswith(("{", ","))
