"""`/dcp sweep [N]`: what is swept, what is skipped and why, and that it sticks."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, SWEPT_PLACEHOLDER
from dcp_plugin.store import Store
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    hook_command,
    hook_transform,
    make_config,
    named,
    tool_part,
    user,
)


def saved(output_chars: int) -> int:
    """Tokens a sweep removes from one output: chars/3, rounded up, minus the placeholder's (ids are as long for every call)."""
    return math.ceil(output_chars / 3) - math.ceil(len(named(SWEPT_PLACEHOLDER, "any call")) / 3)


def session() -> list[dict[str, Any]]:
    """Turn 1: an old read. Turn 2: read, write, read of .env, bash still running, grep."""
    return [
        user("first"),
        call("read", {"filePath": "/p/old.py"}, output="o" * 300, call_id="old"),
        user("second"),
        assistant(
            tool_part("read", {"filePath": "/p/a.py"}, output="a" * 300, call_id="r1"),
            tool_part("write", {"filePath": "/p/b.py", "content": "b" * 300}, output="ok", call_id="w1"),
        ),
        call("read", {"filePath": f"{PROJECT}/.env"}, output="SECRET=1" * 40, call_id="env"),
        call("bash", {"command": "make test"}, status="running", call_id="run"),
        call("grep", {"pattern": "needle"}, output="g" * 200, call_id="g1"),
    ]


def make_runtime(tmp_path: Path, **config: Any) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    runtime.use_store(Store(tmp_path / "dcp.sqlite3"))
    return runtime


def sweep(runtime: Runtime, messages: list[dict[str, Any]], arguments: str = "sweep") -> str:
    output: dict[str, Any] = {"parts": []}
    hook_command(runtime, {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(messages)}, output)
    return output["parts"][0]["text"]


def outputs_next_request(runtime: Runtime, messages: list[dict[str, Any]]) -> dict[str, Any]:
    sent = copy.deepcopy(messages)
    hook_transform(runtime, {"sessionID": SESSION}, {"messages": sent})
    return {p["callID"]: p["state"].get("output") for m in sent for p in m["parts"] if p.get("type") == "tool"}


def test_sweep_prunes_every_finished_unprotected_call_since_the_last_user_message(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, protectedFilePatterns=[".env"])
    text = sweep(runtime, session())
    assert text.splitlines()[0] == (
        f"dcp sweep: pruned 2 tool calls since your last message (~{saved(300) + saved(200)} tokens per request)"
    )
    outputs = outputs_next_request(runtime, session())
    assert (outputs["r1"], outputs["g1"]) == (named(SWEPT_PLACEHOLDER, "r1"), named(SWEPT_PLACEHOLDER, "g1"))
    assert outputs["old"] == "o" * 300


def test_sweep_reports_each_skipped_call_with_its_reason(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, protectedFilePatterns=[".env"])
    text = sweep(runtime, session())
    skipped = text.split("Skipped 3 calls:\n")[1].splitlines()
    assert skipped == [
        "  - write /p/b.py: protected tool",
        "  - read .env: protected path (.env)",
        "  - bash make test: still running",
    ]


def test_sweep_names_calls_by_tool_and_argument_never_by_call_id(tmp_path: Path) -> None:
    text = sweep(make_runtime(tmp_path), session())
    assert text.splitlines()[1:3] == [f"  - read /p/a.py: ~{saved(300):,} tokens", f"  - read .env: ~{saved(320):,} tokens"]
    assert not re.search(r"\b(r1|w1|g1)\b", text)


def test_sweep_keeps_the_result_older_duplicates_point_at(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    messages = [
        user("first"),
        call("read", {"filePath": "/p/a.py"}, output="a" * 300, call_id="older"),
        user("second"),
        call("read", {"filePath": "/p/a.py"}, output="a" * 300, call_id="newer"),
        call("grep", {"pattern": "needle"}, output="g" * 200, call_id="g1"),
    ]
    text = sweep(runtime, messages)
    assert "  - read /p/a.py: kept: 1 earlier identical call point at this result" in text.splitlines()
    outputs = outputs_next_request(runtime, messages)
    assert outputs["older"] == named(DUPLICATE_PLACEHOLDER, "older")
    assert outputs["newer"] == "a" * 300 and outputs["g1"] == named(SWEPT_PLACEHOLDER, "g1")


def test_sweep_takes_a_result_whose_older_duplicate_was_too_small_to_replace(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    messages = [user("first"), call("read", {"filePath": "/p/a.py"}, output="ok", call_id="older"),
                user("second"), call("read", {"filePath": "/p/a.py"}, output="ok" + "a" * 300, call_id="newer")]
    sweep(runtime, messages)
    assert outputs_next_request(runtime, messages)["newer"] == named(SWEPT_PLACEHOLDER, "newer")


def test_sweep_leaves_protected_calls_untouched(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, protectedFilePatterns=[".env"])
    sweep(runtime, session())
    outputs = outputs_next_request(runtime, session())
    assert outputs["env"] == "SECRET=1" * 40 and outputs["w1"] == "ok"


def test_sweep_honours_commands_protected_tools(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, commands={"protectedTools": ["grep"]})
    text = sweep(runtime, session())
    assert "  - grep needle: protected tool" in text.splitlines()
    assert outputs_next_request(runtime, session())["g1"] == "g" * 200


def test_sweep_n_takes_the_last_n_tool_calls(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    text = sweep(runtime, session(), "sweep 6")
    assert text.splitlines()[0] == (
        "dcp sweep: pruned 4 tool calls in the last 6 tool calls"
        f" (~{saved(300) + saved(300) + saved(320) + saved(200)} tokens per request)"
    )
    assert outputs_next_request(runtime, session())["old"] == named(SWEPT_PLACEHOLDER, "old")


def test_sweep_twice_reports_the_calls_as_already_pruned(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    sweep(runtime, session(), "sweep 1")
    assert sweep(runtime, session(), "sweep 1").splitlines()[-1] == "  - grep needle: already pruned (sweep)"


def test_sweep_rejects_a_count_that_is_not_a_positive_number(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    assert sweep(runtime, session(), "sweep zero").startswith("dcp sweep: expected a number of tool calls, got 'zero'")
    assert sweep(runtime, session(), "sweep 0").startswith("dcp sweep: the number of tool calls must be at least 1")


def test_sweep_ignores_a_trailing_user_message_such_as_the_command_itself(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    text = sweep(runtime, [*session(), user("/dcp sweep")])
    assert text.startswith("dcp sweep: pruned 3 tool calls since your last message")


def test_sweep_is_persisted_as_manual_decisions(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    sweep(runtime, session())
    stored = Store(tmp_path / "dcp.sqlite3").load_session(SESSION)
    assert stored.manual == {"r1": "sweep", "env": "sweep", "g1": "sweep"}
    assert {"r1", "env", "g1"} <= stored.pruned


def test_a_new_runtime_reapplies_saved_sweeps_on_the_first_request(tmp_path: Path) -> None:
    sweep(make_runtime(tmp_path), session())
    outputs = outputs_next_request(make_runtime(tmp_path), session())
    assert [outputs[c] for c in ("r1", "env", "g1")] == [named(SWEPT_PLACEHOLDER, c) for c in ("r1", "env", "g1")]


def test_sweep_keeps_the_result_older_runs_point_at_when_only_the_description_differs(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    messages = [
        user("first"),
        call("bash", {"command": "make test", "description": "Run the tests"}, output="t" * 300, call_id="older"),
        user("second"),
        call("bash", {"command": "make test", "description": "Run them again"}, output="t" * 300, call_id="newer"),
    ]
    text = sweep(runtime, messages)
    assert "  - bash make test: kept: 1 earlier identical call point at this result" in text.splitlines()


def test_sweep_names_a_failed_call_it_cannot_shrink_instead_of_leaving_it_out_silently(tmp_path: Path) -> None:
    messages = [
        user("go"),
        call("read", {"filePath": "/p/gone.py"}, status="error", error="File not found: /p/gone.py", call_id="bad"),
        call("grep", {"pattern": "needle"}, output="g" * 200, call_id="g1"),
    ]
    text = sweep(make_runtime(tmp_path), messages)
    assert "  - read /p/gone.py: failed call: its error message stays and its input is too short to shrink" in text
