"""How OpenCode 1.18 runs a plugin-handled slash command: reply stored without a model turn, then throw."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.opencode_harness import export_ignored_texts

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PLUGINS = Path(__file__).resolve().parent / "plugins"


@pytest.fixture(scope="module")
def handled(module_scenario_factory):
    """A scripted session, then `/probe` on it non-interactively, then one more prompt."""
    sc = module_scenario_factory("command")
    sc.opencode.add_plugin("handled_command.js", (PLUGINS / "handled_command.js").read_text())
    first = sc.opencode.run(["read", "hello.txt"])
    before = len(sc.provider.requests)
    command = sc.opencode.run(["hello", "world"], command="probe", session=first.session_id)
    after_command = len(sc.provider.requests)
    sc.opencode.run(["and", "now?"], session=first.session_id)
    return {
        "sc": sc,
        "first": first,
        "command": command,
        "requests_during_command": after_command - before,
        "follow_up_request": sc.provider.agent_requests()[-1],
        "exported": sc.opencode.export(first.session_id),
    }


def test_the_scripted_session_completes(handled):
    assert handled["first"].returncode == 0, handled["first"].stderr


def test_a_handled_command_sends_nothing_to_the_model(handled):
    assert handled["requests_during_command"] == 0


def test_a_handled_command_makes_opencode_run_exit_with_status_1(handled):
    # The throw surfaces as a server error: `run --command` prints an error event and exits 1.
    assert handled["command"].returncode == 1
    assert [e["type"] for e in handled["command"].events] == ["error"]


def test_the_reply_is_stored_as_an_ignored_user_part(handled):
    assert export_ignored_texts(handled["exported"]) == ["probe answered: hello world"]


def test_the_ignored_reply_is_not_sent_to_the_model(handled):
    contents = str([m.get("content") for m in handled["follow_up_request"]["messages"]])
    assert "probe answered" not in contents
    assert "and now?" in contents
