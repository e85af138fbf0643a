"""N6: pins hold whatever the store does: a session first seen while the store failed gets its pins once it works."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pluggy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dcp_plugin
import dcp_plugin.host.hostspec
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.ids import short_id
from dcp_plugin.store import RETRY_SECONDS, Store
from tests.support.helpers import PROJECT, SESSION, assistant, call, make_config, tool_parts, user

KB = "x" * 2000
# Every output but a pinned one is masked at once.
MASK = {"maskOldOutputs": {"trigger": 1000, "keepTokens": 0, "keepTurns": 0, "keepCalls": 0}}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Host:
    """One host process: the dcp plugin over a store at ``path``, registered through pluggy."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self.store = Store(path, clock=clock)
        runtime = Runtime(PROJECT, StaticConfig(make_config(strategies=MASK)), store=self.store)
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(runtime), name="dcp")

    def request(self, messages: list[dict[str, Any]]) -> list[Any]:
        sent = copy.deepcopy(messages)
        self.pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": sent})
        return [p["state"].get("output") for p in tool_parts(sent)]

    def command(self, messages: list[dict[str, Any]], arguments: str) -> str:
        output: dict[str, Any] = {"parts": []}
        hook_input = {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(messages)}
        self.pm.hook.command_execute_before(input=hook_input, output=output)
        return str(output["parts"][0]["text"])


def reads() -> list[dict[str, Any]]:
    done = assistant({"type": "text", "text": "done"})
    return [user(), *(call("read", {"filePath": f"{PROJECT}/src/{n}.py"}, output=KB) for n in "abc"), done]


def pinned_in_an_earlier_process(path: Path, messages: list[dict[str, Any]]) -> str:
    first = Host(path, Clock())
    first.request(messages)
    target = tool_parts([messages[1]])[0]["callID"]
    assert "pinned" in first.command(messages, f"pin {short_id(target)}").lower()
    first.store.close()
    return target


def block(path: Path) -> Path:
    """Make the store's directory unusable (a file where the directory should be), as a failed mount would."""
    aside = path.parent.with_name(path.parent.name + "-aside")
    path.parent.rename(aside)
    path.parent.write_text("not a directory")
    return aside


def unblock(path: Path, aside: Path) -> None:
    path.parent.unlink()
    aside.rename(path.parent)


def test_a_pin_saved_earlier_holds_once_the_store_works_again(tmp_path: Path) -> None:
    path = tmp_path / "state" / "dcp.db"
    messages = reads()
    pinned_in_an_earlier_process(path, messages)
    aside = block(path)
    clock = Clock()
    later = Host(path, clock)
    later.request(messages)  # first sight while the store fails: nothing known yet
    unblock(path, aside)
    clock.now += RETRY_SECONDS + 1
    sent = later.request(messages)
    assert sent[0] == KB and all(output.startswith("[dcp:") for output in sent[1:])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(failures=st.lists(st.booleans(), min_size=1, max_size=6))
def test_a_pin_holds_on_every_request_the_store_can_be_read(tmp_path_factory: Any, failures: list[bool]) -> None:
    # Each request: the store fails (True) or works (False); once it has worked, the pin must hold.
    path = tmp_path_factory.mktemp("store") / "state" / "dcp.db"
    messages = reads()
    pinned_in_an_earlier_process(path, messages)
    clock = Clock()
    later = Host(path, clock)
    worked = False
    for failing in failures:
        clock.now += RETRY_SECONDS + 1
        aside = block(path) if failing else None
        sent = later.request(messages)
        if aside is not None:
            unblock(path, aside)
        worked = worked or not failing
        if worked:
            assert sent[0] == KB
