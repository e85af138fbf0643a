"""Text for the user: untrusted text made safe to print (control characters and lone surrogates escaped), counted nouns."""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, and lone surrogates (which
# no UTF-8 stream can carry: printing one raises UnicodeEncodeError).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_WITH_BACKSLASH = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
# In multi-line replies: the same, but line breaks and tabs stay, and bidirectional controls go
# too (they reorder what follows them on screen: CVE-2021-42574, "Trojan Source").
_IN_REPLY = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]")
# In a one-line label the plugin writes for the model (inside a placeholder): every control, every
# bidirectional and every invisible format character (zero-width spaces and joiners, the soft
# hyphen, the byte-order mark), so what a label says is what it shows.
_IN_LABEL = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape(text: str, *, backslash: bool = False) -> str:
    """`text` with every unprintable character as a Python-style escape (`\\n`, `\\x1b`, `\\ud800`).

    With ``backslash``, backslashes are doubled too, so the escaping can be undone exactly.
    """
    return (_WITH_BACKSLASH if backslash else _UNPRINTABLE).sub(_escape, text)


def escape_label(text: str) -> str:
    """A one-line label with every control, bidirectional and invisible format character escaped (``\\u202e``)."""
    return _IN_LABEL.sub(_escape, text)


def escape_reply(text: str) -> str:
    """A multi-line reply with every control and bidirectional character escaped but line breaks and tabs."""
    return _IN_REPLY.sub(_escape, text)


def plural(count: int, word: str) -> str:
    """'1 call', '2 calls'."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"
