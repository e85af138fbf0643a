"""Runtime wiring: debug log per decision, the context snapshot after every transform, compaction advice."""

from __future__ import annotations

import copy
import os
import stat
from pathlib import Path
from typing import Any

from dcp_plugin.budget import CompactionStatus, context_limit
from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.host.session_budget import SessionBudget
from dcp_plugin.store import Store
from tests.support.helpers import PROJECT, SESSION, call, hook_transform, make_config, user


def make_runtime(tmp_path: Path, **config: Any) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime


def session(model: str | None = None) -> list[dict[str, Any]]:
    messages = [
        user(),
        call("read", {"filePath": "/p/a.py"}, call_id="r1"),
        user(),
        call("read", {"filePath": "/p/a.py"}, call_id="r2"),
        call("bash", {"command": "make " + "x" * 100}, status="error", call_id="b1"),
        *[user() for _ in range(4)],
    ]
    if model:
        messages[4]["info"]["modelID"] = model
    return messages


def test_debug_writes_one_private_line_per_decision_with_its_reason(tmp_path: Path, isolated_home: Path) -> None:
    runtime = make_runtime(tmp_path, debug=True)
    for _ in range(2):
        hook_transform(runtime, {}, {"messages": copy.deepcopy(session())})
    log = isolated_home / ".local/state/opencode/dcp/debug.log"
    lines = [line.split("\t") for line in log.read_text().splitlines()]
    assert [(f[1], f[2], f[3], f[4]) for f in lines] == [
        (SESSION, "r1", "read", "deduplication"),
        (SESSION, "b1", "bash", "purgeErrors"),
    ]
    assert lines[0][5].startswith("turn=1 field=output tokens_saved=")
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600


def test_without_debug_no_log_is_written(tmp_path: Path, isolated_home: Path) -> None:
    hook_transform(make_runtime(tmp_path), {}, {"messages": session()})
    assert not (isolated_home / ".local/state/opencode/dcp/debug.log").exists()


def test_snapshot_uses_the_limit_the_host_passes_with_the_request(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    hook_transform(runtime, {"model": {"id": "whatever", "limit": {"context": 50_000}}}, {"messages": session()})
    snap = runtime.snapshot(SESSION)
    assert snap is not None
    assert (snap.context_limit, snap.limit_source) == (50_000, "host")
    assert snap.thresholds is not None and snap.thresholds.window == 50_000


def test_snapshot_uses_the_startup_model_limit_when_the_request_has_none(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    runtime.startup(HostStartup.read({"directory": PROJECT, "model": {"id": "m", "limit": {"context": 64_000}}}))
    hook_transform(runtime, {}, {"messages": session()})
    assert runtime.snapshot(SESSION).context_limit == 64_000  # type: ignore[union-attr]


def test_snapshot_falls_back_to_the_model_of_the_last_assistant_message(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    hook_transform(runtime, {"model": {"id": "gpt-4o"}}, {"messages": session(model="gemini-2.5-pro")})
    snap = runtime.snapshot(SESSION)
    assert snap is not None
    assert (snap.model_id, snap.context_limit) == ("gemini-2.5-pro", context_limit("gemini-2.5-pro"))


def test_snapshot_uses_the_request_model_id_when_messages_name_none(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    hook_transform(runtime, {"model": {"id": "gpt-4o"}}, {"messages": session()})
    assert runtime.snapshot(SESSION).context_limit == 128_000  # type: ignore[union-attr]


def test_snapshot_counts_the_tokens_of_the_pruned_request(tmp_path: Path) -> None:
    from dcp_plugin.model.tokens import estimate_content_tokens

    runtime = make_runtime(tmp_path)
    sent = copy.deepcopy(session())
    hook_transform(runtime, {}, {"messages": sent})
    assert runtime.snapshot(SESSION).estimated_input_tokens == estimate_content_tokens(sent)  # type: ignore[union-attr]


def test_a_rewritten_history_gives_the_snapshot_of_a_fresh_session(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    messages = session()
    hook_transform(runtime, {}, {"messages": copy.deepcopy(messages)})
    # An undo: the history loses its last messages, so the session starts over.
    hook_transform(runtime, {}, {"messages": copy.deepcopy(messages[:4])})
    fresh = make_runtime(tmp_path / "other")
    hook_transform(fresh, {}, {"messages": copy.deepcopy(messages[:4])})
    assert runtime.view(SESSION).restarts == 1  # type: ignore[union-attr]
    assert runtime.snapshot(SESSION) == fresh.snapshot(SESSION)


def test_the_latest_snapshot_is_persisted_with_the_session(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    hook_transform(runtime, {"model": {"limit": {"context": 50_000}}}, {"messages": session()})
    runtime.flush()
    saved = Store(tmp_path / "dcp.sqlite3").load_session(SESSION).snapshot
    assert saved == runtime.snapshot(SESSION).to_dict()  # type: ignore[union-attr]


def test_a_new_runtime_starts_from_the_saved_snapshot(tmp_path: Path) -> None:
    first = make_runtime(tmp_path)
    hook_transform(first, {"model": {"limit": {"context": 50_000}}}, {"messages": session()})
    first.flush()
    second = make_runtime(tmp_path)
    assert second.snapshot(SESSION) == first.snapshot(SESSION)


def test_compaction_advice_is_none_below_auto(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    hook_transform(runtime, {}, {"messages": session()})
    advice = runtime.compaction_advice(SESSION)
    assert advice is not None and advice.status == CompactionStatus.NONE


def test_compaction_advice_runs_the_hosts_side_query_past_auto(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def summarize(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"text": "summary", "finish_reason": "stop"}

    runtime = make_runtime(tmp_path)
    runtime.startup(HostStartup.read({"directory": PROJECT, "summarize": summarize}))
    messages = session()
    hook_transform(runtime, {"model": {"limit": {"context": 250}}}, {"messages": messages})
    advice = runtime.compaction_advice(SESSION, messages)
    assert advice is not None and advice.status == CompactionStatus.FORCED and advice.summary == "summary"
    # The summary must fit the room the ladder keeps for it: ⌈250 / 6⌉ = 42 tokens here.
    assert (asked[0]["thinking"], asked[0]["max_output_tokens"]) == (False, 42)


def test_compaction_advice_never_raises_when_the_side_query_fails(tmp_path: Path) -> None:
    def summarize(request: dict[str, Any]) -> dict[str, Any]:
        raise TimeoutError("model busy")

    runtime = make_runtime(tmp_path)
    runtime.startup(HostStartup.read({"directory": PROJECT, "summarize": summarize}))
    hook_transform(runtime, {"model": {"limit": {"context": 250}}}, {"messages": session()})
    advice = runtime.compaction_advice(SESSION, session())
    assert advice is not None and advice.status == CompactionStatus.FAILED


def test_compaction_advice_for_an_unknown_session_is_none(tmp_path: Path) -> None:
    assert make_runtime(tmp_path).compaction_advice("nobody") is None


def test_a_broken_snapshot_never_breaks_the_request(tmp_path: Path, monkeypatch: Any) -> None:
    runtime = make_runtime(tmp_path)

    def boom(*_a: Any, **_k: Any) -> None:
        raise RuntimeError("tracker bug")

    monkeypatch.setattr(SessionBudget, "record", boom)
    messages = session()
    hook_transform(runtime, {}, {"messages": messages})
    assert messages[1]["parts"][0]["state"]["output"].startswith("[dcp:")


def test_snapshot_names_the_newest_message_model_when_the_host_names_another(tmp_path: Path) -> None:
    # One rule (model.refs.request_model) for the runtime and the session's request history:
    # the messages win, so a restart or a replay finds the model the live run found.
    runtime = make_runtime(tmp_path)
    host = {"id": "gpt-4o", "providerID": "openai", "limit": {"context": 50_000}}
    hook_transform(runtime, {"model": host}, {"messages": session(model="gemini-2.5-pro")})
    snap = runtime.snapshot(SESSION)
    assert snap is not None
    assert (snap.model_id, snap.context_limit) == ("gemini-2.5-pro", context_limit("gemini-2.5-pro"))
