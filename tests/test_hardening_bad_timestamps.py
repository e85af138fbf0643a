"""R8: a timestamp that is no finite number (NaN, ±Infinity) counts as missing; later requests still prune."""

from __future__ import annotations

import copy
from typing import Any

import pluggy
import pytest
from helpers import PROJECT, SESSION, call, make_config, user

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.model.messages import message_time

BIG = "line of a file that is long enough to be worth pruning\n" * 30


def host() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
    return pm


def send(pm: pluggy.PluginManager, messages: list[Any]) -> list[Any]:
    sent = copy.deepcopy(messages)
    pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": sent})
    return sent


def read() -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_a_timestamp_that_is_no_finite_number_counts_as_missing(value: float) -> None:
    message = user()
    message["info"]["time"] = {"created": value, "completed": 5}
    assert message_time(message) == 5
    message["info"]["time"] = {"created": value}
    assert message_time(message) == 0


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_a_request_after_a_message_with_a_broken_timestamp_is_still_pruned(value: float) -> None:
    pm = host()
    broken = user()
    broken["info"]["time"] = {"created": value}
    messages = [broken, read(), read(), user()]
    assert send(pm, messages)[1]["parts"][0]["state"]["output"].startswith("[dcp:")
    messages += [read(), user()]
    sent = send(pm, messages)
    assert [m["parts"][0]["state"]["output"].startswith("[dcp:") for m in (sent[1], sent[2], sent[4])] == [True, True, False]
