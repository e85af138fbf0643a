"""R13: a host passing a session id of the wrong type to a hook gets the documented answer, never an exception."""

from __future__ import annotations

from typing import Any

import pluggy
import pytest

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, call, make_config, user

BAD_IDS: list[Any] = [[], {}, {"a": 1}, None, 7, "", b"ses"]


def host() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
    return pm


@pytest.mark.parametrize("session_id", BAD_IDS, ids=repr)
def test_context_snapshot_of_a_session_id_that_is_no_string_is_none(session_id: Any) -> None:
    assert host().hook.context_snapshot(session_id=session_id) is None


@pytest.mark.parametrize("session_id", BAD_IDS, ids=repr)
def test_compaction_advice_for_a_session_id_that_is_no_string_is_none(session_id: Any) -> None:
    assert host().hook.compaction_advice(session_id=session_id, messages=[user()]) is None


def test_a_known_session_still_has_its_snapshot() -> None:
    pm = host()
    messages = [user(), call("read", {"filePath": f"{PROJECT}/a.py"})]
    pm.hook.chat_messages_transform(input={"sessionID": "ses_ok"}, output={"messages": messages})
    snapshot = pm.hook.context_snapshot(session_id="ses_ok")
    assert snapshot["estimated_input_tokens"] > 0
