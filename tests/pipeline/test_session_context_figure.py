"""The context figure at a request point is worked out only where the scheduler asks: decisions, costs, meter alike."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.scheduler import Point, Scheduler
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.meter_reading import meter_reading

CONFIG = DcpConfig.model_validate({"strategies": {"supersedeWrites": {"enabled": True}}})
CLEARED = "[Old tool result content cleared]"


@contextlib.contextmanager
def _figure_at_every_point() -> Iterator[None]:
    """Schedule with the figure worked out at every request point, before anything else (the rule made lazy)."""
    plain = Scheduler.at

    def at(self: Scheduler, point: Point, number: int) -> list[Decision]:
        """The request scheduled after its figure was worked out."""
        point.auto_tier()
        return plain(self, point, number)

    with mock.patch.object(Scheduler, "at", at):
        yield


def _tools(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool states of a message's calls."""
    parts = message["parts"]
    return [part["state"] for part in parts if part.get("type") == "tool" and isinstance(part.get("state"), dict)]


def _outcome(state: SessionState) -> tuple[object, ...]:
    """What a request leaves: its costs, every decision of the epoch, and the meter the next walk starts from."""
    decisions = [
        (d.call_id, d.strategy, d.field, d.value, d.tokens_saved, d.applied_at, d.superseded) for d in state.decisions
    ]
    return state.restarts, state.take_costs(), decisions, meter_reading(state.meter)


def _session(
    seed: int,
    cuts: list[int],
    limit: int,
    compact: bool,
    running: bool,
    commands: bool,
    schedule: Callable[[], Any],
    tools: bool = False,
) -> list[object]:
    """A host's requests at ``cuts`` of a generated history, held in one list it changes in place between them.

    ``compact``: older outputs are cleared in place, as a host compaction does, unseen by the history's
    fingerprint. ``running``: the newest message's calls are still running when sent, and finish
    before the next request (a late change: the walk starts over). ``commands``: the context now is
    read between requests. ``tools``: the host offers the model's pruning tools (prunable lists are written).
    """
    messages = generate_session(max(cuts), seed=seed)["messages"]
    state = SessionState("figure", CONFIG, DEFAULT_DIRECTORY, tools_offered=tools, log_costs=True)
    model = ModelRef(None, None, limit)  # the limit carries over to the model the messages name
    held: list[Any] = []
    outcomes: list[object] = []
    with schedule():
        for number, cut in enumerate(cuts):
            if running and held:
                for tool_state, done in zip(_tools(held[-1]), _tools(messages[len(held) - 1]), strict=True):
                    tool_state.update(done)
            if compact:
                older = [tool_state for message in held[: len(held) * 2 // 3] for tool_state in _tools(message)]
                for tool_state in older[number % 3 :: 3]:
                    tool_state["output"] = CLEARED
            held.extend(copy.deepcopy(messages[len(held) : cut]))
            if running:
                for tool_state in _tools(held[-1]):
                    tool_state.update(status="running", output="")
            state.update(held, model=model)
            outcomes.append(_outcome(state))
            if commands:
                outcomes.append(state.context_now(held, model))
    return outcomes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 10**6),
    st.lists(st.integers(20, 260), min_size=1, max_size=5).map(sorted),
    st.sampled_from([12_000, 30_000, 80_000, 200_000]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_a_session_asking_the_figure_lazily_decides_costs_and_meters_as_asking_it_at_every_point(
    seed: int, cuts: list[int], limit: int, compact: bool, running: bool, commands: bool, tools: bool
) -> None:
    lazily = _session(seed, cuts, limit, compact, running, commands, contextlib.nullcontext, tools)
    eagerly = _session(seed, cuts, limit, compact, running, commands, _figure_at_every_point, tools)
    assert lazily == eagerly


def test_a_walk_whose_points_never_work_out_the_figure_leaves_the_meter_read_up_to_its_last_request() -> None:
    messages = generate_session(120, seed=7)["messages"]
    state = SessionState("figure", DcpConfig(), DEFAULT_DIRECTORY)
    with mock.patch.object(ContextMeter, "owed_reaches", return_value=False):
        state.update(messages, model=ModelRef("anthropic", "claude-sonnet-4", 200_000))
    assert state.meter.tracker.seen == len(messages)


def test_a_walk_ended_by_a_late_change_leaves_the_meter_as_asking_at_every_point() -> None:
    lazily = _session(11, [60, 90, 140], 30_000, False, True, False, contextlib.nullcontext)
    eagerly = _session(11, [60, 90, 140], 30_000, False, True, False, _figure_at_every_point)
    assert lazily == eagerly
    assert lazily[-1][0] > 0  # type: ignore[index]  # the late change made the session start over
