"""The one way the plugin tells the user something: the host's notify, else stderr; it never raises."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("dcp_plugin")

Notify = Callable[[str | None, str], None]


class Notifier:
    """Shows short messages to the user; every sink of the plugin (config, store, runtime, tips) goes through it."""

    def __init__(self, host: Notify | None = None) -> None:
        self.host: Notify | None = host
        self._said: set[str] = set()
        self._lock = threading.Lock()

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
        """Routine news (what was pruned, a budget tier reached): only shown where the host has a UI for it."""
        if self.host is not None:
            self(session_id, text)

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
