"""A cost measure that does not depend on the machine: the Python lines a piece of work runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

# Characters that glob brackets treat specially, for patterns built to stress the scanners.
GLOB_CHARS = "[]!^a*/\\-:?&~|"


def lines_run(work: Callable[[], Any]) -> int:
    """How many Python lines (and calls) ``work`` runs: a measure of its cost that does not depend on the machine."""
    count = 0

    def trace(_frame: FrameType, _event: str, _arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    before = sys.gettrace()
    sys.settrace(trace)
    try:
        work()
    finally:
        sys.settrace(before)
    return count
