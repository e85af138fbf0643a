"""`/dcp stats`: this session and all time, from the store, with exact counts."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.store import Store
from tests.support.helpers import PROJECT, SESSION, call, hook_command, hook_transform, make_config, named, user
from tests.support.paths import ROOT

# Placeholders name their call's id, which is as long for every call.
from tests.support.tools_helpers import BIG, ToolHost, lists

DEDUP_SAVED = math.ceil(400 / 3) - math.ceil(len(named(DUPLICATE_PLACEHOLDER, "any call")) / 3)  # outputs: chars/3


def session(sid: str) -> list[dict[str, Any]]:
    """Two identical reads (one dedup prune) and a bash call that failed 4 turns ago (one purge)."""
    return [
        user(session=sid),
        _failed(sid),
        user(session=sid),
        _read(sid),
        user(session=sid),
        _read(sid),
        user(session=sid),
        user(session=sid),
    ]


def _read(sid: str) -> dict[str, Any]:
    message = call("read", {"filePath": "/p/a.py"}, output="x" * 400)
    return _own(message, sid)


def _failed(sid: str) -> dict[str, Any]:
    return _own(call("bash", {"command": "y" * 200}, status="error"), sid)


def _own(message: dict[str, Any], sid: str) -> dict[str, Any]:
    message["info"]["sessionID"] = sid
    for part in message["parts"]:
        part["sessionID"] = sid
    return message


PURGE_SAVED = math.ceil(len('{"command":"' + "y" * 200 + '"}') * 2 / 7) - math.ceil(
    len('{"command":"' + named(FAILED_INPUT_PLACEHOLDER, "any call") + '"}') * 2 / 7
)  # inputs: chars/3.5


def make_runtime(tmp_path: Path) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime


def stats_reply(runtime: Runtime, sid: str) -> list[str]:
    output: dict[str, Any] = {"parts": []}
    hook_command(runtime, {"command": "dcp", "arguments": "stats", "sessionID": sid}, output)
    return output["parts"][0]["text"].splitlines()


def run_requests(runtime: Runtime, messages: list[dict[str, Any]], times: int) -> None:
    for _ in range(times):
        hook_transform(runtime, {}, {"messages": copy.deepcopy(messages)})


def test_stats_of_this_session_count_calls_and_tokens_per_strategy(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    run_requests(runtime, session("s1"), 3)
    lines = stats_reply(runtime, "s1")
    per_request = DEDUP_SAVED + PURGE_SAVED
    assert lines[2] == (
        f"This session (s1): 2 calls pruned, ~{per_request:,} tokens saved per request; "
        f"~{3 * per_request:,} tokens saved over 3 requests"
    )
    rows = {line.split()[0]: line.split()[1:] for line in lines[3 : 3 + len(ALL_REASONS)]}
    assert list(rows) == list(ALL_REASONS)  # every strategy, zeros included, in registry order
    assert rows["deduplication"] == ["1", "call", f"~{DEDUP_SAVED}", "tokens"]
    assert rows["purgeErrors"] == ["1", "call", f"~{PURGE_SAVED}", "tokens"]
    assert rows["sweep"] == ["0", "calls", "~0", "tokens"]


def test_all_time_stats_cover_every_session_seen(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    run_requests(runtime, session("s1"), 1)
    run_requests(runtime, session("s2"), 2)
    lines = stats_reply(runtime, "s2")
    all_time = lines[lines.index("") + 1 :]
    all_time = all_time[all_time.index("") + 1 :]
    per_request = DEDUP_SAVED + PURGE_SAVED
    assert all_time[0] == (
        f"All time (2 sessions): 4 calls pruned, ~{2 * per_request:,} tokens saved per request; "
        f"~{3 * per_request:,} tokens saved over 3 requests"
    )


def test_stats_accumulate_across_runtimes_without_double_counting(tmp_path: Path) -> None:
    messages = session("s1")
    first = make_runtime(tmp_path)
    run_requests(first, messages, 2)
    first.flush()  # what exit does
    second = make_runtime(tmp_path)
    run_requests(second, messages, 1)
    lines = stats_reply(second, "s1")
    per_request = DEDUP_SAVED + PURGE_SAVED
    assert lines[2].startswith(f"This session (s1): 2 calls pruned, ~{per_request:,} tokens saved per request")
    assert lines[2].endswith("over 3 requests")


def test_stats_without_a_store_show_this_process_only(tmp_path: Path) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.use_store(None)
    messages = session("s1")
    run_requests(runtime, messages, 1)
    output: dict[str, Any] = {"parts": []}
    hook_command(runtime, {"command": "dcp", "arguments": "stats", "messages": messages}, output)
    text = output["parts"][0]["text"]
    assert "This session (s1): 2 calls pruned" in text
    assert "All time" not in text and "The state database is unavailable" in text


def test_stats_end_with_the_net_cost_after_cache_rewrites(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    run_requests(runtime, session("s1"), 3)
    lines = stats_reply(runtime, "s1")
    net = next(line for line in lines if line.strip().startswith("net cost:"))
    assert "than without the plugin" in net and "tokens the provider processed again" in net


def command_text(host: Any, arguments: str) -> str:
    output: dict[str, Any] = {"parts": []}
    hook_command(host.runtime, {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(host.messages)}, output)
    return str(output["parts"][0]["text"])


def listed_session(tmp_path: Path) -> Any:
    """A session whose model is offered the plugin's tools: prunable lists are written, nothing is pruned."""
    host = ToolHost.start(tools={"nudgeFrequency": 3}, cache={"scheduler": True}).add(user())
    host.runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    for n in range(7):
        host.read(f"f{n}.py", BIG + str(n))
        host.request()
    return host


def test_dcp_context_and_dcp_stats_show_the_same_cost_at_the_same_moment(tmp_path: Path) -> None:
    host = listed_session(tmp_path)
    host.add(call("read", {"filePath": "/p/f1.py"}, output=BIG + "1"))  # a duplicate: something pruned
    host.request()
    net = [line.strip() for line in command_text(host, "stats").splitlines() if "net cost:" in line]
    context = [line for line in command_text(host, "context").splitlines() if line.startswith("Net cost so far")]
    assert net and context and context[0].endswith(net[0].removeprefix("net cost: "))


def test_the_plugins_own_text_has_its_own_line_and_no_negative_saving(tmp_path: Path) -> None:
    host = listed_session(tmp_path)
    assert lists(host.sent[-1]) or any(lists(sent) for sent in host.sent)
    stats = command_text(host, "stats")
    context = command_text(host, "context")
    for text in (stats, context):
        own = [line.strip() for line in text.splitlines() if "The plugin's own text in every request" in line]
        assert own and re.search(r"~[\d,]+ tokens of system text, ~[\d,]+ of tool definitions", own[0]), text
        assert "of prunable lists" in own[0]
    assert "~-" not in stats.split("All time")[0]


def test_the_readme_figure_for_the_plugins_own_text_with_the_default_tools() -> None:
    from dcp_plugin.cost.overhead import plugin_text
    from dcp_plugin.pipeline.modeltools import definitions, system_text

    tools = make_config().tools
    total = plugin_text(system_text(tools), definitions(tools)).total
    readme = (ROOT / "README.md").read_text()
    assert "about 750 tokens\n  with the defaults" in readme or "about 750 tokens with the defaults" in readme
    assert abs(total - 750) <= 50, total
