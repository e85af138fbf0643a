"""Prune notifications at each `pruneNotification` level, through the host's notify."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.prune_notice import DETAILED_LIMIT, format_notification
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.store import Store
from tests.support.helpers import PROJECT, call, hook_transform, make_config, named, user

# The first read's output, as the list and `/dcp pin` size it (outputs: chars/3).
SIZE = math.ceil(400 / 3)
# The placeholder the records below carry: a toast sizes a pruned output as its saving plus it.
PLACEHOLDER = math.ceil(len("[placeholder]") / 3)


def record(call_id: str, reason: str, tokens: int, tool: str = "read") -> Decision:
    call = CallRecord(call_id, tool, 0, 0, 0, None, None, 0, "completed")
    return Decision(call, reason, "output", "[placeholder]", tokens)


def test_off_says_nothing() -> None:
    assert format_notification([record("c1", "deduplication", 10)], "off") is None


def test_nothing_pruned_says_nothing() -> None:
    assert format_notification([], "detailed") is None


def test_minimal_is_one_line_with_count_and_tokens() -> None:
    records = [record("c1", "deduplication", 1200), record("c2", "purgeErrors", 34)]
    held = 1200 + 34 + 2 * PLACEHOLDER
    assert format_notification(records, "minimal") == f"dcp: pruned 2 tool calls holding ~{held:,} tokens"


def test_detailed_lists_each_call_and_why() -> None:
    records = [record("c1", "deduplication", 100), record("c2", "purgeErrors", 20, tool="bash"), record("c3", "supersedeWrites", 5, tool="write")]
    assert format_notification(records, "detailed") == "\n".join(
        [
            f"dcp: pruned 3 tool calls holding ~{125 + 3 * PLACEHOLDER} tokens:",
            f"  - read c1: same call made again later, ~{100 + PLACEHOLDER} tokens",
            f"  - bash c2: failed call, input removed, ~{20 + PLACEHOLDER} tokens",
            f"  - write c3: file was read back later, ~{5 + PLACEHOLDER} tokens",
        ]
    )


def test_detailed_summarizes_calls_past_the_limit() -> None:
    records = [record(f"c{i}", "deduplication", 1) for i in range(DETAILED_LIMIT + 5)]
    lines = format_notification(records, "detailed").splitlines()  # type: ignore[union-attr]
    assert len(lines) == 1 + DETAILED_LIMIT + 1
    assert lines[-1] == f"  ... and 5 more calls (~{5 * (1 + PLACEHOLDER)} tokens)"


def host(tmp_path: Path, level: str) -> tuple[Runtime, list[tuple[str | None, str]]]:
    seen: list[tuple[str | None, str]] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config(pruneNotification=level)))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": lambda sid, text: seen.append((sid, text))}))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime, seen


def duplicate_reads() -> list[dict[str, Any]]:
    return [user(), call("read", {"filePath": "/p/a.py"}, call_id="first"), user(), call("read", {"filePath": "/p/a.py"}, call_id="second")]


def test_runtime_notifies_once_after_the_request_that_pruned(tmp_path: Path) -> None:
    runtime, seen = host(tmp_path, "minimal")
    messages = duplicate_reads()
    for _ in range(3):
        hook_transform(runtime, {}, {"messages": copy.deepcopy(messages)})
    assert runtime.wait_for_notices()
    [(session, text)] = seen
    assert session == "ses_test"
    assert text.startswith(f"dcp: pruned 1 tool call holding ~{SIZE} tokens (this session so far: ")


def test_runtime_detailed_notification_names_the_call(tmp_path: Path) -> None:
    runtime, seen = host(tmp_path, "detailed")
    hook_transform(runtime, {}, {"messages": duplicate_reads()})
    assert runtime.wait_for_notices()
    assert seen[0][1].splitlines()[1] == f"  - read first: same call made again later, ~{SIZE} tokens"


def test_runtime_with_notifications_off_stays_silent(tmp_path: Path) -> None:
    runtime, seen = host(tmp_path, "off")
    hook_transform(runtime, {}, {"messages": duplicate_reads()})
    assert runtime.wait_for_notices()
    assert seen == []


def test_a_restarted_runtime_does_not_announce_old_prunes_again(tmp_path: Path) -> None:
    messages = duplicate_reads()
    first, _ = host(tmp_path, "minimal")
    hook_transform(first, {}, {"messages": copy.deepcopy(messages)})
    first.flush()
    second, seen = host(tmp_path, "minimal")
    hook_transform(second, {}, {"messages": copy.deepcopy(messages)})
    assert second.wait_for_notices()
    assert seen == []


def test_a_failing_notify_does_not_break_the_request(tmp_path: Path) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config(pruneNotification="minimal")))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))

    def broken(_sid: str | None, _text: str) -> None:
        raise OSError("toast service down")

    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": broken}))
    messages = duplicate_reads()
    hook_transform(runtime, {}, {"messages": messages})
    assert messages[1]["parts"][0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, messages[1])
    assert runtime.wait_for_notices()  # the notice goes to stderr instead, within this test


def test_the_notification_ends_with_the_sessions_net_cost_so_far() -> None:
    text = format_notification([record("c1", "deduplication", 100)], "minimal", "5.4% cheaper than without the plugin")
    assert text == f"dcp: pruned 1 tool call holding ~{100 + PLACEHOLDER} tokens (this session so far: 5.4% cheaper than without the plugin)"
