"""Cutting a restored text into parts that each fit the host's cap on a tool's result.

OpenCode 1.18 keeps at most 50 KB (51,200 bytes) and 2,000 lines of a tool's result and ends a
longer one with its own truncation notice: a whole 56 KB output restored in one result came back
cut. So a restore longer than a part is returned in numbered parts, each well under both caps
(room is left for the part's own header and a prunable list appended after it), cut at line
breaks where a line allows it.
"""

from __future__ import annotations

# Well under OpenCode's 51,200 bytes and 2,000 lines, whatever is appended to the part.
PART_BYTES = 40_000
PART_LINES = 1_500


def _chunks(line: str, limit: int) -> list[str]:
    """``line`` cut into pieces of at most ``limit`` UTF-8 bytes, at character boundaries."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for char in line:
        width = len(char.encode("utf-8", errors="surrogatepass"))
        if size + width > limit and current:
            pieces.append("".join(current))
            current, size = [], 0
        current.append(char)
        size += width
    pieces.append("".join(current))
    return pieces


def split(text: str, max_bytes: int = PART_BYTES, max_lines: int = PART_LINES) -> list[str]:
    """``text`` as consecutive parts of at most ``max_bytes`` UTF-8 bytes and ``max_lines`` lines each.

    Joined with nothing between them, the parts are ``text`` again.
    """
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        width = len(line.encode("utf-8", errors="surrogatepass"))
        pieces = _chunks(line, max_bytes) if width > max_bytes else [line]
        for piece in pieces:
            piece_width = width if len(pieces) == 1 else len(piece.encode("utf-8", errors="surrogatepass"))
            if current and (size + piece_width > max_bytes or len(current) >= max_lines):
                parts.append("".join(current))
                current, size = [], 0
            current.append(piece)
            size += piece_width
    if current or not parts:
        parts.append("".join(current))
    return parts
