"""`dcp replay` on other agents' sessions: Claude Code, Codex CLI and plain provider requests, and malformed files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.cli.main import main
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.sessionfile import load_session
from tests.support.helpers import make_config
from tests.support.paths import DATA


def tools(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for m in messages for p in m["parts"] if p["type"] == "tool"]


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["info"]["role"] for m in messages]


# -- Claude Code ---------------------------------------------------------------------------------


def test_claude_code_session_keeps_the_active_branch_and_skips_sidechains() -> None:
    info, messages = load_session(DATA / "claude_code_session.jsonl")
    texts = [p.get("text") for m in messages for p in m["parts"]]
    assert info["id"] == "4f7c2a9e-5b1d-4c3e-9a8f-2d6b1e0c7a55"
    assert info["directory"] == "/home/dev/project" and info["title"] == "Fix add() and document it"
    assert "Now delete everything" not in texts and "Search for tests" not in texts
    assert "Now add a docstring" in texts
    assert roles(messages) == ["user", *["assistant"] * 4, "user", "assistant", "assistant"]


def test_claude_code_records_of_one_response_become_one_message_with_its_usage_and_times() -> None:
    _, messages = load_session(DATA / "claude_code_session.jsonl")
    first = messages[1]
    assert [p["type"] for p in first["parts"]] == ["reasoning", "tool"]
    assert first["info"]["modelID"] == "claude-sonnet-4-5-20250929" and first["info"]["providerID"] == "anthropic"
    assert first["info"]["tokens"] == {"total": 14393, "input": 3, "output": 180, "reasoning": 0, "cache": {"read": 0, "write": 14210}}
    assert first["info"]["time"] == {"created": 1760954403100, "completed": 1760954403400}
    assert messages[0]["info"]["time"] == {"created": 1760954400000}
    assert messages[0]["info"]["model"] == {"providerID": "anthropic", "modelID": "claude-sonnet-4-5-20250929"}


def test_claude_code_tool_results_and_errors_join_their_calls() -> None:
    _, messages = load_session(DATA / "claude_code_session.jsonl")
    states = {p["callID"]: p["state"] for p in tools(messages)}
    assert states["toolu_01Read0000000000000001"]["status"] == "completed"
    assert states["toolu_01Bash0000000000000003"]["status"] == "error"
    assert "Exit code 4" in states["toolu_01Bash0000000000000003"]["error"]


def test_claude_code_replay_prunes_the_duplicate_read() -> None:
    info, messages = load_session(DATA / "claude_code_session.jsonl")
    report = replay(messages, info["directory"], make_config())
    assert report.pruned["deduplication"] == 1


# -- Codex ----------------------------------------------------------------------------------------


def test_codex_rollout_reads_model_provider_usage_and_times() -> None:
    info, messages = load_session(DATA / "codex_rollout.jsonl")
    assert info["id"] == "0199f2a4-7c1e-7d30-a4b2-5e8f9c0d1a22" and info["directory"] == "/home/dev/project"
    answers = [m for m in messages if m["info"]["role"] == "assistant"]
    assert all(m["info"]["modelID"] == "gpt-5-codex" and m["info"]["providerID"] == "openai" for m in answers)
    # OpenAI's input counts cached tokens and its output counts reasoning: OpenCode's fields do not.
    assert answers[0]["info"]["tokens"] == {"total": 9300, "input": 9120, "output": 52, "reasoning": 128, "cache": {"read": 0, "write": 0}}
    assert answers[1]["info"]["tokens"]["cache"] == {"read": 9088, "write": 0}
    assert answers[0]["info"]["time"] == {"created": 1761035408000, "completed": 1761035408100}


def test_codex_injected_context_is_not_a_user_turn() -> None:
    _, messages = load_session(DATA / "codex_rollout.jsonl")
    assert roles(messages)[:2] == ["system", "user"]
    assert sum(r == "user" for r in roles(messages)) == 2


def test_codex_custom_tool_calls_and_their_outputs_are_calls() -> None:
    _, messages = load_session(DATA / "codex_rollout.jsonl")
    patch = next(p for p in tools(messages) if p["tool"] == "apply_patch")
    assert patch["state"]["status"] == "completed" and "*** Update File: tests/test_add.py" in patch["state"]["input"]["input"]


def test_codex_replay_prunes_the_repeated_command() -> None:
    info, messages = load_session(DATA / "codex_rollout.jsonl")
    assert replay(messages, info["directory"], make_config()).pruned["deduplication"] == 1


def test_legacy_codex_rollouts_without_the_envelope_are_read(tmp_path: Path) -> None:
    lines = [
        {"id": "0190-legacy", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"record_type": "state"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
    ]
    path = tmp_path / "rollout-2025-05-01T10-00-00-0190.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    info, messages = load_session(path)
    assert info["id"] == "0190-legacy" and roles(messages) == ["user", "assistant"]


# -- plain requests -------------------------------------------------------------------------------


def test_a_request_log_replays_its_longest_request_with_the_model() -> None:
    info, messages = load_session(DATA / "openai_chat_requests.jsonl")
    assert info["format"] == "openai_chat"
    assert roles(messages) == ["system", "user", "assistant", "assistant", "assistant", "user"]
    assert messages[2]["info"]["modelID"] == "gpt-4.1" and messages[1]["info"]["model"]["modelID"] == "gpt-4.1"


@pytest.mark.parametrize(("name", "fmt"), [("anthropic_request.json", "anthropic"), ("openai_responses_input.json", "openai_responses")])
def test_plain_requests_are_detected_by_their_content(name: str, fmt: str) -> None:
    info, messages = load_session(DATA / name)
    assert info["format"] == fmt
    assert len(tools(messages)) == 2 and replay(messages, "/home/dev/project", make_config()).pruned["deduplication"] == 1


def test_detection_does_not_depend_on_the_file_name(tmp_path: Path) -> None:
    copy = tmp_path / "session.json"
    shutil.copy(DATA / "codex_rollout.jsonl", copy)
    assert load_session(copy)[0]["id"] == "0199f2a4-7c1e-7d30-a4b2-5e8f9c0d1a22"


# -- malformed files ------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, lines: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SessionFileError) as caught:
        load_session(path)
    return str(caught.value)


def test_a_broken_line_in_a_jsonl_session_is_named(tmp_path: Path) -> None:
    good = (DATA / "codex_rollout.jsonl").read_text().splitlines()
    path = write(tmp_path, "x.jsonl", [*good[:3], "{oops", *good[3:]])
    assert error_of(path).startswith(f"{path}:4: not valid JSON")


def test_a_line_of_another_format_in_a_rollout_is_named(tmp_path: Path) -> None:
    good = (DATA / "codex_rollout.jsonl").read_text().splitlines()
    path = write(tmp_path, "x.jsonl", [*good[:2], {"role": "user", "content": "hi"}])
    assert error_of(path).startswith(f"{path}:3: expected a Codex rollout line")


def test_a_jsonl_file_of_no_known_format_names_its_first_line(tmp_path: Path) -> None:
    path = write(tmp_path, "x.jsonl", ["", {"event": "start"}, {"event": "stop"}])
    message = error_of(path)
    assert message.startswith(f"{path}:2: not a session format dcp knows") and "Claude Code" in message


def test_a_line_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "x.jsonl", [{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "x"}}, "[1, 2]"])
    assert error_of(path) == f"{path}:2: expected a JSON object per line, got list"


def test_an_item_of_no_format_in_a_json_array_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[\n  {"role": "user", "content": "x"},\n  {"hello": "world"}\n]\n')
    assert error_of(path).startswith(f"{path}:3: item 1 is not a message of OpenAI Chat, OpenAI Responses or Anthropic")


def test_a_cut_off_last_line_of_a_live_session_is_skipped(tmp_path: Path) -> None:
    text = (DATA / "claude_code_session.jsonl").read_text()
    path = tmp_path / "live.jsonl"
    path.write_text(text + '{"parentUuid": "x", "type": "assis')
    assert load_session(path)[1] == load_session(DATA / "claude_code_session.jsonl")[1]


def test_a_session_without_messages_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "x.jsonl", [{"type": "summary", "summary": "s", "leafUuid": "u"}])
    assert "has no messages" in error_of(path)


def test_replay_cli_reads_other_agents_sessions_and_reports_bad_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    at_once = tmp_path / "dcp.jsonc"
    at_once.write_text('{"cache": {"scheduler": false}}')
    assert main(["replay", str(DATA / "claude_code_session.jsonl"), "--json", "--config", str(at_once)]) == 0
    assert json.loads(capsys.readouterr().out)["pruned_calls"]["deduplication"] == 1
    bad = write(tmp_path, "bad.jsonl", [{"type": "user", "sessionId": "s"}, {"no": "type"}])
    assert main(["replay", str(bad)]) == 1
    assert f"{bad}:2: expected a Claude Code session record" in capsys.readouterr().err
