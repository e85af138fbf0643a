"""A JS plugin's in-place edits in experimental.chat.messages.transform reach the provider, unstored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.opencode_harness import export_tool_parts, results_by_call

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PLUGINS = Path(__file__).resolve().parent / "plugins"
PROMPT = ["read", "hello.txt", "twice"]
HELLO_MARK = "SECRET-CONTENT-1234"
MUTATED = "[MUTATED BY TEST PLUGIN]"


@pytest.fixture(scope="module")
def mutated(module_scenario_factory):
    sc = module_scenario_factory("mutate")
    sc.opencode.add_plugin("mutate_first_read.js", (PLUGINS / "mutate_first_read.js").read_text())
    result = sc.opencode.run(PROMPT)
    return sc, result


def test_run_with_the_plugin_exits_zero(mutated):
    _, result = mutated
    assert result.returncode == 0, result.stderr


def test_plugin_run_makes_the_same_number_of_agent_requests(mutated):
    sc, _ = mutated
    assert len(sc.provider.agent_requests()) == 6


def test_every_request_after_the_first_read_carries_the_edit(mutated):
    sc, _ = mutated
    later = sc.provider.agent_requests()[1:]
    assert [results_by_call(r)["call_1"] for r in later] == [MUTATED] * 5


def test_the_second_read_is_sent_unchanged(mutated):
    sc, _ = mutated
    assert HELLO_MARK in results_by_call(sc.provider.agent_requests()[-1])["call_2"]


def test_the_edit_is_not_stored_in_the_session(mutated):
    sc, result = mutated
    first_read = export_tool_parts(sc.opencode.export(result.session_id))[0]
    assert HELLO_MARK in first_read["state"]["output"]
