"""The plugin as a host sees it: entry point, hooks, sessions, fail-open, rewritten histories."""

from __future__ import annotations

import copy
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pluggy
import pytest

import dcp_plugin.host.hostspec
from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from tests.support.helpers import PROJECT, call, hook_transform, make_config, named, tool_parts, user
from tests.support.paths import DATA

BIG = "content line\n" * 60


def duplicate_reads(session: str = "ses_a") -> list[dict]:
    msgs = [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    return fix_session(msgs, session)


def fix_session(messages: list[dict], session: str) -> list[dict]:
    for m in messages:
        m["info"]["sessionID"] = session
    return messages


def test_entry_point_loads_in_a_fresh_process():
    code = (
        "import json, pluggy, dcp_plugin.host.hostspec\n"
        "pm = pluggy.PluginManager('agent_host'); pm.add_hookspecs(dcp_plugin.host.hostspec)\n"
        "pm.load_setuptools_entrypoints('agent_host')\n"
        "pm.hook.host_startup(context={'directory': '/home/dev/project'})\n"
        "big = 'x' * 500\n"
        "msgs = [{'info': {'id': 'm1', 'sessionID': 's', 'role': 'user'}, 'parts': []}] + [\n"
        "  {'info': {'id': f'm{i}', 'sessionID': 's', 'role': 'assistant'}, 'parts': [{'id': f'p{i}', 'type': 'tool', 'tool': 'read', 'callID': f'c{i}',\n"
        "   'state': {'status': 'completed', 'input': {'filePath': '/a'}, 'output': big}}]} for i in (2, 3)]\n"
        "pm.hook.chat_messages_transform(input={}, output={'messages': msgs})\n"
        "print(json.dumps([name for name, _ in pm.list_name_plugin()]))\n"
        "print(json.dumps([m['parts'][0]['state']['output'][:5] for m in msgs[1:]]))\n"
    )
    env = {**os.environ, "PYTHONPATH": ""}
    # The user's config turns the cache scheduler off: this test is about loading, not scheduling.
    config_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "dcp.jsonc").write_text('{"cache": {"scheduler": false}}')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=os.environ["HOME"], timeout=120)
    assert done.returncode == 0, done.stderr
    names, outputs = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert names == ["dcp"]
    assert outputs == [DUPLICATE_PLACEHOLDER[:5], "xxxxx"]


class Observer:
    """Another agent_host plugin, registered next to dcp: it sees what dcp sent."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    @dcp_plugin.hookimpl(trylast=True)
    def chat_messages_transform(self, input: dict, output: dict) -> None:
        self.seen.append([p["state"].get("output", "")[:5] for p in tool_parts(output["messages"])])


def test_a_second_plugin_next_to_dcp_sees_the_pruned_request_and_both_run():
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
    observer = Observer()
    pm.register(observer, name="observer")
    msgs = duplicate_reads()
    pm.hook.chat_messages_transform(input={}, output={"messages": msgs})
    assert observer.seen == [[DUPLICATE_PLACEHOLDER[:5], BIG[:5]]]
    assert sorted(name for name, _ in pm.list_name_plugin()) == ["dcp", "observer"]


def test_host_can_call_transform_without_startup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runtime = Runtime()
    msgs = [user(), call("write", {"filePath": "a.py", "content": BIG}), call("read", {"filePath": str(tmp_path / "a.py")}, output=BIG)]
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "dcp.jsonc").write_text(
        '{"strategies": {"supersedeWrites": {"enabled": true}}, "cache": {"scheduler": false}}'
    )
    hook_transform(runtime, {}, {"messages": msgs})
    assert runtime.directory == str(tmp_path)
    assert tool_parts(msgs)[0]["state"]["input"]["content"] != BIG


def test_session_id_from_input_wins_over_messages():
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    hook_transform(runtime, {"sessionID": "explicit"}, {"messages": duplicate_reads("ses_in_messages")})
    assert runtime.session_ids() == ["explicit"]


def test_sessions_keep_separate_state():
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    a = duplicate_reads("ses_a")[:2]
    b = duplicate_reads("ses_b")
    hook_transform(runtime, {}, {"messages": a})
    hook_transform(runtime, {}, {"messages": b})
    assert [p["state"]["output"] for p in tool_parts(a)] == [BIG]
    assert [p["state"]["output"] for p in tool_parts(b)] == [named(DUPLICATE_PLACEHOLDER, b[1]), BIG]
    assert set(runtime.session_ids()) == {"ses_a", "ses_b"}


def test_exception_inside_plugin_leaves_messages_untouched(monkeypatch, caplog):
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    msgs = duplicate_reads()
    original = copy.deepcopy(msgs)

    def explode(self, *args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("dcp_plugin.pipeline.session.SessionState.update", explode)
    with caplog.at_level(logging.ERROR, logger="dcp_plugin"):
        hook_transform(runtime, {}, {"messages": msgs})
    assert msgs == original
    assert "boom" in caplog.text


@pytest.mark.parametrize(
    "messages",
    [
        None,
        "not a list",
        [],
        [None, 3, "x"],
        [{"info": "bad", "parts": "bad"}],
        [{"info": {"role": "assistant"}, "parts": [None, {"type": "tool"}, {"type": "tool", "tool": 3, "state": []}]}],
        [{"info": {"role": "assistant"}, "parts": [{"type": "tool", "tool": "read", "callID": "c", "state": {"status": "completed", "input": "str"}}]}],
    ],
)
def test_malformed_messages_do_not_raise(messages):
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    output = {"messages": copy.deepcopy(messages)}
    hook_transform(runtime, {}, output)
    assert output["messages"] == messages


def test_undo_of_newer_duplicate_brings_the_older_read_back():
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    msgs = duplicate_reads()
    first = copy.deepcopy(msgs)
    hook_transform(runtime, {}, {"messages": first})
    assert tool_parts(first)[0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, msgs[1])
    undone = copy.deepcopy(msgs[:2])
    hook_transform(runtime, {}, {"messages": undone})
    assert tool_parts(undone)[0]["state"]["output"] == BIG


def test_compaction_replacing_the_start_resyncs():
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    msgs = duplicate_reads()
    hook_transform(runtime, {}, {"messages": copy.deepcopy(msgs)})
    compacted = [user(text="summary of earlier work", session="ses_a")] + copy.deepcopy(msgs[2:])
    hook_transform(runtime, {}, {"messages": compacted})
    assert tool_parts(compacted)[0]["state"]["output"] == BIG
    assert runtime.view("ses_a").restarts == 1


def test_config_change_recomputes_decisions():
    source = StaticConfig(make_config())
    runtime = Runtime(PROJECT, source)
    msgs = duplicate_reads()
    hook_transform(runtime, {}, {"messages": copy.deepcopy(msgs)})
    source.config = make_config(strategies={"deduplication": {"enabled": False}, "supersededReads": {"enabled": False}})
    out = copy.deepcopy(msgs)
    hook_transform(runtime, {}, {"messages": out})
    assert [p["state"]["output"] for p in tool_parts(out)] == [BIG, BIG]


def test_placeholders_are_reapplied_to_every_fresh_copy():
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    msgs = duplicate_reads()
    for _ in range(3):
        out = copy.deepcopy(msgs)
        hook_transform(runtime, {}, {"messages": out})
        assert tool_parts(out)[0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, msgs[1])
    assert tool_parts(msgs)[0]["state"]["output"] == BIG


def test_real_opencode_sample_keeps_partial_reads_and_young_error(tmp_path):
    # What OpenCode 1.18.33 handed the transform hook (tests/data/opencode/README.md says how it was taken).
    sample = DATA / "opencode" / "sample-messages.json"
    msgs = json.loads(sample.read_text())
    out = copy.deepcopy(msgs)
    hook_transform(Runtime("/home/dev/project", StaticConfig(make_config())), {}, {"messages": out})
    assert out == msgs


def test_relative_protected_patterns_hold_when_the_host_starts_in_a_subdirectory(git_project: Path) -> None:
    sub = git_project / "pkg" / "deep"
    sub.mkdir(parents=True)
    runtime = Runtime(str(sub), StaticConfig(make_config(protectedFilePatterns=["secrets/**"])))
    runtime.startup(HostStartup.read({"directory": str(sub)}))
    secret = str(git_project / "secrets" / "key.txt")
    msgs = [user(), call("read", {"filePath": secret}, output=BIG), user(), call("read", {"filePath": secret}, output=BIG)]
    hook_transform(runtime, {}, {"messages": msgs})
    assert [p["state"]["output"] for p in tool_parts(msgs)] == [BIG, BIG]


def test_the_worktree_the_host_names_is_the_project_root(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / "src").mkdir(parents=True)
    runtime = Runtime(str(project / "src"), StaticConfig(make_config(protectedFilePatterns=["/docs/**"])))
    runtime.startup(HostStartup.read({"directory": str(project / "src"), "worktree": str(project)}))
    doc = str(project / "docs" / "a.md")
    msgs = [user(), call("read", {"filePath": doc}, output=BIG), user(), call("read", {"filePath": doc}, output=BIG)]
    hook_transform(runtime, {}, {"messages": msgs})
    assert [p["state"]["output"] for p in tool_parts(msgs)] == [BIG, BIG]


def test_dcp_trace_hooks_prints_every_hook_call_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    from dcp_plugin.host.tracing import trace_hooks

    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()))), name="dcp")
    assert trace_hooks(pm, {"DCP_TRACE_HOOKS": "1"})
    pm.hook.chat_messages_transform(input={}, output={"messages": duplicate_reads()})
    err = capsys.readouterr().err
    assert "[hook] chat_messages_transform(input=dict, output={messages: 3}) -> dcp" in err
    assert "[hook] chat_messages_transform done" in err


def test_without_the_switch_hooks_are_not_traced() -> None:
    from dcp_plugin.host.tracing import trace_hooks

    assert trace_hooks(pluggy.PluginManager(dcp_plugin.PROJECT_NAME), {}) is False


def plugin_host_with(runtime: Runtime) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.register(dcp_plugin.DcpPlugin(runtime), name="dcp")
    return pm


def test_the_context_snapshot_hook_answers_with_the_tier_and_the_tip_text() -> None:
    pm = plugin_host_with(Runtime(PROJECT, StaticConfig(make_config())))
    pm.hook.chat_messages_transform(input={"model": {"id": "m", "limit": {"context": 300}}}, output={"messages": duplicate_reads()})
    snapshot = pm.hook.context_snapshot(session_id="ses_a")
    assert snapshot["context_limit"] == 300 and snapshot["tier"] == "hard"
    assert snapshot["tip"] == "context-critical" and "of 300 tokens" in snapshot["tip_text"]


def test_the_context_snapshot_hook_knows_nothing_of_an_unseen_session() -> None:
    pm = plugin_host_with(Runtime(PROJECT, StaticConfig(make_config())))
    assert pm.hook.context_snapshot(session_id="nobody") is None


def test_the_compaction_advice_hook_runs_the_hosts_summarize_past_the_auto_threshold() -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    pm = plugin_host_with(runtime)
    asked: list[dict] = []
    pm.hook.host_startup(context={"directory": PROJECT, "summarize": lambda request: asked.append(request) or {"text": "summary", "finish_reason": "stop"}})
    msgs = duplicate_reads()
    pm.hook.chat_messages_transform(input={"model": {"id": "m", "limit": {"context": 300}}}, output={"messages": msgs})
    advice = pm.hook.compaction_advice(session_id="ses_a", messages=msgs)
    assert advice["status"] == "forced" and advice["summary"] == "summary"
    assert asked and asked[0]["thinking"] is False
