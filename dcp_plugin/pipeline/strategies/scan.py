"""Whether a tool output holds a marker: found by its first character, which tool outputs rarely hold.

A cold request looks for diagnostics blocks in every output of its history and for the
cut-short markers in every read, and ``in`` (or a regex) over a few kilobytes of prose or code
is slow there: its skip table matches the markers' lowercase letters at nearly every character.
The markers start with a character most outputs hold a few times at most (``<``, ``(``), which
``str.find`` locates at memchr speed; an output that holds it often is searched in full from
where the scan stopped, so the answer is always that of ``in``.
"""

from __future__ import annotations

# Occurrences of the first character checked one by one before the rest is searched in full.
SCAN_LIMIT = 16


def holds(text: str, markers: str | tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``markers`` (each non-empty, all starting with the same character)."""
    first = markers[0][0] if isinstance(markers, tuple) else markers[0]
    at = text.find(first)
    for _ in range(SCAN_LIMIT):
        if at < 0:
            return False
        if text.startswith(markers, at):
            return True
        at = text.find(first, at + 1)
    if at < 0:
        return False
    if isinstance(markers, str):
        return text.find(markers, at) >= 0
    return any(text.find(marker, at) >= 0 for marker in markers)
