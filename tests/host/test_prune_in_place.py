"""``Runtime.prune`` writes each placeholder as it plans it, and books what ``prepare``, ``finish`` and ``apply`` book."""

from __future__ import annotations

import copy
import sys
from typing import Any

import pytest

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.patches import apply
from dcp_plugin.replay.engine import request_points
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import SESSION, make_config

CONFIG = make_config(strategies={"supersedeWrites": {"enabled": True}})


def in_three_steps(runtime: Runtime, messages: list[dict[str, Any]]) -> None:
    """What a host that calls the runtime's steps itself does: prepare, finish (the history as stored), apply."""
    outgoing = runtime.prepare(SESSION, messages)
    assert outgoing is not None
    runtime.finish(outgoing, messages)
    apply(outgoing.patches)


def fresh_runtime() -> Runtime:
    """A runtime of its own, with the config every test here uses."""
    return Runtime(DEFAULT_DIRECTORY, StaticConfig(CONFIG))


def both_ways(history: list[dict[str, Any]], counts: list[int]) -> None:
    """Each request of ``history`` through ``prune`` and through the three steps: the same list, the same figures."""
    pruned, stepped = fresh_runtime(), fresh_runtime()
    for count in counts:
        by_prune, by_steps = copy.deepcopy(history[:count]), copy.deepcopy(history[:count])
        pruned.prune(SESSION, by_prune)
        in_three_steps(stepped, by_steps)
        assert by_prune == by_steps
        assert pruned.snapshot(SESSION) == stepped.snapshot(SESSION)


@pytest.mark.parametrize("seed", [1, 2])
def test_prune_sends_and_books_what_the_three_steps_do_over_a_session(seed: int) -> None:
    # These sessions prune parts the context meter reads again: booked after the writes, the figures would differ.
    history = generate_session(160, seed=seed)["messages"]
    both_ways(history, sorted({*request_points(history), len(history)}))


def test_a_decided_call_gone_unannounced_is_walked_again_and_pruned_as_by_the_three_steps() -> None:
    history = generate_session(160, seed=3)["messages"]
    pruned, stepped = fresh_runtime(), fresh_runtime()
    pruned.prune(SESSION, copy.deepcopy(history))
    in_three_steps(stepped, copy.deepcopy(history))
    view = pruned.view(SESSION)
    assert view is not None and view.in_force
    gone = view.in_force[0]  # its message keeps its id: the list reads as the same one
    rewritten = copy.deepcopy(history)
    del rewritten[gone.message_index]["parts"][gone.part_index]
    by_prune, by_steps = copy.deepcopy(rewritten), copy.deepcopy(rewritten)
    pruned.prune(SESSION, by_prune)
    in_three_steps(stepped, by_steps)
    assert by_prune == by_steps != rewritten
    assert pruned.snapshot(SESSION) == stepped.snapshot(SESSION)
    restarted = pruned.view(SESSION)
    assert restarted is not None and restarted.restarts == 1


def test_a_request_keeps_no_reference_to_the_tool_states_it_wrote_into() -> None:
    # A host that builds its list anew for every request frees the previous one once it is sent.
    history = generate_session(160, seed=4)["messages"]
    runtime = fresh_runtime()
    runtime.prune(SESSION, copy.deepcopy(history))
    sent = copy.deepcopy(history)
    states = [part["state"] for message in sent for part in message["parts"] if isinstance(part.get("state"), dict)]
    held = [sys.getrefcount(state) for state in states]
    runtime.prune(SESSION, sent)
    written = runtime.last_sent(SESSION)
    assert written is not None and written.decisions
    assert [sys.getrefcount(state) for state in states] == held


def test_what_a_request_wrote_is_found_again_in_the_list_it_wrote_into() -> None:
    history = generate_session(160, seed=4)["messages"]
    runtime = fresh_runtime()
    sent = copy.deepcopy(history)
    runtime.prune(SESSION, sent)
    written = runtime.last_sent(SESSION)
    assert written is not None and written.decisions
    for decision, state in written.located(sent):
        record = decision.record
        assert state is sent[record.message_index]["parts"][record.part_index]["state"]
        assert state[decision.field] == decision.value


def test_what_a_request_wrote_is_not_found_in_a_list_without_its_calls() -> None:
    history = generate_session(160, seed=4)["messages"]
    runtime = fresh_runtime()
    runtime.prune(SESSION, copy.deepcopy(history))
    written = runtime.last_sent(SESSION)
    assert written is not None and written.decisions
    with pytest.raises(ValueError, match=written.decisions[0].call_id):
        written.located(history[: written.decisions[0].record.message_index])


def test_a_request_that_fails_open_leaves_nothing_standing_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    history = generate_session(160, seed=4)["messages"]
    runtime = fresh_runtime()
    runtime.prune(SESSION, copy.deepcopy(history))
    assert runtime.last_sent(SESSION) is not None

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in planning")

    monkeypatch.setattr("dcp_plugin.pipeline.session.SessionState.patches", broken)
    sent = copy.deepcopy(history)
    runtime.prune(SESSION, sent)
    assert sent == history
    assert runtime.last_sent(SESSION) is None
