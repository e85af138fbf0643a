"""`/dcp context` on a known session: every number checked against an independent computation."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.store import Store
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    hook_command,
    hook_transform,
    make_config,
    named,
    tool_part,
    user,
)


def known_session() -> list[dict[str, Any]]:
    """user 40 chars; read A (400-char output); user 80 chars; text 100 chars + the same read again."""
    messages = [
        user("a" * 40),
        call("read", {"filePath": "/p/a.py"}, output="x" * 400),
        user("b" * 80),
        assistant({"type": "text", "text": "c" * 100}, tool_part("read", {"filePath": "/p/a.py"}, output="y" * 400)),
    ]
    messages[3]["info"].update(
        modelID="claude-sonnet-4-5",
        tokens={"input": 900, "output": 50, "reasoning": 0, "cache": {"read": 100, "write": 0}},
    )
    return messages


# Independent arithmetic: JSON (tool inputs) counts chars/3.5, tool outputs chars/3, text chars/4, rounded up.
READ_INPUT = math.ceil(len('{"filePath":"/p/a.py"}') * 2 / 7)  # 7
OUTPUT = math.ceil(400 / 3)
PLACEHOLDER = math.ceil(len(named(DUPLICATE_PLACEHOLDER, "any call")) / 3)  # an id is as long for every call
USER = 40 // 4 + 80 // 4
ASSISTANT = 100 // 4
TOOLS_NOW = (READ_INPUT + PLACEHOLDER) + (READ_INPUT + OUTPUT)
SAVED = OUTPUT - PLACEHOLDER


def context_reply(runtime: Runtime, messages: list[dict[str, Any]], arguments: str = "context") -> str:
    output: dict[str, Any] = {"parts": []}
    hook_command(runtime, {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(messages)}, output)
    assert output["handled"] is True
    return output["parts"][0]["text"]


def make_runtime(tmp_path: Path, **config: Any) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime


def row(text: str, name: str) -> str:
    return next(line.strip() for line in text.splitlines() if line.strip().startswith(name))


def total_of(text: str) -> int:
    (line,) = [line for line in text.splitlines() if line.startswith("Context now: ~")]
    return int(line.removeprefix("Context now: ~").removesuffix(" tokens").replace(",", ""))


def tokens_of(text: str, name: str) -> int:
    return int(row(text, name).split()[1].lstrip("~").replace(",", ""))


def share(text: str, estimate: int) -> float:
    """A category's row with a report: its estimate's share of what the total leaves beside System."""
    return estimate * (total_of(text) - tokens_of(text, "System")) / (USER + ASSISTANT + TOOLS_NOW)


def test_context_reports_each_message_category_in_tokens_without_a_report(tmp_path: Path) -> None:
    messages = known_session()
    del messages[3]["info"]["tokens"]
    text = context_reply(make_runtime(tmp_path), messages)
    assert row(text, "User").split()[1] == f"~{USER:,}"
    assert row(text, "Assistant").split()[1] == f"~{ASSISTANT:,}"
    assert row(text, "Tools").split()[1] == f"~{TOOLS_NOW:,}"


def test_context_shows_one_total_anchored_on_the_providers_count(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    total = total_of(text)
    # 1,000 prompt tokens reported for the last request (input 900 + cache read 100), plus what came after.
    assert total > 1_000
    assert "the provider's count for the last request (1,000)" in text
    assert text.count(f"{total:,}") == 1


def test_the_categories_add_up_to_the_total(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    parts = [tokens_of(text, name) for name in ("System", "User", "Assistant", "Tools")]
    assert sum(parts) == total_of(text)


def test_system_is_what_the_first_reported_prompt_carried_beyond_its_messages(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    # The one report (1,000) came with the first three messages as stored: user 40 chars, the read, user 80 chars.
    assert tokens_of(text, "System") == 1_000 - (USER + READ_INPUT + OUTPUT)


def test_with_a_report_the_message_rows_share_the_rest_of_the_total_by_their_estimates(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    for name, estimate in (("User", USER), ("Assistant", ASSISTANT), ("Tools", TOOLS_NOW)):
        assert tokens_of(text, name) == pytest.approx(share(text, estimate), abs=1), name


def test_context_reports_percent_of_the_total_per_category(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    total = total_of(text)
    assert row(text, "Tools").split()[2] == f"{100 * tokens_of(text, 'Tools') / total:.1f}%"
    assert row(text, "User").split()[2] == f"{100 * tokens_of(text, 'User') / total:.1f}%"


def test_context_counts_tool_calls_in_context_and_pruned(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    assert row(text, "Tools").endswith("2 calls, 1 pruned")


def test_a_duplicate_too_small_to_replace_is_not_counted_as_pruned(tmp_path: Path) -> None:
    messages = known_session()
    messages[1]["parts"][0]["state"]["output"] = "tiny"
    text = context_reply(make_runtime(tmp_path), messages)
    assert row(text, "Tools").endswith("2 calls, 0 pruned")
    assert "Pruning: nothing pruned yet." in text.splitlines()


def test_context_reports_what_pruning_saves_as_a_share(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    total = total_of(text)
    assert row(text, "Pruning removes") == (
        f"Pruning removes ~{SAVED:,} tokens from every request ({100 * SAVED / (total + SAVED):.1f}% less than without the plugin):"
    )
    assert "Without the plugin" not in text and "Total now" not in text


def test_context_reports_savings_per_strategy_that_saved_something(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    assert row(text, "deduplication").split() == ["deduplication", "1", "call", f"~{SAVED:,}", "tokens"]
    assert not any(line.strip().startswith("purgeErrors") for line in text.splitlines())


def test_context_names_pruned_calls_by_tool_and_path_not_by_id(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    assert row(text, "read /p/a.py") == f"read /p/a.py (same call made again later): ~{SAVED:,} tokens"
    assert "call_" not in text


def test_context_marks_the_system_row_unknown_without_provider_usage(tmp_path: Path) -> None:
    messages = known_session()
    del messages[3]["info"]["tokens"]
    text = context_reply(make_runtime(tmp_path), messages)
    assert row(text, "System").split()[1] == "?"
    assert "unknown: no usage reported yet" in row(text, "System")
    assert total_of(text) == USER + ASSISTANT + TOOLS_NOW


def test_context_shows_the_threshold_ladder_and_severity_from_the_model_limit(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    # claude-sonnet-4-5: 200K window -> effective 180K, warn 147K, auto 167K, hard 177K.
    assert row(text, "Effective window").split()[2] == "180,000"
    assert row(text, "Below warn").split()[2:] == ["<-", "current"]
    assert row(text, "Warn threshold").split()[2:] == ["147,000"]
    assert row(text, "Auto threshold").split()[2:] == ["167,000"]
    assert row(text, "Hard threshold").split()[2:] == ["177,000"]
    assert row(text, "Severity").startswith("Severity: normal")
    assert "of 200,000 tokens, limit from exact" in row(text, "Severity")


def test_context_says_which_numbers_are_estimates(tmp_path: Path) -> None:
    text = context_reply(make_runtime(tmp_path), known_session())
    assert "Token counts are estimates" in text


def test_context_right_after_a_request_agrees_with_the_pruned_request(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    sent = copy.deepcopy(known_session())
    hook_transform(runtime, {"sessionID": SESSION}, {"messages": sent})
    text = context_reply(runtime, known_session())
    assert sent[1]["parts"][0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, sent[1])
    assert tokens_of(text, "Tools") == pytest.approx(share(text, TOOLS_NOW), abs=1)


def test_context_does_not_change_the_messages_it_is_given(tmp_path: Path) -> None:
    messages = known_session()
    before = copy.deepcopy(messages)
    hook_command(make_runtime(tmp_path), {"command": "dcp", "arguments": "context", "messages": messages}, {"parts": []})
    assert messages == before


def test_disabled_plugin_leaves_dcp_commands_to_the_host(tmp_path: Path) -> None:
    output: dict[str, Any] = {"parts": []}
    hook_command(
        make_runtime(tmp_path, enabled=False),
        {"command": "dcp", "arguments": "context", "sessionID": SESSION, "messages": known_session()},
        output,
    )
    assert output == {"parts": []}


def reported_session() -> list[dict[str, Any]]:
    """A large read answered in two reported steps: the second request carried the output whole."""
    first = call("read", {"filePath": "/p/big.py"}, output="z" * 7_000)
    first["info"].update(modelID="claude-sonnet-4-5", tokens={"input": 3_000, "output": 20, "cache": {}})
    answer = assistant({"type": "text", "text": "d" * 40})
    # 3,000 + 20 output + the read (input 7 + output 2,334 tokens at chars/3) + 0.5 %
    answer["info"].update(modelID="claude-sonnet-4-5", tokens={"input": 5_374, "output": 10, "cache": {}})
    return [user("a" * 40), first, answer]


def test_context_after_a_sweep_drops_by_what_was_swept_and_keeps_the_system_row(tmp_path: Path) -> None:
    runtime, messages = make_runtime(tmp_path), reported_session()
    before = context_reply(runtime, messages)
    swept = context_reply(runtime, messages, "sweep")
    after = context_reply(runtime, messages)
    assert swept.startswith("dcp sweep: pruned 1 tool call"), swept
    removed = tokens_of(before, "Tools") - tokens_of(after, "Tools")
    assert removed > 1_900
    # The total comes off the provider's count at the session's learned ratio (here 2,354 reported
    # tokens for 2,341 estimated), so it drops by what was swept give or take that 1 %.
    assert total_of(after) == pytest.approx(total_of(before) - removed, rel=0.01)
    assert tokens_of(after, "System") == pytest.approx(tokens_of(before, "System"), abs=removed * 0.01)
