"""When a held session is checkpointed, and when a checkpoint may stand in for replaying its history."""

from __future__ import annotations

from dcp_plugin import store as store_mod
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.checkpoints import EVERY_MESSAGES, FOLDER, Checkpoints, fingerprint, snapshot_of, state_key
from dcp_plugin.host.held import HeldSession
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.pipeline.session import SessionState


class CheckpointPolicy:
    """The checkpoints beside the store in use (none without a store on disk), written and read by the rules here."""

    def __init__(self, persistence: Persistence) -> None:
        self._persistence = persistence
        self._checkpoints = Checkpoints(None)

    def folder(self) -> Checkpoints:
        """The checkpoints beside the store in use (none without a store on disk)."""
        store = self._persistence.store()
        folder = store.path.parent / FOLDER if isinstance(store, store_mod.Store) else None
        if self._checkpoints.wanted != folder:
            self._checkpoints = Checkpoints(folder)
        return self._checkpoints

    def resume(
        self,
        session_id: str,
        config: DcpConfig,
        stored: store_mod.StoredSession,
        directory: str,
        root: str | None,
        tools_offered: bool,
    ) -> SessionState | None:
        """The session's state from its checkpoint, when one was written under what holds now; else None."""
        if not (config.checkpoints and stored.complete):
            return None  # without the store's pins and sweeps, a checkpoint cannot be checked
        pinned = set(stored.pinned)
        manual = {call_id: reason for call_id, reason in stored.manual.items() if call_id not in pinned}
        key = fingerprint(config, directory, root, tools_offered, pinned, manual)
        state = self.folder().load(session_id, key)
        if state is not None:
            state.resume(config)
        return state

    def save_if_due(self, session: HeldSession, *, final: bool = False) -> None:
        """Queue a checkpoint of the session once it read EVERY_MESSAGES since its last (hold its lock).

        ``final``: the session is being dropped; anything not checkpointed yet of a long history is.
        """
        state = session.state
        if not state.config.checkpoints:
            return
        epoch, read = session.checkpointed
        since = state.messages_read - (read if epoch == state.epoch else 0)
        due = (since > 0 and state.messages_read >= EVERY_MESSAGES) if final else since >= EVERY_MESSAGES
        if not due:
            return
        session.checkpointed = (state.epoch, state.messages_read)

        def take() -> tuple[str, int, bytes] | None:
            with session.lock:  # pickled whole, between two requests
                if not state.config.checkpoints:
                    return None
                return state_key(state), state.messages_read, snapshot_of(state)

        self.folder().save_later(state.session_id, take)

    def wait(self) -> None:
        """Block until every queued checkpoint is on disk."""
        self._checkpoints.wait()
