"""Short ids the model uses to name tool outputs: derived from the call id, unique within a session.

An id is the first few characters of a hash of the host's call id, in Crockford's base 32
(digits and lowercase letters without i, l, o and u, which read like 1, 1, 0 and v). It
depends on nothing but the call id, so it is the same on every request, after a restart, in a
replay and after an undo; only when two calls of one session share the short form does the
later one (in conversation order) get one character more, which is as stable as the order of
the calls.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
# 4 characters are 20 bits: two calls share an id with probability about n²/2M, so a session
# of 300 calls has a collision about 4 % of the time, and the later call gets 5 characters.
SHORT = 4
_MAX = 25  # the 128-bit digest gives 25 full characters
_READ_AS = str.maketrans({"i": "1", "l": "1", "o": "0", "u": "v"})
_TOKEN = re.compile(r"[0-9a-z]+")


# Two digits per 10 bits, least significant first: spelling a number takes a lookup per two digits.
_PAIRS: tuple[str, ...] = tuple(ALPHABET[n & 31] + ALPHABET[n >> 5] for n in range(1024))
_LOW_BITS = (1 << 5 * _MAX) - 1
_blake2b = hashlib.blake2b


def _number(call_id: str) -> int:
    """The low 125 bits of the call id's digest: the number its id spells."""
    digest = hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return int.from_bytes(digest, "big") & _LOW_BITS


def _spell(number: int, count: int = _MAX) -> str:
    """The first ``count`` base-32 digits of ``number``, least significant first."""
    # A cold request of 25,000 calls assigns 25,000 ids: most need only their first 4 digits,
    # and a table lookup per pair of digits is several times faster than base64's base 32.
    pairs = _PAIRS
    if count == 4:  # the SHORT form every call of a history is given first: two lookups, no list
        return pairs[number & 1023] + pairs[(number >> 10) & 1023]
    return "".join([pairs[(number >> shift) & 1023] for shift in range(0, 5 * count, 10)])[:count]


def _digits(call_id: str) -> str:
    """The digest's low 125 bits as 25 base-32 digits, least significant first."""
    return _spell(_number(call_id))


def short_id(call_id: str, length: int = SHORT) -> str:
    """The id of a call when no other call of its session shares its first ``length`` characters."""
    return _spell(_number(call_id), max(1, min(length, _MAX)))


def assign_id(call_id: str, taken: Container[str]) -> str:
    """The shortest id of ``call_id`` (at least :data:`SHORT` characters) not in ``taken``."""
    # Once per call of a history: the digest and the SHORT spelling are inlined (the same as
    # _number and _spell(number, SHORT)), which spares two calls on the common path.
    number = int.from_bytes(_blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big") & _LOW_BITS
    pairs = _PAIRS
    candidate = pairs[number & 1023] + pairs[(number >> 10) & 1023]
    if candidate not in taken:
        return candidate
    digits = _spell(number)
    for length in range(SHORT + 1, _MAX + 1):
        candidate = digits[:length]
        if candidate not in taken:
            return candidate
    # Two call ids with the same 128-bit digest: number the later one.
    n = 2
    while f"{digits}-{n}" in taken:
        n += 1
    return f"{digits}-{n}"


def normalize_id(value: object) -> str | None:
    """An id as the model wrote it (``3KQ7``, ``#3kq7``, ``id 3kq7``, ``(id 3kq7)``), read as the plugin writes it.

    Letters the alphabet leaves out are read as the digits they look like, as Crockford's
    encoding prescribes. None when there is no id in it.
    """
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if text.startswith("id"):
        text = text[2:].lstrip(" :=#")
    text = text.lstrip("#").strip()
    if "-" in text:  # the numbered form of a digest collision
        head, _, tail = text.partition("-")
        return f"{head.translate(_READ_AS)}-{tail}" if _TOKEN.fullmatch(head) and tail.isdigit() else None
    return text.translate(_READ_AS) if _TOKEN.fullmatch(text) else None
