"""Runs the hot-path benchmark over generated sizes and recorded files; returns plain JSON data."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.hotpath import measure
from benchmarks.sessions import BenchSession, generated, read_recorded, recorded
from benchmarks.targets import evaluate
from dcp_plugin import compiled

DEFAULT_SIZES: tuple[int, ...] = (100, 1_000, 5_000, 20_000)
# The heavier shape: about 1.2 tool calls per message and long outputs, as busy agents produce.
DEFAULT_BUSY_SIZES: tuple[int, ...] = (20_000,)
DEFAULT_REPEAT = 10
# Warm requests are cheap: take more of them, each appending one more message.
WARM_FACTOR = 5


def warm_count(repeat: int) -> int:
    """Warm requests on the reused working copy, of each kind (the host saying nothing, then vouching).

    ``repeat`` pairs follow on fresh copies, then ``repeat`` on copies decoded from JSON.
    """
    return WARM_FACTOR * repeat


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        # Which build ran: the compiled core or plain Python (and why not compiled).
        "build": compiled.describe(),
    }


def sessions(
    sizes: Sequence[int], files: Sequence[Path], repeat: int, busy_sizes: Sequence[int] = ()
) -> list[Callable[[], BenchSession]]:
    """Loaders of every session to measure, generated first; loaded one at a time to bound memory."""
    # Each warm request twice (the host saying nothing, then vouching): on the working copy, on
    # fresh copies, on decoded copies.
    extra = 2 * (warm_count(repeat) + 2 * repeat)
    loaders: list[Callable[[], BenchSession]] = [partial(generated, size, extra) for size in sizes]
    loaders += [partial(generated, size, extra, busy=True) for size in busy_sizes]
    loaders += [partial(recorded, path, extra) for path in files]
    return loaders


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    files: Sequence[Path] = (),
    repeat: int = DEFAULT_REPEAT,
    progress: Callable[[str], None] | None = None,
    busy_sizes: Sequence[int] = DEFAULT_BUSY_SIZES,
) -> dict[str, Any]:
    """Measure every session and evaluate the targets."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    # A file that cannot be measured fails now, not after minutes of generated sessions; each is
    # read again when its turn comes, so that one session at a time is in memory.
    for path in files:
        read_recorded(path)
    started = time.time()
    rows = []
    for load in sessions(sizes, files, repeat, busy_sizes):
        session = load()
        rows.append(measure(session, repeat, warm_count(repeat), progress))
        del session
    return {
        "benchmark": "hot path",
        "machine": machine(),
        "repeat": repeat,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "sessions": rows,
        "targets": evaluate(rows),
    }
