"""The plugin's runtime: every session of one host process, and the one per-request API all façades use.

It takes and returns plain values and knows no hook shapes: the façades (the pluggy hooks in
:mod:`~dcp_plugin.adapters.pluggy_host`, the bridge server, the provider adapters, the ``/dcp`` commands in
:mod:`~dcp_plugin.commands.dispatch`, replay) convert what their host hands them and call only the
public methods here:

- :meth:`Runtime.prepare` syncs a session with the messages about to be sent and returns the
  :class:`Outgoing` patches (all of them, or those applied since the caller's token);
- :meth:`Runtime.finish` does the bookkeeping of a sent request (notifications, the context
  snapshot and its tip, statistics); it never raises, and a bridge calls it after replying;
- :meth:`Runtime.prune` is both in one call, for hosts that hand the outgoing list itself;
- :meth:`Runtime.tool_definitions`, :meth:`Runtime.execute_tool` and :meth:`Runtime.system_text`
  for hosts that offer the model the plugin's tools (discard, extract, restore);
- :meth:`Runtime.reset`, :meth:`Runtime.drop`, :meth:`Runtime.snapshot`,
  :meth:`Runtime.compaction_advice`, :meth:`Runtime.sweep`, :meth:`Runtime.pin`, :meth:`Runtime.view` and
  :meth:`Runtime.sync_for_command` for the rest.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from dcp_plugin import store as store_mod
from dcp_plugin.budget.compaction import CompactionOutcome
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.budget.tips import tip_text
from dcp_plugin.config.discovery import project_root
from dcp_plugin.config.misplaced import misplaced_warnings
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.overhead import PluginText, plugin_text
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.cost.requests import net_sentence
from dcp_plugin.host.checkpoints import EVERY_MESSAGES, FOLDER, Checkpoints, fingerprint, snapshot_of, state_key
from dcp_plugin.host.hostspec import HostStartup, Summarize
from dcp_plugin.host.idle import IDLE_SECONDS, MAX_SESSIONS, SessionLru
from dcp_plugin.host.notifier import Notifier, Notify
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.host.prune_notice import format_notification
from dcp_plugin.host.session_budget import SessionBudget
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import call_message
from dcp_plugin.model.refs import ModelRef, request_model
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.freshness import kept_went_stale
from dcp_plugin.pipeline.ids import normalize_id
from dcp_plugin.pipeline.modeltools import NAMES as TOOL_NAMES
from dcp_plugin.pipeline.modeltools import Tally, definitions, system_text
from dcp_plugin.pipeline.modeltools.judge import restorable
from dcp_plugin.pipeline.patches import Desync, Patches, apply, plan
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.pipeline.strategies import DEDUPLICATION, SWEEP
from dcp_plugin.pipeline.sweep import SweepPlan, select

log = logging.getLogger("dcp_plugin")


class ConfigProvider(Protocol):
    """Anything that answers the effective config (a live config source, a pinned config)."""

    def get(self) -> DcpConfig: ...


class StaticConfig:
    """A config source that always answers the same config (tests, embedding hosts, a CLI's --config)."""

    def __init__(self, config: DcpConfig | None = None) -> None:
        self.config = config or DcpConfig()

    def get(self) -> DcpConfig:
        """The config."""
        return self.config


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What one request writes, and what :meth:`Runtime.finish` needs afterwards.

    ``patches`` hold the session's decisions in force (all of them, or with ``incremental``
    only those applied since the caller's token) paired with their tool states in the
    messages given to :meth:`Runtime.prepare`. ``token`` names what the caller holds after
    applying them: hand it back as ``since`` next time.
    """

    session_id: str
    epoch: int
    patches: Patches
    incremental: bool
    token: tuple[int, int]
    model: ModelRef | None
    saved_tokens: int  # tokens every decision in force removes from this request
    in_force: int  # how many calls those decisions prune


@dataclass(frozen=True, slots=True)
class SessionView:
    """A read-only picture of one session for the commands: the config and the decisions in force."""

    session_id: str
    config: DcpConfig
    directory: str
    in_force: tuple[Decision, ...]
    waiting: tuple[Decision, ...]
    records: tuple[CallRecord, ...]
    saved_by_strategy: Mapping[str, tuple[int, int]]
    restarts: int
    costs: Mapping[str, Any]
    model_tools: Mapping[str, Tally] = field(default_factory=dict)  # per tool: the model's calls of it
    pinned: frozenset[str] = frozenset()  # call ids the user pinned
    plugin_text: PluginText = PluginText()  # what the plugin's own text adds to every request


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a call of one of the plugin's tools answers: the text for the model, and whether it was refused."""

    output: str
    error: bool
    title: str

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "error": self.error, "title": self.title}


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What a sweep pruned (as chosen by the plan, which also says what it skipped and why)."""

    plan: SweepPlan
    swept: tuple[Decision, ...]
    directory: str  # the session's project directory: paths are named relative to it


@dataclass(frozen=True, slots=True)
class PinOutcome:
    """What a pin (or unpin) did: the calls it changed, those already so, and the ids that name no call.

    ``pruned`` are the changed calls that carried a placeholder: pinned, they come back whole.
    """

    pinned: bool
    changed: tuple[CallRecord, ...]
    unchanged: tuple[CallRecord, ...]
    unknown: tuple[str, ...]
    pruned: tuple[CallRecord, ...] = ()


@dataclass(eq=False)
class _Session:
    state: SessionState
    budget: SessionBudget
    model: ModelRef | None = None
    # Held by everything that reads or changes this session. A session's first request replays
    # the history it implies (about 5 s at 20,000 messages): under one runtime-wide lock every
    # other session's request waited that long; under its own lock they do not wait at all.
    lock: threading.RLock = field(default_factory=threading.RLock)
    stored: bool = True  # False while the store could not be read: its pins and sweeps are fetched later
    checkpointed: tuple[int, int] = (0, 0)  # (epoch, messages read) of the latest checkpoint written or loaded


class Runtime:
    """Holds every session of one host process and runs the pipeline for each request."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        config: DcpConfig | ConfigProvider | None = None,
        *,
        store: Any = None,
        notify: Notify | None = None,
        create_global_config: bool = False,
        max_sessions: int = MAX_SESSIONS,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        what_if: bool = False,
    ) -> None:
        # A what-if (a replay of a recorded session): what it sends reaches no provider, so the counts
        # in the history stay those of the requests as recorded (whole, unless the store says otherwise).
        self.what_if = what_if
        self.directory = str(Path(directory) if directory is not None else Path.cwd())
        # Relative protected patterns are anchored here: the project root above `directory`.
        self.project_root: str | None = None
        self.notifier = Notifier(notify)
        self._config: ConfigProvider | None = StaticConfig(config) if isinstance(config, DcpConfig) else config
        self._create_global_config = create_global_config
        self._sessions: dict[str, _Session] = {}
        # Sessions are let go of when idle or beyond the cap (memory: a host may run for weeks).
        self._lru = SessionLru(max_sessions, idle_seconds, clock)
        # The runtime-wide lock guards only what sessions share (the sessions map, the latest
        # outgoing per session, the debug log) and is held briefly; each session has its own.
        self._lock = threading.RLock()
        self._persistence = Persistence(store, self.notifier.warn)
        self._checkpoints = Checkpoints(None)
        self._summarize: Summarize | None = None
        self._startup_model: ModelRef | None = None
        self._debug_log: Any = None
        self._last: dict[str, Outgoing] = {}
        self._tools_offered = False  # the host asked for the tool definitions: it offers them to the model

    # -- setup -------------------------------------------------------------------------------
    def startup(self, host: HostStartup) -> None:
        """Adopt the host's directory and capabilities (see ``hostspec.host_startup``); absent ones are cleared."""
        if host.directory is not None:
            if host.directory != self.directory and not isinstance(self._config, StaticConfig):
                self._config = None  # the project's config files are elsewhere
            self.directory = str(Path(host.directory))
        self.project_root = str(project_root(self.directory, host.worktree))
        self.notifier.host = host.notify
        self._summarize = host.summarize
        self._startup_model = host.model
        if not host.persist:
            self._persistence.use(None)
        if self._create_global_config:
            self._config_source().ensure_global_file()
            for line in misplaced_warnings(self.directory):
                self.notifier.warn(line)

    def config(self) -> DcpConfig:
        """The effective config, re-read cheaply when a file changed."""
        config: DcpConfig = self._config_source().get()
        return config

    def _config_source(self) -> Any:  # a ConfigSource, or any ConfigProvider (e.g. StaticConfig)
        if self._config is None:
            from dcp_plugin.config.source import ConfigSource

            self._config = ConfigSource(Path(self.directory), self.notifier, create_global=False)
        return self._config

    def use_config(self, config: DcpConfig | None) -> None:
        """Pin a config (a CLI's --config), or go back to the config files with None."""
        self._config = StaticConfig(config) if config is not None else None

    def use_store(self, store: Any) -> None:
        """Persist to ``store`` (``persistence.USER_STORE`` for the user's database), or nowhere with None."""
        self._persistence.use(store)

    # -- the request path --------------------------------------------------------------------
    def prepare(
        self,
        session_id: str,
        messages: Sequence[Any],
        *,
        model: ModelRef | None = None,
        continuity: Continuity | None = None,
        since: tuple[int, int] | None = None,
        request: bool = True,
    ) -> Outgoing | None:
        """Sync a session with the messages about to be sent; the patches to write, None when disabled.

        ``continuity``: what the host says of the list since the last call (the bridge's verdict
        on its delta: resent from an index, rewritten), None when it says nothing. ``since``: the token of the patches the caller already holds (from the
        previous :class:`Outgoing`); when still valid only newer patches are returned.
        ``request=False``: sync without scheduling a request (a command reads the state).
        Raises on an internal failure: callers fail open (send the request unpruned).
        """
        config = self.config()
        if not config.enabled:
            return None
        session = self._session(session_id, config)
        with self._locked(session) as state:
            host_model = (model or ModelRef()).merged_over(self._startup_model)
            verdict = state.update(messages, continuity, request=request, model=host_model)
            session.model = self._model_for(model, state.latest_model)
            try:
                patches, incremental = self._plan(state, messages, since, verdict)
            except Desync:
                # A safety net behind the verdict: it said the list continues, yet a decided call
                # moved (a host that rewrote without saying so). Walked again as rewritten, once.
                verdict = state.update(messages, Continuity.REWRITTEN, request=request, model=host_model)
                patches, incremental = self._plan(state, messages, None, verdict)
            outgoing = Outgoing(
                session_id,
                state.epoch,
                patches,
                incremental,
                (state.epoch, len(state.applied)),
                session.model,
                state.saved_tokens,
                state.in_force_count,
            )
            with self._lock:
                self._last[session_id] = outgoing
        self._evict(session_id)
        return outgoing

    @staticmethod
    def _plan(
        state: SessionState, messages: Sequence[Any], since: tuple[int, int] | None, verdict: Continuity
    ) -> tuple[Patches, bool]:
        if (
            since is not None
            and since[0] == state.epoch
            and 0 <= since[1] <= len(state.applied)
            and not kept_went_stale(state.applied[: since[1]], messages, verdict)
        ):
            return plan(messages, state.applied[since[1] :], since_token=True), True
        return plan(messages, state.applied), False

    def _model_for(self, model: ModelRef | None, named: ModelRef | None) -> ModelRef | None:
        """The request's model: the newest a message names, blanks filled from the host's, then the startup one."""
        known = request_model(named, (model or ModelRef()).merged_over(self._startup_model))
        return None if known == ModelRef() else known

    def finish(self, outgoing: Outgoing, messages: Sequence[Any], *, request: bool = True) -> ContextSnapshot | None:
        """Bookkeeping of a sent request: notifications, debug log, snapshot and tip, statistics; never raises.

        ``request=False`` for a sync that sent nothing (a command): counters stay as they are.
        """
        try:
            session = self._find(outgoing.session_id)
            if session is None:
                return None
            with self._locked(session) as state:
                config = state.config
                costs = state.scheduler.take_costs()
                # Only the request being sent now is counted: earlier requests of the implied
                # history were counted when they were made (or went out without the plugin).
                cost = costs[-1] if costs and costs[-1].count == len(messages) else None
                applied = state.take_new_applied()
                if applied:
                    fresh = self._persistence.record(state.session_id, applied)
                    self._debug(state, fresh)
                    if request:
                        self._notify_pruned(state, [d for d in fresh if d.strategy != SWEEP])
                restores = state.tools.take_new_restores()
                if restores:
                    self._persistence.record_restores(
                        state.session_id, [store_mod.Restore(v.call_id, v.outputs, v.tokens) for v in restores]
                    )
                snapshot = session.budget.record(state.context_now(messages, session.model))
                tip = session.budget.tip_change()
                if request:
                    # What pruning saves, without the prunable lists (the plugin's own text, shown apart).
                    saved = state.saved_tokens + _list_tokens(state)
                    self._persistence.count_request(state.session_id, saved, snapshot.to_dict(), cost)
                    self._checkpoint(session)
            if tip is not None and request and config.context_budget.notify:
                self.notifier.news(outgoing.session_id, f"dcp: {tip_text(tip, snapshot.estimated_input_tokens, snapshot.context_limit)}")
            self._persistence.flush()
            return snapshot
        except Exception:  # noqa: BLE001 - bookkeeping must never break the request
            log.exception("dcp: post-request bookkeeping failed")
            return None

    def prune(self, session_id: str, messages: list[Any], *, model: ModelRef | None = None) -> None:
        """Prune ``messages`` in place before they are sent (prepare, apply, finish), or leave them untouched.

        For hosts that hand the outgoing list itself. Never raises: on an internal failure the
        request goes out unpruned.
        """
        try:
            if not messages:
                return
            outgoing = self.prepare(session_id, messages, model=model)
            if outgoing is None:
                return
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning failed; the request is sent unchanged")
            return
        # Bookkeeping first: the context figure reads the history as stored, before placeholders.
        self.finish(outgoing, messages)
        try:
            apply(outgoing.patches)
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning failed; the request is sent unchanged")

    # -- sessions ----------------------------------------------------------------------------
    def _find(self, session_id: str) -> _Session | None:
        with self._lock:
            return self._sessions.get(session_id)

    def _session(self, session_id: str, config: DcpConfig) -> _Session:
        """The session, restored from the store on first sight; lock it before touching its state."""
        session = self._find(session_id)
        if session is None:
            stored = self._persistence.load(session_id)  # outside the runtime lock: it reads the disk
            snapshot = None
            if stored.snapshot:
                try:
                    snapshot = ContextSnapshot.from_dict(stored.snapshot)
                except ValueError:
                    snapshot = None
            state = self._resume(session_id, config, stored)
            resumed = state is not None
            if state is None:
                state = SessionState(
                    session_id,
                    config,
                    self.directory,
                    manual=stored.manual,
                    root=self.project_root,
                    tools_offered=self._tools_offered,
                    pinned=stored.pinned,
                    # The store counted requests this plugin sent for the session: their counts are of pruned requests.
                    pruned_live=stored.requests > 0,
                    what_if=self.what_if,
                )
            fresh = _Session(state, SessionBudget(snapshot), stored=stored.complete)
            if resumed:
                fresh.checkpointed = (state.epoch, state.messages_read)
            with self._lock:  # another thread may have made it meanwhile: theirs wins
                session = self._sessions.setdefault(session_id, fresh)
                self._lru.touch(session_id)
            behind = False
        else:
            behind = not session.stored
            with self._lock:
                self._lru.touch(session_id)
        with self._locked(session) as state:
            if behind:
                self._catch_up(session)
            state.reconfigure(config)
        return session

    # -- checkpoints (see host.checkpoints) ----------------------------------------------------
    def _checkpoint_folder(self) -> Checkpoints:
        """The checkpoints beside the store in use (none without a store on disk)."""
        store = self._persistence.store()
        folder = store.path.parent / FOLDER if isinstance(store, store_mod.Store) else None
        if self._checkpoints.wanted != folder:
            self._checkpoints = Checkpoints(folder)
        return self._checkpoints

    def _resume(self, session_id: str, config: DcpConfig, stored: store_mod.StoredSession) -> SessionState | None:
        """The session's state from its checkpoint, when one was written under what holds now; else None."""
        if not (config.checkpoints and stored.complete):
            return None  # without the store's pins and sweeps, a checkpoint cannot be checked
        pinned = set(stored.pinned)
        manual = {call_id: reason for call_id, reason in stored.manual.items() if call_id not in pinned}
        key = fingerprint(config, self.directory, self.project_root, self._tools_offered, pinned, manual)
        state = self._checkpoint_folder().load(session_id, key)
        if state is not None:
            state.resume(config)
        return state

    def _checkpoint(self, session: _Session, *, final: bool = False) -> None:
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

        self._checkpoint_folder().save_later(state.session_id, take)

    def wait_for_notices(self, timeout: float = 10.0) -> bool:
        """Block until the news handed to the host's notify so far was delivered (see ``Notifier.news``)."""
        return self.notifier.wait(timeout)

    def wait_for_checkpoints(self) -> None:
        """Block until every queued checkpoint is on disk."""
        self._checkpoints.wait()

    @contextmanager
    def _locked(self, session: _Session) -> Iterator[SessionState]:
        """Hold one session's lock; a session made before the host asked for the tools learns of them here."""
        with session.lock:
            if self._tools_offered:
                session.state.offer_tools(True)
            yield session.state

    def _catch_up(self, session: _Session) -> None:
        """A session first seen while the store failed: once it answers, take its saved pins and sweeps.

        Pins must hold whatever the store does; the first load is retried (the store itself backs
        off between attempts) until it succeeds.
        """
        stored = self._persistence.load(session.state.session_id)
        if not stored.complete:
            return
        session.stored = True
        state = session.state
        state.pin(stored.pinned)
        swept = {call_id: reason for call_id, reason in stored.manual.items() if call_id not in state.pinned}
        if any(state.manual.get(call_id) != reason for call_id, reason in swept.items()):
            state.manual.update(swept)
            state.restart()

    def reset(self, session_id: str) -> None:
        """Start a session's decisions over on its next request (the host says its history was rewritten)."""
        session = self._find(session_id)
        if session is not None:
            with self._locked(session) as state:
                state.restart()

    def _evict(self, keep: str) -> None:
        """Drop the sessions unused for ``idle_seconds`` and the least recently used beyond ``max_sessions``."""
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
                self._checkpoint(session, final=True)
        self._persistence.forget(session_id)

    def session_ids(self) -> list[str]:
        """The sessions this runtime holds."""
        with self._lock:
            return list(self._sessions)

    def last_outgoing(self, session_id: str) -> Outgoing | None:
        """What the latest request of a session wrote (replay and benchmarks undo and count it)."""
        with self._lock:
            return self._last.get(session_id)

    def view(self, session_id: str) -> SessionView | None:
        """A read-only picture of a session, None when it was never seen."""
        session = self._find(session_id)
        if session is None:
            return None
        with self._locked(session) as state:
            return SessionView(
                session_id,
                state.config,
                state.directory,
                tuple(state.in_force()),
                tuple(state.waiting()),
                tuple(state.ledger.records),
                state.saved_by_strategy(),
                state.restarts,
                {**state.scheduler.describe(), "pricing": pricing_for(session.model, state.config.cache).family},
                MappingProxyType(state.tools.tallies()),
                state.pinned,
                self._plugin_text(state),
            )

    def _plugin_text(self, state: SessionState) -> PluginText:
        if not (self._tools_offered and state.config.enabled):
            return PluginText()
        tools = state.config.tools
        return plugin_text(system_text(tools), definitions(tools), _list_tokens(state))

    def snapshot(self, session_id: str) -> ContextSnapshot | None:
        """The latest context snapshot of a session (restored from the store when not seen yet)."""
        session = self._find(session_id)
        if session is not None:
            with self._locked(session):
                return session.budget.latest
        stored = self._persistence.load(session_id).snapshot
        try:
            return ContextSnapshot.from_dict(stored) if stored else None
        except ValueError:
            return None

    def compaction_advice(self, session_id: str, messages: Sequence[Any] | None = None) -> CompactionOutcome | None:
        """What the compaction controller says for a session's latest snapshot; None when unknown.

        Runs the host's ``summarize`` side query only when the snapshot reached the auto
        threshold and ``contextBudget.compaction`` is enabled; the controller's circuit
        breaker stops repeated failures. Never raises.
        """
        try:
            enabled = self.config().context_budget.compaction.enabled
            session = self._find(session_id)
            if session is None:
                return None
            return session.budget.compaction_advice(enabled, self._summarize, list(messages or []))
        except Exception:  # noqa: BLE001 - advice is optional; the request goes on without it
            log.exception("dcp: compaction advice failed")
            return None

    def flush(self) -> None:
        """Write the queued statistics now (they otherwise go out at most every few seconds and at exit)."""
        self._persistence.flush(force=True)

    def stored_stats(self, session_id: str) -> tuple[store_mod.Stats | None, store_mod.Stats | None]:
        """(this session's, all sessions') statistics from the store; (None, None) without one."""
        return self._persistence.stats(session_id)

    def store_busy(self) -> bool:
        """Whether the store's latest answer was that another process holds its file locked."""
        return self._persistence.busy()

    def sweep(self, session_id: str, messages: Sequence[Any], count: int | None) -> SweepOutcome | None:
        """Prune every finished call since the last user message (or the last ``count`` calls) at once."""
        session = self._find(session_id)
        if session is None:
            return None
        with self._locked(session) as state:
            selection = select(
                state.ledger.records,
                messages,
                count,
                state.config.sweep_protected(),
                state.protector,
                state.config.strategy_section(DEDUPLICATION).ignore_fields,
                state.pinned,
            )
            swept = state.sweep(messages, selection.eligible, waiting=selection.waiting)
            applied = state.take_new_applied()
            if applied:
                self._debug(state, self._persistence.record(session_id, applied))
        self._persistence.record_manual(session_id, {d.call_id: d.strategy for d in swept if d.strategy == SWEEP})
        return SweepOutcome(selection, tuple(swept), state.directory)

    def pin(self, session_id: str, idents: Sequence[str], pinned: bool = True) -> PinOutcome | None:
        """Pin (or unpin) the calls the short ids name in the session as last synced; None for an unknown session.

        A change starts the session's decisions over on its next request, so a pinned output
        that carried a placeholder goes out whole again, and an unpinned one may be pruned again.
        Pins are saved at once, like sweeps.
        """
        session = self._find(session_id)
        if session is None:
            return None
        with self._locked(session) as state:
            found: list[CallRecord] = []
            unknown: list[str] = []
            for ident in idents:
                key = normalize_id(ident)
                record = state.ledger.by_ident.get(key) if key is not None else None
                if record is None:
                    unknown.append(ident)
                elif all(r.call_id != record.call_id for r in found):
                    found.append(record)
            pruned = {r.call_id for r in found if restorable(r)}  # a placeholder is written for it now
            changed = set(state.pin([r.call_id for r in found], pinned))
        self._persistence.record_pins(session_id, {call_id: pinned for call_id in changed})
        return PinOutcome(
            pinned,
            tuple(r for r in found if r.call_id in changed),
            tuple(r for r in found if r.call_id not in changed),
            tuple(unknown),
            tuple(r for r in found if r.call_id in changed and r.call_id in pruned),
        )

    # -- the model's tools ---------------------------------------------------------------------
    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools to offer the model (``{name, description, parameters}``); asking says the host offers them.

        From then on every session writes prunable lists, and calls of these tools found in a
        history are judged and their prunes made. Empty when the plugin is disabled.
        """
        config = self.config()
        # Each session learns of it the next time it is locked (see _locked): none waits for another.
        self._tools_offered = True
        return definitions(config.tools) if config.enabled else []

    def system_text(self) -> str | None:
        """What to add to the system prompt while the tools are offered: the same text on every request."""
        config = self.config()
        if not (config.enabled and self._tools_offered):
            return None
        return system_text(config.tools)

    def execute_tool(
        self,
        session_id: str,
        name: str,
        arguments: Any,
        messages: Sequence[Any],
        *,
        call_id: str | None = None,
        model: ModelRef | None = None,
    ) -> ToolResult | None:
        """Run a call of discard, extract or restore; None for a tool that is not the plugin's. Never raises.

        ``messages`` is the session's stored history (never a pruned copy): the requests up to
        the call, or also the message holding the call (found by ``call_id``), which is then
        left out, since the call is judged on the history the model saw when it made it. The
        prunes of an accepted call are made when the call appears in a later request's history
        (so a restart or a replay makes the same ones); a restore answers with the originals.
        """
        if name not in TOOL_NAMES:
            return None
        try:
            config = self.config()
            if not config.enabled:
                return ToolResult("dcp is turned off (enabled: false in dcp.jsonc); nothing was changed.", True, f"{name}: off")
            if not self._tools_offered:
                self.tool_definitions()
            cut = _call_message(messages, call_id)
            with self._locked(self._session(session_id, config)) as state:
                if cut >= state.ledger.mark.count:
                    host_model = (model or ModelRef()).merged_over(self._startup_model)
                    state.update(messages[:cut], request=True, model=host_model)
                verdict = state.judge_call(messages[:cut], name, arguments, call_id or "")
            return ToolResult(verdict.text, not verdict.accepted, verdict.title)
        except Exception as exc:  # noqa: BLE001 - the model gets an answer, the host keeps going
            log.exception("dcp: the %s tool failed", name)
            return ToolResult(f"dcp: {name} failed inside the plugin ({type(exc).__name__}); nothing was changed.", True, f"{name}: failed")

    # -- commands ----------------------------------------------------------------------------
    def sync_for_command(
        self, session_id: str, messages: Sequence[Any] | None, model: ModelRef | None
    ) -> ContextSnapshot | None:
        """Bring a session up to date for a command without counting a request; its snapshot."""
        if messages is None:
            return self.snapshot(session_id)
        outgoing = None
        try:
            outgoing = self.prepare(session_id, messages, model=model, request=False)
        except Exception:  # noqa: BLE001 - report what is known rather than nothing
            log.exception("dcp: could not sync session %s for /dcp", session_id)
        if outgoing is not None:
            return self.finish(outgoing, messages, request=False)
        return None

    # -- sinks -------------------------------------------------------------------------------
    def _notify_pruned(self, state: SessionState, decisions: list[Decision]) -> None:
        totals = state.scheduler.totals
        net = net_sentence(totals.cost_without, totals.cost_with)
        text = format_notification(decisions, state.config.prune_notification, net)
        if text is not None:
            self.notifier.news(state.session_id, text)

    def _debug(self, state: SessionState, decisions: list[Decision]) -> None:
        if not state.config.debug:
            return
        from dcp_plugin.host.debuglog import DebugLog, state_dir

        path = state_dir() / "debug.log"
        with self._lock:  # one log file for every session
            if self._debug_log is None or self._debug_log.path != path:
                if self._debug_log is not None:
                    self._debug_log.close()
                self._debug_log = DebugLog(path)
            for d in decisions:
                self._debug_log.decision(
                    state.session_id,
                    d.call_id,
                    d.tool,
                    d.strategy,
                    f"turn={d.record.turn} field={d.field} tokens_saved={d.tokens_saved}",
                )


def _list_tokens(state: SessionState) -> int:
    """Tokens the prunable lists written in a session add to every request."""
    return -sum(d.tokens_saved for d in state.applied if d.is_list and not d.superseded)


def _call_message(messages: Sequence[Any], call_id: str | None) -> int:
    """The index of the message holding the tool call ``call_id`` (searched from the end), else the list's length."""
    index = call_message(messages, call_id) if call_id else None
    return len(messages) if index is None else index
