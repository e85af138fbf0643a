"""Pausing the cyclic garbage collector while a long piece of work builds many objects, safely across threads.

A first sight of a long session (or loading its checkpoint) builds hundreds of thousands of
objects that all live on: the collector would scan them again and again (at 20,000 messages about
5 % of the walk) and free nothing, since the pipeline's records hold no cycles that must be freed
early (reference counting frees what the walk drops). Pausing is safe for other threads: they see
the collector paused only while some pause lasts, pauses of concurrent sessions nest (the
collector comes back when the last one ends), and it comes back only if it was on when the first
began (a host that turned it off keeps it off). Nothing is collected on purpose at the end: the
next allocation after the pause lets the collector run as usual.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class _Pauses:
    """How many pauses are running, and whether the collector was on when the first began."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._resume = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._resume:
                    gc.enable()


_PAUSES = _Pauses()


def gc_paused() -> contextlib.AbstractContextManager[None]:
    """The cyclic collector off for the ``with`` block (and for any other thread meanwhile)."""
    return _PAUSES.paused()
