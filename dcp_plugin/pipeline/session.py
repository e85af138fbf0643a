"""Per-session pruning state: the ledger, the strategies in registry order, and the decisions taken so far."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dcp_plugin.budget.limits import resolve_context_limit
from dcp_plugin.budget.thresholds import Thresholds, compute_thresholds, tier
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.pipeline.conversation import ModelRef, info_of, is_assistant, message_time, model_ref
from dcp_plugin.pipeline.ledger import CallRecord, Ledger
from dcp_plugin.pipeline.modeltools import REFUSED, Call, ModelTools, Scope, Verdict, judge
from dcp_plugin.pipeline.modeltools.state import LIST_STRATEGY
from dcp_plugin.pipeline.placeholders import (
    CutOutput,
    Decision,
    Edit,
    ShrinkInput,
    decide,
    note,
    sweep_edit,
    withdrawal,
)
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths
from dcp_plugin.pipeline.scheduler import Point, Scheduler
from dcp_plugin.pipeline.strategies import REGISTRY, SWEEP, FinishedCall, Progress, Strategy
from dcp_plugin.pipeline.tokens import estimate_message_tokens, reported_usage

# Process-wide, so that an epoch of a dropped session never equals one of a new session.
_EPOCHS = itertools.count(1)


def build_strategies(config: DcpConfig) -> list[tuple[str, Strategy]]:
    """The enabled strategies, in registry order, each built from its own config section."""
    built: list[tuple[str, Strategy]] = []
    for spec in REGISTRY:
        strategy = spec.build(config.strategy_section(spec.name))
        if strategy is not None:
            built.append((spec.name, strategy))
    return built


class _LateChange(Exception):
    """A message already sent in a scheduled request changed: the implied history must be replayed."""


class SessionState:
    """Everything the plugin remembers about one session between requests.

    Decisions of one *epoch* only grow: they start over (a new epoch) when the history is
    rewritten, the config changes, or a caller asks for it; consumers that cache anything
    derived from the decisions compare epochs, never object identities.

    A message list implies its own request history: the request before each assistant
    message held every message before it, sent at the newest timestamp among them, and the
    request being made now holds them all. :meth:`update` walks that history, so a session
    seen for the first time (a restart, a rewritten history) ends exactly where incremental
    operation would have: every decision is first pending, and the scheduler writes it at the
    first request where writing pays; from then on it is written on every request.
    """

    def __init__(
        self,
        session_id: str,
        config: DcpConfig,
        directory: str,
        manual: Mapping[str, str] | None = None,
        root: str | None = None,
        tools_offered: bool = False,
        pinned: Iterable[str] = (),
    ) -> None:
        self.session_id = session_id
        self.tools_offered = tools_offered  # the host offers the model the discard/extract/restore tools
        self.directory = directory
        self.root = root  # the project root relative protected patterns are anchored to (default: directory)
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, directory, root)
        # Calls pruned by the user (call id -> reason): survive every restart and are re-applied.
        self.manual: dict[str, str] = dict(manual or {})
        # Calls pinned by the user (call ids): nothing prunes them. An input like the config: a
        # change starts a new epoch, so the decisions always follow from history, config and pins.
        self.pinned: frozenset[str] = frozenset(pinned)
        for call_id in self.pinned:
            self.manual.pop(call_id, None)
        self.restarts = 0
        self.epoch = 0
        self.host_model: ModelRef | None = None  # the host's model for the current request (its limit)
        self.points = 0  # requests of the implied history scheduled in this epoch
        self.scheduled_end = 0  # messages held by the latest scheduled request
        self.ledger = Ledger()
        self.scheduler = Scheduler()
        self.strategies: list[tuple[str, Strategy]] = []
        self.tools = ModelTools(config, tools_offered)
        self.decisions: list[Decision] = []  # every decision of this epoch, in the order made
        self.applied: list[Decision] = []  # in the order applied; a prefix never changes within an epoch
        self.new_applied: list[Decision] = []  # applied since the last take_new_applied()
        self.in_force_count = 0  # how many applied decisions are in force
        self._young: list[tuple[int, int, int, CallRecord, str, Edit]] = []
        self._young_order = itertools.count()  # ties between strategies on one call keep strategy order
        self._open_end = -1  # messages of the latest update's own request, not known to be answered yet
        self._user_saved = 0  # tokens the user's sweeps remove beyond what strategies had decided there
        self._list: Decision | None = None  # the newest prunable list written
        self._timeline = 0  # messages read for request points, times and models
        self._time_ms = 0  # newest timestamp among them
        self._model: ModelRef | None = None  # newest model they name
        self._ladder_model: ModelRef | None = None
        self._ladder_value: Thresholds | None = None
        self._start_over()

    # -- lifecycle ---------------------------------------------------------------------------
    def _start_over(self) -> None:
        """A new epoch: forget everything derived from the history (manual sweeps stay)."""
        self.epoch = next(_EPOCHS)
        self.points = 0
        self.scheduled_end = 0
        self.ledger = Ledger()
        self.scheduler = Scheduler(self.config.cache.scheduler, self.config.cache.overdraft)
        self.strategies = build_strategies(self.config)
        self.tools = ModelTools(self.config, self.tools_offered)
        self.decisions = []
        self.applied = []
        self.new_applied = []
        self.in_force_count = 0
        self._young = []
        self._young_order = itertools.count()
        self._open_end = -1
        self._user_saved = 0
        self._list = None
        self._timeline = 0
        self._time_ms = 0
        self._model = None

    def restart(self) -> None:
        """Start over on the next update, as if the history were new."""
        self.restarts += 1
        self._start_over()

    def reconfigure(self, config: DcpConfig) -> None:
        """Adopt a changed config: decisions are recomputed from scratch on the next update."""
        # The config source hands back the same object until a file changes: skip the deep compare.
        if config is self.config or config == self.config:
            return
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, self.directory, self.root)
        self.restart()

    def pin(self, call_ids: Iterable[str], pinned: bool = True) -> list[str]:
        """Pin (or unpin) calls; the ids whose pin changed. A change starts over on the next update.

        Pinning a call takes back the user's sweep of it: a pin means the whole output stays.
        """
        wanted = set(call_ids)
        changed = sorted(wanted - self.pinned) if pinned else sorted(wanted & self.pinned)
        if not changed:
            return []
        self.pinned = self.pinned | wanted if pinned else self.pinned - wanted
        if pinned:
            for call_id in changed:
                self.manual.pop(call_id, None)
        self.restart()
        return changed

    def offer_tools(self, offered: bool) -> None:
        """The host starts (or stops) offering the model tools: their calls and lists are derived anew."""
        if offered != self.tools_offered:
            self.tools_offered = offered
            self.restart()

    @property
    def latest_model(self) -> ModelRef | None:
        """The newest model the messages read so far name (kept as they are read: no scan per request)."""
        return self._model

    @property
    def saved_tokens(self) -> int:
        """Tokens the applied decisions in force remove from every request."""
        return self.scheduler.saved

    # -- the request path --------------------------------------------------------------------
    def update(
        self,
        messages: Sequence[Any],
        changed_from: int | None = None,
        *,
        request: bool = True,
        model: ModelRef | None = None,
    ) -> None:
        """Bring the state up to date with ``messages``: every request they imply, then this one.

        ``changed_from``: the host resent messages from this index on (their ids unchanged).
        ``request=False`` syncs without scheduling a request (a command reads the state).
        ``model``: the host's model for this request (its context limit decides the tiers).
        """
        self.host_model = model
        if not self.ledger.continues(messages, changed_from):
            self.restart()
            changed_from = None
        try:
            self._walk(messages, changed_from, request)
        except _LateChange:
            # Only a host that changes messages after sending them gets here (OpenCode does
            # not): replaying keeps the result equal to a from-scratch run on the new list.
            self.restart()
            self._walk(messages, None, request)

    def _walk(self, messages: Sequence[Any], changed_from: int | None, request: bool) -> None:
        end = len(messages)
        for index in range(self._timeline, end):
            message = messages[index]
            if is_assistant(message):
                if index > self.scheduled_end:
                    self._sync(messages, index, changed_from, point=True)
                    changed_from = None
                    self._schedule(messages, index)
                elif index == self._open_end:
                    # The request the last update ended with was answered: its messages are a point now.
                    self._sync(messages, index, changed_from, point=True)
                    changed_from = None
            self._read(message, index)
            self._timeline = index + 1
        self._sync(messages, end, changed_from, point=False)
        self._open_end = end
        if request and end > self.scheduled_end:
            self._schedule(messages, end)

    def _read(self, message: Any, index: int) -> None:
        """Take a message into the timeline: its tokens, its time, its model, the overhead it reports."""
        scheduler = self.scheduler
        if index == scheduler.messages:
            if scheduler.overhead == 0 and is_assistant(message):
                usage = reported_usage(message)
                if usage is not None:
                    scheduler.overhead = max(0, usage.prompt - scheduler.sent_prefix(index))
            scheduler.add_message(estimate_message_tokens(message, self.config.context_budget.image_token_estimate))
        self._time_ms = max(self._time_ms, message_time(message))
        ref = model_ref(info_of(message))
        if ref is not None and ref.model_id is not None:
            self._model = ref

    def _schedule(self, messages: Sequence[Any], count: int) -> None:
        """Schedule the request that holds the first ``count`` messages (and write its prunable list, if due)."""
        model = (self._model or ModelRef()).merged_over(self.host_model)
        tokens = self.scheduler.sent_prefix(count) + self.scheduler.overhead
        ladder = self._ladder()
        listing = self.tools.listing(
            self.ledger, messages, self.directory, self.scheduled_end, count, tier(tokens, ladder), tokens, ladder.window
        )
        if listing is not None:
            self._write_list(messages, listing.host, listing.text)
        point = Point(
            count,
            self._time_ms,
            (model.provider_id, model.model_id),
            pricing_for(model, self.config.cache),
            tokens >= ladder.auto,
        )
        self.points += 1
        for decision in self.scheduler.at(point, self.points):
            self._mark_applied(decision)
        self.scheduled_end = count

    def _write_list(self, messages: Sequence[Any], host: CallRecord, text: str) -> None:
        """Append a new list to ``host``'s output, and take the previous list out once that pays.

        The new list is at the tail (free to write); the previous one lies in the cached prefix, so
        taking it out waits for the scheduler like any prune (when the cache is cold, say).
        """
        state = self.ledger.state_of(messages, host)
        added = note(host, LIST_STRATEGY, text, state) if state is not None else None
        if added is None:
            return
        host.note = added
        self._pend(added)
        previous, self._list = self._list, added
        if previous is None or previous.superseded or previous.record.note is not previous:
            return
        old_state = self.ledger.state_of(messages, previous.record)
        gone = withdrawal(previous, old_state) if old_state is not None else None
        if gone is not None:
            previous.record.note = gone
            self._pend(gone)

    def _sync(self, messages: Sequence[Any], end: int, changed_from: int | None, *, point: bool) -> None:
        """Observe the calls finished in the first ``end`` messages, then let time-driven strategies act.

        ``point``: these messages are exactly those of a request the history shows was made and
        answered (the next message is the model's); only then do strategies that act on the
        context's size look at it, so they act at the same places in every run.
        """
        ledger = self.ledger
        result = ledger.sync(messages, changed_from, end)
        if any(record.message_index < self.scheduled_end for record in result.finished):
            raise _LateChange()
        # Each call's consequences are decided before the next call's, strategies in registry
        # order: who claims a field first follows the conversation, however requests cut it.
        # One message's calls at a time (they arrive in order): the model's tool calls among them
        # are judged on the history before that message, as they were when the host ran them.
        for _, calls in itertools.groupby(result.finished, key=lambda record: record.message_index):
            group = list(calls)
            states = [ledger.state_of(messages, record) or {} for record in group]
            owned = [(record, state) for record, state in zip(group, states, strict=True) if self.tools.owns(record)]
            if owned:
                self._take_calls(messages, owned)
            for record, state in zip(group, states, strict=True):
                self._observe(messages, record, state)
        self._release_young(messages)
        # Time-driven strategies see every decision the calls so far led to, whenever they came.
        progress = Progress(
            ledger.turn,
            result.new_turns,
            point,
            self._ladder(),
            self.directory,
            lambda: self._context_tokens(end),
            lambda record: ledger.state_of(messages, record),
        )
        for name, strategy in self.strategies:
            for record, edit in strategy.advance(progress):
                self._gate(messages, record, name, edit)
        self._release_young(messages)

    def _observe(self, messages: Sequence[Any], record: CallRecord, state: dict[str, Any]) -> None:
        """A call reached its final status: re-apply the user's sweep of it, then let each strategy see it."""
        paths = extract_paths(record.tool, state.get("input"))
        call = FinishedCall(
            record,
            state,
            paths,
            absolute_path(paths[0], self.directory) if paths else None,
            self.protector.is_protected(paths) if paths else False,
            self.directory,
            record.call_id in self.pinned,
        )
        self.tools.observe(record, state, call.protected or call.pinned)
        reason = self.manual.get(record.call_id)
        if reason is not None:
            decision = self._decide(messages, record, reason, sweep_edit(state), by_user=True)
            if decision is not None and decision.applied_at is None:
                self._force([decision])
        for name, strategy in self.strategies:
            for target, edit in strategy.observe(call):
                self._gate(messages, target, name, edit)

    # -- the model's tools --------------------------------------------------------------------
    def _scope(self, messages: Sequence[Any]) -> Scope:
        return Scope(
            self.ledger,
            messages,
            self.config,
            self.protector,
            self.directory,
            self.tools.guard,
            self.tools.prunable_ids,
            self.tools.protected,
            self.pinned,
        )

    def _take_calls(self, messages: Sequence[Any], calls: list[tuple[CallRecord, dict[str, Any]]]) -> None:
        """Judge the model's calls of one message, and make the prunes of the accepted ones.

        The calls are judged independently, as they were when the host ran them (none of them had
        seen another's result); a call whose stored result says it was refused, or that failed,
        never prunes anything.
        """
        scope = self._scope(messages)
        verdicts: list[Verdict] = []
        for record, state in calls:
            verdict = judge(scope, Call(record.tool, state.get("input"), record.call_id, record.message_index, record.step, record.turn))
            output = state.get("output")
            stored_ok = state.get("status") == "completed" and not (isinstance(output, str) and output.startswith(REFUSED))
            if verdict.accepted and not stored_ok:
                verdict = Verdict(verdict.call_id, verdict.tool, False, str(output or state.get("error") or ""), verdict.title)
            verdicts.append(verdict)
        for verdict in verdicts:
            for target, edit in verdict.prunes if verdict.accepted else ():
                self._decide(messages, target, verdict.tool, edit)
        self.tools.record(verdicts, [r.step for r, _ in calls], [r.turn for r, _ in calls])

    def judge_call(self, messages: Sequence[Any], name: str, arguments: Any, call_id: str) -> Verdict:
        """The verdict on a call the host is about to run, against the history synced so far.

        The caller syncs the history before the call's message first (the request the model
        answered with the call); the same call found in the history later gets the same verdict.
        """
        known = self.tools.verdicts.get(call_id)
        if known is not None:
            return known
        record = self.ledger.by_call.get(call_id)
        if record is not None:
            call = Call(name, arguments, call_id, record.message_index, record.step, record.turn)
        else:
            call = Call(name, arguments, call_id, self.ledger.mark.count, self.ledger.steps + 1, self.ledger.turn)
        return judge(self._scope(messages), call)

    def _context_tokens(self, end: int) -> int:
        """The estimated prompt of a request holding the first ``end`` messages with every decision so far written.

        Waiting decisions count as written: what a strategy decides never depends on when the
        scheduler writes placeholders.
        """
        scheduler = self.scheduler
        # What a user swept does not count: a restart re-applies sweeps from the start, where they
        # would otherwise have relieved the pressure earlier than they did the first time.
        return scheduler.sent_prefix(end) - scheduler.pending_tokens + scheduler.overhead + self._user_saved

    def _ladder(self) -> Thresholds:
        """The budget ladder of the model the current request goes to (remembered per model)."""
        model = (self._model or ModelRef()).merged_over(self.host_model)
        if model != self._ladder_model or self._ladder_value is None:
            limit, _ = resolve_context_limit(model.model_id, model.context_limit)
            self._ladder_model = model
            self._ladder_value = compute_thresholds(limit)
        return self._ladder_value

    def _gate(self, messages: Sequence[Any], record: CallRecord, name: str, edit: Edit) -> None:
        protection = self.config.turn_protection
        if protection.enabled and self.ledger.turn - record.turn < protection.turns:
            heapq.heappush(self._young, (record.turn, record.seq, next(self._young_order), record, name, edit))
        else:
            self._decide(messages, record, name, edit)

    def _release_young(self, messages: Sequence[Any]) -> None:
        young = self._young
        if not young:
            return
        limit = self.ledger.turn - self.config.turn_protection.turns
        while young and young[0][0] <= limit:
            _, _, _, record, name, edit = heapq.heappop(young)
            self._decide(messages, record, name, edit)

    def _decide(
        self, messages: Sequence[Any], record: CallRecord, name: str, edit: Edit, *, by_user: bool = False
    ) -> Decision | None:
        if record.call_id in self.pinned:
            return None  # the one place every prune passes: strategies, the model's tools, sweeps
        state = self.ledger.state_of(messages, record)
        if state is None:
            return None
        field = "input" if isinstance(edit, ShrinkInput) else "output"
        current = record.output_decision if field == "output" else record.input_decision
        if current is not None:
            # The first whole replacement of a field keeps it. A partial cut gives way to a whole
            # replacement, and a later cut joins an earlier one: both sets of ranges are cut.
            if current.cuts is None:
                return None
            if isinstance(edit, CutOutput):
                edit = CutOutput(tuple(sorted(set(current.cuts) | set(edit.cuts))))
        decision = decide(record, name, edit, state)
        if decision is None:
            return None
        if current is not None:
            if decision.cuts == current.cuts:
                return None
            self._supersede(current, decision)
        elif decision.field == "output" and record.note is not None:
            self._take_over_note(record.note, decision)
            record.note = None
        if by_user:
            self._user_saved += decision.tokens_saved - (current.tokens_saved if current is not None else 0)
        if decision.field == "output":
            record.output_decision = decision
            if decision.cuts is None:
                self.tools.pruned(record)  # a whole placeholder: no longer the model's to prune
        else:
            record.input_decision = decision
        self._pend(decision)
        return decision

    def _supersede(self, current: Decision, decision: Decision) -> None:
        """``decision`` replaces ``current`` on its field: at once while ``current`` waits, else when written."""
        if current.applied_at is None:
            current.superseded = True
            self.scheduler.unpend(current)
            decision.replaces = current.replaces
        else:
            decision.replaces = current

    def _take_over_note(self, current: Decision, decision: Decision) -> None:
        """A prune rewrites an output that carries a prunable list: the list goes when the prune is written.

        ``current`` is the list, or the withdrawal that takes it out again; a withdrawal still
        waiting is dropped, one already written has taken the list out and stays as it is.
        """
        listed = current.withdraws
        if listed is None:
            self._supersede(current, decision)
        elif current.applied_at is None:
            current.superseded = True
            self.scheduler.unpend(current)
            self._supersede(listed, decision)

    def _pend(self, decision: Decision) -> None:
        self.decisions.append(decision)
        self.scheduler.pend(decision)
        if not self.scheduler.enabled:
            # `cache.scheduler: false`: written as soon as it is made, as the first release did.
            self._force([decision])

    def _force(self, decisions: list[Decision]) -> None:
        self.scheduler.force(decisions, self.points)
        for decision in decisions:
            self._mark_applied(decision)

    def _mark_applied(self, decision: Decision) -> None:
        if decision.withdraws is not None:
            # Its own write removes the list's tokens; the list's patch is replaced by the output as stored.
            decision.withdraws.superseded = True
        self.applied.append(decision)
        if decision.note:
            return
        self.new_applied.append(decision)
        if decision.replaces is None or decision.replaces.note:
            self.in_force_count += 1

    # -- user decisions ----------------------------------------------------------------------
    def sweep(
        self,
        messages: Sequence[Any],
        records: Sequence[CallRecord],
        reason: str = SWEEP,
        waiting: Sequence[Decision] = (),
    ) -> list[Decision]:
        """Prune calls by explicit user request, at once, and write the ``waiting`` decisions now too.

        Returns the decisions that took effect.
        """
        done: list[Decision] = [d for d in waiting if d.applied_at is None and not d.superseded]
        for record in records:
            if record.call_id in self.pinned:
                continue
            self.manual[record.call_id] = reason
            state = self.ledger.state_of(messages, record)
            if state is None:
                continue
            decision = self._decide(messages, record, reason, sweep_edit(state), by_user=True)
            if decision is not None:
                done.append(decision)
        self._force([d for d in done if d.applied_at is None])
        return done

    # -- what consumers read -----------------------------------------------------------------
    def in_force(self) -> list[Decision]:
        """The applied prunes whose placeholders are written now, in the order applied (lists are not prunes)."""
        return [d for d in self.applied if not d.superseded and not d.note]

    def waiting(self) -> list[Decision]:
        """Decisions whose placeholders wait for the cache to expire or for their batch to pay."""
        return [d for d in self.decisions if d.applied_at is None and not d.superseded and not d.note]

    def take_new_applied(self) -> list[Decision]:
        """Decisions applied since the last call (notifications, logs, persistence)."""
        out, self.new_applied = self.new_applied, []
        return out

    def saved_by_strategy(self) -> dict[str, tuple[int, int]]:
        """Per strategy: (calls pruned, estimated tokens saved per request), decisions in force only."""
        totals: dict[str, tuple[int, int]] = {}
        for decision in self.applied:
            if decision.superseded or decision.note:
                continue
            count, tokens = totals.get(decision.strategy, (0, 0))
            totals[decision.strategy] = (count + 1, tokens + decision.tokens_saved)
        return totals
