"""`/dcp pin` and `/dcp unpin`: a pinned output is never pruned, by anything, and the pin sticks."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, SWEPT_PLACEHOLDER
from dcp_plugin.store import SessionBatch, Store
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
    tool_parts,
    user,
)
from tests.support.tools_helpers import BIG, ToolHost, ident, lists

KB = "x" * 2000  # ~667 tokens as a tool output (chars / 3)
# Masking from 1,000 tokens on, keeping nothing: every output but a pinned one is masked.
MASK = {"maskOldOutputs": {"trigger": 1000, "keepTokens": 0, "keepTurns": 0, "keepCalls": 0}}


def read(name: str, output: str = KB, **kw: Any) -> dict[str, Any]:
    return call("read", {"filePath": f"{PROJECT}/src/{name}"}, output=output, **kw)


def three_reads() -> list[dict[str, Any]]:
    return [user(), read("a.py"), read("b.py"), read("c.py"), assistant({"type": "text", "text": "done"})]


def make_runtime(store: Store | None = None, **config: Any) -> Runtime:
    runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
    runtime.use_store(store)
    return runtime


def command(runtime: Runtime, messages: list[dict[str, Any]], arguments: str) -> str:
    output: dict[str, Any] = {"parts": []}
    input = {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(messages)}
    hook_command(runtime, input, output)
    assert output["handled"] is True
    text: str = output["parts"][0]["text"]
    return text


def request(runtime: Runtime, messages: list[dict[str, Any]]) -> list[Any]:
    """The tool outputs of one request, as the provider gets them."""
    sent = copy.deepcopy(messages)
    hook_transform(runtime, {"sessionID": SESSION}, {"messages": sent})
    return [p["state"].get("output") for p in tool_parts(sent)]


def test_a_pinned_output_is_never_masked_by_mask_old_outputs() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    command(runtime, messages, f"pin {ident(messages[2])}")
    outputs = request(runtime, messages)
    assert outputs[1] == KB
    assert outputs[0] != KB and outputs[2] != KB  # the others are masked as before


def test_a_pinned_older_duplicate_is_kept_by_deduplication() -> None:
    messages = [user(), read("a.py"), read("a.py"), assistant({"type": "text", "text": "done"})]
    runtime = make_runtime()
    assert request(runtime, messages)[0] == named(DUPLICATE_PLACEHOLDER, messages[1])
    command(runtime, messages, f"pin {ident(messages[1])}")
    assert request(runtime, messages) == [KB, KB]


def test_pinning_an_already_pruned_output_brings_it_back_on_the_next_request() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    assert request(runtime, messages)[0] != KB
    command(runtime, messages, f"pin {ident(messages[1])}")
    assert request(runtime, messages)[0] == KB


def test_pinning_brings_an_output_back_with_the_cache_scheduler_on_too() -> None:
    messages = three_reads()
    runtime = make_runtime(cache={"scheduler": True})
    command(runtime, messages, "sweep 3")  # written at once, whatever the cache
    assert request(runtime, messages)[0] == named(SWEPT_PLACEHOLDER, messages[1])
    command(runtime, messages, f"pin {ident(messages[1])}")
    assert request(runtime, messages)[0] == KB


def test_the_pin_reply_says_which_output_comes_back_whole() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    request(runtime, messages)
    a = ident(messages[1])
    assert command(runtime, messages, f"pin {a}").splitlines() == [
        f"dcp pin: pinned 1 output: {a} (read src/a.py).",
        "Nothing prunes them now: not the strategies, not the model, not /dcp sweep.",
        f"Sent whole again from the next request (placeholder removed): {a} (read src/a.py).",
    ]


def test_unpinning_lets_the_output_be_pruned_again() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    a = ident(messages[1])
    command(runtime, messages, f"pin {a}")
    assert request(runtime, messages)[0] == KB
    assert command(runtime, messages, f"unpin {a}").startswith(f"dcp unpin: unpinned 1 output: {a} (read src/a.py).")
    assert request(runtime, messages)[0] != KB


def test_pins_survive_a_new_runtime_on_the_same_store(tmp_path: Path) -> None:
    messages = three_reads()
    store = Store(tmp_path / "dcp.sqlite3")
    command(make_runtime(store, strategies=MASK), messages, f"pin {ident(messages[1])}")
    assert request(make_runtime(Store(tmp_path / "dcp.sqlite3"), strategies=MASK), messages)[0] == KB


def test_an_unpin_survives_a_new_runtime_on_the_same_store(tmp_path: Path) -> None:
    messages = three_reads()
    runtime = make_runtime(Store(tmp_path / "dcp.sqlite3"), strategies=MASK)
    command(runtime, messages, f"pin {ident(messages[1])}")
    command(runtime, messages, f"unpin {ident(messages[1])}")
    assert request(make_runtime(Store(tmp_path / "dcp.sqlite3"), strategies=MASK), messages)[0] != KB


def test_pinning_a_swept_output_takes_the_sweep_back_for_good(tmp_path: Path) -> None:
    messages = three_reads()
    runtime = make_runtime(Store(tmp_path / "dcp.sqlite3"))
    command(runtime, messages, "sweep")
    a = ident(messages[1])
    command(runtime, messages, f"pin {a}")
    command(runtime, messages, f"unpin {a}")
    # Unpinned, the output is free to be pruned, but the user's earlier sweep of it is not re-applied.
    fresh = make_runtime(Store(tmp_path / "dcp.sqlite3"))
    assert request(fresh, messages)[0] == KB
    assert request(fresh, messages)[1] == named(SWEPT_PLACEHOLDER, messages[2])


def test_the_models_discard_of_a_pinned_output_is_refused_as_pinned_by_the_user() -> None:
    host = ToolHost.start().add(user("look at a and b"))
    a, b = host.read("a.py", BIG + "a"), host.read("b.py", BIG + "b")
    command(host.runtime, host.messages, f"pin {a}")
    result = host.use("discard", {"ids": [a, b], "reason": "noise"})
    assert result.error
    assert f"{a} (read a.py): pinned by the user" in result.output
    assert host.outputs(host.request())[:2] == [BIG + "a", BIG + "b"]


def test_a_pinned_output_is_not_in_the_prunable_list() -> None:
    host = ToolHost.start(tools={"nudgeFrequency": 3}).add(user())
    first = host.read("f0.py", BIG + "0")
    command(host.runtime, host.messages, f"pin {first}")
    others = [host.read(f"f{n}.py", BIG + str(n)) for n in range(1, 4)]
    host.request()
    [text] = lists(host.sent[-1])
    assert first not in text.split() and others[0] in text.split()


def test_sweep_skips_pinned_outputs_and_says_how_many_it_kept() -> None:
    messages = three_reads()
    runtime = make_runtime()
    a = ident(messages[1])
    command(runtime, messages, f"pin {a}")
    text = command(runtime, messages, "sweep")
    assert text.splitlines()[0].startswith("dcp sweep: pruned 2 tool calls since your last message")
    assert f"  - read src/a.py: pinned (id {a})" in text.splitlines()
    assert text.splitlines()[-1] == "Kept 1 pinned output; /dcp unpin <id> lets one be pruned."
    assert request(runtime, messages)[0] == KB


def test_unknown_ids_are_named_in_the_reply_with_where_ids_are_shown() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    a = ident(messages[1])
    text = command(runtime, messages, f"pin zzzz {a} not-an-id")
    lines = text.splitlines()
    assert lines[0] == f"dcp pin: pinned 1 output: {a} (read src/a.py)."
    assert "unknown ids: zzzz, not-an-id (no tool output of this session has them)." in lines
    assert "placeholder" in lines[-1] and "/dcp pin" in lines[-1]
    assert request(runtime, messages)[0] == KB


def test_only_unknown_ids_change_nothing() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    before = request(runtime, messages)
    assert command(runtime, messages, "unpin zzzz").startswith("dcp unpin: unknown id: zzzz (")
    assert request(runtime, messages) == before


def test_pin_without_ids_lists_the_pinned_outputs_by_id_tool_and_argument() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    a, c = ident(messages[1]), ident(messages[3])
    command(runtime, messages, f"pin {c}, {a}")
    lines = command(runtime, messages, "pin").splitlines()
    assert lines[:4] == [
        "dcp pin: 2 pinned outputs in this session (nothing prunes them):",
        f"  {a}  read src/a.py  ~667 tokens, pinned",
        f"  {c}  read src/c.py  ~667 tokens, pinned",
        "Unpin with /dcp unpin <id>.",
    ]


def test_pin_without_ids_shows_the_newest_outputs_ids_when_nothing_is_pinned() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    lines = command(runtime, messages, "pin").splitlines()
    assert lines[0] == "dcp pin: no outputs are pinned in this session."
    assert lines[1] == "Newest tool outputs (pin one with /dcp pin <id>):"
    assert lines[2] == f"  {ident(messages[1])}  read src/a.py  ~667 tokens, pruned (maskOldOutputs)"


def test_unpin_without_ids_says_how_to_use_it() -> None:
    text = command(make_runtime(), three_reads(), "unpin")
    assert text.splitlines()[:2] == ["dcp unpin: name the outputs to unpin.", "Usage: /dcp unpin <id> [<id>...]"]


def test_a_database_without_the_pinned_table_gets_it_and_keeps_its_data(tmp_path: Path) -> None:
    store = Store(tmp_path / "dcp.sqlite3")
    store.save([SessionBatch("s", manual={"c1": "sweep"})])
    store.close()
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TABLE pinned")
    conn.commit()
    conn.close()
    store = Store(tmp_path / "dcp.sqlite3")
    assert store.save([SessionBatch("s", pins={"c2": True})])
    found = store.load_session("s")
    assert (found.manual, found.pinned) == ({"c1": "sweep"}, {"c2"})


def test_a_stored_pin_takes_back_a_stored_sweep_of_the_same_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "dcp.sqlite3")
    store.save([SessionBatch("s", manual={"c1": "sweep", "c2": "sweep"})])
    store.save([SessionBatch("s", pins={"c1": True})])
    store.save([SessionBatch("s", pins={"c1": False})])
    found = store.load_session("s")
    assert (found.manual, found.pinned) == ({"c2": "sweep"}, set())


def test_pin_of_a_call_in_a_message_with_several_calls_keeps_only_that_output() -> None:
    parts = [tool_part("read", {"filePath": f"{PROJECT}/src/{n}.py"}, output=KB) for n in ("a", "b")]
    messages = [user(), assistant(*parts), read("c.py"), assistant({"type": "text", "text": "done"})]
    runtime = make_runtime(strategies=MASK)
    command(runtime, messages, f"pin {ident({'parts': [parts[1]]})}")
    outputs = request(runtime, messages)
    assert outputs[1] == KB and outputs[0] != KB


def test_ids_may_be_copied_with_the_brackets_of_a_placeholder() -> None:
    messages = three_reads()
    runtime = make_runtime(strategies=MASK)
    a = ident(messages[1])
    assert command(runtime, messages, f"pin (id {a.upper()})").startswith(f"dcp pin: pinned 1 output: {a} ")


def test_pin_lists_a_failed_call_as_failed_not_as_waiting_for_output() -> None:
    failed = call("read", {"filePath": f"{PROJECT}/src/gone.py"}, status="error", error="File not found")
    messages = [user(), failed]
    runtime = make_runtime()
    command(runtime, messages, f"pin {ident(messages[1])}")
    text = command(runtime, messages, "pin")
    row = next(line for line in text.splitlines() if "src/gone.py" in line)
    assert "failed (its error message: ~" in row and "no output yet" not in row
