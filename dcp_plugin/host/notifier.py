"""The one way the plugin tells the user something: the host's notify, else stderr; it never raises.

Routine news (what a request pruned, a budget tier reached) comes with every request: it is
handed to the host's notify on a thread of its own, in order, so a slow notify (a toast service,
a chat message) never delays the request. Warnings (a config or database problem) are rare and
are said at once, on the caller's thread.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("dcp_plugin")

Notify = Callable[[str | None, str], None]


class Notifier:
    """Shows short messages to the user; every sink of the plugin (config, store, runtime, tips) goes through it."""

    def __init__(self, host: Notify | None = None, *, background: bool = True) -> None:
        self.host: Notify | None = host
        # False: news is said on the caller's thread (a host whose notify cannot block).
        self.background = background
        self._said: set[str] = set()
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str | None, str] | threading.Event] = queue.Queue()
        self._worker: threading.Thread | None = None

    def __call__(self, session_id: str | None, text: str) -> None:
        """Tell the user ``text`` (about ``session_id`` when it concerns one)."""
        host = self.host
        if host is not None:
            try:
                host(session_id, text)
                return
            except Exception:  # noqa: BLE001 - a broken notify must not break the request
                log.exception("dcp: the host's notify failed")
        try:
            print(text if text.startswith("dcp") else f"dcp: {text}", file=sys.stderr)
        except Exception:  # noqa: BLE001 - a closed stderr must not break the request either
            pass

    def news(self, session_id: str | None, text: str) -> None:
        """Routine news (what was pruned, a budget tier reached): only shown where the host has a UI for it.

        Handed to the host's notify after the caller goes on (see the module's docstring).
        """
        if self.host is None:
            return
        if not self.background:
            self(session_id, text)
            return
        self._queue.put((session_id, text))
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._deliver, name="dcp-notify", daemon=True)
                self._worker.start()

    def _deliver(self) -> None:
        while True:
            item = self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
            else:
                self(*item)

    def wait(self, timeout: float = 10.0) -> bool:
        """Block until the news handed over so far was delivered (or ``timeout`` passed); whether it was."""
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                return self._queue.empty()
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def warn(self, text: str) -> None:
        """A message about no session in particular (config files, the state database)."""
        self(None, text)

    def once(self, text: str, session_id: str | None = None) -> None:
        """Say ``text`` only the first time in this process."""
        with self._lock:
            if text in self._said:
                return
            self._said.add(text)
        self(session_id, text)
