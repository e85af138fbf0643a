"""Per-session copies of the history the JS side sent, kept in step by deltas."""

from __future__ import annotations

import itertools
import time
from typing import Any

from dcp_plugin.bridge.protocol import Delta

DEFAULT_IDLE_SECONDS = 2 * 3600.0
_epochs = itertools.count(1)  # process-wide, so a token from a dropped mirror never matches a new one


class Resync(Exception):
    """The delta does not fit what the mirror holds: the JS side must resend the session in full."""


def _message_id(message: Any) -> Any:
    info = message.get("info") if isinstance(message, dict) else None
    return info.get("id") if isinstance(info, dict) else None


class Mirror:
    """The original (never patched) history of one session, plus its serialized patches."""

    __slots__ = ("messages", "last_used", "decided_ref", "decided_seen", "fragments", "epoch")

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.last_used = time.monotonic()
        # Patches serialized so far for one decisions list of the session state: that list only
        # grows until the state starts over, so a prefix of it never needs serializing (or
        # sending) again. `epoch` names that list; a patch token "epoch:count" names a prefix.
        self.decided_ref: list[Any] | None = None
        self.decided_seen = 0  # how many of decided_ref's decisions are already in fragments
        self.fragments: list[str] = []
        self.epoch = next(_epochs)

    def apply(self, delta: Delta) -> None:
        """Bring the mirror to ``known[:base] + delta.messages``; Resync if the prefix does not match."""
        if delta.reset:
            self.messages = list(delta.messages)
            self.forget_patches()
        else:
            held = self.messages
            base = delta.base
            if base > len(held):
                raise Resync(f"base {base} is past the {len(held)} messages held")
            if base > 0 and (_message_id(held[0]) != delta.first_id or _message_id(held[base - 1]) != delta.last_id):
                raise Resync("the prefix fingerprint does not match the messages held")
            if base == 0 and (delta.first_id is not None or delta.last_id is not None):
                raise Resync("an empty prefix cannot have message ids")
            if base < len(held):
                del held[base:]
            held.extend(delta.messages)
        if len(self.messages) != delta.total:
            count = len(self.messages)
            # Keep nothing half-applied: the next request starts over in full.
            self.messages = []
            self.forget_patches()
            raise Resync(f"the session should have {delta.total} messages, the mirror has {count}")
        self.touch()

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def forget_patches(self, decided: list[Any] | None = None) -> None:
        """Start a new patch list (for ``decided``); tokens of the old one stop matching."""
        self.decided_ref = decided
        self.decided_seen = 0
        self.fragments = []
        self.epoch = next(_epochs)

    def token(self) -> str:
        """Names the patches serialized so far; the JS side sends it back with its next request."""
        return f"{self.epoch}:{len(self.fragments)}"

    def held_by_client(self, token: Any) -> int | None:
        """How many of our fragments the client holds, per the token it sent; None if unknown."""
        if not isinstance(token, str):
            return None
        epoch, _, count = token.partition(":")
        if epoch != str(self.epoch) or not count.isdigit():
            return None
        held = int(count)
        return held if held <= len(self.fragments) else None


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
