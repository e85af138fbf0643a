"""The plugin's runtime: sessions, config and the per-request pipeline behind the hooks."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.conversation import session_id_of
from dcp_plugin.pruner import Desync, Patch, apply, plan
from dcp_plugin.session import SessionState

log = logging.getLogger("dcp_plugin")

Notify = Callable[[str | None, str], None]


class StaticConfig:
    """A config source that always answers the same config (tests, embedding hosts)."""

    def __init__(self, config: DcpConfig | None = None) -> None:
        self.config = config or DcpConfig()

    def get(self) -> DcpConfig:
        """The config."""
        return self.config


class Runtime:
    """Holds every session of one host process and runs the pipeline for each request."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, config_source: Any = None) -> None:
        self.directory = str(Path(directory) if directory is not None else Path.cwd())
        self.notify: Notify | None = None
        self.context: dict[str, Any] = {}
        self._config_source = config_source
        self.sessions: dict[str, SessionState] = {}
        self._lock = threading.RLock()

    # -- host wiring -------------------------------------------------------------------------
    def startup(self, context: dict[str, Any]) -> None:
        """Adopt the host's directory and capabilities."""
        if not isinstance(context, dict):
            return
        self.context = context
        directory = context.get("directory")
        if isinstance(directory, (str, os.PathLike)) and str(directory):
            if str(directory) != self.directory and self._config_source is not None and not isinstance(
                self._config_source, StaticConfig
            ):
                self._config_source = None
            self.directory = str(Path(directory))
        notify = context.get("notify")
        self.notify = notify if callable(notify) else None

    def report(self, session_id: str | None, text: str) -> None:
        """Show a message to the user through the host, else on stderr; never raises."""
        try:
            if self.notify is not None:
                self.notify(session_id, text)
                return
        except Exception:  # noqa: BLE001 - a broken notify must not break the request
            log.exception("dcp: the host's notify failed")
        print(text if text.startswith("dcp") else f"dcp: {text}", file=sys.stderr)

    def config(self) -> DcpConfig:
        """The effective config, reloaded cheaply when a file changed."""
        if self._config_source is None:
            self._config_source = self._make_config_source()
        return self._config_source.get()

    def use_config(self, config: DcpConfig | None) -> None:
        """Pin a config (a CLI's --config), or go back to the config files with None."""
        self._config_source = StaticConfig(config) if config is not None else None

    def _make_config_source(self) -> Any:
        from dcp_plugin.config.source import ConfigSource

        return ConfigSource(Path(self.directory), self.report)

    def session(self, session_id: str, config: DcpConfig | None = None) -> SessionState:
        """The state of a session, created on first sight."""
        state = self.sessions.get(session_id)
        config = config or self.config()
        if state is None:
            state = self.sessions[session_id] = SessionState(session_id, config, self.directory)
        else:
            state.reconfigure(config)
        return state

    # -- the hot path ------------------------------------------------------------------------
    def plan(self, messages: list[Any], input: dict[str, Any] | None = None) -> tuple[SessionState | None, list[Patch]]:
        """Sync the session with ``messages`` and return the patches to send; may raise."""
        config = self.config()
        if not config.enabled:
            return None, []
        session_id = session_id_of(input, messages)
        with self._lock:
            state = self.session(session_id, config)
            state.update(messages)
            try:
                patches = plan(messages, state.decided)
            except Desync:
                # The prefix fingerprint matched but a part moved: rebuild from scratch once.
                state.resync()
                state.update(messages)
                patches = plan(messages, state.decided)
            state.last_patches = patches
        return state, patches

    def transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """The chat_messages_transform hook: prune in place, or leave everything untouched."""
        try:
            messages = output.get("messages") if isinstance(output, dict) else None
            if not isinstance(messages, list) or not messages:
                return
            state, patches = self.plan(messages, input if isinstance(input, dict) else None)
            apply(patches)
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning failed; the request is sent unchanged")
            return
        if state is not None:
            self.after_request(state, messages)

    def after_request(self, state: SessionState, messages: list[Any]) -> None:
        """Work that follows a pruned request (notifications, persistence); never raises."""
        try:
            state.take_new_decisions()
        except Exception:  # noqa: BLE001
            log.exception("dcp: post-request bookkeeping failed")

    def command(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """The command_execute_before hook; filled in by the commands module."""
        return None
