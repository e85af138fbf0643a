"""One output, one size: the prunable list, discard's answer, the toast and `/dcp pin` give the same number."""

from __future__ import annotations

import copy
import re
from typing import Any

from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, SESSION, hook_command, make_config
from tests.support.tools_helpers import BIG, ToolHost, lists, reads, user

# An output whose length leaves a remainder at chars/3.5, so estimating the output and the
# placeholder apart rounds twice where the one definition rounds once.
ODD = BIG + "x" * 5


def host_with_toasts() -> tuple[ToolHost, list[str]]:
    toasts: list[str] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config(tools={"nudgeFrequency": 3}, pruneNotification="detailed")))
    runtime.startup(HostStartup(PROJECT, notify=lambda sid, text: toasts.append(text)))
    runtime.tool_definitions()
    return ToolHost(runtime), toasts


def size_in(line: str) -> int:
    (found,) = re.findall(r"~([\d,]+) tokens", line)
    return int(found.replace(",", ""))


def command(host: ToolHost, what: str) -> str:
    output: dict[str, Any] = {"parts": []}
    hook_command(host.runtime, {"command": "dcp", "arguments": what, "sessionID": SESSION, "messages": copy.deepcopy(host.messages)}, output)
    text: str = output["parts"][0]["text"]
    return text


def pin_row(host: ToolHost, ident: str) -> str:
    return next(line for line in command(host, "pin").splitlines() if line.strip().startswith(ident))


def test_list_discard_toast_and_pin_show_one_size_for_one_output() -> None:
    host, toasts = host_with_toasts()
    host.add(user())
    ids = reads(host, 3, output=ODD)
    row = next(line for line in lists(host.sent[-1])[0].splitlines() if line.startswith(ids[0]))
    listed = size_in(row)
    assert size_in(pin_row(host, ids[0])) == listed
    answer = host.use("discard", {"ids": [ids[0]], "reason": "noise"})
    assert size_in(answer.output.split(":")[0]) == listed
    host.request()
    (detail,) = [line for toast in toasts for line in toast.splitlines() if ": " in line and line.startswith("  - ")]
    assert size_in(detail) == listed
    assert size_in(pin_row(host, ids[0]).split(",")[0]) == listed


def list_figure(text: str) -> int:
    (found,) = re.findall(r"~([\d,]+) of prunable lists", text)
    return int(found.replace(",", ""))


def test_dcp_context_and_dcp_stats_name_one_prunable_list_figure_before_and_after_a_discard() -> None:
    host, _ = host_with_toasts()
    host.add(user())
    ids = reads(host, 8)
    first = list_figure(command(host, "context"))
    assert first > 0 and list_figure(command(host, "stats")) == first
    host.use("discard", {"ids": ids[:7], "reason": "noise"})  # the list's own output goes with them
    reads(host, 4, start=8)
    later = list_figure(command(host, "context"))
    assert later != first and list_figure(command(host, "stats")) == later
