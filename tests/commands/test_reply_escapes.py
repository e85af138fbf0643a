"""N13: control and bidirectional characters echoed into `/dcp` replies are escaped; line breaks stay."""

from __future__ import annotations

import copy
import re
from typing import Any

import pluggy
from hypothesis import given, settings
from hypothesis import strategies as st

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from tests.support.helpers import PROJECT, SESSION, call, make_config, user

# What must never reach the user's screen raw: C0/C1 controls but line break and tab, DEL, the
# bidirectional controls, the line and paragraph separators, lone surrogates.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]")
SNEAKY = "\x1b[31m\u202e\x07\u2066"
MESSAGES = [user(), call("read", {"filePath": f"{PROJECT}/a{SNEAKY}.py"}, output="x" * 900)]


def host() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
    pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": copy.deepcopy(MESSAGES)})
    return pm


PM = host()


def reply(arguments: str, session: str = SESSION) -> str:
    output: dict[str, Any] = {"parts": []}
    hook_input = {"command": "dcp", "arguments": arguments, "sessionID": session, "messages": copy.deepcopy(MESSAGES)}
    PM.hook.command_execute_before(input=hook_input, output=output)
    return str(output["parts"][0]["text"])


def test_an_unknown_subcommand_is_echoed_escaped() -> None:
    text = reply(f"bogus{SNEAKY}")
    assert not RAW.search(text) and "\\x1b[31m\\u202e" in text


def test_an_unknown_id_is_echoed_escaped() -> None:
    text = reply(f"pin zz{SNEAKY}")
    assert not RAW.search(text) and "zz\\x1b" in text


def test_a_path_a_tool_named_is_listed_escaped() -> None:
    text = reply("pin")
    assert not RAW.search(text) and "\\u202e" in text and "\n" in text


@settings(max_examples=60, deadline=None)
@given(arguments=st.text(max_size=40), session=st.text(min_size=1, max_size=12))
def test_no_reply_holds_a_raw_control_or_bidirectional_character(arguments: str, session: str) -> None:
    for sub in ("", "pin ", "unpin ", "sweep ", "stats ", "context "):
        assert not RAW.search(reply(sub + arguments, session))
