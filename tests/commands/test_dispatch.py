"""The command hook: which commands are ours, help, unknown subcommands, `commands.enabled: false`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy

import dcp_plugin.host.hostspec
from dcp_plugin.commands.help import SUBCOMMANDS
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.store import Store
from tests.support.helpers import PROJECT, call, hook_command, make_config, user


def make_runtime(tmp_path: Path, **config: Any) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime


def run(runtime: Runtime, command: str, arguments: str) -> dict[str, Any]:
    output: dict[str, Any] = {"parts": []}
    hook_command(runtime, {"command": command, "arguments": arguments, "sessionID": "s", "messages": [user(), call("read", {"filePath": "/a"})]}, output)
    return output


def test_bare_dcp_lists_every_subcommand_with_one_line_each(tmp_path: Path) -> None:
    output = run(make_runtime(tmp_path), "dcp", "")
    lines = output["parts"][0]["text"].splitlines()
    assert output["handled"] is True
    assert lines[0] == "Dynamic Context Pruning commands:"
    assert [line.split()[1] for line in lines[1:]] == [name.split()[0] for name, _ in SUBCOMMANDS]
    assert [line.split()[1] for line in lines[1:]] == ["context", "stats", "sweep", "pin", "unpin", "help"]


def test_unknown_subcommand_is_named_and_answered_with_the_help(tmp_path: Path) -> None:
    output = run(make_runtime(tmp_path), "dcp", "prune-all now")
    lines = output["parts"][0]["text"].splitlines()
    assert output["handled"] is True
    assert lines[0] == "dcp: unknown subcommand 'prune-all'."
    assert "Dynamic Context Pruning commands:" in lines


def test_reply_is_one_text_part_appended_to_existing_parts(tmp_path: Path) -> None:
    output: dict[str, Any] = {"parts": [{"type": "text", "text": "from another plugin"}]}
    hook_command(make_runtime(tmp_path), {"command": "dcp", "arguments": "help"}, output)
    assert [p["type"] for p in output["parts"]] == ["text", "text"]
    assert output["parts"][0]["text"] == "from another plugin"


def test_other_commands_are_left_alone(tmp_path: Path) -> None:
    output = run(make_runtime(tmp_path), "init", "context")
    assert output == {"parts": []}


def test_commands_disabled_leaves_dcp_to_the_host(tmp_path: Path) -> None:
    output = run(make_runtime(tmp_path, commands={"enabled": False}), "dcp", "context")
    assert output == {"parts": []}


def test_a_leading_slash_in_the_command_name_is_accepted(tmp_path: Path) -> None:
    assert run(make_runtime(tmp_path), "/dcp", "help")["handled"] is True


def test_a_failing_subcommand_is_answered_not_raised(tmp_path: Path, monkeypatch: Any) -> None:
    import dcp_plugin.commands.dispatch as dispatch

    def boom(*args: Any) -> str:
        raise RuntimeError("kaput")

    monkeypatch.setattr(dispatch, "run_context", boom)
    output = run(make_runtime(tmp_path), "dcp", "context")
    assert output["handled"] is True
    assert output["parts"][0]["text"] == "dcp: /dcp context failed: RuntimeError: kaput"


def test_the_hook_answers_through_a_real_pluggy_host(tmp_path: Path) -> None:
    pm = pluggy.PluginManager(dcp_plugin.host.hostspec.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.load_setuptools_entrypoints(dcp_plugin.host.hostspec.PROJECT_NAME)
    output: dict[str, Any] = {"parts": []}
    pm.hook.command_execute_before(input={"command": "dcp", "arguments": "help", "sessionID": "s"}, output=output)
    assert output["handled"] is True and output["parts"][0]["text"].startswith("Dynamic Context Pruning commands:")
