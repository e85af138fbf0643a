"""One session's pruning state: wires the ledger, the strategies, the arbiter, the scheduler and the timeline."""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from mypy_extensions import mypyc_attr

from dcp_plugin.budget.limits import resolve_context_limit
from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.budget.thresholds import Thresholds, compute_thresholds, tier
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.cost.totals import CostTotals
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import FINAL_STATUSES, Message, ToolState, call_id_of, locate, parts_of
from dcp_plugin.model.refs import ModelRef, request_model
from dcp_plugin.pipeline.arbiter import Arbiter
from dcp_plugin.pipeline.decisions import CallRecord, Decision, sweep_edit
from dcp_plugin.pipeline.freshness import kept_went_stale
from dcp_plugin.pipeline.gcpause import gc_paused
from dcp_plugin.pipeline.ids import normalize_id
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.modeltools import REFUSED, Call, ListPoint, ModelTools, Scope, Tally, Verdict, judge
from dcp_plugin.pipeline.patches import Patches, plan
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths
from dcp_plugin.pipeline.scheduler import Point, PointCost, Scheduler
from dcp_plugin.pipeline.strategies import (
    DEDUPLICATION,
    REGISTRY,
    SWEEP,
    FinishedCall,
    Progress,
    Strategy,
    acts_with_time,
)
from dcp_plugin.pipeline.strategies.roster import Roster
from dcp_plugin.pipeline.sweep import SweepPlan, select
from dcp_plugin.pipeline.timeline import Timeline
from dcp_plugin.pipeline.walk import Walk

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


# Keyed by plain values, not the ModelRef: the cache's key and hash are then built in C (per request).
@functools.lru_cache(maxsize=64)
def ladder_of(model_id: str | None, context_limit: int | None) -> Thresholds:
    """The budget ladder of a model: its thresholds for its context limit (the host's, else the table's)."""
    limit, _ = resolve_context_limit(model_id, context_limit)
    return compute_thresholds(limit)


def _cold(messages: Sequence[Message], end: int) -> bool:
    """The next request's cache is cold: the pricing has no cache."""
    return True


def _pair_message_index(pair: tuple[CallRecord, ToolState]) -> int:
    """The message a (record, state) pair's call is in: the key that groups one message's calls."""
    return pair[0].message_index


# Messages left to walk from which an update pauses the cyclic collector: a warm request walks a
# few messages and is left alone; a first sight or a restart of a long session walks them all.
PAUSE_GC_FROM = 1000


def _as_stored(verdict: Verdict, state: ToolState) -> Verdict:
    """The verdict as the call's stored result has it: a refusal when the host stored a refusal or a failure."""
    output = state.get("output")
    stored_ok = state.get("status") == "completed" and not (isinstance(output, str) and output.startswith(REFUSED))
    if verdict.accepted and not stored_ok:
        return Verdict(verdict.call_id, verdict.tool, False, str(output or state.get("error") or ""), verdict.title)
    return verdict


class _LateChange(Exception):
    """A message already sent in a scheduled request changed: the implied history must be replayed.

    A safety net behind the continuity verdict, for hosts that resend without saying so (the
    verdict said ``same`` or ``appended``, yet a call finished in a message a request carried):
    the walk's verdict becomes ``rewritten`` and it is walked again.
    """


@mypyc_attr(allow_interpreted_subclasses=True)
class SessionState:
    """Everything the plugin remembers about one session between requests.

    Decisions of one *epoch* only grow: they start over (a new epoch) when the history is
    rewritten, the config changes, or a caller asks for it; consumers that cache anything
    derived from the decisions compare epochs, never object identities.

    :meth:`update` walks the request history the messages imply (:mod:`.timeline`), so a
    session seen for the first time (a restart, a rewritten history) ends exactly where
    incremental operation would have: every decision is first pending, and the scheduler writes
    it at the first request where writing pays; from then on it is written on every request.

    What lasts across epochs is set in ``__init__``; what an epoch derives from the history
    (ledger, scheduler, strategies, the model's tools, timeline, arbiter) is built fresh by
    :meth:`_start_over`, and nowhere else.
    """

    epoch: int
    ledger: Ledger
    scheduler: Scheduler
    strategies: list[tuple[str, Strategy]]
    timed: list[tuple[str, Strategy]]  # the strategies whose advance may propose something
    tools: ModelTools
    timeline: Timeline
    arbiter: Arbiter
    _roster: Roster | None = None  # the strategies sorted by what they act on, built on first use per epoch

    def __init__(
        self,
        session_id: str,
        config: DcpConfig,
        directory: str,
        manual: Mapping[str, str] | None = None,
        root: str | None = None,
        tools_offered: bool = False,
        pinned: Iterable[str] = (),
        pruned_live: bool = False,
        what_if: bool = False,
        log_costs: bool = False,
    ) -> None:
        self.session_id = session_id
        # Whether the plugin has pruned a request of this session as it was sent (here or in an
        # earlier process, as the store says). Until it has, the provider's counts in the history
        # were taken on requests sent whole, and the context now takes every placeholder off them.
        self.pruned_live = pruned_live
        self.what_if = what_if  # requests sent go to no provider: they never make the history's counts
        self.log_costs = log_costs  # keep every request's cost (take_costs), not only the latest one's
        self.tools_offered = tools_offered  # the host offers the model the discard/extract/restore tools
        self.directory = directory
        self.root = root  # the project root relative protected patterns are anchored to (default: directory)
        self.config: DcpConfig
        self.protector: PathProtector
        self._adopt(config)
        # Calls pruned by the user (call id -> reason): survive every restart and are re-applied.
        self.manual: dict[str, str] = dict(manual or {})
        # Calls pinned by the user (call ids): nothing prunes them. An input like the config: a
        # change starts a new epoch, so the decisions always follow from history, config and pins.
        self.pinned: frozenset[str] = frozenset(pinned)
        for call_id in self.pinned:
            self.manual.pop(call_id, None)
        self.restarts = 0
        # The context meter outlives epochs: what its calibration learned stays after a start-over.
        self.meter = ContextMeter()
        # Loaded from a checkpoint and not updated since: the next update checks every message id.
        self._resumed = False
        # Whether the rows' fits were recorded by the plan of the latest request (set by its plan,
        # taken by the next request's update): only then may a host's word stand for them.
        self._fits_recorded = False
        self._fits_trusted = False
        self._start_over()

    # -- lifecycle ---------------------------------------------------------------------------
    def _start_over(self) -> None:
        """A new epoch: fresh parts, nothing derived from the history kept (manual sweeps stay)."""
        config = self.config
        self.epoch = next(_EPOCHS)
        self.ledger = Ledger()
        self.scheduler = Scheduler(config.cache.scheduler, config.cache.overdraft, log_costs=self.log_costs)
        self.strategies = build_strategies(config)
        self.timed = [(name, strategy) for name, strategy in self.strategies if acts_with_time(strategy)]
        # What _request_model resolved last: (the newest message's model, the host's) and the budget ladder
        # and scheduler Point they lead to. Only a request's size and time change while the model stays,
        # so one Point serves all its requests.
        self._resolved: tuple[ModelRef | None, ModelRef | None, Thresholds, Point] | None = None
        self.tools = ModelTools(config, self.tools_offered)
        self.meter.reset()
        self.timeline = Timeline(self.scheduler, config.context_budget.image_token_estimate, self.meter)
        self.arbiter = Arbiter(self.ledger, self.scheduler, self.timeline, self.tools, config.turn_protection, self.pinned)

    def restart(self) -> None:
        """Start over on the next update, as if the history were new."""
        self.restarts += 1
        self._start_over()

    def resume(self, config: DcpConfig) -> None:
        """This state was loaded from a checkpoint: take ``config`` (equal to its own) and a new epoch number.

        The host may have rewritten any message while no process watched it: the next update
        checks every message id read so far, not only the history's fingerprint.
        """
        self._adopt(config)
        self.epoch = next(_EPOCHS)
        self._resumed = True
        self._fits_recorded = self._fits_trusted = False  # no request of this process planned yet

    @property
    def messages_read(self) -> int:
        """Messages of the current history this epoch has read (a checkpoint saves walking them again)."""
        return self.timeline.read

    def reconfigure(self, config: DcpConfig) -> None:
        """Adopt a changed config: decisions are recomputed from scratch on the next update."""
        # The config source hands back the same object until a file changes: skip the deep compare.
        if config is self.config or config == self.config:
            return
        self._adopt(config)
        self.restart()

    def _adopt(self, config: DcpConfig) -> None:
        """Use ``config`` from now on, with the protected paths it names."""
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, self.directory, self.root)

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
        return self.timeline.model

    @property
    def saved_tokens(self) -> int:
        """Tokens the applied decisions in force remove from every request."""
        return self.scheduler.saved

    # -- the request path --------------------------------------------------------------------
    def patches(
        self,
        messages: Sequence[Message],
        since: tuple[int, int] | None,
        verdict: Continuity,
        *,
        request: bool = True,
        write: bool = False,
    ) -> tuple[Patches, bool]:
        """The decisions in force paired with ``messages``: only those newer than ``since`` (a caller's token) when
        it still holds, with whether that was so. Raises Desync when a decided call moved.

        ``request=False``: ``messages`` is not a request (a command reads the state); what its
        check finds does not stand for the next request. ``write``: the patches are written into
        ``messages`` as they are planned (nothing is, on Desync).
        """
        applied = self.applied
        if (
            since is not None
            and since[0] == self.epoch
            and 0 <= since[1] <= len(applied)
            and not kept_went_stale(applied[: since[1]], messages, verdict)
        ):
            return plan(messages, applied[since[1] :], since_token=True, write=write), True
        # The host's word on an unchanged prefix stands only against the checks of the request it
        # compares with: the latest one, planned here (not a command's list).
        vouched = verdict.unchanged if request and self._fits_trusted else 0
        planned = plan(messages, applied, unchanged_before=vouched, record=request, write=write)
        if request:
            self._fits_recorded = True
        return planned, False

    def update(
        self,
        messages: Sequence[Message],
        continuity: Continuity | None = None,
        *,
        request: bool = True,
        model: ModelRef | None = None,
    ) -> Continuity:
        """Bring the state up to date with ``messages``: every request they imply, then this one.

        ``continuity``: what the host says of the list (the bridge's reading of its delta: a
        resend from an index, a rewrite), None when it says nothing; the ledger checks it against
        what it read. ``request=False`` syncs without scheduling a request (a command reads the
        state). ``model``: the host's model for this request (its context limit decides the
        tiers). Returns the verdict the walk ran on (``rewritten`` when it started over).
        """
        verdict = self.ledger.follows(messages, continuity, every_id=self._resumed)
        self._resumed = False
        if request:
            self._fits_trusted, self._fits_recorded = self._fits_recorded, False
        if not verdict.continues:
            self.restart()
        walk = Walk(messages, model, verdict)
        # A long walk (a first sight, a restart) builds objects that all live on: see gcpause.
        pause = gc_paused() if len(messages) - self.timeline.read >= PAUSE_GC_FROM else contextlib.nullcontext()
        with pause:
            try:
                return self._walk_once(walk, request)
            finally:
                # Let go of the walk's reads before the collector resumes: it would scan them (about
                # 90,000 objects on a first sight of 20,000 messages) only to find them gone.
                self.timeline.end_walk()

    def _walk_once(self, walk: Walk, request: bool) -> Continuity:
        try:
            self._walk(walk, request)
        except _LateChange:
            # Only a host that changes messages after sending them gets here (OpenCode does
            # not): replaying keeps the result equal to a from-scratch run on the new list.
            self.restart()
            walk = walk.rewritten()
            self._walk(walk, request)
        return walk.continuity

    def _walk(self, walk: Walk, request: bool) -> None:
        timeline = self.timeline
        messages = walk.messages
        changed_from = walk.continuity.resent_from
        # The newest message seen may have grown since the last update: the walk's first sync reads
        # it again; the list does not change while it is walked, so the later syncs need not.
        rescan = True
        first = True  # the walk's first scheduled request: the meter re-reads the newest message it read
        try:
            for count, unscheduled in timeline.requests(messages):
                seen = self.ledger.mark.count
                # Incremental operation schedules a request before it knows the request is answered; the
                # next update finds the answer (a point) and time-driven strategies act there, after that
                # schedule. A request replayed here (first sight, restart) keeps that order, so what they
                # decide at a point waits for the next request in both runs.
                self._sync(walk, count, changed_from, point=not unscheduled, rescan=rescan)
                changed_from = None
                rescan = rescan and count < seen
                if unscheduled:
                    self._schedule(walk, count, first, live=False)
                    first = False
                    self._judge_answer(messages, count)  # as in _sync: before this point's strategies act
                    self._advance(walk, count, point=True)
            end = len(messages)
            self._sync(walk, end, changed_from, point=False, rescan=rescan)
            timeline.open_end = end
            if request and end > timeline.scheduled_end:
                self._schedule(walk, end, first, live=True)
        finally:
            # The meter's figure is worked out only at the requests that asked for it: the reads of the
            # others are made now, so the next walk (which may find messages changed in place) starts
            # from where reading at every request leaves the meter, whatever ended this one.
            self.meter.settle()

    def _schedule(self, walk: Walk, count: int, first: bool = True, *, live: bool) -> None:
        """Schedule the request that holds the first ``count`` messages (and write its prunable list, if due).

        ``live``: the request is being sent now; otherwise it is one the history implies, which went
        out with this plugin's placeholders only if the plugin pruned the session live before.
        """
        timeline, scheduler, meter = self.timeline, self.scheduler, self.meter
        ladder, point = self._request_model(walk.model)
        image_tokens = self.config.context_budget.image_token_estimate
        # The list does not change while one update walks it: only its first scheduled request
        # re-reads the newest message the meter had read. The figure there is worked out only if
        # asked (most requests of a first sight never reach the one choice it decides).
        messages = walk.messages
        meter.owe(messages, scheduler.sent_prefix, image_tokens, count, first, timeline.walked, timeline.walked_from)
        # Without prunable lists (the host offers no pruning tool) no list is ever due, and what
        # due_list keeps between requests is read by nothing else.
        if self.tools.lists:
            tokens = meter.owed_tokens()
            at = ListPoint(timeline.scheduled_end, count, tier(tokens, ladder), tokens, ladder.window)
            due = self.tools.due_list(self.ledger, messages, self.directory, at)
            if due is not None:
                self.arbiter.write_list(messages, due.host, due.text)
        point.count, point.time_ms = count, timeline.time_ms
        for decision in scheduler.at(point, timeline.schedule(count)):
            self.arbiter.mark_applied(decision)
        if live and not self.what_if:
            self.pruned_live = True
        self.meter.sent(count, scheduler.sent_prefix, pruned=self.pruned_live)

    def _request_model(self, host: ModelRef | None) -> tuple[Thresholds, Point]:
        """The budget ladder and the scheduler's Point (with the prices) of the model the request being made goes to.

        ``host``: the host's model. Asked at every request point of a walk, where the model rarely
        changes: the answer is kept while the newest message's model and the host's are the same
        objects. The Point's size and time are the caller's to set.
        """
        named = self.timeline.model
        resolved = self._resolved
        if resolved is None or resolved[0] is not named or resolved[1] is not host:
            model = request_model(named, host)
            ladder = ladder_of(model.model_id, model.context_limit)
            pricing = pricing_for(model, self.config.cache)
            # The auto tier is the meter's question, not the session's: the Point holds no reference back to it.
            auto_tier = functools.partial(self.meter.owed_reaches, ladder.auto)
            point = Point(0, 0, (model.provider_id, model.model_id), pricing, auto_tier)
            resolved = self._resolved = (named, host, ladder, point)
        return resolved[2], resolved[3]

    def context_now(self, messages: Sequence[Message], model: ModelRef | None) -> ContextSnapshot:
        """How full the context is with ``messages`` (as stored) and the placeholders in force now."""
        image_tokens = self.config.context_budget.image_token_estimate
        return self.meter.at(messages, self.scheduler.sent_prefix, model, image_tokens)

    def _sync(self, walk: Walk, end: int, changed_from: int | None, *, point: bool, rescan: bool = True) -> None:
        """Observe the calls finished in the first ``end`` messages, then let time-driven strategies act.

        ``point``: these messages are exactly those of a request the history shows was made and
        answered (the next message is the model's); only then do strategies that act on the
        context's size look at it, so they act at the same places in every run.
        """
        ledger, arbiter = self.ledger, self.arbiter
        messages = walk.messages
        result = ledger.sync(messages, changed_from, end, rescan=rescan)
        finished = result.finished
        if finished:  # most syncs of a history finish no call
            scheduled_end = self.timeline.scheduled_end
            for record in finished:
                if record.message_index < scheduled_end:
                    raise _LateChange()
        # Each call's consequences are decided before the next call's, strategies in registry
        # order: who claims a field first follows the conversation, however requests cut it.
        # One message's calls at a time (they arrive in order): the model's tool calls among them
        # are judged on the history before that message, as they were when the host ran them.
        tools = self.tools
        if not tools.names:
            # Without the model's tools offered no call is theirs (the common case): nothing is
            # judged per message, so the calls are observed one by one, in the same order.
            # The ledger hands each call's state as it read it: not located again.
            for record, state in zip(finished, result.states, strict=True):
                self._observe(messages, record, state)
        else:
            for _, calls in itertools.groupby(zip(finished, result.states, strict=True), key=_pair_message_index):
                group = list(calls)
                owned = [(r, state) for r, state in group if tools.owns(r)]
                if owned:
                    self._take_calls(messages, owned)
                for record, state in group:
                    self._observe(messages, record, state)
        arbiter.release(messages)
        if point:
            # The host ran the answer's calls of the model's tools before this point's strategies act.
            self._judge_answer(messages, end)
        self._advance(walk, end, point=point, new_turns=result.new_turns)

    def _advance(self, walk: Walk, end: int, *, point: bool, new_turns: bool = False) -> None:
        """Let time-driven strategies act on the first ``end`` messages, synced already (``point``: see _sync)."""
        # Time-driven strategies see every decision the calls so far led to, whenever they came.
        arbiter = self.arbiter
        roster = self._roster_now()
        messages = walk.messages
        if point:
            timed = roster.timed
            ladder, at = self._request_model(walk.model)
            # Without a cache every request is cold: nothing to read ahead for.
            cold_after = self._next_cold if at.pricing.caches else _cold
            turn, directory, measure = self.ledger.turn, self.directory, self._context_tokens
            progress = Progress(turn, new_turns, True, ladder, directory, end, measure, messages, cold_after)
        else:
            # Off a point (half the calls of a first sight) only the strategies that act off points
            # are asked (most often none or one), and nothing measures the context.
            timed = roster.anytime
            if not timed:
                return  # nothing proposed: the held-back proposals were released at this turn already
            progress = Progress(self.ledger.turn, new_turns, False, None, self.directory, messages=messages)
        for name, strategy in timed:
            for record, edit in strategy.advance(progress):
                arbiter.propose(messages, record, name, edit)
        arbiter.release(messages)

    def _roster_now(self) -> Roster:
        """The roster of this epoch's strategies (worked out again when a start-over built new ones)."""
        roster = self._roster
        if roster is None or roster.strategies is not self.strategies:
            roster = self._roster = Roster(self.strategies)
        return roster

    def _next_cold(self, messages: Sequence[Message], end: int) -> bool:
        """Whether the cache of the request being made is cold for the request after the one holding the first ``end`` messages."""
        resolved = self._resolved
        assert resolved is not None  # asked at a request point, whose model was resolved first
        timeline = self.timeline
        return timeline.next_time(messages, end) - timeline.time_ms > resolved[3].pricing.ttl_seconds * 1000

    def _observe(self, messages: Sequence[Message], record: CallRecord, state: ToolState) -> None:
        """A call reached its final status: re-apply the user's sweep of it, then let each strategy see it."""
        tool, tool_input = record.tool, state.get("input")
        paths = extract_paths(tool, tool_input)
        directory = self.directory
        protector = self.protector
        protected = protector.guards and protector.protected_path(tool, tool_input, paths) is not None
        pinned = record.call_id in self.pinned
        path = absolute_path(paths[0], directory) if paths else None
        call = FinishedCall(record, state, paths, path, protected, directory, pinned, tool_input, state.get("output"))
        self.tools.observe(record, state, protected or pinned)
        arbiter = self.arbiter
        if self.manual:
            reason = self.manual.get(record.call_id)
            if reason is not None:
                decision = arbiter.decide(messages, record, reason, sweep_edit(state), by_user=True)
                if decision is not None and decision.applied_at is None:
                    arbiter.force([decision])
        # Only the strategies that may act on a call of its kind see it, in registry order.
        for name, observe in self._roster_now().observers(tool, record.status):
            proposals = observe(call)
            if proposals:  # most calls make nothing obsolete: an empty tuple or list
                for target, edit in proposals:
                    arbiter.propose(messages, target, name, edit)

    def _context_tokens(self, end: int) -> int:
        """The estimated prompt of the request holding the first ``end`` messages, as it was sent.

        Only written placeholders count: a decision the scheduler keeps waiting (deep in a warm
        prefix, in an autonomous run that never pauses) relieves nothing, and counting it would
        keep masking from ever starting while the provider reads the whole history. The request
        was scheduled before this is asked (see :meth:`_walk`), so every run measures the same.
        """
        scheduler = self.scheduler
        # What a user swept does not count: a restart re-applies sweeps from the start, where they
        # would otherwise have relieved the pressure earlier than they did the first time.
        return scheduler.sent_prefix(end) + scheduler.overhead + self.arbiter.user_saved

    # -- the model's tools --------------------------------------------------------------------
    def _scope(self, messages: Sequence[Message]) -> Scope:
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

    def _judge_answer(self, messages: Sequence[Message], count: int) -> None:
        """Judge the model's calls in the answer to the request holding the first ``count`` messages, where the host ran them.

        The host runs them before the next request, so before what strategies decide at this
        request's point (a mask the answer's arrival triggers): judged only once their calls are
        taken in, they would see those decisions and could get another verdict than the model
        was given. The prunes of the accepted calls whose stored results say so are made here too,
        before those decisions can claim the outputs the model was told it pruned.
        """
        tools = self.tools
        if not tools.names or count >= len(messages):
            return
        message = messages[count]
        before: Sequence[Message] | None = None  # sliced only for an answer holding a call of the tools
        judged: list[tuple[Verdict, ToolState]] = []
        for part_index, part in enumerate(parts_of(message)):
            if not isinstance(part, dict) or part.get("type") != "tool" or part.get("tool") not in tools.names:
                continue
            call_id = call_id_of(part, message, count, part_index)
            if call_id in tools.verdicts or call_id in tools.pending:
                continue
            state = part.get("state")
            state = state if isinstance(state, dict) else {}
            if before is None:
                before = messages[:count]
            verdict = self.judge_call(before, str(part["tool"]), state.get("input"), call_id)
            tools.pending[call_id] = verdict
            judged.append((verdict, cast(ToolState, state)))
        # Judged all before any prunes: the calls of one message are judged independently.
        for verdict, state in judged:
            if state.get("status") in FINAL_STATUSES:
                self._make_prunes(messages, _as_stored(verdict, state))

    def _take_calls(self, messages: Sequence[Message], calls: list[tuple[CallRecord, ToolState]]) -> None:
        """Judge the model's calls of one message, and make the prunes of the accepted ones.

        The calls are judged independently, as they were when the host ran them (none of them had
        seen another's result); a call whose stored result says it was refused, or that failed,
        never prunes anything. A call judged where the host ran it (see _judge_answer) keeps that verdict.
        """
        scope = self._scope(messages)
        verdicts: list[Verdict] = []
        pending = self.tools.pending
        for record, state in calls:
            verdict = pending.pop(record.call_id, None) or judge(
                scope, Call(record.tool, state.get("input"), record.call_id, record.message_index, record.step, record.turn)
            )
            verdicts.append(_as_stored(verdict, state))
        for verdict in verdicts:
            # Prunes made already where the call was judged are its own decisions now: deciding again changes nothing.
            self._make_prunes(messages, verdict)
        self.tools.record(verdicts, [r.step for r, _ in calls], [r.turn for r, _ in calls])

    def _make_prunes(self, messages: Sequence[Message], verdict: Verdict) -> None:
        """Decide the prunes of an accepted verdict."""
        for target, edit in verdict.prunes if verdict.accepted else ():
            self.arbiter.decide(messages, target, verdict.tool, edit)

    def judge_call(self, messages: Sequence[Message], name: str, arguments: object, call_id: str) -> Verdict:
        """The verdict on a call the host is about to run, against the history before it (``messages``).

        The caller syncs the history before the call's message first (the request the model
        answered with the call); the same call found in the history later gets the same verdict.
        """
        # A call judged already (taken in, or judged at its request's point) keeps its verdict.
        known = self.tools.verdicts.get(call_id) or self.tools.pending.get(call_id)
        if known is not None:
            return known
        record = self.ledger.by_call.get(call_id)
        if record is not None:
            call = Call(name, arguments, call_id, record.message_index, record.step, record.turn)
        else:
            call = Call(name, arguments, call_id, self.ledger.mark.count, self.ledger.steps + 1, self.ledger.turn)
        return judge(self._scope(messages), call)

    # -- user decisions ----------------------------------------------------------------------
    def sweep(
        self,
        messages: Sequence[Message],
        records: Sequence[CallRecord],
        reason: str = SWEEP,
        waiting: Sequence[Decision] = (),
    ) -> list[Decision]:
        """Prune calls by explicit user request, at once, and write the ``waiting`` decisions now too.

        ``messages`` is the host's current list. Returns the decisions that took effect.
        """
        arbiter = self.arbiter
        done: list[Decision] = [d for d in waiting if d.applied_at is None and not d.superseded]
        for record in records:
            if record.call_id in self.pinned:
                continue
            self.manual[record.call_id] = reason
            state = locate(messages, record)
            if state is None:
                continue
            decision = arbiter.decide(messages, record, reason, sweep_edit(state), by_user=True)
            if decision is not None:
                done.append(decision)
        arbiter.force([d for d in done if d.applied_at is None])
        return done

    # -- what consumers read -----------------------------------------------------------------
    @property
    def decisions(self) -> list[Decision]:
        """Every decision of this epoch, in the order made."""
        return self.arbiter.decisions

    @property
    def applied(self) -> list[Decision]:
        """Decisions in the order applied; a prefix never changes within an epoch."""
        return self.arbiter.applied

    @property
    def in_force_count(self) -> int:
        """How many applied decisions are in force."""
        return self.arbiter.in_force_count

    def in_force(self) -> list[Decision]:
        """The applied prunes whose placeholders are written now, in the order applied (lists are not prunes)."""
        return self.arbiter.in_force()

    def waiting(self) -> list[Decision]:
        """Decisions whose placeholders wait for the cache to expire or for their batch to pay."""
        return self.arbiter.waiting()

    def take_new_applied(self) -> list[Decision]:
        """Decisions applied since the last call (notifications, logs, persistence)."""
        return self.arbiter.take_new_applied()

    def saved_by_strategy(self) -> dict[str, tuple[int, int]]:
        """Per strategy: (calls pruned, estimated tokens saved per request), decisions in force only."""
        return self.arbiter.saved_by_strategy()

    # -- what the runtime reads of the parts (so that it never names them) -------------------
    @property
    def records(self) -> Sequence[CallRecord]:
        """Every tool call seen this epoch, in the order seen."""
        return self.ledger.records

    def calls_named(self, idents: Iterable[str]) -> tuple[list[CallRecord], list[str]]:
        """The calls the short ids name, each once and in order, and the ids that name none."""
        found: list[CallRecord] = []
        unknown: list[str] = []
        for ident in idents:
            key = normalize_id(ident)
            record = self.ledger.by_ident.get(key) if key is not None else None
            if record is None:
                unknown.append(ident)
            elif all(r.call_id != record.call_id for r in found):
                found.append(record)
        return found, unknown

    def sweep_plan(self, messages: Sequence[Message], count: int | None) -> SweepPlan:
        """Which calls a sweep of ``messages`` (the last ``count`` calls, else since the last user message) prunes."""
        config = self.config
        ignore = config.strategy_section(DEDUPLICATION).ignore_fields
        return select(self.ledger.records, messages, count, config.sweep_protected(), self.protector, ignore, self.pinned)

    @property
    def messages_seen(self) -> int:
        """How many messages of the history the ledger has read (the next update starts there)."""
        return self.ledger.mark.count

    @property
    def list_tokens(self) -> int:
        """Tokens the prunable lists written in this epoch add to every request."""
        return self.arbiter.list_tokens()

    @property
    def cost_totals(self) -> CostTotals:
        """What the session's scheduled requests cost, with and without the plugin."""
        return self.scheduler.totals

    def describe_costs(self) -> dict[str, float]:
        """The scheduler's numbers the reports show: pending, bank and totals."""
        return self.scheduler.describe()

    def take_costs(self) -> list[PointCost]:
        """The costs of the requests scheduled since the last call; none unless built with ``log_costs``."""
        return self.scheduler.take_costs()

    def take_latest_cost(self) -> PointCost | None:
        """The cost of the latest request scheduled since the last call, once."""
        return self.scheduler.take_latest_cost()

    def take_new_restores(self) -> list[Verdict]:
        """The model's restores judged since the last call (statistics)."""
        return self.tools.take_new_restores()

    def tool_tallies(self) -> dict[str, Tally]:
        """Per tool of the model's: its judged calls in this epoch."""
        return self.tools.tallies()
