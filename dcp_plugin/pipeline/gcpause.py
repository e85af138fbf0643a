"""Pausing the cyclic garbage collector while a long piece of work builds many objects, safely across threads.

A first sight of a long session (or loading its checkpoint) builds hundreds of thousands of
objects that all live on: the collector would scan them again and again (at 20,000 messages about
5 % of the walk) and free nothing, since the pipeline's records hold no cycles that must be freed
early (reference counting frees what the walk drops). Pausing is safe for other threads: they see
the collector paused only while some pause lasts, pauses of concurrent sessions nest (the
collector comes back when the last one ends), and it comes back only if it was on when the first
began (a host that turned it off keeps it off).

When the last pause ends, the young generations are collected once, so that what the work left
alive goes straight to the oldest generation. Left to itself, the collector would scan those
objects twice: at the next allocation (the youngest generation holds all of them) and again ten
young collections later (the middle one), each time finding nothing to free. On a first sight of
20,000 messages that second scan is about 2 to 3 % of the walk. A host that turned the collector
off, or set its first threshold to 0, gets no collection.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)
class _Pauses:
    """How many pauses are running, and whether the collector was on when the first began."""

    def __init__(self) -> None:
        # Re-entrant: the closing collection runs finalizers on this thread, and one may pause again.
        self._lock = threading.RLock()
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
                    # Before the collector is back: an allocation in between would start the first of
                    # the two scans. Under the lock costs nothing: a collection holds the GIL throughout.
                    if gc.get_threshold()[0] > 0:
                        gc.collect(1)
                    gc.enable()


_PAUSES = _Pauses()


def gc_paused() -> contextlib.AbstractContextManager[None]:
    """The cyclic collector off for the ``with`` block (and for any other thread meanwhile)."""
    return _PAUSES.paused()
