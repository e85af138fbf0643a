"""The bridge as a real child process over pipes: round trips, stdout purity, exit on stdin close."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.adapters.bridge.client import BridgeClient
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from tests.support.bridge_helpers import fingerprint, transform_request
from tests.support.helpers import assistant, named, tool_part, user

pytestmark = pytest.mark.slow  # each test runs bridge processes

# Runs the server with a prepare() that writes to stdout both through print and on fd 1 directly.
NOISY_SERVER = """
import os, sys
from dcp_plugin.adapters.bridge import server
from dcp_plugin.host.runtime import Runtime
prepare = Runtime.prepare
def noisy(self, *args, **kwargs):
    print("stray print from the plugin")
    os.write(1, b"stray write on fd 1\\n")
    return prepare(self, *args, **kwargs)
Runtime.prepare = noisy
sys.exit(server.main())
"""


def session(project: Path, sid: str = "ses_p") -> list[dict[str, Any]]:
    read = {"filePath": str(project / "a.txt")}
    return [user(session=sid), assistant(tool_part("read", dict(read)), session=sid), assistant(tool_part("read", dict(read)), session=sid)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".opencode").mkdir(parents=True)
    # These tests are about the process and its protocol: every decision is written at once.
    (path / ".opencode" / "dcp.jsonc").write_text('{"cache": {"scheduler": false}}')
    return path


@pytest.fixture
def bridge(project: Path):
    client = BridgeClient(cwd=str(project))
    client.request("startup", context={"directory": str(project), "worktree": str(project), "projectID": "p"})
    yield client
    if client.proc.poll() is None:
        client.close()


def send_transform(client: BridgeClient, messages: list[dict[str, Any]], base: int = 0, sid: str = "ses_p") -> dict[str, Any]:
    request = transform_request(0, sid, messages, base)
    del request["id"], request["op"]
    return client.request("transform", **request)


def test_startup_is_answered_by_the_process(project: Path):
    with BridgeClient(cwd=str(project)) as client:
        assert client.request("startup", context={"directory": str(project)}) == {"id": 1, "ok": True}


def test_the_process_answers_a_duplicate_with_a_placeholder(bridge: BridgeClient, project: Path):
    messages = session(project)
    reply = send_transform(bridge, messages)
    assert [p["value"] for p in reply["patches"]] == [named(DUPLICATE_PLACEHOLDER, messages[1])]


def test_the_process_applies_a_delta(bridge: BridgeClient, project: Path):
    messages = session(project)
    send_transform(bridge, messages[:2])
    reply = send_transform(bridge, messages, base=2)
    assert [p["partID"] for p in reply["patches"]] == [messages[1]["parts"][0]["id"]]


def test_the_process_asks_for_a_resync_on_a_foreign_prefix(bridge: BridgeClient, project: Path):
    messages = session(project)
    send_transform(bridge, messages[:2])
    other = session(project)
    assert send_transform(bridge, other, base=2)["error"] == "resync"


def test_the_process_survives_a_malformed_line(bridge: BridgeClient):
    bridge.send_line(b"{this is not json")
    assert bridge.read_reply()["ok"] is False
    assert bridge.request("ping")["ok"] is True


def test_the_process_exits_when_stdin_closes(bridge: BridgeClient):
    assert bridge.close(timeout=20) == 0


def test_stray_output_goes_to_stderr_and_stdout_stays_protocol(project: Path):
    client = BridgeClient([sys.executable, "-c", NOISY_SERVER], cwd=str(project))
    client.request("startup", context={"directory": str(project)})
    reply = send_transform(client, session(project))
    client.send_line(b"garbage")
    client.read_reply()
    assert client.close(timeout=20) == 0
    assert reply["patches"]
    assert all(isinstance(json.loads(line), dict) for line in client.raw_lines)
    assert "stray print from the plugin" in client.stderr_text()


def test_stray_output_on_fd_1_reaches_stderr(project: Path):
    client = BridgeClient([sys.executable, "-c", NOISY_SERVER], cwd=str(project))
    send_transform(client, session(project))
    client.close(timeout=20)
    assert "stray write on fd 1" in client.stderr_text()


def test_many_sessions_in_one_process(bridge: BridgeClient, project: Path):
    replies = [send_transform(bridge, session(project, f"ses_{i}"), sid=f"ses_{i}") for i in range(20)]
    assert [len(r["patches"]) for r in replies] == [1] * 20
    assert bridge.request("ping")["sessions"] == 20


def test_a_command_without_a_synced_session_asks_for_a_resync(bridge: BridgeClient):
    reply = bridge.request("command", sessionID="ses_none", command="dcp", arguments="context")
    assert reply["error"] == "resync"


def test_a_command_with_the_session_is_answered(bridge: BridgeClient, project: Path):
    messages = session(project)
    reply = bridge.request(
        "command",
        sessionID="ses_p",
        command="dcp",
        arguments="context",
        reset=True,
        base=0,
        messages=messages,
        fingerprint=fingerprint(messages, 0),
        total=len(messages),
    )
    assert reply["ok"] is True and isinstance(reply["handled"], bool) and isinstance(reply["text"], str)
