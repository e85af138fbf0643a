"""Which sessions a host process may let go of: the least recently used beyond a cap, and those idle too long."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

# A session unused this long is dropped from memory (its statistics, pins, sweeps and checkpoint
# stay stored; a later request restores it). The OpenCode bridge drops its copies of a session's
# history after the same time.
IDLE_SECONDS = 2 * 3600.0
# At most this many sessions are held at once; the least recently used goes first.
MAX_SESSIONS = 256
# How often the idle ones are looked for (a look walks every session held).
SWEEP_SECONDS = 60.0


class SessionLru:
    """The sessions held, least recently used first; says which to drop. Not thread-safe: the caller locks."""

    def __init__(
        self,
        max_sessions: int = MAX_SESSIONS,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._used: OrderedDict[str, float] = OrderedDict()  # session id -> when last used
        self._next_sweep = clock() + min(idle_seconds, SWEEP_SECONDS)

    def __len__(self) -> int:
        return len(self._used)

    def touch(self, session_id: str) -> None:
        """The session was used now."""
        self._used[session_id] = self._clock()
        self._used.move_to_end(session_id)

    def held(self) -> list[str]:
        """The sessions held, least recently used first."""
        return list(self._used)

    def forget(self, session_id: str) -> None:
        """The session was dropped by other means."""
        self._used.pop(session_id, None)

    def to_drop(self, keep: str | None = None) -> list[str]:
        """The sessions to drop now (forgotten here already): beyond the cap, then idle ones; never ``keep``."""
        victims: list[str] = []
        excess = len(self._used) - self.max_sessions
        for session_id in self._used:
            if excess <= 0:
                break
            if session_id != keep:
                victims.append(session_id)
                excess -= 1
        now = self._clock()
        if now >= self._next_sweep:
            self._next_sweep = now + min(self.idle_seconds, SWEEP_SECONDS)
            chosen = set(victims)
            victims += [
                sid for sid, used in self._used.items()
                if now - used >= self.idle_seconds and sid != keep and sid not in chosen
            ]
        for session_id in victims:
            del self._used[session_id]
        return victims
