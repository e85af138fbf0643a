"""``Runtime.prune`` writes each placeholder as it plans it, and books what ``prepare``, ``finish`` and ``apply`` book."""

from __future__ import annotations

import copy
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
