"""The sessions one runtime holds: made on first sight, each behind its own lock, let go of when idle or too many."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.checkpoint_policy import CheckpointPolicy
from dcp_plugin.host.first_sight import FirstSight
from dcp_plugin.host.held import HeldSession
from dcp_plugin.host.idle import SessionLru
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.host.results import Outgoing, Sent
from dcp_plugin.host.tool_service import OpenSession, ToolService
from dcp_plugin.pipeline.session import SessionState


class SessionRegistry:
    """Every session of one host process, and what the latest request of each wrote (its decisions)."""

    def __init__(
        self,
        lru: SessionLru,
        first_sight: FirstSight,
        checkpoints: CheckpointPolicy,
        persistence: Persistence,
        tools: ToolService,
    ) -> None:
        self._sessions: dict[str, HeldSession] = {}
        # Sessions are let go of when idle or beyond the cap (memory: a host may run for weeks).
        self._lru = lru
        # This lock guards only what sessions share (the map, what each one's latest request wrote) and
        # is held briefly; each session has its own.
        self._lock = threading.RLock()
        self._last: dict[str, Sent] = {}
        self._first_sight, self._checkpoints, self._persistence, self._tools = first_sight, checkpoints, persistence, tools

    def find(self, session_id: str) -> HeldSession | None:
        """The session when held, else None."""
        with self._lock:
            return self._sessions.get(session_id)

    def get(self, session_id: str, config: DcpConfig, directory: str, project_root: str | None) -> HeldSession:
        """The session, made on first sight (see :class:`.FirstSight`); lock it before touching its state."""
        session = self.find(session_id)
        behind = session is not None and not session.stored
        if session is None:
            made = self._first_sight.make(session_id, config, directory, project_root)
            with self._lock:  # another thread may have made it meanwhile: theirs wins
                session = self._sessions.setdefault(session_id, made)
                self._lru.touch(session_id)
        else:
            with self._lock:
                self._lru.touch(session_id)
        with self.locked(session) as state:
            if behind:
                self._first_sight.catch_up(session)
            state.reconfigure(config)
        return session

    @contextmanager
    def locked(self, session: HeldSession) -> Iterator[SessionState]:
        """Hold one session's lock; a session made before the host asked for the tools learns of them here."""
        with session.lock:
            if self._tools.offered:
                session.state.offer_tools(True)
            yield session.state

    def opener(self, session_id: str, directory: str, project_root: str | None) -> OpenSession:
        """How the tool service opens the session under a config it reads only when a call runs."""
        return lambda config: self.locked(self.get(session_id, config, directory, project_root))

    def remember(self, outgoing: Outgoing) -> None:
        """Keep what a session's latest request wrote (its decisions, not the host's objects)."""
        sent = Sent(outgoing.session_id, outgoing.patches.decisions, outgoing.saved_tokens, outgoing.in_force)
        with self._lock:
            self._last[outgoing.session_id] = sent

    def forget_sent(self, session_id: str) -> None:
        """A request of the session has begun: until it is planned, nothing stands as written."""
        with self._lock:
            self._last.pop(session_id, None)

    def last(self, session_id: str) -> Sent | None:
        """What the latest request of a session wrote."""
        with self._lock:
            return self._last.get(session_id)

    def ids(self) -> list[str]:
        """The sessions held."""
        with self._lock:
            return list(self._sessions)

    def evict(self, keep: str) -> None:
        """Drop the sessions unused for too long and the least recently used beyond the cap."""
        with self._lock:
            victims = self._lru.to_drop(keep)
        for session_id in victims:
            self.drop(session_id)

    def drop(self, session_id: str) -> None:
        """Forget a session (its saved state stays in the store; it is restored on next sight)."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            self._last.pop(session_id, None)
            self._lru.forget(session_id)
        if session is not None:
            with session.lock:
                self._checkpoints.save_if_due(session, final=True)
        self._persistence.forget(session_id)
