"""Per-session copies of the history the JS side sent, kept in step by deltas."""

from __future__ import annotations

import time
from typing import Any

from dcp_plugin.adapters.bridge.protocol import Delta
from dcp_plugin.host.idle import IDLE_SECONDS
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.history import HistoryMark

DEFAULT_IDLE_SECONDS = IDLE_SECONDS  # as long as the runtime keeps an idle session


class Resync(Exception):
    """The delta does not fit what the mirror holds: the JS side must resend the session in full.

    ``verdict``: what the delta said of the history before it failed (a full resend that
    rewrote it, then carried the wrong count), None when it could not be read at all.
    """

    def __init__(self, reason: str, verdict: Continuity | None = None) -> None:
        super().__init__(reason)
        self.verdict = verdict


class Mirror:
    """The original (never patched) history of one session."""

    __slots__ = ("messages", "last_used")

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.last_used = time.monotonic()

    def apply(self, delta: Delta) -> Continuity:
        """Bring the mirror to ``known[:base] + delta.messages``; Resync if the prefix does not match.

        Returns the continuity verdict the delta makes, relative to what the mirror held: a delta
        from the end appends, one from an earlier index resends from there (messages that changed
        since they were sent), a full resend is compared with what is held (the same list again
        after a timeout is not a rewrite; over an empty mirror everything is new).
        """
        if delta.reset:
            verdict = Continuity.of_resend(self.messages, delta.messages)
            self.messages = list(delta.messages)
        else:
            held = self.messages
            base = delta.base
            if base > len(held):
                raise Resync(f"base {base} is past the {len(held)} messages held")
            if base == 0 and (delta.first_id is not None or delta.last_id is not None):
                raise Resync("an empty prefix cannot have message ids")
            if not HistoryMark(base, delta.first_id, delta.last_id).continues(held):
                raise Resync("the prefix fingerprint does not match the messages held")
            if base < len(held):
                verdict = Continuity.resent(base)
                del held[base:]
            else:
                verdict = Continuity.grown(base, base + len(delta.messages))
            held.extend(delta.messages)
        if len(self.messages) != delta.total:
            count = len(self.messages)
            # Keep nothing half-applied: the next request starts over in full.
            self.messages = []
            raise Resync(f"the session should have {delta.total} messages, the mirror has {count}", verdict)
        self.touch()
        return verdict

    def touch(self) -> None:
        self.last_used = time.monotonic()


class Mirrors:
    """Every session's mirror; mirrors idle longer than ``idle_seconds`` are dropped (memory)."""

    def __init__(self, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.sessions: dict[str, Mirror] = {}
        self._next_sweep = time.monotonic() + min(idle_seconds, 60.0)

    def get(self, session_id: str) -> Mirror | None:
        return self.sessions.get(session_id)

    def get_or_create(self, session_id: str) -> Mirror:
        mirror = self.sessions.get(session_id)
        if mirror is None:
            mirror = self.sessions[session_id] = Mirror()
        return mirror

    def drop(self, session_id: str) -> bool:
        return self.sessions.pop(session_id, None) is not None

    def drop_idle(self, now: float | None = None) -> list[str]:
        """Drop mirrors unused for ``idle_seconds``; checks at most once a minute unless ``now`` is given."""
        clock = time.monotonic() if now is None else now
        if now is None and clock < self._next_sweep:
            return []
        self._next_sweep = clock + min(self.idle_seconds, 60.0)
        stale = [sid for sid, m in self.sessions.items() if clock - m.last_used >= self.idle_seconds]
        for sid in stale:
            del self.sessions[sid]
        return stale
