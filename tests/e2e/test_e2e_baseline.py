"""Baseline: `opencode run --pure` (no plugins) sends the scripted session with every content intact."""

from __future__ import annotations

import pytest

from tests.e2e.fake_provider import TITLE_REPLY
from tests.e2e.opencode_harness import (
    HELLO_TEXT,
    export_tool_parts,
    results_by_call,
    tool_call_arguments,
    tool_results,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROMPT = ["read", "hello.txt", "twice,", "write", "notes.txt", "and", "read", "it"]
HELLO_MARK = "SECRET-CONTENT-1234"
WRITTEN_MARK = "WRITTEN-CONTENT-5678"


@pytest.fixture(scope="module")
def pure(module_scenario_factory):
    sc = module_scenario_factory("pure")
    result = sc.opencode.run(PROMPT, pure=True)
    return sc, result


@pytest.fixture(scope="module")
def exported(pure):
    sc, result = pure
    return sc.opencode.export(result.session_id)


@pytest.fixture(scope="module")
def last_request(pure):
    sc, _ = pure
    return sc.provider.agent_requests()[-1]


def test_pure_run_exits_zero(pure):
    _, result = pure
    assert result.returncode == 0, result.stderr


def test_pure_run_makes_one_agent_request_per_script_step(pure):
    sc, _ = pure
    assert len(sc.provider.agent_requests()) == 6


def test_each_agent_request_carries_one_more_tool_result(pure):
    sc, _ = pure
    assert [len(tool_results(r)) for r in sc.provider.agent_requests()] == [0, 1, 2, 3, 4, 5]


def test_title_requests_do_not_consume_the_script(pure):
    sc, result = pure
    titles = [r for r in sc.provider.requests if not r.get("tools")]
    assert len(titles) >= 1
    assert result.texts()[-1].startswith("All done")


def test_the_prompt_words_arrive_unquoted(pure):
    sc, _ = pure
    first = sc.provider.agent_requests()[0]
    user = [m for m in first["messages"] if m["role"] == "user"]
    assert user[-1]["content"] in (" ".join(PROMPT), [{"type": "text", "text": " ".join(PROMPT)}])


def test_both_reads_of_hello_are_sent_in_full(last_request):
    results = results_by_call(last_request)
    assert HELLO_MARK in results["call_1"]
    assert HELLO_MARK in results["call_2"]
    assert results["call_1"] == results["call_2"]


def test_the_written_content_is_sent_in_the_write_call(last_request):
    args = tool_call_arguments(last_request)
    assert WRITTEN_MARK in args["call_3"]["content"]


def test_the_read_back_of_the_written_file_is_sent(last_request):
    assert WRITTEN_MARK in results_by_call(last_request)["call_4"]


def test_the_failed_read_is_sent_with_its_error_and_input(last_request):
    assert "File not found" in results_by_call(last_request)["call_5"]
    assert tool_call_arguments(last_request)["call_5"]["filePath"].endswith("missing.txt")


def test_export_holds_the_session_tool_calls(exported):
    parts = export_tool_parts(exported)
    assert [(p["tool"], p["state"]["status"]) for p in parts] == [
        ("read", "completed"),
        ("read", "completed"),
        ("write", "completed"),
        ("read", "completed"),
        ("read", "error"),
    ]


def test_the_fixture_file_is_what_the_reads_returned(last_request):
    first_line = HELLO_TEXT.splitlines()[0]
    assert f"1: {first_line}" in results_by_call(last_request)["call_1"]


def test_title_reply_is_the_scripted_one(exported):
    assert exported["info"]["title"] == TITLE_REPLY
