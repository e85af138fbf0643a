"""Compact JSON text of tool inputs (estimates and signatures), with the C encoder built once."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from json import encoder as json_encoder
from typing import Any

from mypy_extensions import mypyc_attr

# JSONEncoder.encode builds a new C encoder on every call (json.dumps a new JSONEncoder too),
# which costs about twice the encoding of a typical tool input; a cold request encodes every
# tool input of its history. The C encoder here is built once, as iterencode builds it, but
# without the cycle check: its table of objects being encoded would be shared by every call
# (and by every thread). A cycle then ends in a RecursionError, and the checked encoder says
# what it would have said.
Encoder = Callable[[object, int], Sequence[str]]


@mypyc_attr(allow_interpreted_subclasses=True)
class CompactJson:
    """``json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, sort_keys=...).encode``, faster."""

    def __init__(self, sort_keys: bool = False) -> None:
        self._checked = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys, default=str)
        checked = self._checked
        make: Callable[..., Encoder] | None = getattr(json_encoder, "c_make_encoder", None)
        self._fast: Encoder | None = None
        self._ascii: Encoder | None = None
        if make is not None:
            try:
                self._fast, self._ascii = (
                    make(
                        None,
                        checked.default,
                        escape,
                        checked.indent,
                        checked.key_separator,
                        checked.item_separator,
                        checked.sort_keys,
                        checked.skipkeys,
                        checked.allow_nan,
                    )
                    for escape in (json_encoder.encode_basestring, json_encoder.encode_basestring_ascii)
                )
            except TypeError:  # another Python's signature: the checked encoder does it all
                self._fast = self._ascii = None

    def encode(self, value: object) -> str:
        """The JSON text of ``value``; raises what ``JSONEncoder.encode`` raises (ValueError for a cycle)."""
        fast = self._fast
        if fast is not None and not isinstance(value, str):
            try:
                if self._ascii is not None and _ascii_alike(value):
                    return "".join(self._ascii(value, 0))
                return "".join(fast(value, 0))
            except RecursionError:
                pass  # a cycle, or nesting too deep: the checked encoder tells them apart
        return self._checked.encode(value)


# Types written alike by both escapers whatever their value (None is checked apart).
_SCALARS = (int, float, bool)


def _ascii_alike(value: object) -> bool:
    """Whether the ASCII escaper writes ``value`` as the unicode one does: a flat dict of ASCII text without DEL, and numbers.

    The two differ only on the characters the ASCII one writes as \\uXXXX (any other than ASCII,
    and DEL); its C code is nearly twice as fast, and a tool input is usually such a dict.
    ``str.isascii`` is a flag, and DEL is found at memchr speed.
    """
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or not key.isascii() or "\x7f" in key:
            return False
        if type(item) is str:
            if not item.isascii() or "\x7f" in item:
                return False
        elif item is not None and type(item) not in _SCALARS:
            return False
    return True


# What a JSON string escapes (ensure_ascii=False): the quote, the backslash and the controls below
# space. In UTF-8 these bytes stand only for themselves, so a text's escapes can be counted on its
# bytes: deleting every other byte (a C loop over a table) leaves only them.
_ESCAPED = bytes(range(0x20)) + b'"\\'
_NOT_ESCAPED = bytes(byte for byte in range(256) if byte not in _ESCAPED)
# Escaped as two characters (\" \\ \n \r \t \b \f); every other control as six (\u00XX).
_SHORT_ESCAPES = b'"\\\n\r\t\b\f'
# From this length on, counting the escapes costs less than writing them (a path, a key is shorter).
LONG_TEXT = 64
_quoted = json_encoder.encode_basestring


def string_length(text: str) -> int:
    """Characters of ``text`` as a compact JSON string (ensure_ascii=False): its quotes, its escapes."""
    if len(text) < LONG_TEXT:
        return len(_quoted(text))
    escaped = text.encode("utf-8", "surrogatepass").translate(None, _NOT_ESCAPED)
    return len(text) + 2 + len(escaped) + 4 * len(escaped.translate(None, _SHORT_ESCAPES))


def compact_length(value: object, encoding: CompactJson) -> int:
    """``len(encoding.encode(value))``, counted without writing the text when ``value`` is a flat dict.

    A cold request measures every tool input of a history, and the text of a file written in
    one is most of it: escaping it only to count it cost more than the rest of the estimate.
    A flat dict of text, whole numbers, booleans and nulls under text keys (a tool input, as
    a rule) is counted here; any other value is encoded.
    """
    if type(value) is not dict:
        return len(encoding.encode(value))
    # The braces, a comma between items and a colon in each: the items add their keys and values.
    length = 1 + 2 * len(value) if value else 2
    quoted = _quoted  # keys and most values are short: written at once, as the encoder would
    for key, item in value.items():
        if type(key) is not str:
            return len(encoding.encode(value))
        kind = type(item)
        if kind is str:
            length += len(quoted(key)) + (len(quoted(item)) if len(item) < LONG_TEXT else string_length(item))
        elif item is None or item is True:
            length += len(quoted(key)) + 4
        elif item is False:
            length += len(quoted(key)) + 5
        elif kind is int:
            length += len(quoted(key)) + len(int.__repr__(item))
        else:  # a float, a list, a nested dict, or what only ``default`` writes
            return len(encoding.encode(value))
    return length


class NumberTooLong(ValueError):
    """A JSON integer with more digits than Python converts (``sys.get_int_max_str_digits()``), and where it is."""

    def __init__(self, digits: int, limit: int, line: int, column: int) -> None:
        super().__init__(f"a number of {digits:,} digits (at most {limit:,} can be read)")
        self.digits = digits
        self.limit = limit
        self.line = line
        self.column = column


class _Long(Exception):
    def __init__(self, text: str) -> None:
        self.text = text


def loads(text: str) -> Any:
    """``json.loads``, but an integer too long for Python raises :class:`NumberTooLong` naming its line and column.

    Python refuses to convert an integer of more than 4,300 digits (a guard against quadratic
    time): plain ``json.loads`` then raises a ValueError that says neither where nor that it is
    about the input.
    """
    limit = sys.get_int_max_str_digits()

    def parse_int(digits: str) -> int:
        if limit and len(digits) - digits.startswith("-") > limit:
            raise _Long(digits)
        return int(digits)

    try:
        return json.loads(text, parse_int=parse_int)
    except _Long as exc:
        at = max(text.find(exc.text), 0)
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise NumberTooLong(len(exc.text) - exc.text.startswith("-"), limit, line, column) from None
