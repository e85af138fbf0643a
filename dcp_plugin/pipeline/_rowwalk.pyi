"""Types of the C walk built from rowwalk.c (see patches._plan_rows)."""

from collections.abc import Callable
from typing import Any

def walk(
    host: list[Any],
    messages: list[int],
    parts: list[int],
    calls: list[str],
    lengths: list[int],
    fields: list[str],
    values: list[Any],
    fits: bytearray,
    trusted_before: int,
    write: bool,
    prefix: str,
    check: Callable[[int, Any], bool],
    /,
) -> tuple[list[Any], bool] | None: ...
