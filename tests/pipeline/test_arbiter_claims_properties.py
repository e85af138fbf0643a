"""The arbiter's early refusal of a proposal on a field a whole placeholder owns changes nothing the plain path decides."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.config.model import DcpConfig, TurnProtectionConfig
from dcp_plugin.model.messages import Message
from dcp_plugin.pipeline.arbiter import Arbiter
from dcp_plugin.pipeline.decisions import CallRecord, CutOutput, Edit, ReplaceOutput, ShrinkInput
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.modeltools import ModelTools
from dcp_plugin.pipeline.scheduler import Scheduler
from dcp_plugin.pipeline.timeline import Timeline

CALLS = 4


class PlainArbiter(Arbiter):
    """Every proposal decided, or held back, as first written: a claimed field is refused only in decide."""

    __slots__ = ()

    def propose(self, messages: Sequence[Message], record: CallRecord, name: str, edit: Edit) -> None:
        turns = self._protected_turns
        if turns is not None and self.ledger.turn - record.turn < turns:
            heapq.heappush(self._young, (record.turn, record.seq, next(self._young_order), record, name, edit))
        else:
            self.decide(messages, record, name, edit)


def _arbiter(kind: type[Arbiter], protection: bool) -> Arbiter:
    config = DcpConfig()
    ledger, scheduler = Ledger(), Scheduler(config.cache.scheduler, config.cache.overdraft)
    timeline = Timeline(scheduler, 0, ContextMeter())
    for _ in range(CALLS):
        scheduler.add_message(200)
    return kind(ledger, scheduler, timeline, ModelTools(config, False), TurnProtectionConfig(enabled=protection, turns=2), frozenset())


def _messages() -> list[dict[str, Any]]:
    return [
        {
            "info": {"id": f"m{i}", "role": "assistant"},
            "parts": [{"type": "tool", "callID": f"c{i}", "tool": "read", "state": {"status": "completed", "input": {"filePath": "a.py", "content": "y" * 90}, "output": "x" * 300}}],
        }
        for i in range(CALLS)
    ]


_edits = st.sampled_from(
    [
        ReplaceOutput("[dcp: masked]"),
        ReplaceOutput("[dcp: duplicate]"),
        CutOutput(((0, 100, "[dcp: cut]"),)),
        CutOutput(((150, 250, "[dcp: cut 2]"),)),
        ShrinkInput("[dcp: input]"),
    ]
)
_events = st.lists(
    st.one_of(st.tuples(st.just("propose"), st.integers(0, CALLS - 1), _edits), st.tuples(st.just("turn"), st.none(), st.none())),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), _events)
def test_proposals_on_owned_fields_decide_what_the_plain_path_decides(protection: bool, events: list[tuple[str, Any, Any]]) -> None:
    messages = _messages()
    runs = []
    for kind in (Arbiter, PlainArbiter):
        arbiter = _arbiter(kind, protection)
        records = [CallRecord(f"c{i}", "read", i, i, 0, None, None, i % 2, "completed", ident=f"i{i}") for i in range(CALLS)]
        seen = []
        for what, index, edit in events:
            if what == "turn":
                arbiter.ledger.turn += 1
                arbiter.release(messages)  # type: ignore[arg-type]
            else:
                arbiter.propose(messages, records[index], "s", edit)  # type: ignore[arg-type]
            seen.append([(d.call_id, d.field, d.value, d.tokens_saved, d.superseded) for d in arbiter.decisions])
        runs.append(seen)
    assert runs[0] == runs[1]
