"""N8, R8: a message that is not an object, or a timestamp that is no number, is skipped like any other malformed field."""

from __future__ import annotations

import copy
from typing import Any

import pluggy
import pytest

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.model.messages import message_time
from tests.support.bridge_helpers import Harness
from tests.support.helpers import PROJECT, SESSION, call, make_config, user

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


def read(path: str = "a.py") -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/{path}"}, output=BIG)


@pytest.mark.parametrize("junk", [None, "a string", 7, ["a", "list"], True])
def test_a_non_object_message_does_not_stop_pruning(junk: Any) -> None:
    pm = host()
    messages = [user(), read(), junk, read()]
    sent = send(pm, messages)
    assert sent[1]["parts"][0]["state"]["output"].startswith("[dcp:")
    assert sent[2] == junk


@pytest.mark.parametrize("junk", [None, "a string", 7])
def test_later_requests_of_a_session_with_a_non_object_message_keep_pruning(junk: Any) -> None:
    pm = host()
    messages = [user(), read("b.py"), junk, read("b.py")]
    send(pm, messages)
    messages += [user("again"), read("c.py"), read("c.py")]
    sent = send(pm, messages)
    assert sent[1]["parts"][0]["state"]["output"].startswith("[dcp:")
    assert sent[5]["parts"][0]["state"]["output"].startswith("[dcp:")


@pytest.mark.parametrize("junk", [None, "a string", 7])
def test_through_the_bridge_a_non_object_message_does_not_stop_pruning(junk: Any) -> None:
    h = Harness()
    messages = [user(), read("d.py"), junk, read("d.py")]
    reply = h.transform(SESSION, messages)
    assert [p["messageIndex"] for p in reply["patches"]] == [1]


# R8: a timestamp that is no finite number (NaN, ±Infinity: JSON parsers accept them) counts as missing.
NOT_FINITE = pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])


@NOT_FINITE
def test_a_timestamp_that_is_no_finite_number_counts_as_missing(value: float) -> None:
    message = user()
    message["info"]["time"] = {"created": value, "completed": 5}
    assert message_time(message) == 5
    message["info"]["time"] = {"created": value}
    assert message_time(message) == 0


@NOT_FINITE
def test_requests_after_a_message_with_a_timestamp_that_is_no_finite_number_keep_pruning(value: float) -> None:
    pm = host()
    broken = user()
    broken["info"]["time"] = {"created": value}
    messages = [broken, read("t.py"), read("t.py"), user()]
    assert send(pm, messages)[1]["parts"][0]["state"]["output"].startswith("[dcp:")
    messages += [read("t.py"), user()]
    sent = send(pm, messages)
    assert [m["parts"][0]["state"]["output"].startswith("[dcp:") for m in (sent[1], sent[2], sent[4])] == [True, True, False]
