"""The arbiter: which proposal claims a call's field, turn protection, take-overs, and the decisions of one epoch."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from dcp_plugin.config.model import TurnProtectionConfig
from dcp_plugin.model.messages import Message, locate
from dcp_plugin.pipeline.applied import Applied
from dcp_plugin.pipeline.decisions import (
    CallRecord,
    CutOutput,
    Decision,
    Edit,
    ReplaceOutput,
    ShrinkInput,
    append_list,
    decide,
    withdraw_list,
)
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.modeltools import ModelTools
from dcp_plugin.pipeline.modeltools.state import LIST_STRATEGY
from dcp_plugin.pipeline.scheduler import Scheduler
from dcp_plugin.pipeline.timeline import Timeline


@mypyc_attr(allow_interpreted_subclasses=True)
class Arbiter:
    """Every proposal of one epoch passes here: the strategies', the model's tools', the user's sweeps.

    It holds back proposals on calls younger than turn protection allows, lets the first whole
    replacement of a field keep it (a cut gives way to a whole replacement; cuts join), hands
    each decision to the scheduler, and records the decisions in the order made and applied.
    One per epoch: a start-over builds a new one. The methods that read a call's tool state take
    the request's list (``messages``) as an argument: the arbiter keeps no list between calls.
    """

    # Slots: every proposal of a first sight reads several of these, long after the instance's
    # dict was last in the processor's caches.
    __slots__ = (
        "ledger",
        "scheduler",
        "timeline",
        "tools",
        "protection",
        "_protected_turns",
        "pinned",
        "decisions",
        "applied",
        "new_applied",
        "in_force_count",
        "user_saved",
        "_young",
        "_young_order",
        "_newest_list",
        "_lists",
    )

    def __init__(
        self,
        ledger: Ledger,
        scheduler: Scheduler,
        timeline: Timeline,
        tools: ModelTools,
        protection: TurnProtectionConfig,
        pinned: frozenset[str],
    ) -> None:
        self.ledger = ledger
        self.scheduler = scheduler
        self.timeline = timeline  # the number of the request a forced decision is written in
        self.tools = tools
        self.protection = protection
        # What every proposal asks of the (frozen) section, read once: None when protection is off.
        self._protected_turns = protection.turns if protection.enabled else None
        self.pinned = pinned
        self.decisions: list[Decision] = []  # every decision of this epoch, in the order made
        self.applied = Applied()  # in the order applied; a prefix never changes within an epoch
        self.new_applied: list[Decision] = []  # applied since the last take_new_applied()
        self.in_force_count = 0  # how many applied decisions are in force
        self.user_saved = 0  # tokens the user's sweeps remove beyond what strategies had decided there
        self._young: list[tuple[int, int, int, CallRecord, str, Edit]] = []
        self._young_order = itertools.count()  # ties between strategies on one call keep strategy order
        self._newest_list: Decision | None = None  # the newest prunable list written
        # The applied lists not superseded when last asked, and how much of ``applied`` that covers.
        self._lists: tuple[int, list[Decision]] = (0, [])

    # -- proposals ---------------------------------------------------------------------------
    def propose(self, messages: Sequence[Message], record: CallRecord, name: str, edit: Edit) -> None:
        """A strategy's proposal: decided now, or held back until the call is older than turn protection."""
        if type(edit) is ReplaceOutput and record.output_kept:
            # Refused now and later alike (see decide), so neither decided nor held back: most
            # proposals of a first sight.
            return
        turns = self._protected_turns
        if turns is not None and self.ledger.turn - record.turn < turns:
            heapq.heappush(self._young, (record.turn, record.seq, next(self._young_order), record, name, edit))
        else:
            self.decide(messages, record, name, edit)

    def release(self, messages: Sequence[Message]) -> None:
        """Decide the held-back proposals whose calls turn protection no longer covers."""
        young = self._young
        if not young:
            return
        limit = self.ledger.turn - self.protection.turns
        while young and young[0][0] <= limit:
            _, _, _, record, name, edit = heapq.heappop(young)
            self.decide(messages, record, name, edit)

    def decide(
        self, messages: Sequence[Message], record: CallRecord, name: str, edit: Edit, *, by_user: bool = False
    ) -> Decision | None:
        """The decision ``edit`` makes on ``record`` (its state in ``messages``) if it may claim the field; None when it may not or saves nothing."""
        pinned = self.pinned
        if pinned and record.call_id in pinned:  # most sessions pin nothing: the id is not read then
            return None  # the one place every prune passes: strategies, the model's tools, sweeps
        current = record.input_decision if isinstance(edit, ShrinkInput) else record.output_decision
        # Told before the state is looked up: most proposals on a claimed field are refused here,
        # and neither test reads the state.
        if current is not None:
            # The first whole replacement of a field keeps it. A partial cut gives way to a whole
            # replacement, and a later cut joins an earlier one: both sets of ranges are cut.
            if current.cuts is None:
                return None
            if isinstance(edit, CutOutput):
                edit = CutOutput(tuple(sorted(set(current.cuts) | set(edit.cuts))))
        state = locate(messages, record)
        if state is None:
            return None
        decision = decide(record, name, edit, state)
        if decision is None:
            return None
        if current is not None:
            if decision.cuts == current.cuts:
                return None
            self._supersede(current, decision)
        elif decision.field == "output" and record.list_decision is not None:
            self._take_over_list(record.list_decision, decision)
            record.list_decision = None
        if by_user:
            self.user_saved += decision.tokens_saved - (current.tokens_saved if current is not None else 0)
        if decision.field == "output":
            record.output_decision = decision
            if decision.cuts is None:
                self.tools.pruned(record)  # a whole placeholder: no longer the model's to prune
        else:
            record.input_decision = decision
        self._pend(decision)
        return decision

    def write_list(self, messages: Sequence[Message], host: CallRecord, text: str) -> None:
        """Append a new list to ``host``'s output, and take the previous list out once that pays.

        The new list is at the tail (free to write); the previous one lies in the cached prefix, so
        taking it out waits for the scheduler like any prune (when the cache is cold, say).
        """
        state = locate(messages, host)
        added = append_list(host, LIST_STRATEGY, text, state) if state is not None else None
        if added is None:
            return
        host.list_decision = added
        self._pend(added)
        previous, self._newest_list = self._newest_list, added
        if previous is None or previous.superseded or previous.record.list_decision is not previous:
            return
        old_state = locate(messages, previous.record)
        gone = withdraw_list(previous, old_state) if old_state is not None else None
        if gone is not None:
            previous.record.list_decision = gone
            self._pend(gone)

    # -- take-overs --------------------------------------------------------------------------
    def _supersede(self, current: Decision, decision: Decision) -> None:
        """``decision`` replaces ``current`` on its field: at once while ``current`` waits, else when written."""
        if current.applied_at is None:
            current.superseded = True
            self.scheduler.unpend(current)
            decision.replaces = current.replaces
        else:
            decision.replaces = current

    def _take_over_list(self, current: Decision, decision: Decision) -> None:
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

    # -- writing -----------------------------------------------------------------------------
    def _pend(self, decision: Decision) -> None:
        self.decisions.append(decision)
        self.scheduler.pend(decision)
        if not self.scheduler.enabled:
            # `cache.scheduler: false`: written as soon as it is made, as the first release did.
            self.force([decision])

    def force(self, decisions: list[Decision]) -> None:
        """Write these waiting decisions now, outside any request (a user's sweep)."""
        self.scheduler.force(decisions, self.timeline.points)
        for decision in decisions:
            self.mark_applied(decision)

    def mark_applied(self, decision: Decision) -> None:
        """Record a decision the scheduler wrote."""
        if decision.withdraws is not None:
            # Its own write removes the list's tokens; the list's patch is replaced by the output as stored.
            decision.withdraws.superseded = True
        self.applied.append(decision)
        if decision.is_list:
            return
        self.new_applied.append(decision)
        if decision.replaces is None or decision.replaces.is_list:
            self.in_force_count += 1

    # -- what consumers read -----------------------------------------------------------------
    def in_force(self) -> list[Decision]:
        """The applied prunes whose placeholders are written now, in the order applied (lists are not prunes)."""
        return [d for d in self.applied if not d.superseded and not d.is_list]

    def list_tokens(self) -> int:
        """Tokens the prunable lists in force add to every request."""
        # Asked once per request: only the decisions applied since are read, and the few lists
        # still in force then (a list is superseded only when another decision is applied).
        count, lists = self._lists
        applied = self.applied
        if count != len(applied):
            lists = [d for d in lists if not d.superseded]
            lists += [d for d in applied[count:] if d.is_list and not d.superseded]
            self._lists = (len(applied), lists)
        return -sum(d.tokens_saved for d in lists)

    def waiting(self) -> list[Decision]:
        """Decisions whose placeholders wait for the cache to expire or for their batch to pay."""
        return [d for d in self.decisions if d.applied_at is None and not d.superseded and not d.is_list]

    def take_new_applied(self) -> list[Decision]:
        """Decisions applied since the last call (notifications, logs, persistence)."""
        out, self.new_applied = self.new_applied, []
        return out

    def saved_by_strategy(self) -> dict[str, tuple[int, int]]:
        """Per strategy: (calls pruned, estimated tokens saved per request), decisions in force only."""
        totals: dict[str, tuple[int, int]] = {}
        for decision in self.applied:
            if decision.superseded or decision.is_list:
                continue
            count, tokens = totals.get(decision.strategy, (0, 0))
            totals[decision.strategy] = (count + 1, tokens + decision.tokens_saved)
        return totals
